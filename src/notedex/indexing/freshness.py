"""The one freshness policy (ARCHITECTURE "Freshness"): ``ensure_fresh()``, used by every
query's pre-refresh, by ``notedex index`` and by the MCP server.

Its fast path is on every query's path: a stdlib etag walk that compares every file's
(size, mtime_ns, inode) with the index. Anything new, gone, changed, racy (see etags), a
note that could not be read last time, or a changed "Excluded files" list means "not
current"; only then is the writer stack imported and the real reconcile decides what changed.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from typing import TYPE_CHECKING, Any

from notedex.errors import DaemonAlreadyRunning, NotedexError
from notedex.store import read
from notedex.store.connect import LockHolder, WriterLock, connect_readonly, lock_holder
from notedex.store.etags import RACY_WINDOW_NS
from notedex.vault.walk import load_excluded_filters, walk_vault

if TYPE_CHECKING:
    from collections.abc import Callable

    from notedex.config import Config

DAEMON = "daemon"  # a daemon holds the writer lock: it keeps the index fresh
CURRENT = "current"  # the etag walk found nothing to do
STALE = "stale"  # something changed and the caller asked only to check
BUSY = "busy"  # another writer holds the lock and waiting for it was not worth it
APPLIED = "applied"  # the reconcile ran; ``report`` holds its figures
WRITER_WAIT = 30.0


class Freshness:
    """What ``ensure_fresh`` found (``state``) and, when it indexed, the apply report."""

    __slots__ = ("report", "state")

    def __init__(self, state: str, report: dict[str, Any] | None = None) -> None:
        self.state = state
        self.report = report

    @property
    def current(self) -> bool:
        """Nothing for this process to do: a daemon keeps it fresh, or it is current."""
        return self.state in (DAEMON, CURRENT, APPLIED)


def ensure_fresh(
    cfg: Config,
    *,
    index: bool = False,
    full: bool = False,
    apply: bool = True,
    progress: Callable[[int, int], None] | None = None,
) -> Freshness:
    """Bring the index up to date unless a daemon does (or, ``apply=False``, only check).

    ``index``: the ``notedex index`` command, which must not be skipped: a daemon or another
    writer holding the lock is an error (exit 75), and another writer is waited for.
    """
    holder = _daemon(cfg)
    if holder is not None:
        if not index:
            return Freshness(DAEMON)
        # Waiting would be pointless: a daemon holds the lock for as long as it runs.
        raise DaemonAlreadyRunning(
            f"a notedex daemon (pid {holder.pid}) keeps this index fresh; stop it to run `index`"
        )
    started = time.perf_counter()
    unchanged = None if full else current_file_count(cfg.vault_dir, cfg.db_file)
    if unchanged is not None:
        if not index:
            return Freshness(CURRENT)
        # `index` with nothing to do answers from the stdlib check, without the writer stack.
        return Freshness(CURRENT, _nothing_done(unchanged, time.perf_counter() - started))
    if not apply:
        return Freshness(STALE)
    lock = WriterLock(cfg.lock_file)
    # Another writer at work on an index that does not exist yet (two first queries at once):
    # wait for it rather than answer "no index".
    wait = WRITER_WAIT if index or not os.path.exists(cfg.db_file) else 0.0
    if not lock.acquire("index", wait=wait):
        if index:
            who = lock_holder(cfg.lock_file)
            raise DaemonAlreadyRunning(
                f"another notedex process is writing this index (pid {who.pid if who else '?'})"
            )
        return Freshness(BUSY)
    try:
        return Freshness(APPLIED, _reconcile(cfg, full, progress))
    finally:
        lock.release()


def daemon_keeps_fresh(cfg: Config) -> bool:
    """A daemon holds the writer lock: it keeps the index fresh, nothing to do here."""
    return _daemon(cfg) is not None


def _daemon(cfg: Config) -> LockHolder | None:
    holder = lock_holder(cfg.lock_file)
    return holder if holder is not None and holder.role == "daemon" else None


def _reconcile(
    cfg: Config, full: bool, progress: Callable[[int, int], None] | None
) -> dict[str, Any]:
    from notedex.indexing.reconcile import reconcile
    from notedex.store.writer import IndexWriter

    with IndexWriter(cfg.db, cfg.vault, max_bytes=cfg.max_bytes, body_index=cfg.body_index) as w:
        return reconcile(w, full=full, progress=progress).as_dict()


def _nothing_done(unchanged: int, seconds: float) -> dict[str, Any]:
    return {
        "added": 0,
        "changed": 0,
        "removed": 0,
        "moved": 0,
        "unchanged": unchanged,
        "rehashed": 0,
        "errors": 0,
        "seconds": round(seconds, 3),
        "kept": [],
    }


def index_is_current(vault: str | os.PathLike[str], db: str | os.PathLike[str]) -> bool:
    return current_file_count(vault, db) is not None


def current_file_count(vault: str | os.PathLike[str], db: str | os.PathLike[str]) -> int | None:
    """The number of vault files when the index is current, else None."""
    if not os.path.exists(db):
        return None
    try:
        conn = connect_readonly(db)
    except NotedexError:
        return None
    try:
        if read.has_unreadable_notes(conn):
            return None  # a chmod changes no etag: let the writer try those notes again
        indexed = {r["path"]: r for r in read.file_etags(conn)}
        excluded_filters = read.meta(conn).get("excluded_filters")
    except sqlite3.DatabaseError:
        return None
    finally:
        conn.close()
    walk = walk_vault(vault)
    if len(walk.files) != len(indexed):
        return None
    for vf in walk.files:
        row = indexed.get(vf.path)
        if row is None or (row["size"], row["mtime_ns"], row["inode"]) != (
            vf.size,
            vf.mtime_ns,
            vf.inode,
        ):
            return None
        if vf.mtime_ns + RACY_WINDOW_NS >= row["indexed_ns"]:
            return None  # racy: let the writer compare content
    if excluded_filters != json.dumps(list(load_excluded_filters(vault))):
        return None
    return len(walk.files)
