"""The daemon's parts in-process: batcher, handler, observer fallbacks, overflow hook, supervisor,
writer thread, jobs, sd_notify and logging. Real observers and real SQLite files under tmp_path.
"""

from __future__ import annotations

import errno
import io
import json
import logging
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog
from watchdog.events import (
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
)

from notedex.daemon import batcher as batcher_module
from notedex.daemon import indexer as indexer_module
from notedex.daemon import watcher
from notedex.daemon.batcher import FILTERS, MAINTENANCE, Batch, Batcher, Hint
from notedex.daemon.indexer import Indexer, find_git_dir
from notedex.daemon.jobs import start_jobs
from notedex.daemon.logging import JournalPrefix, configure_logging, on_journal
from notedex.daemon.notify import SystemdNotifier, notify_address, watchdog_interval
from notedex.daemon.service import Supervisor
from notedex.daemon.watcher import (
    OverflowHook,
    VaultEventHandler,
    network_filesystem,
    start_observer,
)
from notedex.store.writer import IndexWriter
from tests.helpers import dump_index, fresh_full_index, fts_integrity_ok, wait_until, write

# -- batcher ------------------------------------------------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def fake_batcher(clock: FakeClock) -> Batcher:
    return Batcher(debounce=0.1, max_delay=1.0, hold_cap=2.0, clock=clock)


def test_batcher_coalesces_per_path_after_the_debounce(
    fake_batcher: Batcher, clock: FakeClock
) -> None:
    fake_batcher.add(["a.md"])
    fake_batcher.add(["a.md", "b.md"])
    fake_batcher.add(["a.md"])
    assert fake_batcher.take(timeout=0) is None  # not quiet yet
    clock.advance(0.1)
    batch = fake_batcher.take(timeout=0)
    assert batch is not None and batch.paths == ["a.md", "b.md"]
    assert fake_batcher.take(timeout=0) is None


def test_batcher_storm_is_flushed_at_the_cap(fake_batcher: Batcher, clock: FakeClock) -> None:
    for i in range(30):  # an event every 50 ms: never quiet
        fake_batcher.add([f"n{i}.md"])
        clock.advance(0.05)
        batch = fake_batcher.take(timeout=0)
        if batch is not None:
            break
    assert batch is not None, "a storm must still make progress"
    assert 15 <= len(batch.paths) <= 21
    assert fake_batcher.pending == 0


def test_batcher_holds_a_file_being_written_until_its_close(
    fake_batcher: Batcher, clock: FakeClock
) -> None:
    fake_batcher.add(["a.md"], Hint.WRITING)
    fake_batcher.add(["b.md"])
    clock.advance(0.5)
    batch = fake_batcher.take(timeout=0)
    assert batch is not None and batch.paths == ["b.md"]
    fake_batcher.add(["a.md"], Hint.CHANGED)  # an attribute change mid-write keeps it held
    clock.advance(0.5)
    assert fake_batcher.take(timeout=0) is None
    fake_batcher.add(["a.md"], Hint.SETTLED)  # FileClosedEvent
    clock.advance(0.1)
    batch = fake_batcher.take(timeout=0)
    assert batch is not None and batch.paths == ["a.md"]


def test_batcher_reads_a_file_held_open_too_long_anyway(
    fake_batcher: Batcher, clock: FakeClock
) -> None:
    fake_batcher.add(["log.md"], Hint.WRITING)
    clock.advance(1.9)
    assert fake_batcher.take(timeout=0) is None
    clock.advance(0.2)
    batch = fake_batcher.take(timeout=0)
    assert batch is not None and batch.paths == ["log.md"]


def test_batcher_rescan_replaces_pending_paths(fake_batcher: Batcher, clock: FakeClock) -> None:
    fake_batcher.add(["a.md", "b.md"])
    fake_batcher.add(["c.md"], Hint.WRITING)
    error = RuntimeError("boom")
    fake_batcher.request_rescan("overflow", error=error)
    fake_batcher.request_rescan("overflow")
    fake_batcher.request_rescan("hourly")
    batch = fake_batcher.take(timeout=0)
    assert batch is not None
    assert batch.rescan == ["overflow", "hourly"] and batch.errors == [error] and not batch.paths
    assert fake_batcher.pending == 0


def test_batcher_delayed_rescan_and_tasks(fake_batcher: Batcher, clock: FakeClock) -> None:
    fake_batcher.request_rescan("retry", delay=5)
    fake_batcher.submit(MAINTENANCE)
    fake_batcher.submit(MAINTENANCE)
    batch = fake_batcher.take(timeout=0)
    assert batch == Batch(tasks=[MAINTENANCE])
    assert fake_batcher.take(timeout=0) is None
    clock.advance(5)
    batch = fake_batcher.take(timeout=0)
    assert batch is not None and batch.rescan == ["retry"]


def test_batcher_close_flushes_everything_then_ends(fake_batcher: Batcher) -> None:
    fake_batcher.add(["a.md"])
    fake_batcher.add(["b.md"], Hint.WRITING)
    fake_batcher.request_rescan("dropped at shutdown")
    fake_batcher.close()
    batch = fake_batcher.take(timeout=0)
    assert batch is not None and sorted(batch.paths) == ["a.md", "b.md"] and not batch.rescan
    assert fake_batcher.take() is None
    fake_batcher.add(["late.md"])
    assert fake_batcher.pending == 0


def test_batcher_take_blocks_until_the_debounce_in_real_time() -> None:
    real = Batcher(debounce=0.05, max_delay=0.5)
    results: list[Batch | None] = []
    consumer = threading.Thread(target=lambda: results.append(real.take(timeout=5)))
    consumer.start()
    started = time.monotonic()
    real.add(["a.md"])
    consumer.join(timeout=5)
    assert results and results[0] is not None and results[0].paths == ["a.md"]
    assert 0.04 <= time.monotonic() - started < 1.0


# -- handler ------------------------------------------------------------------------------------


@pytest.fixture
def handler(tmp_path: Path) -> tuple[VaultEventHandler, Batcher, Path]:
    root = tmp_path / "v"
    root.mkdir()
    queue = Batcher(debounce=0, max_delay=0)
    return VaultEventHandler(root, queue, hold_until_close=True), queue, root


def _drain(queue: Batcher) -> Batch | None:
    return queue.take(timeout=0)


def test_handler_enqueues_both_ends_of_a_move(
    handler: tuple[VaultEventHandler, Batcher, Path],
) -> None:
    h, queue, root = handler
    h.dispatch(FileMovedEvent(str(root / "a.md"), str(root / "sub" / "b.md")))
    h.dispatch(DirMovedEvent(str(root / "old"), str(root / "new")))
    batch = _drain(queue)
    assert batch is not None and batch.paths == ["a.md", "sub/b.md", "old", "new"]


def test_handler_drops_hidden_paths(handler: tuple[VaultEventHandler, Batcher, Path]) -> None:
    h, queue, root = handler
    for rel in (
        ".obsidian/workspace.json",
        ".git/index",
        ".trash/x.md",
        "notes/.x.md.swp",
        "a/.hidden/b.md",
    ):
        h.dispatch(FileCreatedEvent(str(root / rel)))
    h.dispatch(FileCreatedEvent(str(root.parent / "outside.md")))
    assert _drain(queue) is None


def test_handler_move_into_trash_only_checks_the_source(
    handler: tuple[VaultEventHandler, Batcher, Path],
) -> None:
    h, queue, root = handler
    h.dispatch(FileMovedEvent(str(root / "a.md"), str(root / ".trash" / "a.md")))
    h.dispatch(FileMovedEvent(str(root / ".trash" / "b.md"), str(root / "b.md")))
    batch = _drain(queue)
    assert batch is not None and batch.paths == ["a.md", "b.md"]


def test_handler_holds_modified_files_until_closed(
    handler: tuple[VaultEventHandler, Batcher, Path],
) -> None:
    h, queue, root = handler
    h.dispatch(FileModifiedEvent(str(root / "a.md")))
    assert _drain(queue) is None
    h.dispatch(FileClosedEvent(str(root / "a.md")))
    batch = _drain(queue)
    assert batch is not None and batch.paths == ["a.md"]


def test_handler_obsidian_settings_reload_the_excluded_files(
    handler: tuple[VaultEventHandler, Batcher, Path],
) -> None:
    h, queue, root = handler
    h.dispatch(FileClosedEvent(str(root / ".obsidian" / "app.json")))
    assert queue.tasks_pending == [FILTERS]


def test_handler_vault_root_deleted_asks_for_a_rescan(
    handler: tuple[VaultEventHandler, Batcher, Path],
) -> None:
    h, queue, root = handler
    h.dispatch(DirDeletedEvent(str(root)))
    assert queue.rescan_pending


def test_handler_never_raises(
    handler: tuple[VaultEventHandler, Batcher, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    h, queue, root = handler

    def broken(*args: Any, **kwargs: Any) -> None:
        raise OSError("no I/O here, but something broke")

    monkeypatch.setattr(queue, "add", broken)
    h.dispatch(FileDeletedEvent(str(root / "a.md")))
    assert queue.rescan_pending == ["event handler error"]


def test_injected_handler_fault_becomes_a_rescan(tmp_path: Path) -> None:
    queue = Batcher()
    faulty = VaultEventHandler(tmp_path, queue, hold_until_close=False, fault="handler")
    faulty.dispatch(FileCreatedEvent(str(tmp_path / "fault.md")))
    batch = queue.take(timeout=0)
    assert batch is not None and batch.rescan == ["event handler error"]
    assert "NOTEDEX_TEST_FAULT" in str(batch.errors[0])


def test_real_observer_feeds_the_batcher(vault: Path) -> None:
    queue = Batcher(debounce=0.02, max_delay=0.2)
    running = start_observer(
        vault, lambda hold: VaultEventHandler(vault, queue, hold_until_close=hold)
    )
    try:
        write(vault / "sub" / "a.md", "# A")
        write(vault / ".obsidian" / "x.json", "{}")
        batch = wait_until(lambda: queue.take(timeout=0.5), timeout=10, message="a batch")
        paths = set(batch.paths)
        while "sub/a.md" not in paths:
            more = queue.take(timeout=5)
            assert more is not None
            paths |= set(more.paths)
        assert all(not p.startswith(".") for p in paths)
    finally:
        running.stop()


# -- fallbacks, overflow --------------------------------------------------------------------------


def test_too_few_inotify_watches_fall_back_to_polling(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not os.path.exists("/proc/self/fdinfo"):
        pytest.skip("inotify only")
    (vault / "a" / "b").mkdir(parents=True)
    monkeypatch.setattr(watcher, "count_inotify_watches", lambda: 1)
    running = start_observer(
        vault, lambda hold: VaultEventHandler(vault, Batcher(), hold_until_close=hold)
    )
    try:
        assert running.kind == "polling"
        assert running.fallback_reason is not None
        assert (
            "max_user_watches" in running.fallback_reason
            and "of 4 folders" in running.fallback_reason
        )
    finally:
        running.stop()


def test_inotify_watch_count_matches_the_folders(vault: Path) -> None:
    if not os.path.exists("/proc/self/fdinfo"):
        pytest.skip("inotify only")
    (vault / "a" / "b").mkdir(parents=True)
    running = start_observer(
        vault, lambda hold: VaultEventHandler(vault, Batcher(), hold_until_close=hold)
    )
    try:
        assert running.kind == "inotify"
        assert watcher.watch_shortfall(vault) is None
        count = watcher.count_inotify_watches()
        assert count is not None and count >= watcher.count_folders(vault) == 4
    finally:
        running.stop()


def test_inotify_enospc_falls_back_to_polling(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    class NoWatches:
        def schedule(self, *args: Any, **kwargs: Any) -> None:
            raise OSError(errno.ENOSPC, "No space left on device")

        def stop(self) -> None: ...

        def join(self, timeout: float | None = None) -> None: ...

    monkeypatch.setattr(watcher, "_native_observer", lambda: (NoWatches(), "inotify"))
    running = start_observer(
        vault, lambda hold: VaultEventHandler(vault, Batcher(), hold_until_close=hold)
    )
    try:
        assert running.kind == "polling"
        assert "sysctl fs.inotify.max_user_watches=" in (running.fallback_reason or "")
    finally:
        running.stop()


def test_poll_flag_forces_polling(vault: Path) -> None:
    running = start_observer(
        vault, lambda hold: VaultEventHandler(vault, Batcher(), hold_until_close=hold), poll=True
    )
    try:
        assert running.kind == "polling" and running.fallback_reason == "--poll was given"
        assert running.alive()
    finally:
        running.stop()


def test_network_file_systems_are_recognised() -> None:
    mountinfo = (
        "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
        "40 22 0:50 / /mnt/nas rw,relatime shared:20 - nfs4 nas:/export rw\n"
        "41 22 0:51 / /mnt/my\\040share rw - cifs //srv/share rw\n"
    )
    assert network_filesystem(Path("/home/me/vault"), mountinfo) is None
    assert network_filesystem(Path("/mnt/nas/vault"), mountinfo) == "nfs4"
    assert network_filesystem(Path("/mnt/my share/v"), mountinfo) == "cifs"
    assert network_filesystem(Path("/mnt/nasty"), mountinfo) is None


def test_overflow_log_record_schedules_a_rescan() -> None:
    queue = Batcher()
    hook = OverflowHook(lambda message: queue.request_rescan("inotify queue overflow")).install()
    try:
        logging.getLogger("watchdog.observers.inotify_c").warning(
            "Inotify queue overflowed; filesystem events were lost"
        )
        assert queue.rescan_pending == ["inotify queue overflow"]
    finally:
        hook.remove()
    assert hook not in logging.getLogger("watchdog.observers").handlers


def test_overflow_follow_up_lines_do_not_ask_twice() -> None:
    calls: list[str] = []
    hook = OverflowHook(calls.append).install()
    try:
        logging.getLogger("watchdog.observers.inotify").warning(
            "Inotify queue overflowed; reconciling recursive watches below %r", b"/v"
        )
        logging.getLogger("watchdog.observers.inotify").warning("unrelated")
        assert calls == []
    finally:
        hook.remove()


# -- supervisor ---------------------------------------------------------------------------------


def test_supervisor_restarts_a_dead_observer_and_rescans(vault: Path) -> None:
    queue = Batcher()
    supervisor = Supervisor(vault, queue)
    assert supervisor.start()
    try:
        assert supervisor.check() and not queue.rescan_pending
        running = supervisor.running
        assert running is not None
        running.observer.stop()  # the observer dies behind the supervisor's back
        running.observer.join(5)
        assert supervisor.check()
        assert queue.rescan_pending == ["the watcher stopped"]
        assert supervisor.running is not running and supervisor.alive()
    finally:
        supervisor.stop()


def test_supervisor_waits_for_a_missing_vault(vault: Path, tmp_path: Path) -> None:
    queue = Batcher()
    supervisor = Supervisor(vault, queue)
    assert supervisor.start()
    try:
        os.rename(vault, tmp_path / "elsewhere")
        assert supervisor.check()  # waiting on purpose: healthy, nothing deleted, no observer
        assert supervisor.running is None
        assert not queue.rescan_pending
        os.rename(tmp_path / "elsewhere", vault)
        assert supervisor.check()
        assert queue.rescan_pending == ["the vault came back"]
        assert supervisor.alive()
    finally:
        supervisor.stop()


def test_supervisor_is_unhealthy_while_it_cannot_watch(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from notedex.daemon import service

    def fail(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("cannot watch")

    monkeypatch.setattr(service, "start_observer", fail)
    supervisor = Supervisor(vault, Batcher())
    assert not supervisor.start()
    assert not supervisor.check()  # no WATCHDOG=1 ping: systemd restarts us
    supervisor.stop()


# -- writer thread --------------------------------------------------------------------------------


@pytest.fixture
def indexer(vault: Path, db_path: Path) -> Iterator[Indexer]:
    write(vault / "a.md", "# A\n[[b]]\n")
    write(vault / "b.md", "# B\n")
    idx = Indexer(lambda: IndexWriter(db_path, vault, workers=1), Batcher(), git_wait_cap=5)
    idx.rescan("test")
    try:
        yield idx
    finally:
        idx.close()


def test_indexer_applies_hints_and_writes_last_batch(
    indexer: Indexer, vault: Path, db_path: Path, tmp_path: Path
) -> None:
    write(vault / "c.md", "# C [[a]]\n")
    (vault / "b.md").unlink()
    before = time.time()
    indexer.apply(["c.md", "b.md", "a.md"])
    row = indexer.writer.conn.execute("SELECT value FROM meta WHERE key = 'last_batch'").fetchone()
    assert float(row[0]) >= before
    assert dump_index(db_path) == fresh_full_index(vault, tmp_path)


def test_indexer_requeues_a_file_that_changed_while_it_was_read(
    indexer: Indexer, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_apply_paths = indexer_module.apply_paths

    def apply_then_write(writer: IndexWriter, hints: Any) -> Any:
        report = real_apply_paths(writer, hints)
        (vault / "a.md").write_text(
            "# A, longer: written while we were reading\n", encoding="utf-8"
        )
        return report

    monkeypatch.setattr(indexer_module, "apply_paths", apply_then_write)
    (vault / "a.md").write_text("# A2\n", encoding="utf-8")
    queue = indexer._batcher
    indexer.apply(["a.md"])
    assert queue.take_now() == ["a.md"]


def test_indexer_waits_for_git(indexer: Indexer, vault: Path) -> None:
    git = vault / ".git"
    git.mkdir()
    (git / "index.lock").write_text("")
    indexer._git_lock = git / "index.lock"
    write(vault / "c.md", "# C\n")
    remover = threading.Timer(0.4, lambda: (git / "index.lock").unlink())  # git finishes
    started = time.monotonic()
    remover.start()
    try:
        indexer.apply(["c.md"])
    finally:
        remover.join()
    assert 0.3 <= time.monotonic() - started < 4
    assert "c.md" in indexer.writer.indexed_paths()


def test_indexer_gives_up_on_a_stale_git_lock(indexer: Indexer, vault: Path) -> None:
    git = vault / ".git"
    git.mkdir()
    (git / "index.lock").write_text("")
    indexer._git_lock = git / "index.lock"
    indexer._git_wait_cap = 0.3
    started = time.monotonic()
    indexer.apply([])
    assert time.monotonic() - started >= 0.3
    started = time.monotonic()
    indexer.apply([])  # the same lock again: no second wait
    assert time.monotonic() - started < 0.2


def test_find_git_dir(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "vault").mkdir()
    assert find_git_dir(repo / "vault") == repo / ".git"
    worktree = tmp_path / "wt"
    worktree.mkdir()
    (worktree / ".git").write_text(f"gitdir: {repo / '.git' / 'worktrees' / 'wt'}\n")
    assert find_git_dir(worktree) == repo / ".git" / "worktrees" / "wt"


def test_indexer_survives_a_failed_batch(
    indexer: Indexer, vault: Path, db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(writer: IndexWriter, hints: Any) -> Any:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(indexer_module, "apply_paths", broken)
    first_writer = indexer.writer
    indexer.process(Batch(paths=["a.md"]))
    assert indexer._batcher.rescan_pending == ["recovering from a failed batch"]
    assert indexer.writer is not first_writer  # reopened: its in-memory view is reloaded
    monkeypatch.undo()
    write(vault / "d.md", "# D\n")
    indexer.process(Batch(rescan=["retry"]))
    assert dump_index(db_path) == fresh_full_index(vault, tmp_path)


def test_indexer_thread_drains_the_queue_on_close(
    vault: Path, db_path: Path, tmp_path: Path
) -> None:
    queue = Batcher(debounce=10, max_delay=10)  # nothing would be due for a long time...
    idx = Indexer(lambda: IndexWriter(db_path, vault, workers=1), queue)
    idx.rescan("startup")
    idx.start()
    write(vault / "late.md", "# Late\n")
    queue.add(["late.md"])
    queue.close()  # ...but stopping flushes at once
    idx.join(timeout=10)
    assert not idx.is_alive()
    idx.close()
    assert dump_index(db_path) == fresh_full_index(vault, tmp_path)


def test_maintenance_keeps_a_sound_index(indexer: Indexer, db_path: Path) -> None:
    indexer.maintain()
    assert fts_integrity_ok(db_path)


def test_maintenance_repairs_a_corrupted_fts_index(tmp_path: Path) -> None:
    vault = tmp_path / "fts-vault"
    for i in (1, 2, 3):
        write(vault / f"n{i}.md", f"# N{i} [[N1]]\n")
    idx = Indexer(lambda: IndexWriter(tmp_path / "fts.db", vault, workers=1), Batcher())
    try:
        idx.rescan("test")
        # the FTS content and its index disagree (what integrity-check is there to catch):
        # a row changed behind the writer's back, so note_fts_text and title_grams read it
        idx.writer.conn.execute(
            "UPDATE notes SET stem = 'zzz corrupted' WHERE file_id = (SELECT min(file_id) FROM notes)"
        )
        assert not idx.writer.integrity_check()
        idx.maintain()
        assert idx.writer.integrity_check()
    finally:
        idx.close()
    assert fts_integrity_ok(tmp_path / "fts.db")


# -- jobs -------------------------------------------------------------------------------------------


def test_jobs_only_enqueue_work() -> None:
    queue = Batcher()
    scheduler = start_jobs(queue, reconcile_every=0.1, maintain_every=0.1)
    try:
        wait_until(
            lambda: queue.rescan_pending and queue.tasks_pending, timeout=10, message="jobs fired"
        )
        jobs = {job.id: job for job in scheduler.get_jobs()}
        assert set(jobs) == {"reconcile", "maintenance"}
        assert all(job.coalesce and job.max_instances == 1 for job in jobs.values())
    finally:
        scheduler.shutdown(wait=True)
    assert queue.rescan_pending == ["periodic reconcile"]
    assert queue.tasks_pending == [MAINTENANCE]


# -- sd_notify --------------------------------------------------------------------------------------


def test_notify_reaches_a_path_socket(tmp_path: Path) -> None:
    address = str(tmp_path / "n.sock")
    if len(address) > 100:
        pytest.skip("tmp_path too long for AF_UNIX")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as server:
        server.bind(address)
        notifier = SystemdNotifier({"NOTIFY_SOCKET": address})
        assert notifier.notify("READY=1", "STATUS=ok")
        assert server.recv(100) == b"READY=1\nSTATUS=ok"
        notifier.close()


def test_notify_reaches_an_abstract_socket() -> None:
    name = f"notedex-test-{os.getpid()}-{time.monotonic_ns()}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as server:
        server.bind("\0" + name)
        notifier = SystemdNotifier({"NOTIFY_SOCKET": "@" + name})
        assert notifier.notify("WATCHDOG=1")
        assert server.recv(100) == b"WATCHDOG=1"
        notifier.close()


def test_notify_without_a_socket_is_a_no_op() -> None:
    notifier = SystemdNotifier({})
    assert not notifier.enabled and not notifier.notify("READY=1")
    assert notify_address("vsock:2:1234") is None


def test_watchdog_interval_is_half_the_timeout() -> None:
    assert watchdog_interval({"WATCHDOG_USEC": "30000000"}) == 15.0
    assert watchdog_interval({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "1"}) is None
    assert (
        watchdog_interval({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": str(os.getpid())}) == 15.0
    )
    assert watchdog_interval({"WATCHDOG_USEC": "x"}) is None
    assert watchdog_interval({}) is None


# -- logging ----------------------------------------------------------------------------------------


@pytest.fixture
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for extra in [h for h in root.handlers if h not in handlers]:
        root.removeHandler(extra)
    root.setLevel(level)
    structlog.reset_defaults()


def test_logging_writes_json_lines_off_a_tty(restore_logging: None) -> None:
    out = io.StringIO()
    configure_logging(out, environ={})
    structlog.stdlib.get_logger("test.json").info("batch", paths=3, sample=["a.md"], seconds=0.01)
    logging.getLogger("watchdog.observers.inotify_c").warning("Inotify queue overflowed")
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert lines[0]["event"] == "batch" and lines[0]["paths"] == 3 and lines[0]["level"] == "info"
    assert lines[1]["logger"] == "watchdog.observers.inotify_c" and lines[1]["level"] == "warning"


def test_logging_prefixes_the_priority_on_the_journal(
    restore_logging: None, tmp_path: Path
) -> None:
    with open(tmp_path / "journal", "w+", encoding="utf-8") as stream:
        info = os.fstat(stream.fileno())
        env = {"JOURNAL_STREAM": f"{info.st_dev}:{info.st_ino}"}
        assert on_journal(stream, env) and not on_journal(stream, {"JOURNAL_STREAM": "1:2"})
        configure_logging(stream, environ=env)
        structlog.stdlib.get_logger("test.journal").info("ready")
        structlog.stdlib.get_logger("test.journal").error("batch failed")
        stream.flush()
        stream.seek(0)
        lines = stream.read().splitlines()
    assert lines[0].startswith("<6>{") and json.loads(lines[0][3:])["event"] == "ready"
    assert lines[1].startswith("<3>{")


def test_journal_prefix_wraps_any_renderer() -> None:
    render = JournalPrefix(lambda logger, name, event_dict: "line")
    assert render(None, "warning", {"level": "warning"}) == "<4>line"


def test_batcher_defaults_are_in_the_documented_range() -> None:
    assert 0.05 <= batcher_module.DEBOUNCE <= 0.1
    assert batcher_module.MAX_DELAY >= batcher_module.DEBOUNCE


def test_writer_view_after_a_rolled_back_transaction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from notedex.indexing.reconcile import reconcile

    vault = tmp_path / "rb-vault"
    write(vault / "a.md", "# A\n")
    os.utime(vault / "a.md", (1_000_000_000, 1_000_000_000))  # not racy: only the etag is compared
    with IndexWriter(tmp_path / "rb.db", vault, workers=1) as writer:

        def fail(dirty: set[int]) -> None:
            raise RuntimeError("injected failure inside the transaction")

        monkeypatch.setattr(writer, "refresh_fts", fail)
        with pytest.raises(RuntimeError):
            reconcile(writer)
        monkeypatch.undo()
        reconcile(writer)
        assert writer.conn.execute("SELECT count(*) FROM files").fetchone()[0] == 1


def test_logging_is_readable_on_a_tty(restore_logging: None) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Terminal()
    configure_logging(out, environ={})
    structlog.stdlib.get_logger("test.tty").info("batch", paths=3)
    text = out.getvalue()
    assert not text.startswith("{") and "batch" in text and "paths" in text


def test_the_launcher_does_not_run_the_cli_when_a_worker_re_imports_it() -> None:
    """The daemon parses large batches in a forkserver pool; each worker re-imports the script
    the daemon was started from as ``__mp_main__``. Running the CLI there again made a first
    index under the daemon fail (the worker exited: "a daemon is already running")."""
    launcher = Path(__file__).resolve().parents[1] / "scripts" / "notedex"
    code = (
        "import runpy, sys; sys.argv = ['notedex', 'daemon']; "
        f"runpy.run_path({str(launcher)!r}, run_name='__mp_main__'); print('imported only')"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "imported only"
