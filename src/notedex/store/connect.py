"""Connections and the writer lock. Stdlib only: the query path imports this module.

Readers open ``mode=ro`` and keep transactions short. One writer at a time, guarded by an
``flock`` on a lock file beside the database; the lock file also says who holds it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from notedex.errors import IndexUnavailable
from notedex.store.schema import SCHEMA_VERSION

BUSY_TIMEOUT_MS = 10_000


def apply_pragmas(conn: sqlite3.Connection) -> None:
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys = OFF")


def connect_readonly(db_path: Path) -> sqlite3.Connection:
    """A read-only connection to a current index, or IndexUnavailable with what to do."""
    if not db_path.exists():
        raise IndexUnavailable(f"no index at {db_path}; run `notedex index` first")
    uri = f"file:{quote(str(db_path))}?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
        apply_pragmas(conn)
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.DatabaseError as exc:
        raise IndexUnavailable(f"cannot read the index {db_path}: {exc}") from exc
    version = int(row[0]) if row and str(row[0]).isdigit() else None
    if version != SCHEMA_VERSION:
        conn.close()
        raise IndexUnavailable(
            f"the index {db_path} has schema version {version}, this notedex needs "
            f"{SCHEMA_VERSION}; run `notedex index --full` to rebuild it"
        )
    conn.row_factory = sqlite3.Row
    return conn


@contextlib.contextmanager
def read_transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One consistent snapshot for a multi-query answer; short by design."""
    conn.execute("BEGIN")
    try:
        yield conn
    finally:
        conn.execute("COMMIT")


@dataclass(frozen=True)
class LockHolder:
    role: str
    pid: int
    since: float


class WriterLock:
    """An exclusive ``flock`` on ``<db>.lock``; the file records the holder's role and pid."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def acquire(self, role: str, *, wait: float = 0.0) -> bool:
        """Try to take the lock, waiting up to ``wait`` seconds. True when held."""
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    return False
                time.sleep(0.05)
        self._fd = fd
        record = json.dumps({"role": role, "pid": os.getpid(), "since": time.time()})
        os.ftruncate(fd, 0)
        os.pwrite(fd, record.encode(), 0)
        return True

    def release(self) -> None:
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            os.ftruncate(self._fd, 0)
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def __enter__(self) -> WriterLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def lock_holder(path: Path) -> LockHolder | None:
    """Who holds the writer lock, without taking it (a probe must never block a starting daemon)."""
    try:
        raw = path.read_text(encoding="utf-8")
        data = json.loads(raw) if raw.strip() else None
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    try:
        pid = int(data["pid"])
        os.kill(pid, 0)
    except (KeyError, TypeError, ValueError, ProcessLookupError):
        return None  # stale record: the holder died (flock died with it)
    except PermissionError:
        pass  # alive, owned by someone else
    return LockHolder(str(data.get("role", "?")), pid, float(data.get("since", 0.0)))
