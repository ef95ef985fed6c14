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

from notedex.store.connect import lock_holder

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
DAEMON_RESCAN_WAIT = 600.0  # `index` with a daemon: how long its rescan may take


class Freshness:
    """What ``ensure_fresh`` found (``state``), when it indexed the apply report, and
    ``notices``: lines for stderr (a corrupt index set aside)."""

    __slots__ = ("check_seconds", "notices", "report", "state")

    def __init__(
        self, state: str, report: dict[str, Any] | None = None, notices: list[str] | None = None
    ) -> None:
        self.state = state
        self.report = report
        self.notices = notices or []
        self.check_seconds: float | None = None
        """How long the etag walk took, when one ran (``slow_check_notice``)."""

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
        if full:
            from notedex.error_kinds import DaemonAlreadyRunning  # (not loaded by a query)

            # The daemon owns the writer for as long as it runs: no rebuild under it.
            raise DaemonAlreadyRunning(
                f"a notedex daemon (pid {holder.pid}) keeps this index fresh; `index --full` "
                "rebuilds only without it: stop the daemon (`notedex service uninstall`, or "
                "end that process), or run `notedex index` to have the daemon rescan"
            )
        return Freshness(DAEMON, rescan_by_daemon(cfg, holder.pid))
    # Only now the etag walk (indexing.etagcheck; vault.walk when the vault is not the plain
    # case): with a daemon, a query never loads it.
    from notedex.indexing.etagcheck import current_file_count

    started = time.perf_counter()
    unchanged = (
        None
        if full or (index and build_left_over(cfg))
        else current_file_count(cfg.vault_dir, cfg.db_file, follow_symlinks=cfg.follow_symlinks)
    )
    checked = time.perf_counter() - started
    if unchanged is not None:
        if not index:
            return _checked(Freshness(CURRENT), full, checked)
        # `index` with nothing to do answers from the stdlib check, without the writer stack.
        done = _nothing_done(unchanged, time.perf_counter() - started)
        return Freshness(CURRENT, _with_errors(cfg, done))
    if not apply:
        return _checked(Freshness(STALE), full, checked)
    from notedex.store.writer_lock import WriterLock  # a writer's only

    lock = WriterLock(cfg.lock_file)
    # Another writer at work on an index that does not exist yet (two first queries at once):
    # wait for it rather than answer "no index".
    wait = WRITER_WAIT if index or not os.path.exists(cfg.db_file) else 0.0
    if not lock.acquire("index", wait=wait):
        if index:
            from notedex.error_kinds import DaemonAlreadyRunning

            who = lock_holder(cfg.lock_file)
            raise DaemonAlreadyRunning(
                f"another notedex process is writing this index (pid {who.pid if who else '?'})"
            )
        return Freshness(BUSY)
    try:
        notices = _remove_leftovers(cfg)
        report = _reconcile(cfg, full, progress, index, notices)
        # the command's time: the check and the walk too, not the apply's alone (an `index` of
        # a 1M vault that rewrote one note said 0.00s after 16 s)
        report["seconds"] = round(time.perf_counter() - started, 3)
        return _checked(Freshness(APPLIED, report, notices), full, checked)
    finally:
        lock.release()


def _checked(fresh: Freshness, full: bool, seconds: float) -> Freshness:
    if not full:  # a walk ran (a full build walks in its own time)
        fresh.check_seconds = seconds
    return fresh


SLOW_CHECK_ENV = "NOTEDEX_SLOW_CHECK_SECONDS"
SLOW_CHECK_SECONDS = 0.5
"""A query's check of the vault slower than this says once an hour how to avoid it."""
SLOW_CHECK_EVERY = 3600.0
SLOW_CHECK_SUFFIX = ".slow-check"
"""Beside the index (never in the vault): its mtime is when the notice was last given."""


def slow_check_notice(cfg: Config, fresh: Freshness) -> str | None:
    """The line for stderr when a query's check of the vault took longer than 0.5 s
    (``$NOTEDEX_SLOW_CHECK_SECONDS``), at most once an hour per index (issue 34; docs/cli.md
    "A slow check before a query"): a daemon keeps the index fresh and spares every query the
    walk. None otherwise, and when the time of the last notice cannot be recorded."""
    seconds = fresh.check_seconds
    if seconds is None:
        return None
    try:
        threshold = float(os.environ.get(SLOW_CHECK_ENV) or SLOW_CHECK_SECONDS)
    except ValueError:
        threshold = SLOW_CHECK_SECONDS
    if seconds <= threshold:
        return None
    stamp = cfg.db_file + SLOW_CHECK_SUFFIX
    try:
        if time.time() - os.stat(stamp).st_mtime < SLOW_CHECK_EVERY:
            return None
    except OSError:
        pass  # never said for this index
    try:
        with open(stamp, "a"):
            pass
        os.utime(stamp)
    except OSError:
        return None  # a read-only state folder: better silent than said on every query
    return (
        f"checking the vault for changes took {seconds:.1f} s before this answer; "
        "`notedex service install` runs a daemon that keeps the index fresh, and queries then "
        "skip the check (said at most once an hour)"
    )


def _remove_leftovers(cfg: Config) -> list[str]:
    """Under the writer lock: a build file left by a stopped `index --full` (issue 31.11)."""
    from notedex.indexing.rebuild import remove_leftovers

    return [
        f"removed {path.name}, left by an `index --full` or a first index that was stopped"
        for path in remove_leftovers(cfg.db)
    ]


def build_left_over(cfg: Config) -> bool:
    """A build file beside the index (ARCHITECTURE "Leftover build files"): an `index` that
    finds one takes the writer lock to remove it, even when nothing else changed."""
    from notedex.store.schema import REBUILD_SUFFIX

    return os.path.lexists(f"{cfg.db}{REBUILD_SUFFIX}")


def recover_corrupt(cfg: Config, progress: Callable[[int, int], None] | None = None) -> Freshness:
    """A query met a corrupt index: set it aside and index anew (ARCHITECTURE "Recovery").

    With a daemon (or another writer) holding the lock, this process cannot write: a clear
    error (the daemon checks the index when it starts and when its writer meets the damage).
    """
    from notedex.error_kinds import IndexCorrupt
    from notedex.store.writer_lock import WriterLock  # a writer's only

    lock = WriterLock(cfg.lock_file)
    if not lock.acquire("index", wait=WRITER_WAIT if _daemon(cfg) is None else 0.0):
        raise IndexCorrupt(cfg.db_file, corrupt_advice(cfg), not_a_database=False)
    try:
        notices: list[str] = []
        report = _rebuild(
            cfg,
            IndexCorrupt(cfg.db_file, "a query could not read it", not_a_database=False),
            progress,
            notices,
        )
        return Freshness(APPLIED, report, notices)
    finally:
        lock.release()


def corrupt_advice(cfg: Config) -> str:
    """What to do about a corrupt index, by who holds the writer lock: with a daemon, never
    "run `notedex index`" (issue 31.9: a script that obeys would compete with the daemon)."""
    who = lock_holder(cfg.lock_file)
    if who is None:
        return "`notedex index` sets it aside and rebuilds it"
    if who.role == DAEMON:
        return (
            f"the daemon (pid {who.pid}) sets a damaged index aside and rebuilds it when it "
            "starts and when its writer meets the damage; if this lasts, restart the daemon"
        )
    return f"another writer (pid {who.pid}) holds the writer lock; try again when it is done"


def rescan_by_daemon(
    cfg: Config, pid: int, *, timeout: float = DAEMON_RESCAN_WAIT
) -> dict[str, Any]:
    """Ask the daemon for a full rescan (SIGHUP) and wait until one that started after the
    signal has committed; its report (meta ``last_rescan``) is `index`'s answer."""
    import json
    import signal

    from notedex.error_kinds import DaemonAlreadyRunning
    from notedex.store import read
    from notedex.store.connect import connect_readonly

    if pid == os.getpid():  # this process holds the daemon's lock: never signal ourselves
        raise DaemonAlreadyRunning(f"this process (pid {pid}) holds the daemon lock of this index")
    asked = time.time()
    try:
        os.kill(pid, signal.SIGHUP)
    except OSError as exc:
        raise DaemonAlreadyRunning(
            f"a notedex daemon (pid {pid}) keeps this index fresh, but it cannot be asked to "
            f"rescan: {exc.strerror or exc}"
        ) from exc
    deadline = time.monotonic() + timeout
    while True:
        conn = connect_readonly(cfg.db_file, rebuilding_ok=True)  # waits for it anyway
        try:
            done = json.loads(read.meta(conn).get("last_rescan", "null"))
        finally:
            conn.close()
        if isinstance(done, dict) and done.get("started", 0) >= asked:
            done.pop("started")
            return done
        holder = _daemon(cfg)
        if holder is None or holder.pid != pid:
            raise DaemonAlreadyRunning(
                f"the notedex daemon (pid {pid}) stopped before it rescanned"
            )
        if time.monotonic() > deadline:
            raise DaemonAlreadyRunning(
                f"the notedex daemon (pid {pid}) did not finish a rescan within {timeout:g} s"
            )
        time.sleep(0.05)


def daemon_keeps_fresh(cfg: Config) -> bool:
    """A daemon holds the writer lock: it keeps the index fresh, nothing to do here."""
    return _daemon(cfg) is not None


def _daemon(cfg: Config) -> LockHolder | None:
    holder = lock_holder(cfg.lock_file)
    return holder if holder is not None and holder.role == "daemon" else None


def _reconcile(
    cfg: Config,
    full: bool,
    progress: Callable[[int, int], None] | None,
    index: bool,
    notices: list[str],
) -> dict[str, Any]:
    """The reconcile under the lock. A corrupt index is set aside and rebuilt; a file that is no
    SQLite database at all only by `index` (a query's ``--db`` may name someone's file)."""
    from notedex.error_kinds import IndexCorrupt

    try:
        return _apply(cfg, full, progress)
    except IndexCorrupt as exc:
        if exc.not_a_database and not index:
            raise IndexCorrupt(
                cfg.db_file,
                f"{exc.reason}; `notedex index` sets it aside and builds a new index",
                not_a_database=True,
            ) from exc
        return _rebuild(cfg, exc, progress, notices)


def _rebuild(
    cfg: Config,
    exc: Exception,
    progress: Callable[[int, int], None] | None,
    notices: list[str],
) -> dict[str, Any]:
    from notedex.store.database import set_aside

    moved = set_aside(cfg.db)
    notices.append(f"{exc}: set aside as {moved}; building a new index from the vault")
    return _apply(cfg, True, progress)


def _apply(cfg: Config, full: bool, progress: Callable[[int, int], None] | None) -> dict[str, Any]:
    from pathlib import Path

    from notedex.indexing.rebuild import needs_build, rebuild
    from notedex.indexing.reconcile import reconcile
    from notedex.store.database import writer_errors
    from notedex.store.writer import IndexWriter

    def writer(db: Path) -> IndexWriter:
        return IndexWriter(
            db,
            cfg.vault,
            max_bytes=cfg.max_bytes,
            body_index=cfg.body_index,
            follow_symlinks=cfg.follow_symlinks,
        )

    with writer_errors(cfg.db):
        if full or needs_build(cfg.db):
            # Built aside and swapped in: readers never see an empty or half-built index.
            report = rebuild(cfg.db, writer, progress=progress).as_dict()
        else:
            with writer(cfg.db) as w:
                report = reconcile(w, progress=progress).as_dict()
    _record_clean_close(cfg)
    return report


def _record_clean_close(cfg: Config) -> None:
    """The writer committed and closed: record the index files as they are, so that a daemon
    started next skips its check of every page as after its own clean stop (issue 35: 5-8 s at
    1M notes; ``store.cleanstop``)."""
    from notedex.store.cleanstop import record_clean_close

    try:
        record_clean_close(cfg.db)
    except OSError:
        pass  # a read-only state folder: the daemon's next start checks the index


def _with_errors(cfg: Config, report: dict[str, Any]) -> dict[str, Any]:
    """`index`'s report with ``errors`` when there was nothing to do: the errors the index
    holds, as a reconcile counts them (``store.read.error_count``, issue 34)."""
    from notedex.store import read
    from notedex.store.connect import connect_readonly

    conn = connect_readonly(cfg.db_file, rebuilding_ok=True)
    try:
        report["errors"] = read.error_count(conn)
    finally:
        conn.close()
    return report


def _nothing_done(unchanged: int, seconds: float) -> dict[str, Any]:
    return {
        "added": 0,
        "changed": 0,
        "removed": 0,
        "moved": 0,
        "unchanged": unchanged,
        "rehashed": 0,
        "seconds": round(seconds, 3),
        "kept": [],
    }


def apply_written(cfg: Config, paths: list[str]) -> Freshness:
    """After a command wrote the vault (``mv``): bring the index in line for the vault paths it
    moved or wrote (``indexing.reconcile.apply_paths``, a folder's path covering its files), not
    by the etag walk of the whole vault a query's check does: the cost is that of the changed
    files, not of the vault (issue 33). With a daemon it sees the writes itself (DAEMON);
    another writer holding the lock leaves it to the next query's check (BUSY). A corrupt index
    is left to the next query's recovery."""
    if _daemon(cfg) is not None:
        return Freshness(DAEMON)
    from notedex.store.writer_lock import WriterLock  # a writer's only

    lock = WriterLock(cfg.lock_file)
    if not lock.acquire("index", wait=WRITER_WAIT):
        return Freshness(BUSY)
    try:
        from notedex.indexing.reconcile import apply_paths
        from notedex.store.database import writer_errors
        from notedex.store.writer import IndexWriter

        with (
            writer_errors(cfg.db),
            IndexWriter(
                cfg.db,
                cfg.vault,
                max_bytes=cfg.max_bytes,
                body_index=cfg.body_index,
                follow_symlinks=cfg.follow_symlinks,
            ) as writer,
        ):
            return Freshness(APPLIED, apply_paths(writer, paths).as_dict())
    finally:
        lock.release()
