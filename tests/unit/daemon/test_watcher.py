"""daemon/watcher.py: the event handler, a real observer, inotify fallbacks to polling, network file systems and a queue overflow."""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from watchdog.events import (
    DirAttribEvent,
    DirDeletedEvent,
    DirMovedEvent,
    EventsLostEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
)

from notedex.daemon import watcher
from notedex.daemon.batcher import FILTERS, Batch, Batcher, Hint
from notedex.daemon.watcher import (
    EVENT_FILTER,
    OVERFLOW_RESCAN,
    VaultEventHandler,
    network_filesystem,
    start_observer,
)
from notedex.indexing.reconcile import apply_paths, reconcile
from notedex.store.writer import IndexWriter
from tests.helpers import dump_index, fresh_full_index, wait_until, write


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


def test_handler_hints_a_folder_whose_mode_changed(
    handler: tuple[VaultEventHandler, Batcher, Path],
) -> None:
    # Issue 31.5: a chmod of a folder is its only event; the vault folder's is a rescan.
    h, queue, root = handler
    assert DirAttribEvent in EVENT_FILTER  # else watchdog drops it
    h.dispatch(DirAttribEvent(str(root / "P")))
    assert queue.pending_paths() == {"P"}
    assert not queue.rescan_pending
    told: list[bool] = []
    telling = VaultEventHandler(
        root, queue, hold_until_close=True, on_folder_mode=lambda: told.append(True)
    )
    telling.dispatch(FileModifiedEvent(str(root / "a.md")))
    assert told == []
    telling.dispatch(DirAttribEvent(str(root / "P")))
    assert told == [True]  # the supervisor retries the watches it lacks
    h.dispatch(DirAttribEvent(str(root)))
    assert queue.rescan_pending == ["the vault folder's mode or times changed"]


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


def test_lost_events_schedule_one_rescan(handler: tuple[VaultEventHandler, Batcher, Path]) -> None:
    # watchdog 7.1.1 reports a kernel queue overflow as an EventsLostEvent for the watched
    # folder (the vault): a rescan, not the "vault folder was deleted or moved" one.
    h, queue, root = handler
    assert EventsLostEvent in watcher.EVENT_FILTER  # else watchdog does not deliver it
    h.dispatch(EventsLostEvent(str(root), is_directory=True))
    h.dispatch(EventsLostEvent(str(root), is_directory=True))
    assert queue.rescan_pending == [OVERFLOW_RESCAN]
    assert _drain(queue) is not None and queue.hints_added == 0


def test_no_inotify_instance_at_all_falls_back_to_polling(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 13.7: EMFILE from inotify_init used to escape start_observer: READY, no watcher.
    def no_instance() -> Any:
        raise OSError(errno.EMFILE, "inotify instance limit reached")

    monkeypatch.setattr(watcher, "_native_observer", no_instance)
    running = start_observer(
        vault, lambda hold: VaultEventHandler(vault, Batcher(), hold_until_close=hold)
    )
    try:
        assert running.kind == "polling"
        assert "fs.inotify.max_user_instances" in (running.fallback_reason or "")
        assert running.alive()
    finally:
        running.stop()


def test_handler_drops_synthetic_moves_under_a_moved_folder(
    handler: tuple[VaultEventHandler, Batcher, Path],
) -> None:
    h, queue, root = handler
    h.dispatch(DirMovedEvent(str(root / "old"), str(root / "new")))
    h.dispatch(FileMovedEvent(str(root / "old/a.md"), str(root / "new/a.md"), is_synthetic=True))
    h.dispatch(DirMovedEvent(str(root / "old/s"), str(root / "new/s"), is_synthetic=True))
    h.dispatch(FileCreatedEvent(str(root / "new/fresh.md")))  # made after the move: real
    batch = _drain(queue)
    assert batch is not None and batch.paths == ["old", "new", "new/fresh.md"]
    assert queue.hints_added == 3


def test_handler_drops_synthetic_deletions_under_a_folder_moved_out(
    handler: tuple[VaultEventHandler, Batcher, Path],
) -> None:
    # watchdog 7.1.1 follows the deletion of a folder moved out of the vault with one made up
    # for each of its subfolders: the folder's own hint covers them.
    h, queue, root = handler
    h.dispatch(DirDeletedEvent(str(root / "gone")))
    h.dispatch(DirDeletedEvent(str(root / "gone/sub"), is_synthetic=True))
    h.dispatch(DirDeletedEvent(str(root / "gone/sub/deeper"), is_synthetic=True))
    h.dispatch(DirDeletedEvent(str(root / "real")))
    batch = _drain(queue)
    assert batch is not None and batch.paths == ["gone", "real"]
    assert queue.hints_added == 2


class _Hints(Batcher):
    """A batcher that records the kind of each hint it is given."""

    def __init__(self) -> None:
        super().__init__()
        self.kinds: list[tuple[list[str], Hint]] = []

    def add(self, paths: Iterable[str], hint: Hint = Hint.CHANGED) -> None:
        self.kinds.append((list(paths), hint))


def test_handler_hints_a_folder_moved_within_the_vault_as_one(tmp_path: Path) -> None:
    """Issue 17: a folder moved within the vault is ``Hint.FOLDER_MOVED`` (its own shorter
    window); a file move, or a folder moved to a hidden folder (a deletion), is not."""
    root = tmp_path / "v"
    root.mkdir()
    queue = _Hints()
    h = VaultEventHandler(root, queue, hold_until_close=True)
    h.dispatch(DirMovedEvent(str(root / "old"), str(root / "new")))
    h.dispatch(FileMovedEvent(str(root / "a.md"), str(root / "b.md")))
    h.dispatch(DirMovedEvent(str(root / "gone"), str(root / ".trash" / "gone")))
    assert queue.kinds == [
        (["old", "new"], Hint.FOLDER_MOVED),
        (["a.md", "b.md"], Hint.SETTLED),
        (["gone"], Hint.SETTLED),
    ]


def _observed(vault: Path, queue: Batcher, *, poll: bool = False) -> watcher.RunningObserver:
    return start_observer(
        vault,
        lambda hold: VaultEventHandler(vault, queue, hold_until_close=hold),
        poll=poll,
        poll_interval=0.1,
    )


def _collect(queue: Batcher, wanted: set[str]) -> set[str]:
    paths: set[str] = set()
    while not wanted <= paths:
        batch = queue.take(timeout=10)
        assert batch is not None, f"no batch with {wanted - paths}"
        paths |= set(batch.paths)
    return paths


@pytest.mark.slow
def test_real_observer_hands_a_folder_rename_over_as_one_hint_pair(
    vault: Path, db_path: Path, tmp_path: Path
) -> None:
    for i in range(200):
        write(vault / "big" / f"sub{i % 4}" / f"n{i}.md", f"# N{i}\n[[n{(i + 1) % 200}]]\n")
    write(vault / "out.md", "# Out\n[[big/sub0/n0]] [[n5]]\n")
    writer = IndexWriter(db_path, vault, workers=1)
    reconcile(writer)
    queue = Batcher(debounce=0.05, max_delay=0.5)
    running = _observed(vault, queue)
    try:
        assert running.kind == "inotify"
        os.rename(vault / "big", vault / "moved")
        write(vault / "moved" / "sub1" / "late.md", "# Late\n")  # right after: still seen
        paths = _collect(queue, {"big", "moved", "moved/sub1/late.md"})
        running.drain()
        while (more := queue.take(timeout=0.3)) is not None:
            paths |= set(more.paths)
        assert paths <= {"big", "moved", "moved/sub1", "moved/sub1/late.md"}
        assert queue.hints_added <= 6  # not 200 + 4 folders
        report = apply_paths(writer, sorted(paths))
        assert report.moved == 200 and report.added == 1
        assert dump_index(db_path) == fresh_full_index(vault, tmp_path)
    finally:
        running.stop()
        writer.close()


def test_polling_observer_still_reports_each_moved_file(vault: Path) -> None:
    for i in range(5):
        write(vault / "big" / f"n{i}.md", f"# N{i}\n")
    queue = Batcher(debounce=0.05, max_delay=0.5)
    running = _observed(vault, queue, poll=True)
    try:
        write(vault / "probe.md", "# P\n")  # seen: the first snapshot predates the move
        _collect(queue, {"probe.md"})
        os.rename(vault / "big", vault / "moved")
        _collect(queue, {"big", "moved", *(f"moved/n{i}.md" for i in range(5))})
    finally:
        running.stop()


def test_each_checked_watchdog_release_watches_with_our_inotify_observer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The gate's other side: pyproject.toml allows a range of watchdog releases, and on each
    one in ``daemon.inotify.BUILT_FOR`` the daemon watches with our subclass."""
    if not sys.platform.startswith("linux"):
        pytest.skip("inotify only")
    try:
        from notedex.daemon.inotify import BUILT_FOR, VaultInotifyObserver
    except ImportError as exc:  # the installed release lacks the private names it uses
        pytest.skip(f"daemon.inotify cannot import under this watchdog: {exc}")
    from notedex.daemon.watcher import _native_observer

    for release in sorted(BUILT_FOR):
        monkeypatch.setattr("watchdog.version.VERSION_STRING", release)
        observer, kind = _native_observer()
        assert (type(observer), kind) == (VaultInotifyObserver, "inotify"), release


def _watchdogs_own_observer_hears_the_vault(vault: Path) -> None:
    """The daemon's watcher is watchdog's own ``InotifyObserver`` (not our subclass), and it
    hears a new note, a note in a new folder and that folder renamed."""
    from watchdog.observers.inotify import InotifyObserver

    queue = Batcher(debounce=0.02, max_delay=0.2)
    running = start_observer(
        vault, lambda hold: VaultEventHandler(vault, queue, hold_until_close=hold)
    )
    seen: set[str] = set()

    def heard(*paths: str) -> bool:
        batch = queue.take(timeout=0.2)
        if batch is not None:
            seen.update(batch.paths)
        return set(paths) <= seen

    try:
        assert running.kind == "inotify"
        assert type(running.observer) is InotifyObserver
        write(vault / "a.md", "# A")
        write(vault / "sub" / "b.md", "# B")
        wait_until(lambda: heard("a.md", "sub/b.md"), timeout=10, message="the new notes")
        os.rename(vault / "sub", vault / "moved")
        wait_until(lambda: heard("sub", "moved"), timeout=10, message="the folder's move")
    finally:
        running.stop()


def test_an_unchecked_watchdog_release_watches_with_watchdogs_own_observer(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under a watchdog release ``daemon.inotify`` was not checked against, its subclass is
    not used (the one written for 7.1.0 heard nothing under 7.1.1): watchdog's own is."""
    if not sys.platform.startswith("linux"):
        pytest.skip("inotify only")
    monkeypatch.setattr("watchdog.version.VERSION_STRING", "99.0.0")
    _watchdogs_own_observer_hears_the_vault(vault)


def test_when_our_inotify_observer_cannot_be_imported_watchdogs_own_one_watches(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``daemon.inotify`` imports watchdog's private names: under a release that lacks them
    the import fails, and the daemon still watches, with watchdog's own observer."""
    if not sys.platform.startswith("linux"):
        pytest.skip("inotify only")
    monkeypatch.setitem(sys.modules, "notedex.daemon.inotify", None)  # import raises
    _watchdogs_own_observer_hears_the_vault(vault)
