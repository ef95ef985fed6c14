"""The writer lock: an exclusive ``flock`` on a lock file beside the database, whose record says
who holds it (ARCHITECTURE "Reading vault text", issue 31).

The lock file is opened with ``O_NOFOLLOW`` and used only when it is a regular file owned by this
user: a symlink there never gets its target truncated. Readers never take the lock; they read
its record with ``store.connect.lock_holder``. A module of its own, which a query never loads:
its class and functions cost every query that loaded them (issue 30's speed budget).
"""

from __future__ import annotations

import os
import stat
import time
from typing import TYPE_CHECKING

from notedex.error_kinds import IndexUnavailable

if TYPE_CHECKING:
    from notedex.store.connect import StrPath


def _flock(fd: int, *, unlock: bool = False) -> None:
    """``flock`` exclusive and non-blocking, or unlock; ``fcntl`` is imported only by a
    writer (a query never takes the lock)."""
    import fcntl

    fcntl.flock(fd, fcntl.LOCK_UN if unlock else fcntl.LOCK_EX | fcntl.LOCK_NB)


_RECORD_WIDTH = 63


class WriterLock:
    """An exclusive ``flock`` on ``<db>.lock``; the file records the holder as "role pid since"."""

    def __init__(self, path: StrPath) -> None:
        self.path = os.fspath(path)
        self._fd: int | None = None
        self._role = ""
        self._since = 0.0
        self._state = ""

    def acquire(self, role: str, *, wait: float = 0.0) -> bool:
        """Try to take the lock, waiting up to ``wait`` seconds. True when held."""
        deadline = time.monotonic() + wait
        fd = self._open()
        while True:
            try:
                _flock(fd)
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    return False
                time.sleep(0.05)
                continue
            if self._is_at_path(fd):
                break
            # Deleted or replaced between our open and our flock: lock the file there now.
            os.close(fd)
            fd = self._open()
        self._fd = fd
        self._record(role)
        return True

    def still_held(self) -> bool:
        """The file at the lock's path is still the one we hold (an operator may delete it)."""
        return self._fd is not None and self._is_at_path(self._fd)

    def renew(self, role: str) -> bool:
        """The lock file was deleted or replaced: lock the one at the path now. False when
        another process holds that one (it started meanwhile): then we no longer hold the lock."""
        fd = self._open()
        try:
            _flock(fd)
        except BlockingIOError:
            os.close(fd)
            return False
        if self._fd is not None:
            os.close(self._fd)
        self._fd = fd
        self._record(role)
        return True

    def _open(self) -> int:
        try:
            os.makedirs(os.path.dirname(os.path.abspath(self.path)), mode=0o700, exist_ok=True)
            fd = os.open(self.path, _LOCK_FLAGS, 0o600)
        except OSError as exc:
            import errno  # a writer's error only: one import less on every query

            if exc.errno == errno.ELOOP:  # O_NOFOLLOW met a symlink: never write through it
                raise IndexUnavailable(_refused(self.path, "is a symlink")) from exc
            # --db under a file or a read-only folder: an input error (exit 2), not a crash.
            raise IndexUnavailable(
                f"cannot create the lock file {self.path}: {exc.strerror or exc}; pass another --db"
            ) from exc
        problem = _lock_file_problem(os.fstat(fd))
        if problem is not None:
            os.close(fd)
            raise IndexUnavailable(_refused(self.path, problem))
        return fd

    def _is_at_path(self, fd: int) -> bool:
        try:
            st = os.stat(self.path)
        except OSError:
            return False
        held = os.fstat(fd)
        return (st.st_dev, st.st_ino) == (held.st_dev, held.st_ino)

    def set_state(self, state: str) -> None:
        """Say in the record what the holder does (``REBUILDING`` or ""): readers read it."""
        self._state = state
        if self._fd is not None:
            self._record(self._role, keep_since=True)

    def _record(self, role: str, *, keep_since: bool = False) -> None:
        """One ``pwrite`` of a record padded to a fixed width: a reader never sees it empty or
        half written while the state changes (split() drops the padding)."""
        assert self._fd is not None
        self._role = role
        if not keep_since:
            self._since = time.time()
        # The state only when there is one: the plain record stays what earlier versions read.
        state = f" {self._state}" if self._state else ""
        text = f"{role} {os.getpid()} {self._since!r}{state}".ljust(_RECORD_WIDTH)
        os.pwrite(self._fd, f"{text}\n".encode(), 0)
        os.ftruncate(self._fd, len(text) + 1)

    def release(self) -> None:
        if self._fd is None:
            return
        try:
            os.ftruncate(self._fd, 0)
        except OSError:
            pass
        _flock(self._fd, unlock=True)
        os.close(self._fd)
        self._fd = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def __enter__(self) -> WriterLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


_LOCK_FLAGS = (
    os.O_RDWR
    | os.O_CREAT
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)  # a FIFO put there must not block the open
    | getattr(os, "O_CLOEXEC", 0)
)


def _lock_file_problem(info: os.stat_result) -> str | None:
    """Why the opened lock file may not be used (issue 31): only a regular file of this user."""
    if not stat.S_ISREG(info.st_mode):
        return "is not a regular file"
    if info.st_uid != os.geteuid():
        return f"belongs to user id {info.st_uid}, not to you ({os.geteuid()})"
    if info.st_nlink > 1:  # a hard link to another file would be truncated like a symlink's target
        return f"has {info.st_nlink - 1} other hard link(s)"
    return None


def _refused(path: str, problem: str) -> str:
    return (
        f"refusing the lock file {path}: it {problem}; the lock file must be a regular file "
        "of yours (remove it, or pass another --db)"
    )
