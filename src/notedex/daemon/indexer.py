"""The writer thread: the only thread that touches the ``IndexWriter`` (STYLE 5).

It takes batches from the ``Batcher`` and applies them: path hints through ``apply_paths``
(which re-checks the disk for every path), full rescans through ``reconcile``, and the
maintenance jobs. A failed batch is logged and followed by a rescan with backoff; the
thread itself never dies of one. Over 400 lines on purpose: the batch loop and its recoveries
(a missing vault, unreadable paths, a corrupt or replaced index, a stop between chunks) share
the writer and the retry state, and read best together.
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Protocol

from notedex.daemon.batcher import FILTERS, MAINTENANCE, WATCHES, Batch, Batcher, Hint
from notedex.daemon.logging import get_logger
from notedex.daemon.recovery import (
    index_files,
    no_index_file,
    replaced_cause,
    set_aside_logged,
)
from notedex.error_kinds import IndexDiskFull, VaultNotFound
from notedex.errors import NotedexError
from notedex.indexing.apply import ApplyReport
from notedex.indexing.hints import needs_vault_walk, other_names
from notedex.indexing.reconcile import _at_or_under, apply_paths, reconcile
from notedex.store.connect import REBUILDING, is_corrupt
from notedex.store.database import translate, writer_errors
from notedex.store.writer import IndexWriter
from notedex.vault.text import nfc
from notedex.vault.walk import FolderHook

log = get_logger("notedex.daemon.indexer")

BUSY_CHECKPOINT_PAGES = 32_768
"""While batches come, a commit checkpoints the WAL only past this many pages (128 MB; a folder
rename of 12k notes at 100k writes about 13,000, so a rename and the rename back fit)..."""
IDLE_CHECKPOINT = 0.5
"""...and otherwise the writer checkpoints once no batch has come for this long: SQLite's
default (at 1,000 pages, inside the COMMIT) cost a folder rename's batch 0.1-0.2 s after its
move was visible, which the next batch (the rename back) waited for (issue 17)."""
GIT_WAIT_CAP = 30.0
HELD_FOR = 10.0
"""A path held for the next batch (``indexing.pairing.hold``) is not held again this long."""
SAMPLE_PATHS = 5
STOPPING_PATHS = 500
"""A batch taken once the daemon is stopping is applied only up to this many paths."""
UNREADABLE_RETRY_FIRST = 0.5
UNREADABLE_RETRIES = 6
"""A path that could not be looked at is looked at again after 0.5, 1, 2... s (31.5 s in all):
no event arrives when a folder becomes readable again. Then the hourly reconcile."""
VAULT_RETRY_FIRST = 0.25
VAULT_RETRIES = 8
"""Work that met no vault (renamed away, unmounted) is retried as a rescan after 0.25, 0.5,
1... s (about a minute in all): a vault renamed away and back within the supervisor's
one-second look gives no other sign (issue 13.8). Longer, the supervisor sees it missing and
rescans when it comes back."""


def release_memory() -> None:
    """Give the heap a rescan just used back to the OS.

    A rescan that applied many files (a first index, a big checkout) held them and their
    parsed notes for a while (tens of MB at 100k notes); Python frees them, but glibc keeps the
    pages unless asked, and the daemon lives for days. A no-op rescan streams and holds little.
    """
    gc.collect()
    try:
        libc = ctypes.CDLL(None)
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return  # not glibc (macOS, musl): nothing to do
    trim(0)


class Watches(Protocol):
    """The watcher as the writer thread sees it (``daemon.service.Supervisor``)."""

    def rewatch(self) -> list[str]:
        """Add every missing watch under the vault (before a rescan); the files under the
        folders watched again, to compare by content."""

    def unwatched(self) -> list[str]:
        """The vault folders that have no watch now."""


class Interrupted(Exception):
    """Stop was requested while a batch or rescan was running (raised between two chunks,
    each a committed transaction: the next start's reconcile finds the rest)."""


class Indexer:
    """Owns the writer connection; ``start()`` hands it to a thread of its own."""

    def __init__(
        self,
        open_writer: Callable[[], IndexWriter],
        batcher: Batcher,
        *,
        git_dir: Path | None = None,
        stop: threading.Event | None = None,
        fault: str | None = None,
        git_wait_cap: float = GIT_WAIT_CAP,
        mark: Callable[[str], None] | None = None,
        watches: Watches | None = None,
    ) -> None:
        self._open_writer = open_writer
        self._watches = watches
        self._published: list[str] | None = None
        """The unwatched folders last written to the index (meta ``unwatched_folders``)."""
        self._stop = stop or threading.Event()
        self._mark_state = mark
        """Puts the daemon's state in its lock record (``WriterLock.set_state``): readers are
        told "rebuilding" (exit 75) while the index it has open holds no files yet."""
        self.writer = self._open()
        self.files = index_files(self.writer.db_path)
        """(dev, inode) of the index, its -wal and -shm as opened: an operator may delete them."""
        self._batcher = batcher
        self._git_lock = git_dir / "index.lock" if git_dir is not None else None
        self._fault = fault
        self._git_wait_cap = git_wait_cap
        self._stale_git_lock: tuple[int, int] | None = None
        self._failures = 0
        self._unreadable_retries = 0
        self._unreadable_seen: set[str] = set()
        self._vault_retries = 0
        self._held: dict[str, float] = {}
        """Paths held for the next batch, and when (monotonic)."""
        self._unchecked = True
        """A batch (or the start's reconcile) committed since the last checkpoint when idle
        (``IDLE_CHECKPOINT``)."""
        self._thread = threading.Thread(target=self._run, name="notedex-writer")

    # -- thread ---------------------------------------------------------------------------------

    def start(self) -> None:
        self._thread.start()

    def join(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

    def is_alive(self) -> bool:
        return self._thread.is_alive()

    def close(self) -> None:
        """Checkpoint the WAL and close the connection (after the thread has ended)."""
        self.writer.checkpoint()
        self.writer.close()

    def _run(self) -> None:
        while True:
            batch = self._batcher.take(timeout=IDLE_CHECKPOINT if self._unchecked else None)
            if batch is None:
                if self._batcher.closed:
                    return
                self.writer.checkpoint_passive()  # idle: no batch waits for it
                self._unchecked = False
                continue
            self.process(batch)
            self._unchecked = True

    # -- work -----------------------------------------------------------------------------------

    def process(self, batch: Batch) -> None:
        """Apply one batch; never raises (failures become a delayed rescan)."""
        try:
            replaced = self.files_replaced()
            if replaced is not None:
                self._reopen_replaced(replaced)
                self.rescan(replaced)
                self._failures = 0
                return
            if self._fault == "writer" and batch.paths:
                self._fault = None
                raise RuntimeError("injected fault (NOTEDEX_TEST_FAULT=writer)")
            for error in batch.errors:
                log.error("event handler failed", error=repr(error), exc_info=error)
            if FILTERS in batch.tasks and not batch.rescan:
                self.writer.refresh_filters()
                log.info("excluded files reloaded", filters=list(self.writer.filters))
            if self._stop.is_set() and (batch.rescan or len(batch.paths) > STOPPING_PATHS):
                # Stopping: a flush this large would cost seconds before its first chunk (the
                # look at every path); the next start's reconcile finds it all by etag.
                raise Interrupted
            if batch.rescan:
                self.rescan(", ".join(batch.rescan), abort=self._stop.is_set, hinted=batch.paths)
            elif batch.paths:
                self.apply(batch.paths)
            if MAINTENANCE in batch.tasks:
                self.maintain()
            if WATCHES in batch.tasks:
                with self.writer.transaction():
                    self._publish_watches()
            self._failures = 0
        except VaultNotFound as exc:
            self._retry_missing_vault(str(exc))
        except Interrupted:
            self._interrupted(batch)
        except sqlite3.OperationalError as exc:
            if not self._stop.is_set():
                self.failed(exc, "batch failed")
            else:
                self._interrupted(batch)  # a chunk aborted inside by the stop, rolled back
        except Exception as exc:
            self.failed(exc, "batch failed")

    def _interrupted(self, batch: Batch) -> None:
        log.info(
            "batch interrupted",
            paths=len(batch.paths),
            action="stopping; the next start's reconcile applies the rest",
        )

    def failed(self, exc: BaseException, event: str) -> None:
        """A batch or the startup rescan failed: recover and rescan, with backoff (ARCHITECTURE
        "Recovery"). A corrupt index is set aside first; a full disk is waited out."""
        self._failures += 1
        delay = min(60.0, 2.0**self._failures)
        if isinstance(exc, sqlite3.Error):
            exc = translate(exc, self.writer.db_path)
        if is_corrupt(exc):
            self._set_aside(exc)
            delay = 0.0 if self._failures <= 2 else delay
        elif isinstance(exc, IndexDiskFull):
            log.error("disk full", error=str(exc), retry_in=delay)
            self._reopen()
        elif isinstance(exc, NotedexError):
            log.error(event, error=str(exc), retry_in=delay)
            self._reopen()
        else:
            log.exception(event, error=repr(exc), retry_in=delay)
            self._reopen()
        self._batcher.request_rescan("recovering from a failed batch", delay=delay)

    def files_replaced(self) -> str | None:
        """Why the index files on disk are no longer the ones the writer has open, or None."""
        return replaced_cause(self.writer.db_path, self.files)

    def _reopen_replaced(self, cause: str) -> None:
        """Keep what the open files hold (a checkpoint into the index, if it is still there),
        then open what is at the path now: a new index when the old one is gone."""
        log.warning(
            "index files replaced",
            cause=cause,
            db=str(self.writer.db_path),
            action="reopening and rescanning",
        )
        if self.files[0] == index_files(self.writer.db_path)[0]:
            self.writer.checkpoint()
        if self._mark_state is not None and no_index_file(self.writer.db_path):
            self._mark_state(REBUILDING)  # before a reader can see the new, empty file
        self._reopen()

    def apply(self, paths: Sequence[str]) -> ApplyReport:
        paths = self._wait_for_git(list(paths))
        if not self.writer.vault.is_dir():
            # The events are real, the vault is elsewhere for now: never drop them.
            self._retry_missing_vault(f"the vault {self.writer.vault} is not there")
            return ApplyReport()
        started = time.perf_counter()
        paths = other_names(self.writer, paths)
        walk = needs_vault_walk(self.writer, paths)
        if walk:  # the hinted files still get their content compared (issue 13.6)
            report = reconcile(
                self.writer,
                hinted=frozenset(nfc(p) for p in paths),
                progress=self._stop_between_chunks,
            )
        else:
            report = apply_paths(
                self.writer,
                paths,
                progress=self._stop_between_chunks,
                hold_unpaired=self._not_again(),
            )
        if report.held:
            # With the next batch (which may hold the other ends) they are paired or applied
            # as they are then.
            now = time.monotonic()
            # Held by their on-disk names (the hints); not held again by their NFC paths.
            self._held.update(dict.fromkeys(map(nfc, report.held), now))
            self._batcher.defer(report.held)
        self._mark_batch()
        again = self._changed_while_read(report)
        if again:
            self._batcher.add(again, Hint.CHANGED)
        log.info(
            "batch",
            paths=len(paths),
            sample=list(paths[:SAMPLE_PATHS]),
            added=report.added,
            changed=report.changed,
            removed=report.removed,
            moved=report.moved,
            notes_with_errors=report.notes_with_errors,
            requeued=len(again),
            held=len(report.held),
            walked=walk,
            seconds=round(time.perf_counter() - started, 3),
        )
        for reason in report.kept:
            log.warning("kept index rows", reason=reason)
        self._retry_unreadable(report, full=False, hinted=paths)
        return report

    def rescan(
        self,
        cause: str,
        *,
        abort: Callable[[], bool] | None = None,
        hinted: Sequence[str] = (),
        rewatch: bool = True,
        on_folder: FolderHook | None = None,
    ) -> ApplyReport | None:
        """Full reconcile; with ``abort``, stop between transactions once it returns True.
        ``hinted``: paths events named, compared by content even under the same etag.
        ``rewatch``: first add every watch that is missing (ARCHITECTURE "Watches that heal").
        ``on_folder``: told of each folder before the walk lists it (a deferred start's
        watches)."""
        self._wait_for_git([])
        if rewatch and self._watches is not None:
            hinted = [*hinted, *self._watches.rewatch()]
        began = time.time()
        started = time.perf_counter()
        parsed = self.writer.parsed
        log.info("rescan", cause=cause)

        def progress(done: int, total: int) -> None:
            if abort is not None and abort():
                raise Interrupted

        try:
            report = reconcile(
                self.writer,
                progress=progress if abort is not None else None,
                hinted=frozenset(nfc(p) for p in hinted),
                on_folder=on_folder,
            )
        except (Interrupted, sqlite3.OperationalError) as exc:
            if isinstance(exc, sqlite3.OperationalError) and not self._stop.is_set():
                raise
            log.info("rescan interrupted", cause=cause)
            return None
        finally:
            release_memory()
        self._mark_batch(rescan={"started": began, **report.as_dict()})
        if self._mark_state is not None:
            self._mark_state("")  # whatever was being rebuilt is whole now
        self._vault_retries = 0
        log.info(
            "rescan done",
            cause=cause,
            added=report.added,
            changed=report.changed,
            removed=report.removed,
            moved=report.moved,
            unchanged=report.unchanged,
            rehashed=report.rehashed,
            parsed=self.writer.parsed - parsed,
            notes_with_errors=report.notes_with_errors,
            seconds=round(time.perf_counter() - started, 3),
        )
        for reason in report.kept:
            log.warning("kept index rows", reason=reason)
        self._retry_unreadable(report, full=True, hinted=hinted)
        return report

    def maintain(self) -> None:
        """Daily: FTS integrity check (rebuild on failure), optimize, WAL checkpoint."""
        started = time.perf_counter()
        healthy = self.writer.integrity_check()
        if not healthy:
            log.error("fts integrity check failed", action="rebuilding the full-text index")
            self.writer.rebuild_fts()
            if not self.writer.integrity_check():
                log.error(
                    "fts still inconsistent after the rebuild", action="run `notedex index --full`"
                )
        self.writer.optimize()
        self.writer.checkpoint()
        log.info(
            "maintenance",
            integrity="ok" if healthy else "rebuilt",
            seconds=round(time.perf_counter() - started, 3),
        )

    # -- helpers ----------------------------------------------------------------------------------

    def _not_again(self) -> set[str] | None:
        """The paths not to hold (held a moment ago); None while stopping: hold nothing."""
        if self._stop.is_set():
            return None
        now = time.monotonic()
        self._held = {path: at for path, at in self._held.items() if now - at < HELD_FOR}
        return set(self._held)

    def _stop_between_chunks(self, done: int, total: int) -> None:
        """Between two committed chunks of a large batch: stop now when asked (SIGTERM)."""
        if done < total and self._stop.is_set():
            raise Interrupted

    def _retry_unreadable(
        self, report: ApplyReport, *, full: bool, hinted: Sequence[str] = ()
    ) -> None:
        """Paths that could not be looked at, and notes that could not be read: a rescan soon,
        with backoff (no event will come: a chmod back moves no mtime, and polling sees none).
        The ``hinted`` paths at or under them go with it, so their content is compared then (an
        edit that put the mtime back, made while its folder was locked, is seen; issue 31).

        Only a full rescan that could read everything ends the series: a batch elsewhere in the
        vault says nothing about the unreadable folder. A path new to the series starts it
        again, so a note unreadable for good does not leave a later blip without retries.
        """
        unreadable = set(report.unreadable) | self.writer.unreadable_paths()
        if not unreadable:
            if full:
                self._unreadable_retries = 0
                self._unreadable_seen = set()
            return
        if not unreadable <= self._unreadable_seen:
            new = sorted(unreadable - self._unreadable_seen)
            # ARCHITECTURE "Unreadable is visible": their rows are kept, now possibly stale.
            log.warning(
                "cannot read",
                paths=new[:SAMPLE_PATHS],
                count=len(new),
                action="rows kept as last read (scan and health list the errors); retrying",
            )
            self._unreadable_seen |= unreadable
            self._unreadable_retries = 0
        sample = sorted(unreadable)[:SAMPLE_PATHS]
        if self._unreadable_retries >= UNREADABLE_RETRIES:
            if self._unreadable_retries == UNREADABLE_RETRIES:
                log.warning(
                    "still unreadable", sample=sample, action="left to the hourly reconcile"
                )
                self._unreadable_retries += 1
            return
        delay = UNREADABLE_RETRY_FIRST * 2.0**self._unreadable_retries
        self._unreadable_retries += 1
        log.info("unreadable for now", sample=sample, retry_in=delay)
        self._batcher.request_rescan("retrying paths that could not be read", delay=delay)
        tops = set(report.unreadable)
        carried = [path for path in hinted if _at_or_under(nfc(path).strip("/"), tops)]
        if carried:
            self._batcher.defer(carried, delay=delay)

    def _retry_missing_vault(self, error: str) -> None:
        """No vault to apply to: a rescan later, with backoff, instead of dropping the work."""
        if self._vault_retries >= VAULT_RETRIES:
            return  # the supervisor has seen it missing by now and rescans on its return
        delay = VAULT_RETRY_FIRST * 2.0**self._vault_retries
        if self._vault_retries == 0:
            log.warning("vault missing", error=error, action="index left unchanged", retry_in=delay)
        self._vault_retries += 1
        self._batcher.request_rescan("the vault was missing", delay=delay)

    def _mark_batch(self, rescan: dict[str, object] | None = None) -> None:
        """meta ``last_batch``: what ``notedex status`` shows as the daemon's last batch; after a
        rescan, ``last_rescan``: when it started and its report, what `notedex index` waits for."""
        with self.writer.transaction():
            self.writer.set_meta("last_batch", repr(time.time()))
            if rescan is not None:
                self.writer.set_meta("last_rescan", json.dumps(rescan))
            self._publish_watches()

    def _publish_watches(self) -> None:
        """meta ``unwatched_folders``: the folders the watcher could not watch, as ``notedex
        status`` shows them; written when it changed (inside the caller's transaction)."""
        unwatched = self._watches.unwatched() if self._watches is not None else []
        if unwatched == self._published:
            return
        sample = unwatched[:SAMPLE_PATHS]
        self.writer.set_meta(
            "unwatched_folders", json.dumps({"count": len(unwatched), "sample": sample})
        )
        self._published = unwatched

    def _changed_while_read(self, report: ApplyReport) -> list[str]:
        """Files whose disk etag moved on since the writer looked: queue them again.

        A path the next batch looks at anyway (hinted again, or under a hinted folder: a
        folder renamed back at once) is not looked at here (issue 17: a rename's 12k paths were
        all stat'ed, found gone and queued again, one by one, behind the folder's own hint).
        """
        if not report.paths:
            return []
        paths = self._not_pending(dict.fromkeys(report.paths))
        indexed = self.writer.file_rows(paths)
        prefix = os.path.join(self.writer.vault, "")  # a str per stat, no Path per file
        again: list[str] = []
        for path in paths:
            known = indexed.get(path)
            if known is None:
                continue
            rel = known.disk_rel or path
            try:
                st = os.stat(prefix + rel)
            except OSError:
                again.append(rel)
                continue
            if (st.st_size, st.st_mtime_ns, st.st_ino) != (known.size, known.mtime_ns, known.inode):
                again.append(rel)
        return self._not_pending(again) if again else again

    def _not_pending(self, paths: Iterable[str]) -> list[str]:
        """``paths`` but those at or under a hint the batcher holds for the next batch."""
        pending = self._batcher.pending_paths()
        if not pending:
            return list(paths)
        return [path for path in paths if not _at_or_under(path, pending)]

    def _wait_for_git(self, paths: list[str]) -> list[str]:
        """While git holds ``index.lock`` (checkout, rebase), wait (capped), then take the rest."""
        lock = self._git_lock
        if lock is None:
            return paths
        identity = _identity(lock)
        if identity is None or identity == self._stale_git_lock:
            return paths
        started = time.monotonic()
        log.info("waiting for git", lock=str(lock))
        while identity is not None and time.monotonic() - started < self._git_wait_cap:
            if self._stop.wait(0.05):
                break
            identity = _identity(lock)
        waited = round(time.monotonic() - started, 3)
        if identity is not None and not self._stop.is_set():
            # Left behind by a crashed git: do not wait for this one again.
            self._stale_git_lock = identity
            log.warning("git lock still there; indexing anyway", lock=str(lock), waited=waited)
        else:
            log.info("git done", waited=waited)
        seen = set(paths)
        return paths + [p for p in self._batcher.take_now() if p not in seen]

    def _open(self) -> IndexWriter:
        """A writer as the thread uses it: stopped by the daemon's flag, checkpointed when idle.
        An index with no files (new, set aside, its files deleted) is being rebuilt until the
        next rescan completes: the lock record says so (ARCHITECTURE "Repair messages")."""
        writer = self._open_writer()
        writer.stop = self._stop.is_set
        writer.set_checkpoint_pages(BUSY_CHECKPOINT_PAGES)
        if self._mark_state is not None and not writer.has_files():
            self._mark_state(REBUILDING)
        return writer

    def _reopen(self) -> None:
        """After a failure, start again from what the database holds (a fresh connection)."""
        try:
            self.writer.close()
            self.writer = self._open()
        except Exception as exc:
            if is_corrupt(exc):
                self._set_aside(exc)
                return
            log.error("cannot reopen the index", error=str(exc))
        self.files = index_files(self.writer.db_path)

    def _set_aside(self, exc: BaseException) -> None:
        """Move the corrupt index aside (a log line names where) and open a new one."""
        db = self.writer.db_path
        self.writer.close()
        if self._mark_state is not None:
            self._mark_state(REBUILDING)
        set_aside_logged(db, exc)
        try:
            with writer_errors(db):
                self.writer = self._open()
        except Exception as again:
            log.error("cannot open a new index", error=str(again))
        self.files = index_files(db)


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns


def find_git_dir(vault: Path) -> Path | None:
    """The ``.git`` folder of the repository holding the vault, if any (worktrees too)."""
    for folder in (vault, *vault.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return dot_git
        if dot_git.is_file():
            try:
                text = dot_git.read_text(encoding="utf-8").strip()
            except OSError:
                return None
            if text.startswith("gitdir:"):
                target = Path(text.removeprefix("gitdir:").strip())
                return target if target.is_absolute() else (folder / target).resolve()
            return None
    return None
