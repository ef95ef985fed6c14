"""``notedex daemon``: keep the index equal to the vault while running, catch up at start.

Start order (STYLE 6): logging -> writer lock -> signal handlers -> watcher -> startup
reconcile -> READY -> supervise; the ``finally`` stops everything in reverse and flushes.
The watcher starts before the reconcile so that nothing changed during it is missed (its
hints are applied right after; re-checking a path twice is harmless).

Threads: watchdog's observer (the handler only enqueues), the writer thread (owns the
``IndexWriter``), apscheduler's thread (enqueues jobs), and the main thread, which supervises
the observer, the lock file and the index files (daemon/recovery.py) and pings systemd's watchdog.

Over 400 lines: the start order, the supervise loop and the observer's ``Supervisor`` are one
sequence read together; what recovery needs beyond the loop lives in daemon/recovery.py.
"""

from __future__ import annotations

import datetime as dt
import os
import select
import signal
import socket
import stat
import sys
import threading
import time
from pathlib import Path
from types import FrameType

from notedex.config import Config
from notedex.daemon.batcher import WATCHES, Batcher, Hint
from notedex.daemon.indexer import Indexer, find_git_dir
from notedex.daemon.logging import configure_logging, get_logger
from notedex.daemon.notify import SystemdNotifier
from notedex.daemon.recovery import (
    lock_still_held,
    open_checked,
    record_clean_stop,
    unchanged_since_clean_stop,
)
from notedex.daemon.schema_rebuild import rebuild_other_version
from notedex.daemon.watcher import RunningObserver, VaultEventHandler, start_observer
from notedex.error_kinds import DaemonAlreadyRunning, VaultNotFound
from notedex.errors import EXIT_INTERNAL, EXIT_OK, EXIT_TEMPFAIL, NotedexError
from notedex.indexing.rebuild import other_version
from notedex.store.connect import REBUILDING, lock_holder
from notedex.store.writer import IndexWriter
from notedex.store.writer_lock import WriterLock
from notedex.vault.files import is_hidden_name
from notedex.vault.walk import FolderHook

log = get_logger("notedex.daemon")

FAULT_ENV = "NOTEDEX_TEST_FAULT"
"""Test-only fault injection: ``handler`` (event handling) or ``writer`` (first batch)."""
LOCK_POLL = 0.5
RETRY_CAP = 60.0
REWATCH_FIRST = 1.0
REWATCH_CAP = 60.0
"""A folder that could not be watched is tried again after 1, 2, 4... s, then every minute
(one ``inotify_add_watch`` per such folder: a folder unreadable for good costs nothing)."""


def run_daemon(cfg: Config, *, poll: bool = False) -> int:
    """Run in the foreground until SIGTERM/SIGINT; 0 after a clean stop."""
    configure_logging()
    _use_forkserver()
    notifier = SystemdNotifier()
    lock = WriterLock(cfg.lock_path)
    try:
        acquire_daemon_lock(lock, cfg, notifier)
        daemon = Daemon(
            cfg, poll=poll, notifier=notifier, fault=os.environ.get(FAULT_ENV) or None, lock=lock
        )
        return daemon.run()
    except NotedexError as exc:
        # An input error (no traceback): one JSON line, and its exit code is the process's.
        log.error("cannot run", error=str(exc), exit_code=exc.exit_code)
        return exc.exit_code
    finally:
        lock.release()
        notifier.close()


def acquire_daemon_lock(lock: WriterLock, cfg: Config, notifier: SystemdNotifier) -> None:
    """Take the writer lock as "daemon"; wait out other writers, refuse a second daemon."""
    waiting_for: int | None = None
    last_extend = 0.0
    while not lock.acquire("daemon", wait=0.0 if waiting_for is None else LOCK_POLL):
        holder = lock_holder(cfg.lock_path)
        if holder is not None and holder.role == "daemon":
            since = dt.datetime.fromtimestamp(holder.since, tz=dt.UTC).isoformat(timespec="seconds")
            raise DaemonAlreadyRunning(
                f"a notedex daemon is already running for this vault (pid {holder.pid}, since "
                f"{since}); it keeps {cfg.db} fresh. Stop it first, or use `notedex status`."
            )
        pid = holder.pid if holder is not None else -1
        if pid != waiting_for:
            waiting_for = pid
            who = f"`notedex {holder.role}` (pid {holder.pid})" if holder else "another writer"
            log.info("waiting for the writer lock", holder=who, lock=str(cfg.lock_path))
            notifier.notify(f"STATUS=waiting for {who} to finish writing the index")
        if time.monotonic() - last_extend > 5:
            # A long `notedex index --full` must not make systemd give up on our start.
            notifier.notify("EXTEND_TIMEOUT_USEC=15000000")
            last_extend = time.monotonic()
    if waiting_for is not None:
        log.info("writer lock acquired")


# A daemon that starts on an empty index (or sees a big git checkout) runs a bulk apply; it
# lives for days next to the user's editor, so it trades some speed for less memory: a smaller
# page cache (it is heap, counted in RSS) and smaller batches (each holds its parsed notes, and
# the parser runs about one batch ahead). At 100k notes: peak RSS about 220 -> 150 MB.
DAEMON_BULK_CACHE_KIB = 8 * 1024
DAEMON_BULK_BATCH_SIZE = 1000


class Daemon:
    def __init__(
        self,
        cfg: Config,
        *,
        poll: bool = False,
        notifier: SystemdNotifier | None = None,
        fault: str | None = None,
        lock: WriterLock | None = None,
    ) -> None:
        self.cfg = cfg
        self.lock = lock
        self.poll = poll
        self.notifier = notifier or SystemdNotifier()
        self.fault = fault
        self.stop = threading.Event()
        self._signal: str | None = None
        self._rescan_signal = False
        self._wakeup: tuple[socket.socket, socket.socket] | None = None
        self._last_ping = 0.0
        self._last_extend = time.monotonic()
        self._replaced: str | None = None
        self._verified = False

    def run(self) -> int:
        started = time.monotonic()
        self._install_signal_handlers()
        try:
            return self._run(started)
        finally:
            self._remove_signal_wakeup()

    def _run(self, started: float) -> int:
        batcher = Batcher()
        supervisor = Supervisor(self.cfg.vault, batcher, poll=self.poll, fault=self.fault)
        indexer: Indexer | None = None
        scheduler = None
        exit_code = EXIT_OK
        log.info("starting", vault=str(self.cfg.vault), db=str(self.cfg.db), pid=os.getpid())
        try:
            self._remove_leftovers()
            # Another schema version: built aside and swapped in before anything opens it.
            if other_version(self.cfg.db):  # readers: exit 75, not "run `notedex index --full`"
                self._mark_state(REBUILDING)
            if not rebuild_other_version(
                self.cfg.db, self._writer_at, lambda: self._startup_tick(supervisor)
            ):
                return exit_code
            self._mark_state("")
            indexer = Indexer(
                self._open_writer,
                batcher,
                git_dir=find_git_dir(self.cfg.vault),
                stop=self.stop,
                fault=self.fault,
                mark=self._mark_state,
                watches=supervisor,
            )
            # Only the vault folder is watched now: the start-up walk watches each folder
            # before it lists it (issue 35), so the tree is listed once, not three times.
            supervisor.start(deferred=True)
            hook = supervisor.folder_hook()
            walked = False
            try:
                # No rewatch walk before this rescan: its own walk adds the watches.
                walked = (
                    indexer.rescan(
                        "startup",
                        abort=lambda: self._startup_tick(supervisor),
                        rewatch=False,
                        on_folder=hook,
                    )
                    is not None
                )
            except VaultNotFound as exc:
                log.warning("vault missing", error=str(exc), action="index left unchanged")
            except Exception as exc:
                # A full disk, a corrupt page: recovered and retried by the writer thread with
                # backoff, never an exit that systemd's Restart= would turn into a loop.
                indexer.failed(exc, "startup rescan failed")
            if self._stop_requested():
                return exit_code
            if hook is not None and not walked:
                supervisor.watch_the_rest()
            self.notifier.notify("READY=1", f"STATUS=watching {self.cfg.vault} ({supervisor.kind})")
            log.info("ready", watcher=supervisor.kind, seconds=round(time.monotonic() - started, 3))
            indexer.start()
            from notedex.daemon.jobs import start_jobs

            scheduler = start_jobs(batcher)
            exit_code = self._supervise(supervisor, indexer, batcher)
            return exit_code
        except NotedexError as exc:
            exit_code = exc.exit_code
            log.error("daemon failed", error=str(exc), exit_code=exit_code)
            return exit_code
        except Exception as exc:
            exit_code = EXIT_INTERNAL
            log.exception("daemon failed", error=repr(exc))
            raise
        finally:
            # Reverse order: no new work, flush what is queued, commit, checkpoint.
            if not self._stop_requested():
                self.notifier.notify("STOPPING=1")
                self.stop.set()
            log.info("stopping", signal=self._signal, pending=batcher.pending)
            if scheduler is not None:
                scheduler.shutdown(wait=False)
            supervisor.drain()  # a note saved just before SIGTERM is in the last batch
            supervisor.stop()
            batcher.close()
            if indexer is not None:
                if indexer.is_alive():
                    indexer.join()
                indexer.close()
                if exit_code == EXIT_OK and not indexer.is_alive():
                    record_clean_stop(self.cfg.db)
            log.info("stopped", exit_code=exit_code)

    def _supervise(self, supervisor: Supervisor, indexer: Indexer, batcher: Batcher) -> int:
        interval = self.notifier.watchdog_interval
        tick = min(1.0, interval) if interval else 1.0
        self._ping(supervisor.alive())
        while not self._sleep(tick):
            if self._rescan_signal:
                self._rescan_signal = False
                batcher.request_rescan("SIGHUP")
            healthy = supervisor.check()
            if not indexer.is_alive():
                log.error("the writer thread ended unexpectedly")
                return EXIT_INTERNAL
            if not lock_still_held(self.lock):
                return EXIT_TEMPFAIL
            self._check_index_files(indexer, batcher)
            self._ping(healthy)
        return EXIT_OK

    def _check_index_files(self, indexer: Indexer, batcher: Batcher) -> None:
        """The index, its -wal or -shm deleted under us: the writer thread reopens and rescans."""
        cause = indexer.files_replaced()
        if cause is not None and cause != self._replaced:
            batcher.request_rescan(cause)
        self._replaced = cause

    def _ping(self, healthy: bool) -> None:
        """WATCHDOG=1 at half of WATCHDOG_USEC, and only while the vault is watched."""
        interval = self.notifier.watchdog_interval
        now = time.monotonic()
        if healthy and interval and now - self._last_ping >= interval * 0.9:
            self.notifier.notify("WATCHDOG=1")
            self._last_ping = now

    def _startup_tick(self, supervisor: Supervisor) -> bool:
        """Between the startup reconcile's transactions: keep systemd patient; stop if asked."""
        now = time.monotonic()
        if now - self._last_extend >= 5.0:
            self.notifier.notify("EXTEND_TIMEOUT_USEC=30000000")
            self._last_extend = now
        self._ping(supervisor.alive())
        return self._stop_requested()

    def _stop_requested(self) -> bool:
        """Turn a stop signal into ``self.stop`` (which the writer thread waits on).

        Only ever called from ordinary main-thread code: ``Event.set`` takes the event's lock,
        and a signal handler that took it could deadlock against the same thread's ``wait``.
        """
        if self._signal is not None and not self.stop.is_set():
            self.notifier.notify("STOPPING=1")
            self.stop.set()
        return self.stop.is_set()

    def _sleep(self, seconds: float) -> bool:
        """Wait up to ``seconds``, waking at once on a signal; True once a stop is requested."""
        if self._stop_requested():
            return True
        if self._wakeup is None:
            time.sleep(seconds)
        else:
            reader = self._wakeup[0]
            if select.select([reader], [], [], seconds)[0]:
                try:
                    while reader.recv(64):
                        pass
                except (BlockingIOError, InterruptedError):
                    pass
        return self._stop_requested()

    def _open_writer(self) -> IndexWriter:
        """The writer connection; the first one checks the index (``PRAGMA quick_check``) and
        sets a corrupt one aside, with a log line naming where (ARCHITECTURE "Recovery")."""
        verify = not self._verified
        if verify and unchanged_since_clean_stop(self.cfg.db):
            verify = False
            log.info("index check skipped", reason="the index is as the last clean stop left it")
        self._verified = True
        return open_checked(
            self.cfg.db, self._new_writer, verify, lambda: self._mark_state(REBUILDING)
        )

    def _writer_at(self, db: Path) -> IndexWriter:
        """A writer on ``db`` (the build of another schema version, made aside)."""
        return self._new_writer(False, db)

    def _new_writer(self, verify: bool, db: Path | None = None) -> IndexWriter:
        return IndexWriter(
            db or self.cfg.db,
            self.cfg.vault,
            max_bytes=self.cfg.max_bytes,
            body_index=self.cfg.body_index,
            bulk_cache_kib=DAEMON_BULK_CACHE_KIB,
            bulk_batch_size=DAEMON_BULK_BATCH_SIZE,
            verify=verify,
            follow_symlinks=self.cfg.follow_symlinks,
        )

    def _mark_state(self, state: str) -> None:
        """The daemon's state in its lock record, which readers read (``REBUILDING``: they
        exit 75 with "the daemon is rebuilding the index; try again in a moment")."""
        if self.lock is not None:
            self.lock.set_state(state)

    def _remove_leftovers(self) -> None:
        """A build file left by a stopped `index --full` (ARCHITECTURE "Leftover build files"):
        removed now that this daemon holds the writer lock, so `status` no longer says
        "rebuilding"."""
        from notedex.indexing.rebuild import remove_leftovers

        for path in remove_leftovers(self.cfg.db):
            log.info("leftover build file removed", path=str(path), cause="a build was stopped")

    def _install_signal_handlers(self) -> None:
        # Handlers run on the main thread between bytecodes, possibly while that thread holds
        # a lock (inside ``Event.wait``, say): they only set flags. The C-level wakeup fd makes
        # the supervise loop's ``select`` return at once, and that loop acts on the flags.
        reader, writer = socket.socketpair()
        reader.setblocking(False)
        writer.setblocking(False)
        try:
            signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
        except ValueError:  # not the main thread (an embedding test): poll the flags instead
            reader.close()
            writer.close()
        else:
            self._wakeup = (reader, writer)
        signal.signal(signal.SIGTERM, self._on_stop_signal)
        signal.signal(signal.SIGINT, self._on_stop_signal)
        signal.signal(signal.SIGHUP, self._on_hup)

    def _remove_signal_wakeup(self) -> None:
        if self._wakeup is not None:
            signal.set_wakeup_fd(-1)
            for sock in self._wakeup:
                sock.close()
            self._wakeup = None

    def _on_stop_signal(self, signum: int, frame: FrameType | None) -> None:
        if self._signal is None:
            self._signal = signal.Signals(signum).name

    def _on_hup(self, signum: int, frame: FrameType | None) -> None:
        self._rescan_signal = True


class Supervisor:
    """Keeps an observer running on the vault; every restart is followed by a rescan.

    While the vault folder is missing (unmounted, renamed, still syncing) nothing is deleted:
    the observer is stopped, the daemon keeps running and keeps pinging systemd (it is
    waiting on purpose, and a restart could not do better), and the vault's return means a
    new observer and a rescan.
    """

    def __init__(
        self, root: Path, batcher: Batcher, *, poll: bool = False, fault: str | None = None
    ) -> None:
        self._root = root
        self._batcher = batcher
        self._poll = poll
        self._fault = fault
        self._running: RunningObserver | None = None
        self._identity: tuple[int, int] | None = None
        self._missing = False
        self._backoff = 1.0
        self._next_try = 0.0
        self._unwatched: list[str] = []
        self._rewatch_delay = REWATCH_FIRST
        self._rewatch_at: float | None = None

    @property
    def kind(self) -> str:
        return self._running.kind if self._running is not None else "none"

    @property
    def running(self) -> RunningObserver | None:
        return self._running

    def alive(self) -> bool:
        return self._running is not None and self._running.alive()

    def start(self, *, deferred: bool = False) -> bool:
        """Start the observer; ``deferred``: the folders under the root are watched as the
        start-up reconcile's walk reaches them (``folder_hook``, issue 35)."""
        identity = _folder_identity(self._root)
        if identity is None:
            self._note_missing()
            return False
        try:
            self._running = start_observer(
                self._root, self._make_handler, poll=self._poll, deferred=deferred
            )
        except Exception as exc:
            self._next_try = time.monotonic() + self._backoff
            log.error("cannot watch the vault", error=repr(exc), retry_in=self._backoff)
            self._backoff = min(self._backoff * 2, RETRY_CAP)
            return False
        self._identity = identity
        self._backoff = 1.0
        log.info("watching", vault=str(self._root), watcher=self._running.kind)
        return True

    def check(self) -> bool:
        """One supervision step; True when the vault is watched (or deliberately waited for)."""
        identity = _folder_identity(self._root)
        if identity is None:
            self._note_missing()
            return True
        if self._missing:
            self._missing = False
            log.info("the vault is back", vault=str(self._root))
            return self._restart("the vault came back")
        if self._running is None:
            return self._restart("the watcher was not running")
        if identity != self._identity:
            return self._restart("the vault folder was replaced")
        broken = self._running.broken()
        if broken is not None:
            return self._restart(broken)
        shortfall = self._running.out_of_watches()
        if shortfall is not None:
            # A folder made after the start is not watched: start again, which polls.
            return self._restart(f"inotify ran out of watches ({shortfall})")
        self._heal_watches(self._running)
        return True

    def folder_hook(self) -> FolderHook | None:
        """What watches each folder as the start-up walk reaches it (a deferred start)."""
        return self._running.folder_hook() if self._running is not None else None

    def watch_the_rest(self) -> None:
        """A deferred start whose walk did not finish (failed, vault missing): watch every
        folder still unwatched now, and have the folders and their files looked at, as what
        was made or edited there since the walk stopped was not heard."""
        if self._running is None:
            return
        added = [self._relative(path) for path in self._running.rewatch(full=True)]
        if added:
            self._batcher.add([*added, *self._unheard(added)], Hint.CHANGED)

    def unwatched(self) -> list[str]:
        """The vault folders without a watch at the last check (read by the writer thread)."""
        return self._unwatched

    def rewatch(self) -> list[str]:
        """Before a rescan (the writer thread): add every missing watch under the vault; the
        rescan's walk then finds what was made in those folders meanwhile, and compares by
        content the files it returns, those under them (an edit unheard may keep the etag)."""
        running = self._running
        if running is None:
            return []
        return self._unheard([self._relative(path) for path in running.rewatch(full=True)])

    def _heal_watches(self, running: RunningObserver) -> None:
        """Retry the watches that could not be added, with backoff (ARCHITECTURE "Watches that
        heal"); a folder watched again is looked at, as nothing it got meanwhile was heard."""
        now = time.monotonic()
        if not running.rewatch_due():
            self._rewatch_delay, self._rewatch_at = REWATCH_FIRST, None
        elif self._rewatch_at is None:
            self._rewatch_at = now + self._rewatch_delay
        elif now >= self._rewatch_at:
            added = [self._relative(path) for path in running.rewatch()]
            if added:  # each folder walked, each file in it compared by content
                self._batcher.add([*added, *self._unheard(added)], Hint.CHANGED)
            self._rewatch_delay = min(self._rewatch_delay * 2, REWATCH_CAP)
            self._rewatch_at = now + self._rewatch_delay if running.rewatch_due() else None
        unwatched = [self._relative(path) for path in running.unwatched()]
        if unwatched != self._unwatched:
            self._unwatched = unwatched
            self._batcher.submit(WATCHES)

    def rewatch_soon(self) -> None:
        """A folder's mode changed (the observer thread): the watches that failed may be
        possible now, so the next check retries them, whatever the backoff had reached."""
        self._rewatch_delay, self._rewatch_at = REWATCH_FIRST, 0.0  # due at the next check

    def _unheard(self, folders: list[str]) -> list[str]:
        """The files under ``folders`` (vault-relative, hidden ones left out): made or edited
        while no watch heard them."""
        files: list[str] = []
        for folder in folders:
            for top, dirs, names in os.walk(self._root / folder):
                dirs[:] = [name for name in dirs if not is_hidden_name(name)]
                base = self._relative(top)
                files += (f"{base}/{name}" for name in names if not is_hidden_name(name))
        return files

    def _relative(self, path: str) -> str:
        return Path(os.path.relpath(path, self._root)).as_posix()

    def drain(self) -> None:
        if self._running is not None:
            self._running.drain()

    def stop(self) -> None:
        if self._running is not None:
            self._running.stop()
            self._running = None

    def _restart(self, cause: str) -> bool:
        if time.monotonic() < self._next_try:
            return False
        self.stop()
        log.warning("restarting the watcher", cause=cause)
        if not self.start():
            return False
        self._batcher.request_rescan(cause)
        return True

    def _note_missing(self) -> None:
        if not self._missing:
            self._missing = True
            log.warning(
                "vault missing",
                vault=str(self._root),
                action="index left unchanged; waiting for the vault to come back",
            )
        self.stop()

    def _make_handler(self, hold_until_close: bool) -> VaultEventHandler:
        return VaultEventHandler(
            self._root,
            self._batcher,
            hold_until_close=hold_until_close,
            fault=self._fault,
            on_folder_mode=self.rewatch_soon,
        )


def _folder_identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISDIR(st.st_mode) else None


def _use_forkserver() -> None:
    """The writer parses big batches in a process pool; never fork this threaded process."""
    if not sys.platform.startswith("linux"):
        return  # macOS already spawns
    import multiprocessing

    multiprocessing.set_start_method("forkserver", force=True)
    # The pool's code, and the forkserver's (and so its workers') end with the daemon.
    multiprocessing.set_forkserver_preload(["notedex.indexing.poolserver"])
