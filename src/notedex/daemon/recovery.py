"""The daemon's recovery from damage and operator mistakes (ARCHITECTURE "Recovery").

- A corrupt index (a ``PRAGMA quick_check`` at start, SQLITE_CORRUPT or SQLITE_NOTADB later) is
  set aside as ``<name>.corrupt-<UTC time>`` with its -wal and -shm, with a log line naming the
  new name, and a new index is built from the vault.
- The index, its -wal or its -shm deleted (or the whole state folder) while the daemon runs: the
  main thread notices by inode within a second, the writer thread checkpoints what it still has
  open, reopens (a new index when the old is gone) and rescans.
- The lock file deleted: locked again at its path, so a second daemon is refused; when another
  process got there first, this daemon stops (exit 75) rather than share the index.
- A clean stop records what the index files are (``<index>.clean-stop``, ``store.cleanstop``;
  so does a one-shot writer that committed and closed, `notedex index`); the next start skips
  its ``quick_check`` only while they are still exactly those files (issue 35: the check reads
  every page, about 9 s at 1M notes). Any other stop, or any change to the files since (another
  writer, a copy, damage), and the check runs as before.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from notedex.daemon.logging import get_logger
from notedex.store.cleanstop import (
    CLEAN_STOP_SUFFIX,
    record_clean_close,
    unchanged_since_clean_close,
)
from notedex.store.connect import is_corrupt, lock_holder
from notedex.store.database import set_aside, writer_errors
from notedex.store.writer import IndexWriter
from notedex.store.writer_lock import WriterLock

log = get_logger("notedex.daemon")

FileIds = tuple[tuple[int, int] | None, ...]
_waiting_for = [0]  # the pid of the writer whose lock this daemon waits to take back
_NAMES = ("the index", "its -wal file", "its -shm file")


def index_files(db: Path) -> FileIds:
    """(dev, inode) of the index, its -wal and its -shm (None: missing)."""
    out: list[tuple[int, int] | None] = []
    for suffix in ("", "-wal", "-shm"):
        try:
            st = os.stat(f"{db}{suffix}")
        except OSError:
            out.append(None)
        else:
            out.append((st.st_dev, st.st_ino))
    return tuple(out)


def record_clean_stop(db: Path) -> None:
    """After a clean stop (the writer checkpointed and closed): what the index files are now
    (``store.cleanstop``)."""
    try:
        record_clean_close(db)
    except OSError as exc:  # only a slower next start: the check runs then
        log.warning("cannot record the clean stop", path=f"{db}{CLEAN_STOP_SUFFIX}", error=str(exc))


def unchanged_since_clean_stop(db: Path) -> bool:
    """Whether the index files are exactly as the last clean stop of the daemon, or the last
    clean close of a one-shot writer (`notedex index`), left them. Used once."""
    return unchanged_since_clean_close(db)


def replaced_cause(db: Path, opened: FileIds) -> str | None:
    """Why the index files at ``db`` are no longer those opened, or None when they are."""
    now = index_files(db)
    if now == opened:
        return None
    gone = [name for name, was, new in zip(_NAMES, opened, now, strict=True) if was != new]
    return f"{' and '.join(gone)} deleted or replaced while the daemon ran"


def set_aside_logged(db: Path, exc: BaseException) -> Path:
    """Move the corrupt index aside; the log line names the new name."""
    moved = set_aside(db)
    log.error(
        "corrupt index set aside",
        db=str(db),
        moved_to=str(moved),
        error=str(exc),
        action="rebuilding from the vault",
    )
    return moved


def open_checked(
    db: Path,
    new_writer: Callable[[bool], IndexWriter],
    verify: bool,
    rebuilding: Callable[[], None] | None = None,
) -> IndexWriter:
    """``new_writer(verify)``; a corrupt index is set aside and a new one opened.
    ``rebuilding`` runs before a new index is made (the lock record says so, for readers)."""
    if rebuilding is not None and no_index_file(db):
        rebuilding()
    try:
        with writer_errors(db):
            return new_writer(verify)
    except Exception as exc:
        if not is_corrupt(exc):
            raise
        set_aside_logged(db, exc)
        if rebuilding is not None:
            rebuilding()
        with writer_errors(db):
            return new_writer(False)


def no_index_file(db: Path) -> bool:
    """Opening ``db`` makes a new index: it is missing or empty."""
    try:
        return os.stat(db).st_size == 0
    except OSError:
        return True


def lock_still_held(lock: WriterLock | None) -> bool:
    """The lock file may be deleted (a second daemon could then lock a new one): lock the file
    at the path again; False when another process already has."""
    if lock is None or lock.still_held():
        return True
    if lock.renew("daemon"):
        log.warning("lock file deleted or replaced", lock=lock.path, action="locked it again")
        return True
    holder = lock_holder(lock.path)
    if holder is not None and holder.role != "daemon":
        # An `index` or a query's refresh found no lock file (the state folder was removed)
        # and took the new one: it ends soon; take the lock back then rather than leave the
        # vault unwatched (issue 31.9). Only another daemon makes this one stop.
        if holder.pid != _waiting_for[0]:
            _waiting_for[0] = holder.pid
            log.warning(
                "another writer holds the lock for now",
                lock=lock.path,
                holder=holder.pid,
                action="taking it back when it ends",
            )
        return True
    log.error(
        "another process took the writer lock",
        lock=lock.path,
        holder=holder.pid if holder else None,
        action="stopping",
    )
    return False
