"""Writing the vault safely (ARCHITECTURE "Writing the vault"): the one module through which
``fix``, ``mv`` and ``capture`` change a vault file.

A file is read once (``VaultWriter.read``: a ``Snapshot`` of its bytes and ``stat``), and an
edit replaces it only through ``VaultWriter.replace``: the new bytes go to a temporary file
beside the target (same folder, so the rename never crosses a file system), are fsynced, get
the target's permission bits, and the temporary file is renamed over the target. Just before
the rename the target is read again: if its bytes differ from the snapshot's, it changed since
it was read (an editor saved it, a sync tool replaced it) and it is left alone, the temporary
file removed, and ``Changed`` raised. The test is on the bytes, not the ``mtime``: a touch or a
save of the same text does not lose an edit, and a change within the ``mtime``'s granularity is
still seen. Folders are opened one name at a time from the vault root (``vault.reading``), so
a symlink that leads out of the vault is never followed, whatever ``follow_symlinks`` says: a
command that writes never writes outside the vault. A symlink inside the vault is followed to
its real file, which is written (the link keeps pointing at it).

Many files at once (``fix``, ``mv``: ``VaultWriter.replace_many``) are written in phases rather
than with one ``fsync`` each (docs/design/writing.md "Many files"): every temporary file first,
then one flush of the vault's file system (``syncfs``, else ``sync``), then, file by file, the
re-read and the rename, then one ``fsync`` per folder renamed into.

New files (``capture``, ``mv``'s destination) are written to a temporary file the same way and
then given their name with ``link``, which fails if the name exists: a new file never replaces
anything.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from notedex.vault.reading import OutsideVault, VaultReader

__all__ = ["Changed", "Snapshot", "VaultWriter", "why_not_written"]

PHASES = ("temporaries", "flushed", "renamed one", "renamed")
"""The points between ``replace_many``'s steps, in order (``crash_point`` is called at each)."""


def _no_crash(_phase: str) -> None:
    """Called at each of ``PHASES``; a test puts a ``SIGKILL`` here to crash between steps."""


crash_point: Callable[[str], None] = _no_crash

_TEMP_PREFIX = ".notedex-"  # a hidden name (SEMANTICS 1): the indexer never sees it
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_READ = os.O_RDONLY | _NOFOLLOW | _CLOEXEC | getattr(os, "O_NONBLOCK", 0)
_NO_LINKS = frozenset({errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK})
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC


class Changed(OSError):
    """The file changed (or went) since it was read: it is not written."""

    def __init__(self, path: str) -> None:
        super().__init__(errno.EAGAIN, "changed since it was read; not written", path)


@dataclass(frozen=True)
class Snapshot:
    """A vault file as read for an edit."""

    path: str
    """The vault path asked for ('/'-separated)."""
    real: str
    """The vault path of the real file (``path`` unless a symlink inside the vault led there)."""
    data: bytes
    mode: int
    """The permission bits, given to the file that replaces it."""
    owner: tuple[int, int] = (-1, -1)
    """(uid, gid), given to the file that replaces it where allowed (as root)."""


class VaultWriter:
    """Reads vault files for an edit and writes them back, never outside the vault."""

    def __init__(self, vault: str | os.PathLike[str]) -> None:
        self.reader = VaultReader(vault, follow_outside=False)
        self.root = self.reader.real_root
        self.unsynced: set[str] = set()
        """Folders renamed into whose fsync ``sync_folders`` still owes."""

    def real_path(self, rel: str) -> str:
        """The vault path of the real file ``rel`` names: symlinks inside the vault followed;
        ``OutsideVault`` when it leads out (or climbs out with ``..``)."""
        disk = os.path.realpath(os.path.join(self.root, rel))
        if disk == self.root or not disk.startswith(self.root.rstrip(os.sep) + os.sep):
            raise OutsideVault()
        return os.path.relpath(disk, self.root).replace(os.sep, "/")

    def _folder(self, real: str) -> tuple[int, str]:
        """A descriptor of the folder holding the vault path ``real`` (opened name by name,
        ``vault.reading``) and the file's name in it."""
        folder, _, name = real.rpartition("/")
        fd = self.reader.open(folder) if folder else os.open(self.root, os.O_RDONLY | _CLOEXEC)
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            os.close(fd)
            raise NotADirectoryError(errno.ENOTDIR, "not a folder", folder)
        return fd, name

    def read(self, rel: str) -> Snapshot:
        """The file at vault path ``rel``: ``OutsideVault``, ``OSError`` if it cannot be read."""
        real = self.real_path(rel)
        folder, name = self._folder(real)
        try:
            data, info = _read(folder, name)
        finally:
            os.close(folder)
        return Snapshot(rel, real, data, stat.S_IMODE(info.st_mode), (info.st_uid, info.st_gid))

    def replace(self, snapshot: Snapshot, data: bytes, *, sync_folder: bool = True) -> None:
        """Write ``data`` over the file of ``snapshot``; ``Changed`` if it changed since.
        ``sync_folder=False``: the folder's fsync is left to ``sync_folders`` (many files of
        one command: one fsync per folder, not per file; the file's own bytes are always
        synced before the rename)."""
        folder, name = self._folder(snapshot.real)
        try:
            temp = _write_temp(folder, name, data, snapshot.mode, snapshot.owner)
            _rename_checked(folder, snapshot, temp)
            if sync_folder:
                os.fsync(folder)  # the rename itself survives a crash
            else:
                self.unsynced.add(snapshot.real.rpartition("/")[0])
        finally:
            os.close(folder)

    def replace_many(self, items: Sequence[tuple[Snapshot, bytes]]) -> list[OSError | None]:
        """Write each ``(snapshot, data)`` as ``replace`` does, in phases (module docstring):
        for each item, None (written) or why not (``Changed``, ``OutsideVault``, ``OSError``).
        Each folder is opened once a phase (name by name, as ``replace`` opens it) for all its
        files. The folders renamed into are synced before it returns."""
        outcome: list[OSError | None] = [None] * len(items)
        by_folder: dict[str, list[int]] = {}
        for number, (snapshot, _) in enumerate(items):
            by_folder.setdefault(snapshot.real.rpartition("/")[0], []).append(number)
        temps: dict[int, str] = {}
        identities: dict[str, tuple[int, int]] = {}

        def write_temp(folder: int, number: int) -> None:
            snapshot, data = items[number]
            name = snapshot.real.rpartition("/")[2]
            temps[number] = _write_temp(
                folder, name, data, snapshot.mode, snapshot.owner, sync=False
            )

        for folder_rel, numbers in by_folder.items():
            self._in_folder(folder_rel, numbers, outcome, identities, write_temp)
        crash_point(PHASES[0])
        if temps:
            _flush(self.root)  # every temporary file's bytes are on disk before any rename
        crash_point(PHASES[1])
        renamed: list[int] = []

        def rename(folder: int, number: int) -> None:
            _rename_checked(folder, items[number][0], temps[number])
            renamed.append(number)
            if len(renamed) == 1:
                crash_point(PHASES[2])

        for folder_rel, numbers in by_folder.items():
            waiting = [number for number in numbers if number in temps]
            if waiting:
                self._in_folder(folder_rel, waiting, outcome, identities, rename)
                if any(outcome[number] is None for number in waiting):
                    self.unsynced.add(folder_rel)
        crash_point(PHASES[3])
        self.sync_folders()
        return outcome

    def _in_folder(
        self,
        folder_rel: str,
        numbers: list[int],
        outcome: list[OSError | None],
        identities: dict[str, tuple[int, int]],
        step: Callable[[int, int], object],
    ) -> None:
        """``step(folder descriptor, item)`` for each item of one folder, opened once (name by
        name); a failure is that item's ``outcome``. The folder's identity is recorded the
        first time and must be the same the second (else ``Changed``: a folder renamed away and
        another put in its place, its temporary files are in the one that went)."""
        try:
            folder, _ = self._folder(f"{folder_rel}/x" if folder_rel else "x")
        except OSError as exc:  # gone, or swapped for a symlink that leads out: refused
            for number in numbers:
                outcome[number] = exc
            return
        try:
            info = os.fstat(folder)
            identity = identities.setdefault(folder_rel, (info.st_dev, info.st_ino))
            for number in numbers:
                try:
                    if (info.st_dev, info.st_ino) != identity:
                        raise Changed(f"{folder_rel}/")
                    step(folder, number)
                except OSError as exc:
                    outcome[number] = exc
        finally:
            os.close(folder)

    def sync_folders(self) -> None:
        """fsync each folder a ``replace(..., sync_folder=False)`` renamed into, once."""
        while self.unsynced:
            folder, _ = self._folder(self.unsynced.pop() + "/x")
            try:
                os.fsync(folder)
            finally:
                os.close(folder)

    def create(self, rel_candidates: Iterable[str], data: bytes) -> str:
        """Write ``data`` as a new file under the first of ``rel_candidates`` (vault paths in one
        existing folder) that is free; never replaces a file. ``FileExistsError`` if none is.
        Created ``rw-r--r--`` less the umask, as an editor would."""
        candidates = list(rel_candidates)
        if not candidates:
            raise ValueError("no name to create")
        folder_rel = candidates[0].rpartition("/")[0]
        real_folder = self.real_path(folder_rel) if folder_rel else ""
        folder, _ = self._folder(f"{real_folder}/x" if real_folder else "x")
        try:
            temp = _write_temp(folder, "new", data, None)
            try:
                for rel in candidates:
                    name = rel.rpartition("/")[2]
                    try:
                        os.link(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
                    except FileExistsError:
                        continue
                    except OSError as exc:
                        if exc.errno not in _NO_LINKS:
                            raise
                        try:  # a file system without hard links: O_EXCL, written in place
                            _write_new(folder, name, data)
                        except FileExistsError:
                            continue
                    os.fsync(folder)
                    return rel
            finally:
                _unlink(temp, folder)
        finally:
            os.close(folder)
        raise FileExistsError(errno.EEXIST, "no free name", candidates[-1])


def why_not_written(problem: OSError) -> str:
    """The reason a file was not written, as ``fix`` and ``mv`` report it."""
    if isinstance(problem, Changed):
        return "changed since it was read"
    return problem.strerror or str(problem)


def _rename_checked(folder: int, snapshot: Snapshot, temp: str) -> None:
    """The last step of ``replace`` and phase three of ``replace_many``: the target re-read,
    the temporary renamed over it; ``Changed`` (the temporary removed) if the target changed
    since it was read."""
    name = snapshot.real.rpartition("/")[2]
    try:
        try:
            current, _ = _read(folder, name)
        except FileNotFoundError:
            raise Changed(snapshot.path) from None
        if current != snapshot.data:
            raise Changed(snapshot.path)
        os.rename(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        _unlink(temp, folder)
        raise


def _flush(root: str) -> None:
    """Everything written to the file system holding ``root`` reaches the disk: ``syncfs``
    (Linux), else ``sync``, which flushes every file system."""
    try:
        import ctypes

        syncfs = ctypes.CDLL(None, use_errno=True).syncfs
    except (ImportError, OSError, AttributeError):
        os.sync()
        return
    fd = os.open(root, os.O_RDONLY | _CLOEXEC)
    try:
        if syncfs(fd) != 0:
            os.sync()  # a file system that refuses syncfs: flush them all
    finally:
        os.close(fd)


def _write_new(folder: int, name: str, data: bytes) -> None:
    fd = os.open(name, _CREATE, 0o644, dir_fd=folder)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)


def _read(folder: int, name: str) -> tuple[bytes, os.stat_result]:
    fd = os.open(name, _READ, dir_fd=folder)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise IsADirectoryError(errno.EISDIR, "not a regular file", name)
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks), info
    finally:
        os.close(fd)


def _write_temp(
    folder: int,
    name: str,
    data: bytes,
    mode: int | None,
    owner: tuple[int, int] = (-1, -1),
    *,
    sync: bool = True,
) -> str:
    """A new hidden file in ``folder`` holding ``data``, with ``mode`` and ``owner`` (None: the
    umask's), fsynced unless ``sync=False`` (``replace_many`` flushes them all at once): its
    name."""
    for attempt in range(100):
        temp = f"{_TEMP_PREFIX}{os.getpid()}-{attempt}-{name[:40]}.tmp"
        try:
            fd = os.open(temp, _CREATE, 0o644 if mode is None else 0o600, dir_fd=folder)
        except FileExistsError:
            continue
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if owner != (-1, -1) and owner != (os.geteuid(), os.getegid()):
                try:
                    os.fchown(fd, *owner)
                except PermissionError:
                    pass  # only root may give a file away: it stays the writer's
            if mode is not None:
                os.fchmod(fd, mode)
            if sync:
                os.fsync(fd)
        except BaseException:
            os.close(fd)
            _unlink(temp, folder)
            raise
        os.close(fd)
        return temp
    raise FileExistsError(errno.EEXIST, "no free temporary name", name)


def _unlink(name: str, folder: int) -> None:
    try:
        os.unlink(name, dir_fd=folder)
    except FileNotFoundError:
        pass
