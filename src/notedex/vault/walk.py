"""Which files make up the vault (SEMANTICS 1): an iterative, loop-safe ``os.scandir`` walk.

The walk never raises for anything inside the vault: an entry it cannot read or refuses to
follow becomes a ``WalkProblem``, and a folder it cannot list is named in ``unreadable_dirs``
so the store keeps the rows under it (ARCHITECTURE "Freshness"); so is an entry it could not
stat or follow. Only a missing root raises.

Symlinks inside the vault are followed, as Obsidian does; one whose target lies outside the vault
root is followed only with ``follow_outside`` (the ``follow_symlinks`` setting), else it is a
warning that names the setting (SEMANTICS 1.6). Files keep their path *inside* the vault
(``A/link/x.md``). Folders are tracked by
``(st_dev, st_ino)``: a link to a folder on the current path is a loop and is not followed, and
a folder is walked once only, so a link to a folder that is already in the vault does not make
every file in it appear twice. Symlinked folders are walked after the real tree, so a folder
is listed under its real path rather than under a link that happens to sort first. About 500
lines: the one walk rule that the daemon, the reconcile, the etag check and a full index share,
with its inner loop written for a million files (issue 35) and the daemon's per-folder watch
hook, which must run inside the walk, just before each listing.
"""

from __future__ import annotations

import errno
import itertools
import os
import re
import stat
import unicodedata
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache
from typing import NamedTuple

from notedex.error_kinds import VaultNotFound
from notedex.vault.files import is_hidden_name, is_note_name, load_excluded_filters
from notedex.vault.model import VaultFile, WalkProblem, WalkResult
from notedex.vault.reading import OUTSIDE_MESSAGE

__all__ = [
    "DANGLING_MESSAGE",
    "OUTSIDE_MESSAGE",
    "VaultNotFound",
    "VaultStream",
    "has_nfc_twin",
    "is_excluded",
    "is_storable_name",
    "load_excluded_filters",
    "walk_vault",
]

LOOP_MESSAGE = "symlink loop; not followed"
DANGLING_MESSAGE = "dangling symlink; target missing"
NOT_UTF8_MESSAGE = "file name is not valid UTF-8"

_DirId = tuple[int, int]

Entry = tuple[str, int, int, int, int, str]
"""A regular file as the streaming walk finds it: (path, size, mtime_ns, inode, ctime_ns,
disk_path); ``entry_file`` makes it a ``VaultFile``. A plain tuple: the start-up reconcile of a
1M-note vault makes one per file and passes over the unchanged ones, its first five values
compared at once with the row's etag (``store.files.iter_etags``, issue 35)."""

FolderHook = Callable[[str, bool], None]
"""Told of each real folder of the vault's own tree just before the walk lists it: its path
relative to the root on disk (``""`` for the root) and whether the folders under it are
left to the hook (True for a hidden folder and a repeated one, which the walk does not enter).
The daemon's start adds the folder's inotify watch there (issue 35): a change made after the
watch is heard, one made before it is seen by the listing and the ``lstat`` that follow."""


class _Folder(NamedTuple):
    disk_path: str
    path: str
    """Vault-relative, NFC; ``""`` is the root."""
    chain: tuple[_DirId, ...]
    """Identities of this folder and every folder above it on the walked path."""


class _Listing(NamedTuple):
    """A folder's names as ``_list`` left them for ``_tree``."""

    folder: _Folder
    order: list[str]
    """The names left to look at, last in path order first (a folder's as ``name/``)."""
    chosen: dict[str, str]
    """NFC name -> the disk name that keeps it."""


def is_storable_name(name: str) -> bool:
    """False for names that are not valid UTF-8 on disk (``surrogateescape``d by ``os``):
    SEMANTICS 1.5, skipped with an error by the walk."""
    if name.isascii():
        return True
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _printable(name: str) -> str:
    """A lossy but valid spelling of an undecodable name, for messages only."""
    try:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:
        return name.encode("utf-8", "replace").decode("utf-8")


# The ASCII characters that a non-ASCII one becomes under NFC: U+037E GREEK QUESTION MARK is ";",
# U+1FEF GREEK VARIA is "`", U+212A KELVIN SIGN is "K" (found by folding every code point).
_ASCII_NFC_IMAGES = frozenset(";`K")


def has_nfc_twin(disk_folder: str, names: Iterable[str]) -> bool:
    """Whether one of ``names`` shares its NFC form with another name in ``disk_folder``
    (SEMANTICS 1.4: the walk keeps one of them and reports the other). One listing."""
    # An ASCII name is its own NFC form, and its twin can only be a non-ASCII name that folds to
    # it: one whose every non-ASCII character is one of the three that NFC maps to ASCII. So an
    # ASCII name without "K", ";" or "`" has no twin, and a folder is listed only when it may.
    keys = {
        unicodedata.normalize("NFC", n)
        for n in names
        if is_storable_name(n) and (not n.isascii() or not _ASCII_NFC_IMAGES.isdisjoint(n))
    }
    if not keys:
        return False
    try:
        listing = os.listdir(disk_folder)
    except OSError:
        return False
    seen: set[str] = set()
    for other in listing:
        if other.isascii() and other not in keys:
            continue
        if not is_storable_name(other):
            continue
        key = unicodedata.normalize("NFC", other) if not other.isascii() else other
        if key in keys:
            if key in seen:
                return True
            seen.add(key)
    return False


def _child(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


class _Walk:
    def __init__(self, boundary: str | None, on_folder: FolderHook | None = None) -> None:
        self.boundary = boundary
        self.on_folder = on_folder
        """``FolderHook``, called for the folders of the real tree only (not under a symlink)."""
        self._root_prefix = 0
        """The real path symlink targets must stay under; None follows them anywhere."""
        self.problems: list[WalkProblem] = []
        self.unreadable: list[str] = []
        self.linked_dirs: list[str] = []
        # Every folder listed (or about to be) so far, by identity -> the vault path it has there.
        self.walked: dict[_DirId, str] = {}
        # Symlinked folders wait until the real tree is done, so real paths win.
        self.linked: deque[_Folder] = deque()

    def files(self, root: str, root_id: _DirId, base: str = "") -> Iterator[VaultFile]:
        """Yield every file: the real tree in path order, then what symlinked folders add.
        ``base``: the vault path of ``root`` (a folder of the vault walked alone), or ""."""
        return map(entry_file, self.entries(root, root_id, base))

    def entries(self, root: str, root_id: _DirId, base: str = "") -> Iterator[Entry]:
        """``files`` as ``Entry`` tuples."""
        self.walked[root_id] = base
        self._root_prefix = len(os.path.join(root, ""))
        # A chain (C): the real tree's files pass through one Python frame, not two.
        return itertools.chain(self._tree(_Folder(root, base, (root_id,))), self._linked())

    def _linked(self) -> Iterator[Entry]:
        """What symlinked folders add, once the real tree is done."""
        self.on_folder = None  # what symlinked folders add is not watched (as watchdog)
        while self.linked:
            folder = self.linked.popleft()
            first = self.walked.get(folder.chain[-1])
            if first is not None:
                self._problem(
                    folder.path,
                    f"symlink to a folder already in the vault as {first!r}; not followed",
                )
                continue
            self.walked[folder.chain[-1]] = folder.path
            yield from self._tree(folder)

    def run(self, root: str, root_id: _DirId, base: str = "") -> WalkResult:
        files = sorted(self.files(root, root_id, base), key=lambda f: f.path)
        self.problems.sort(key=lambda p: (p.path, p.message))
        self.unreadable.sort()
        return WalkResult(
            tuple(files), tuple(self.problems), tuple(self.unreadable), tuple(self.linked_dirs)
        )

    def _tree(self, top: _Folder) -> Iterator[Entry]:
        """Depth first, one folder's listing held per level: a subfolder is entered at its
        place in path order, so the files come out sorted.

        The loop every file of the vault goes through: one ``lstat``, and a regular file is
        yielded at once (issue 35: the Python a file costs is most of a start at 1M)."""
        lstat, is_reg = os.lstat, stat.S_ISREG
        stack = [listed] if (listed := self._list(top)) is not None else []
        while stack:
            folder, order, chosen = stack[-1]
            prefix = os.path.join(folder.disk_path, "")
            base = f"{folder.path}/" if folder.path else ""
            pop = chosen.pop
            while order:
                key = order.pop()
                name = key[:-1] if key[-1] == "/" else key
                path = base + name
                disk_path = prefix + pop(name)
                try:
                    info = lstat(disk_path)
                    if is_reg(info.st_mode):
                        yield (
                            path,
                            info.st_size,
                            info.st_mtime_ns,
                            info.st_ino,
                            info.st_ctime_ns,
                            disk_path,
                        )
                        continue
                    item = self._entry(disk_path, path, folder, info)
                except FileNotFoundError:
                    continue  # deleted since the listing: simply not a vault file any more
                except OSError as exc:
                    self.unreadable.append(path)  # undecided: keep its rows
                    self._problem(path, f"cannot read: {exc.strerror or exc}")
                    continue
                if isinstance(item, _Folder):
                    if (listed := self._list(item)) is not None:
                        stack.append(listed)
                        break  # entered at its place; this folder resumes after it
                elif item is not None:
                    yield item
            else:
                stack.pop()

    def _problem(self, path: str, message: str, severity: str = "error") -> None:
        self.problems.append(WalkProblem(path, message, severity))

    def _outside(self, disk_path: str) -> bool:
        if self.boundary is None:
            return False
        real = os.path.realpath(disk_path)
        return real != self.boundary and not real.startswith(self.boundary.rstrip(os.sep) + os.sep)

    def _list(self, folder: _Folder) -> _Listing | None:
        """The folder's files and the subfolders to enter, in path order, each looked at
        (stat) only when the walk reaches it.

        The listing keeps a name per entry, no ``os.DirEntry`` nor stat result: a folder of
        150k notes (the top of a generated 1M vault) held about 1 KB an entry for the whole
        folder, 150 MB of the daemon's start (issue 35)."""
        # NFC name -> the disk name that keeps it: the first of its disk names in sorted order.
        chosen: dict[str, str] = {}
        dirs: set[str] = set()  # the NFC names that are real folders (they sort as "name/")
        problems: list[tuple[str, str]] = []
        hook = self.on_folder
        hidden_dirs: list[str] = []
        if hook is not None:
            hook(self._rel_disk(folder.disk_path), False)
        try:
            with os.scandir(folder.disk_path) as listing:
                for entry in listing:  # every name of the vault: keep its Python short
                    name = entry.name
                    if is_hidden_name(name):
                        if hook is not None and _is_real_dir(entry):
                            hidden_dirs.append(entry.path)
                        continue  # SEMANTICS 1: .obsidian/, .git/, .trash/, .hidden.md
                    if not name.isascii():
                        if not is_storable_name(name):
                            problems.append(
                                (_child(folder.path, _printable(name)), NOT_UTF8_MESSAGE)
                            )
                            continue
                        name = unicodedata.normalize("NFC", name)  # SEMANTICS 1: macOS writes NFD
                    elif name not in chosen:  # the common case: an ASCII name, its own NFC
                        chosen[name] = name
                        try:
                            if entry.is_dir(follow_symlinks=False):
                                dirs.add(name)
                        except OSError:
                            pass  # left to the lstat that follows
                        continue
                    other = chosen.get(name)
                    if other is not None:
                        skipped = _nfc_twin(entry, name, other, chosen, dirs)
                        problems.append(
                            (
                                _child(folder.path, name),
                                "another name in this folder has the same NFC form; "
                                f"skipped {skipped!a}",
                            )
                        )
                        continue
                    chosen[name] = entry.name
                    if _is_real_dir(entry):
                        dirs.add(name)
        except OSError as exc:
            # Permissions, a cloud placeholder, a folder gone mid-walk: keep its rows.
            self.unreadable.append(folder.path)
            self._problem(folder.path, f"cannot list folder: {exc.strerror or exc}")
            return None
        self._listed(hidden_dirs, problems)
        # A folder sorts as "name/": exactly where its files fall among its siblings' paths.
        order = [f"{name}/" if name in dirs else name for name in chosen]
        order.sort(reverse=True)  # popped from the end: first in path order first
        return _Listing(folder, order, chosen)

    def _listed(self, hidden_dirs: list[str], problems: list[tuple[str, str]]) -> None:
        """After a listing: the hidden folders are watched (not walked: .obsidian/app.json),
        and the names the walk refused are problems."""
        if self.on_folder is not None:
            for disk_path in hidden_dirs:
                self.on_folder(self._rel_disk(disk_path), True)
        for path, message in problems:
            self._problem(path, message)

    def _rel_disk(self, disk_path: str) -> str:
        return disk_path[self._root_prefix :]

    def _entry(
        self, disk_path: str, path: str, parent: _Folder, info: os.stat_result
    ) -> Entry | _Folder | None:
        """What a listed name is, by its ``lstat`` when the walk reached it (not a regular
        file: ``_tree`` yields those)."""
        mode = info.st_mode
        if stat.S_ISLNK(mode):
            return self._symlink(disk_path, path, parent)
        if stat.S_ISDIR(mode):
            return self._folder(disk_path, path, parent, (info.st_dev, info.st_ino), linked=False)
        if stat.S_ISREG(mode):
            return _entry_of(disk_path, path, info)
        # A FIFO would block the reader forever; sockets and devices are not notes either.
        self._problem(path, "not a regular file or folder; skipped")
        return None

    def _symlink(self, disk_path: str, path: str, parent: _Folder) -> Entry | _Folder | None:
        # Followed as Obsidian does, out of the vault root only when asked (SEMANTICS 1.6); the
        # path stays the link's path inside the vault and the loop guard is in _folder.
        try:
            info = os.stat(disk_path)  # follows the link
        except FileNotFoundError:
            self._problem(path, DANGLING_MESSAGE)
            return None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                self._problem(path, LOOP_MESSAGE)
            else:
                self.unreadable.append(path)  # undecided: keep its rows
                self._problem(path, f"cannot follow symlink: {exc.strerror or exc}")
            return None
        if self._outside(disk_path):
            self._problem(path, OUTSIDE_MESSAGE, "warning")
            return None
        if stat.S_ISDIR(info.st_mode):
            self.linked_dirs.append(path)
            return self._folder(disk_path, path, parent, (info.st_dev, info.st_ino), linked=True)
        if stat.S_ISREG(info.st_mode):
            return _entry_of(disk_path, path, info)
        self._problem(path, "symlink to something that is not a regular file or folder; skipped")
        return None

    def _folder(
        self, disk_path: str, path: str, parent: _Folder, identity: _DirId, *, linked: bool
    ) -> _Folder | None:
        """The folder to enter now, or None (a loop, a symlink left for later, a repeat)."""
        if identity in parent.chain:
            self._problem(path, LOOP_MESSAGE)
            return None
        folder = _Folder(disk_path, path, (*parent.chain, identity))
        if linked:
            self.linked.append(folder)
            return None
        first = self.walked.get(identity)
        if first is not None:  # a bind mount of a folder that is already in the vault
            self._problem(path, f"same folder as {first!r}; not walked twice")
            if self.on_folder is not None:
                self.on_folder(self._rel_disk(disk_path), True)  # watched all the same
            return None
        self.walked[identity] = path
        return folder


def _nfc_twin(
    entry: os.DirEntry[str], name: str, other: str, chosen: dict[str, str], dirs: set[str]
) -> str:
    """Two disk names with one NFC form ``name``: the first in sorted order keeps the path.
    Returns the disk name skipped."""
    if entry.name < other:
        chosen[name] = entry.name
        dirs.discard(name)
        if _is_real_dir(entry):
            dirs.add(name)
        return other
    return entry.name


def _is_real_dir(entry: os.DirEntry[str]) -> bool:
    """A folder that is walked in place (not a symlink); errors are left to ``_entry``."""
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _entry_of(disk_path: str, path: str, info: os.stat_result) -> Entry:
    return (path, info.st_size, info.st_mtime_ns, info.st_ino, info.st_ctime_ns, disk_path)


def entry_file(entry: Entry) -> VaultFile:
    """The ``VaultFile`` of a walk ``Entry``."""
    path, size, mtime_ns, inode, ctime_ns, disk_path = entry
    return VaultFile(path, disk_path, is_note_name(path), size, mtime_ns, inode, ctime_ns)


def walk_vault(
    root: str | os.PathLike[str],
    *,
    follow_outside: bool = False,
    base: str = "",
    on_folder: FolderHook | None = None,
) -> WalkResult:
    """Every file of the vault at ``root``, sorted by path (SEMANTICS 1).

    ``follow_outside``: follow symlinks whose target lies outside ``root`` (the
    ``follow_symlinks`` setting); by default they are warnings and are not walked. ``base``:
    the vault path (NFC) of ``root`` when it is a folder of the vault walked alone (the
    daemon's folder hint): paths then start with ``base/``, as under the vault walk.

    Raises ``VaultNotFound`` only when ``root`` itself is missing or not a folder. A root that
    exists but cannot be listed gives ``unreadable_dirs == ("",)``: keep every row.
    ``on_folder``: a ``FolderHook``, told of each real folder before it is listed.
    """
    disk_root, root_id = _root(root)
    walk = _Walk(_boundary(disk_root, follow_outside), on_folder)
    return walk.run(disk_root, root_id, base)


class VaultStream:
    """The same walk as ``walk_vault``, one file at a time, for a diff that must not hold the
    whole vault in memory.

    ``files`` yields the real tree in path order (code-point order, as SQLite's BINARY
    collation sorts UTF-8), then the files that symlinked folders add, each such folder in
    path order. ``problems`` and ``unreadable_dirs`` are complete once ``files`` is exhausted.
    ``on_folder``: a ``FolderHook``, told of each real folder before it is listed.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        follow_outside: bool = False,
        on_folder: FolderHook | None = None,
    ) -> None:
        disk_root, root_id = _root(root)
        self._walk = _Walk(_boundary(disk_root, follow_outside), on_folder)
        self.entries: Iterator[Entry] = self._walk.entries(disk_root, root_id)
        """The files as ``Entry`` tuples (the start-up reconcile's merge, issue 35)."""
        self.files: Iterator[VaultFile] = map(entry_file, self.entries)
        """The same files as ``VaultFile`` (one stream: read one of the two)."""

    @property
    def problems(self) -> tuple[WalkProblem, ...]:
        return tuple(sorted(self._walk.problems, key=lambda p: (p.path, p.message)))

    @property
    def unreadable_dirs(self) -> tuple[str, ...]:
        return tuple(sorted(self._walk.unreadable))


def _boundary(disk_root: str, follow_outside: bool) -> str | None:
    return None if follow_outside else os.path.realpath(disk_root)


def _root(root: str | os.PathLike[str]) -> tuple[str, _DirId]:
    disk_root = os.path.abspath(os.fspath(root))
    try:
        info = os.stat(disk_root)
    except OSError as exc:
        raise VaultNotFound(disk_root, exc.strerror or "cannot look at it") from exc
    if not stat.S_ISDIR(info.st_mode):
        raise VaultNotFound(disk_root, "not a folder")
    return disk_root, (info.st_dev, info.st_ino)


@lru_cache(maxsize=256)
def _filter_regex(source: str) -> re.Pattern[str] | None:
    try:
        return re.compile(source)
    except (re.error, RecursionError, OverflowError, ValueError):
        return None  # a broken regex excludes nothing, as in Obsidian


def is_excluded(path: str, filters: tuple[str, ...]) -> bool:
    """Whether Obsidian's "Excluded files" hide ``path`` (SEMANTICS 1: still a link target).

    As in Obsidian, an entry written ``/regex/`` is searched anywhere in the vault path and any
    other entry is a plain, case-sensitive path prefix: ``Archive/`` and ``Archive`` both match
    ``Archive/x.md`` (and ``Archive`` also matches ``Archive 2/x.md``).
    """
    for item in filters:
        if len(item) > 2 and item.startswith("/") and item.endswith("/"):
            regex = _filter_regex(item[1:-1])
            if regex is not None and regex.search(path):
                return True
        elif item and path.startswith(unicodedata.normalize("NFC", item)):
            return True
    return False
