"""daemon/inotify.py: a recursive inotify watch follows a folder that leaves the vault and comes back, and lets go of one that left for good (issue 13); prompt moves (issue 17); failures, overflows and the drain check."""

from __future__ import annotations

import errno
import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers.inotify import _INVALID_WD
from watchdog.observers.inotify_c import InotifyConstants, InotifyEvent, WatchDescriptor

from notedex.daemon.inotify import (
    VaultInotifyObserver,
    _Emitter,
    _PromptQueue,
    _WatchGroup,
)
from notedex.daemon.watcher import EVENT_FILTER, RunningObserver, count_inotify_watches
from tests.helpers import wait_until, write

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux")


class Recorder(FileSystemEventHandler):
    def __init__(self) -> None:
        self.paths: list[str] = []
        self._lock = threading.Lock()

    def on_any_event(self, event: FileSystemEvent) -> None:
        with self._lock:
            self.paths.append(os.fsdecode(event.src_path))
            if event.dest_path:
                self.paths.append(os.fsdecode(event.dest_path))

    def seen(self, path: Path) -> bool:
        with self._lock:
            return str(path) in self.paths


@pytest.fixture
def watched(tmp_path: Path) -> Iterator[tuple[Path, Recorder, VaultInotifyObserver]]:
    root = tmp_path / "v"
    write(root / "P" / "F" / "sub" / "a.md", "a")
    (root / "Archive").mkdir()
    recorder = Recorder()
    observer = VaultInotifyObserver()
    observer.schedule(recorder, str(root), recursive=True, event_filter=EVENT_FILTER)
    observer.start()
    try:
        yield root, recorder, observer
    finally:
        observer.stop()
        observer.join(timeout=10)


def _group(observer: VaultInotifyObserver) -> _WatchGroup:
    (emitter,) = observer.emitters
    assert isinstance(emitter, _Emitter)
    group = emitter._inotify
    assert isinstance(group, _WatchGroup)
    return group


def _consistent(group: _WatchGroup) -> bool:
    """Each watched folder is on disk and has one node in watchdog's tree of watches: every
    descriptor resolves to a path, and no node left in the tree holds a descriptor that
    belongs to another node (removing that node would take the descriptor away)."""
    by_path = dict(group._active_callbacks_by_path)  # watchdog's view, computed from the tree
    if len(by_path) != len(group._nodes_by_wd) or not all(os.path.isdir(p) for p in by_path):
        return False
    nodes = [group._root] if group._root is not None else []
    while nodes:
        node = nodes.pop()
        if node.wd != _INVALID_WD and group._nodes_by_wd.get(node.wd) is not node:
            return False
        nodes.extend(node.children.values())
    return True


def test_a_folder_moved_out_and_back_is_watched_at_its_new_path(
    watched: tuple[Path, Recorder, VaultInotifyObserver], tmp_path: Path
) -> None:
    root, recorder, observer = watched
    outside = tmp_path / "outside"
    outside.mkdir()
    os.rename(root / "P" / "F", outside / "F")
    os.rename(outside / "F", root / "Archive" / "G")
    os.rename(root / "P", root / "P2")
    wait_until(lambda: recorder.seen(root / "P2"), message="the move of P")
    write(root / "Archive" / "G" / "sub" / "new.md", "new")
    wait_until(lambda: recorder.seen(root / "Archive" / "G" / "sub" / "new.md"))
    assert not [p for p in recorder.paths if p.startswith(str(root / "P2" / "F"))]
    assert _consistent(_group(observer))


def test_a_folder_moved_out_and_back_before_its_move_out_is_reported_stays_watched(
    watched: tuple[Path, Recorder, VaultInotifyObserver], tmp_path: Path
) -> None:
    # Back within watchdog's 0.5 s: the kernel watches are still there, the descriptors the
    # same. watchdog alone then removes them with the old path's nodes, and G goes deaf.
    root, recorder, observer = watched
    outside = tmp_path / "outside"
    outside.mkdir()
    os.rename(root / "P" / "F", outside / "F")
    os.rename(outside / "F", root / "Archive" / "G")
    wait_until(lambda: recorder.seen(root / "P" / "F"), message="the move out reported")
    wait_until(lambda: recorder.seen(root / "Archive" / "G"), message="the move back in")
    write(root / "Archive" / "G" / "sub" / "new.md", "new")
    wait_until(lambda: recorder.seen(root / "Archive" / "G" / "sub" / "new.md"))
    # A folder made again at the old path is watched (no stale node looks watched there).
    write(root / "P" / "F" / "again.md", "again")
    wait_until(lambda: recorder.seen(root / "P" / "F" / "again.md"))
    (root / "P" / "F" / "deep").mkdir()
    write(root / "P" / "F" / "deep" / "x.md", "x")
    wait_until(lambda: recorder.seen(root / "P" / "F" / "deep" / "x.md"))
    assert _consistent(_group(observer))


def test_a_folder_moved_out_for_good_is_no_longer_watched(
    watched: tuple[Path, Recorder, VaultInotifyObserver], tmp_path: Path
) -> None:
    root, recorder, observer = watched
    before = count_inotify_watches()
    os.rename(root / "P" / "F", tmp_path / "trash-F")
    # watchdog holds a lone IN_MOVED_FROM for half a second, then reports it as a deletion.
    wait_until(lambda: recorder.seen(root / "P" / "F"), message="the move out")
    wait_until(lambda: _consistent(_group(observer)), message="F and F/sub unwatched")
    if before is not None:
        assert count_inotify_watches() == before - 2
    write(tmp_path / "trash-F" / "sub" / "late.md", "late")
    write(root / "P" / "here.md", "here")
    wait_until(lambda: recorder.seen(root / "P" / "here.md"))
    assert not [p for p in recorder.paths if p.endswith("late.md")]


def test_running_out_of_watches_after_the_start_is_reported(
    watched: tuple[Path, Recorder, VaultInotifyObserver], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 13.7: watchdog skips a folder it cannot watch (ENOSPC) without a word.
    root, _recorder, observer = watched
    running = RunningObserver(observer, "inotify")
    assert running.out_of_watches() is None
    fd = _group(observer)._inotify_fd
    real_add = fd.add_callback

    def no_more(path: bytes, *args: Any, **kwargs: Any) -> Any:
        if path.endswith(b"late"):
            raise OSError(errno.ENOSPC, "inotify watch limit reached")
        return real_add(path, *args, **kwargs)

    monkeypatch.setattr(fd, "add_callback", no_more)
    (root / "late").mkdir()
    error = wait_until(running.out_of_watches, message="the shortfall")
    assert error.errno == errno.ENOSPC
    assert running.alive()  # still running: the supervisor restarts it, and then it polls


def test_running_out_of_watches_during_the_start_polls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # watchdog 7.1.1 raises ENOSPC for any folder of the start's walk; the start falls back.
    from watchdog.observers.inotify_c import InotifyFD

    from notedex.daemon.batcher import Batcher
    from notedex.daemon.watcher import VaultEventHandler, start_observer

    root = tmp_path / "v"
    (root / "a" / "b").mkdir(parents=True)
    real_add = InotifyFD.add_callback

    def no_more(self: InotifyFD, path: bytes, *args: Any, **kwargs: Any) -> Any:
        if path.endswith(b"b"):
            raise OSError(errno.ENOSPC, "inotify watch limit reached")
        return real_add(self, path, *args, **kwargs)

    monkeypatch.setattr(InotifyFD, "add_callback", no_more)
    running = start_observer(
        root, lambda hold: VaultEventHandler(root, Batcher(), hold_until_close=hold)
    )
    try:
        assert running.kind == "polling"
        assert "max_user_watches" in (running.fallback_reason or "")
    finally:
        running.stop()


def test_an_exception_in_a_watch_callback_is_seen_not_a_silent_dead_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from watchdog.observers.inotify import InotifyWatchGroup

    from notedex.daemon.batcher import Batcher
    from notedex.daemon.service import Supervisor

    root = tmp_path / "v"
    root.mkdir()
    real_on_event = InotifyWatchGroup.on_event

    def on_event(self: InotifyWatchGroup, event: Any) -> None:
        if b"boom" in event.name:
            raise RuntimeError("a callback bug")
        real_on_event(self, event)

    monkeypatch.setattr(InotifyWatchGroup, "on_event", on_event)
    batcher = Batcher()
    supervisor = Supervisor(root, batcher)
    assert supervisor.start()
    try:
        running = supervisor.running
        assert running is not None and running.kind == "inotify"
        assert running.alive()
        write(root / "boom.md", "x")
        wait_until(lambda: not running.alive(), timeout=5, message="the failure to be seen")
        assert "callback failed" in (running.broken() or "")
        # The reader thread lives on; the supervisor restarts the watcher and rescans.
        assert running.observer._inotify_fd.is_alive()  # type: ignore[attr-defined]
        assert supervisor.check()
        assert supervisor.running is not running and supervisor.running is not None
        assert supervisor.running.alive()
        assert any("callback failed" in cause for cause in batcher.rescan_pending)
    finally:
        supervisor.stop()


def test_watchdogs_stop_race_logs_no_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    root = tmp_path / "v"
    root.mkdir()
    observer = VaultInotifyObserver()
    observer.schedule(Recorder(), str(root), recursive=True, event_filter=EVENT_FILTER)
    observer.start()
    (emitter,) = observer.emitters
    observer.stop()
    observer.join(timeout=10)
    with caplog.at_level(logging.DEBUG):
        emitter.queue_events(0.01)  # the emitter reads once more while being stopped
    # watchdog 7.1.1 logs the race at DEBUG (7.1.0 logged an ERROR, which we filtered out).
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    with caplog.at_level(logging.DEBUG):  # the twin: other watchdog errors still get through
        logging.getLogger("watchdog.observers.inotify").error("something else")
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == ["something else"]


def test_a_paired_move_leaves_the_grouper_at_once_a_lone_one_after_its_delay() -> None:
    """watchdog's queue sleeps out a held IN_MOVED_FROM's whole delay even when its pair came
    at once (every rename half a second late); ours wakes when the pair is put (issue 17)."""
    queue: _PromptQueue[str] = _PromptQueue(30.0)
    got: list[str | None] = []
    reader = threading.Thread(target=lambda: got.append(queue.get()))
    queue.put("moved_from", delay=True)
    reader.start()
    time.sleep(0.05)  # the reader is waiting on the delayed head
    assert queue.remove(lambda e: e == "moved_from") == "moved_from"
    queue.put("pair")
    reader.join(timeout=10)
    assert got == ["pair"]
    lone: _PromptQueue[str] = _PromptQueue(0.2)
    lone.put("moved_from", delay=True)
    lone.put("after")
    started = time.monotonic()
    assert lone.get() == "moved_from" and time.monotonic() - started >= 0.15
    assert lone.get() == "after"
    lone.close()
    assert lone.get() is None


def test_the_watch_group_groups_moves_in_the_prompt_queue(
    watched: tuple[Path, Recorder, VaultInotifyObserver],
) -> None:
    root, recorder, observer = watched
    grouper = _group(observer)._move_event_grouper
    assert isinstance(grouper._queue, _PromptQueue)  # watchdog's private field: see the top
    os.rename(root / "P", root / "P2")
    wait_until(lambda: recorder.seen(root / "P2"), timeout=10, message="the folder move")


def test_a_queue_overflow_is_a_rescan_and_the_watches_still_hear(tmp_path: Path) -> None:
    # watchdog 7.1.1: the overflow (the kernel's IN_Q_OVERFLOW, wd -1, as its reader hands it
    # over) rebuilds the watches, then an EventsLostEvent reaches the handler: a rescan.
    from notedex.daemon.batcher import Batcher
    from notedex.daemon.watcher import OVERFLOW_RESCAN, VaultEventHandler

    root = tmp_path / "v"
    (root / "d").mkdir(parents=True)
    batcher = Batcher()
    observer = VaultInotifyObserver()
    observer.schedule(
        VaultEventHandler(root, batcher, hold_until_close=True),
        str(root),
        recursive=True,
        event_filter=EVENT_FILTER,
    )
    observer.start()
    try:
        reader = observer._inotify_fd
        assert reader is not None
        overflow = InotifyEvent(WatchDescriptor(-1), InotifyConstants.IN_Q_OVERFLOW, 0, b"")
        reader.handle_event(overflow)
        wait_until(lambda: batcher.rescan_pending == [OVERFLOW_RESCAN], message="the rescan")
        write(root / "d" / "after.md", "after")
        wait_until(lambda: batcher.hints_added > 0, message="an event after the overflow")
        assert _group(observer).failed is None and _consistent(_group(observer))
    finally:
        observer.stop()
        observer.join(timeout=10)


def test_pending_sees_reads_waiting_for_watchdogs_dispatcher(
    watched: tuple[Path, Recorder, VaultInotifyObserver], monkeypatch: pytest.MonkeyPatch
) -> None:
    # watchdog 7.1.1 reads the kernel's queue on one thread and dispatches on another: what
    # was read but not yet dispatched is in neither the kernel's queue nor the grouper.
    root, recorder, observer = watched
    group = _group(observer)
    busy, release = threading.Event(), threading.Event()
    real_on_event = _WatchGroup.on_event

    def slow(self: _WatchGroup, event: InotifyEvent) -> None:
        if b"hold" in event.name and not busy.is_set():
            busy.set()
            release.wait(10)
        real_on_event(self, event)

    monkeypatch.setattr(group, "on_event", slow.__get__(group))
    reader = observer._inotify_fd
    assert reader is not None
    try:
        write(root / "hold.md", "x")
        assert busy.wait(10)
        write(root / "next.md", "y")
        wait_until(lambda: not reader._raw_queue.empty(), message="a read behind the busy one")
        assert observer.pending()
    finally:
        release.set()
    wait_until(lambda: recorder.seen(root / "next.md"))
    wait_until(lambda: not observer.pending(), message="the drain to end")


def test_a_folder_moved_within_the_tree_is_one_event_without_a_walk(
    watched: tuple[Path, Recorder, VaultInotifyObserver],
) -> None:
    # Issue 17: watchdog makes up a move for every file and folder under a moved folder by
    # walking the new tree (12k events for a folder of 12k notes); ours queues the one move.
    root, recorder, observer = watched
    os.rename(root / "P", root / "P2")
    write(root / "Archive" / "marker.md", "m")  # queued after whatever the move made
    wait_until(lambda: recorder.seen(root / "Archive" / "marker.md"))
    with recorder._lock:
        under = [p for p in recorder.paths if p.startswith(str(root / "P2") + os.sep)]
    assert recorder.seen(root / "P2") and under == []
    write(root / "P2" / "F" / "sub" / "b.md", "b")  # its watches moved with it
    wait_until(lambda: recorder.seen(root / "P2" / "F" / "sub" / "b.md"))
    assert _consistent(_group(observer))


def _refuse(
    monkeypatch: pytest.MonkeyPatch, group: _WatchGroup, suffix: bytes, err: int
) -> list[bool]:
    """``inotify_add_watch`` fails with ``err`` for paths ending in ``suffix`` while the
    returned flag's first item is True."""
    fd = group._inotify_fd
    real_add = fd.add_callback
    refusing = [True]

    def refuse(path: bytes, *args: Any, **kwargs: Any) -> Any:
        if refusing[0] and path.endswith(suffix):
            raise OSError(err, os.strerror(err))
        return real_add(path, *args, **kwargs)

    monkeypatch.setattr(fd, "add_callback", refuse)
    return refusing


def test_a_folder_that_could_not_be_watched_is_kept_and_watched_again(
    watched: tuple[Path, Recorder, VaultInotifyObserver], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 31.1: watchdog forgets a folder whose watch failed (EACCES: an ancestor was
    # unreadable for a moment); it never heard that folder again.
    root, recorder, observer = watched
    group = _group(observer)
    running = RunningObserver(observer, "inotify")
    refusing = _refuse(monkeypatch, group, b"late", errno.EACCES)
    (root / "P" / "late" / "deeper").mkdir(parents=True)
    wait_until(lambda: running.unwatched() == [str(root / "P" / "late")], message="recorded")
    assert running.rewatch_due()
    assert running.rewatch() == []  # still refused: kept for the next try
    refusing[0] = False
    assert running.rewatch() == [str(root / "P" / "late")]
    assert running.unwatched() == [] and not running.rewatch_due()
    write(root / "P" / "late" / "deeper" / "heard.md", "x")
    wait_until(lambda: recorder.seen(root / "P" / "late" / "deeper" / "heard.md"))
    assert _consistent(group)


def test_a_watch_lost_to_a_rename_mid_walk_comes_back_with_the_next_rewatch(
    watched: tuple[Path, Recorder, VaultInotifyObserver], monkeypatch: pytest.MonkeyPatch
) -> None:
    # ENOENT: the folder was renamed (with an ancestor) between the listing and the watch; it
    # lives on under another path, which only a walk of the whole tree finds.
    root, recorder, observer = watched
    group = _group(observer)
    running = RunningObserver(observer, "inotify")
    refusing = _refuse(monkeypatch, group, b"moving", errno.ENOENT)
    (root / "Archive" / "moving").mkdir()
    wait_until(running.rewatch_due, message="a rewatch due")
    assert running.unwatched() == []  # not a folder to show: it is somewhere else by now
    refusing[0] = False
    assert running.rewatch() == [str(root / "Archive" / "moving")]
    write(root / "Archive" / "moving" / "heard.md", "x")
    wait_until(lambda: recorder.seen(root / "Archive" / "moving" / "heard.md"))


def test_a_full_rewatch_adds_any_folder_without_a_watch(
    watched: tuple[Path, Recorder, VaultInotifyObserver],
) -> None:
    root, recorder, observer = watched
    group = _group(observer)
    sub = os.fsencode(root / "P" / "F" / "sub")
    with group._lock:  # as if its watch had been lost without a trace
        node = group._find_node_by_path(sub)
        assert node is not None
        group._remove_callbacks([node.wd])
    assert not group._watched(sub)
    running = RunningObserver(observer, "inotify")
    assert running.rewatch() == []  # nothing known to be missing: no walk
    assert running.rewatch(full=True) == [str(root / "P" / "F" / "sub")]
    write(root / "P" / "F" / "sub" / "heard.md", "x")
    wait_until(lambda: recorder.seen(root / "P" / "F" / "sub" / "heard.md"))
