"""How a command reads a vault file: through the very file it checked (ARCHITECTURE "Reading
vault text").

Every reader of note text (``show --body``, ``quote``, ``export``, search positions, mentions,
MCP ``show`` and ``resources/read``) opens the file here, once, and the symlink policy of
SEMANTICS 1.6 holds at that moment, whatever the index says: a symlink inside the vault is
followed, as Obsidian follows it; one that leads outside is not, unless ``follow_outside`` (the
``follow_symlinks`` setting). The path is walked one component at a time from the vault root,
each folder opened relative to the one before with ``O_NOFOLLOW | O_DIRECTORY`` and the file
with ``O_NOFOLLOW``; a symlink met on the way is read with ``readlink`` and resolved here, so the
real path of every descriptor is known without a second look at the path, and nothing outside
the vault is opened but folders on the way back in. A note swapped for an outward symlink
between the index and the read is refused, never read ("check the path, then open it again"
was the race of issue 31). Only ``os``, ``errno`` and ``stat``: the query path may use it.
"""

from __future__ import annotations

import errno
import os

from notedex.vault.files import read_open_file

__all__ = ["OUTSIDE_MESSAGE", "OutsideVault", "VaultReader"]

OUTSIDE_MESSAGE = (
    "symlink to a path outside the vault; not followed (set follow_symlinks = true in the "
    "config file to follow it)"
)
"""SEMANTICS 1.6: one wording for the walk's warning and a refused read."""

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_DIR_FLAGS = os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC
# Never block on a FIFO named x.md; O_NOFOLLOW: a symlink is resolved here, not by the kernel.
_FILE_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | _NOFOLLOW | _CLOEXEC
_PLAIN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | _CLOEXEC | getattr(os, "O_BINARY", 0)
# What opening a symlink with O_NOFOLLOW gives: ELOOP (Linux, macOS; ENOTDIR with O_DIRECTORY on
# Linux), EMLINK (FreeBSD). Only these are worth a readlink.
_LINK_ERRNOS = frozenset({errno.ELOOP, errno.ENOTDIR, errno.EMLINK})
_MAX_LINKS = 40  # as the kernel's MAXSYMLINKS: more is a loop
_MAX_KEPT = 256  # folders a batch keeps open at once (VaultReader.__enter__)
_NOT_NAMES = ("", ".", "..")  # not a plain name: the walk resolves them
_WALKS = bool(_NOFOLLOW and _DIRECTORY) and {os.open, os.readlink} <= os.supports_dir_fd


class OutsideVault(OSError):
    """The file lies outside the vault and the policy does not follow symlinks out of it."""

    def __init__(self) -> None:
        super().__init__(errno.EPERM, OUTSIDE_MESSAGE)


class VaultReader:
    """Opens and reads the files of the vault at ``root`` under the symlink policy.

    ``root`` is resolved once (one reader per command or call); ``follow_outside`` is the
    ``follow_symlinks`` setting.
    """

    __slots__ = ("_folders", "_root_parts", "follow_outside", "real_root", "root")

    def __init__(self, root: str | os.PathLike[str], *, follow_outside: bool = False) -> None:
        self.root = os.fspath(root)
        self.follow_outside = follow_outside
        self.real_root = os.path.realpath(self.root)
        self._root_parts = _split(self.real_root)
        self._folders: dict[str, int | None] | None = None

    def __enter__(self) -> VaultReader:
        """Keep the folders opened on the way to each file until ``__exit__`` (a batch of
        reads: search positions, issue 35). A file is then opened in its kept folder, one
        ``openat`` instead of one per folder from the root; the policy is the same, since each
        kept folder was reached by the walk's own ``O_NOFOLLOW`` opens from the root, inside
        the vault. Anything but a plain name in plain folders (a symlink on the way or at the
        end, a file gone) is left to the whole walk, which says what it is."""
        if self._folders is None:
            self._folders = {}
        return self

    def __exit__(self, *exc: object) -> None:
        folders, self._folders = self._folders, None
        for fd in (folders or {}).values():
            if fd is not None:
                os.close(fd)

    def read(self, rel: str, max_bytes: int) -> tuple[bytes, os.stat_result]:
        """At most ``max_bytes + 1`` bytes of the file at vault path ``rel`` (on-disk spelling)
        and its ``fstat``, as ``vault.files.read_capped`` reads them. Raises ``OutsideVault``,
        ``NotARegularFile`` or another ``OSError``."""
        fd = self.open(rel)
        try:
            return read_open_file(fd, max_bytes)
        finally:
            os.close(fd)

    def read_sized(self, rel: str, size: int) -> bytes:
        """At most ``size + 1`` bytes of the file at vault path ``rel``, in one ``read`` and no
        ``fstat`` (issue 35: a search with lines reads thousands of files), for a caller that
        knows the size the file had and checks the content itself (its hash): a file changed
        since, or one that is no regular file now (a FIFO reads nothing: it never blocks),
        fails that check. Raises ``OutsideVault`` or another ``OSError`` (a folder: ``EISDIR``)."""
        fd = self.open(rel)
        try:
            return os.read(fd, size + 1)
        finally:
            os.close(fd)

    def open(self, rel: str) -> int:
        """A read-only descriptor of the file at vault path ``rel``, opened once under the policy;
        the caller closes it. It may be a folder or a FIFO (never blocking): check its ``fstat``."""
        if self.follow_outside:
            return os.open(os.path.join(self.root, rel), _PLAIN_FLAGS)
        if not _WALKS:  # no openat here (Windows): open, then tie the path to the descriptor
            return self._open_and_compare(rel)
        if self._folders is not None:
            fd = self._open_kept(rel)
            if fd is not None:
                return fd
        return self._open_beneath(rel)

    def _open_kept(self, rel: str) -> int | None:
        """The file ``rel`` opened in its kept folder (``__enter__``); None: walk instead."""
        folders = self._folders
        assert folders is not None
        if len(folders) >= _MAX_KEPT:  # never more descriptors than this at once
            self.__exit__()
            self._folders = folders = {}
        folder, _, name = rel.rpartition("/")
        if name in _NOT_NAMES:
            return None
        here = self._kept_folder(folders, folder)
        if here is None:
            return None
        try:
            return os.open(name, _FILE_FLAGS, dir_fd=here)
        except OSError:
            return None

    def _kept_folder(self, folders: dict[str, int | None], folder: str) -> int | None:
        """The kept descriptor of vault folder ``folder`` ("" the root), opened now if need be;
        None when a name on the way is no plain folder (kept as None: the walk decides)."""
        if folder in folders:
            return folders[folder]
        fd: int | None = None
        if not folder:
            fd = os.open(self.real_root, _DIR_FLAGS)
        else:
            parent, _, name = folder.rpartition("/")
            up = None if name in _NOT_NAMES else self._kept_folder(folders, parent)
            if up is not None:
                try:
                    fd = os.open(name, _DIR_FLAGS, dir_fd=up)
                except OSError:
                    fd = None
        folders[folder] = fd
        return fd

    def _inside(self, parts: list[str]) -> bool:
        """Whether the folder whose real path is ``parts`` is the vault root or under it."""
        size = len(self._root_parts)
        return len(parts) >= size and parts[:size] == self._root_parts

    def _open_beneath(self, rel: str) -> int:
        """Resolve ``rel`` from the root as the kernel would, one ``O_NOFOLLOW`` open at a time.

        ``parts`` is the real path of ``fds[-1]``: each folder was opened by name relative to the
        one before it, and no symlink was followed by the kernel.
        """
        parts = list(self._root_parts)
        fds = [os.open(self.real_root, _DIR_FLAGS)]
        pending = _components(rel)  # a stack: the next component last
        links = 0
        try:
            while pending:
                name = pending.pop()
                if name == "..":
                    if parts:
                        parts.pop()
                        if len(fds) > 1:
                            os.close(fds.pop())
                        else:
                            up = os.open("..", _DIR_FLAGS, dir_fd=fds[0])
                            os.close(fds[0])
                            fds[0] = up
                    continue
                here = fds[-1]
                if pending:
                    try:
                        fds.append(os.open(name, _DIR_FLAGS, dir_fd=here))
                        parts.append(name)
                        continue
                    except OSError as exc:
                        target = _link_target(name, here, exc)
                elif self._inside(parts):  # only a file inside the vault is ever opened
                    try:
                        return os.open(name, _FILE_FLAGS, dir_fd=here)
                    except OSError as exc:
                        target = _link_target(name, here, exc)
                else:  # a last name in a folder outside the vault: only a link may lead back
                    target = _link_target(name, here, None)
                links += 1
                if links > _MAX_LINKS:
                    raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), rel)
                pending.extend(_components(target))
                if target.startswith("/"):
                    root = os.open("/", _DIR_FLAGS)
                    for fd in fds:
                        os.close(fd)
                    fds, parts = [root], []
            # The path ended on a folder (``a/..``, a link to a folder): hand it over as one.
            if not self._inside(parts):
                raise OutsideVault()
            return os.dup(fds[-1])
        finally:
            for fd in fds:
                os.close(fd)

    def _open_and_compare(self, rel: str) -> int:
        """Without ``openat``: open, then require that the real path lies inside the vault and
        names the file the descriptor holds (``samestat``), so a swap in between is refused."""
        disk = os.path.join(self.root, rel)
        fd = os.open(disk, _PLAIN_FLAGS)
        try:
            real = os.path.realpath(disk)
            if not self._inside(_split(os.path.dirname(real))) or not os.path.samestat(
                os.fstat(fd), os.lstat(real)
            ):
                raise OutsideVault()
        except BaseException:
            os.close(fd)
            raise
        return fd


def _split(path: str) -> list[str]:
    return [part for part in path.split(os.sep) if part]


def _components(path: str) -> list[str]:
    """The names of a path, last first (a stack); empty and ``.`` names dropped."""
    return [part for part in reversed(path.split("/")) if part and part != "."]


def _link_target(name: str, dir_fd: int, failure: OSError | None) -> str:
    """The target of the symlink ``name`` in ``dir_fd``. When ``name`` is no symlink, the
    open's ``failure`` is raised; without one (a file in a folder outside the vault),
    ``OutsideVault``."""
    if failure is not None and failure.errno not in _LINK_ERRNOS:
        raise failure
    try:
        return os.readlink(name, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno != errno.EINVAL:  # gone meanwhile, or cannot be read
            raise
        if failure is not None:
            raise failure from None
        raise OutsideVault() from None
