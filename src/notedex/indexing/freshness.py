"""The one freshness policy (ARCHITECTURE "Freshness"): ``ensure_fresh()``, used by every
query's pre-refresh, by ``notedex index`` and by the MCP server.

It is on every query's path. With a daemon holding the writer lock it answers from the lock
file alone, importing nothing more (this module is on the hot-path list). Without one, the
stdlib etag walk of ``indexing.etagcheck`` decides; only when it finds something is the writer
stack imported and the real reconcile decides what changed.
"""

from __future__ import annotations

import os
import time

from notedex.errors import DaemonAlreadyRunning
from notedex.store.connect import WriterLock, lock_holder

TYPE_CHECKING = False  # hot path (a daemon running): no `typing` import; mypy honours the name
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from notedex.config import Config
    from notedex.store.connect import LockHolder

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
    # Only now the etag walk (vault.walk, json, re ...): with a daemon, a query never loads it.
    from notedex.indexing.etagcheck import current_file_count

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
    from pathlib import Path

    from notedex.indexing.rebuild import needs_build, rebuild
    from notedex.indexing.reconcile import reconcile
    from notedex.store.writer import IndexWriter

    def writer(db: Path) -> IndexWriter:
        return IndexWriter(db, cfg.vault, max_bytes=cfg.max_bytes, body_index=cfg.body_index)

    if full or needs_build(cfg.db):
        # Built aside and swapped in: readers never see an empty or half-built index.
        return rebuild(cfg.db, writer, progress=progress).as_dict()
    with writer(cfg.db) as w:
        return reconcile(w, progress=progress).as_dict()


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
