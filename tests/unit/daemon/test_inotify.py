"""daemon/inotify.py: a recursive inotify watch follows a folder that leaves the vault and comes back, and lets go of one that left for good (issue 13)."""

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
    """Each watched path is a folder on disk, held once, mapped both ways."""
    by_path = dict(group._active_callbacks_by_path)
    by_wd = dict(group._active_callbacks_by_watch)
    return all(by_wd.get(wd) == path and os.path.isdir(path) for path, wd in by_path.items()) and (
        len(by_path) == len(by_wd)
    )


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
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    with caplog.at_level(logging.DEBUG):  # the twin: other watchdog errors still get through
        logging.getLogger("watchdog.observers.inotify").error("something else")
    assert [r.getMessage() for r in caplog.records] == ["something else"]


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
