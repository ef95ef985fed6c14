"""daemon/service.py: the supervisor restarts a dead observer, waits for a missing vault, reports health."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from notedex.daemon.batcher import WATCHES, Batcher
from notedex.daemon.service import Supervisor
from tests.helpers import wait_until, write


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


def test_supervisor_polls_once_inotify_ran_out_of_watches_after_the_start(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 13.7: a folder made after the limit was reached used to stay unwatched, unlogged.
    from notedex.daemon import watcher

    queue = Batcher()
    supervisor = Supervisor(vault, queue)
    assert supervisor.start()
    try:
        running = supervisor.running
        assert running is not None and running.kind == "inotify"
        shortfall = OSError(28, "inotify watch limit reached")
        monkeypatch.setattr(type(running), "out_of_watches", lambda self: shortfall)
        # Counting watches now finds a folder short, as it would after the ENOSPC.
        monkeypatch.setattr(watcher, "count_inotify_watches", lambda: 0)
        assert supervisor.check()
        assert queue.rescan_pending == [
            "inotify ran out of watches ([Errno 28] inotify watch limit reached)"
        ]
        polling = supervisor.running
        assert polling is not None and polling.kind == "polling"
        assert "sysctl fs.inotify.max_user_watches=" in (polling.fallback_reason or "")
    finally:
        supervisor.stop()


def test_supervisor_retries_a_folder_it_could_not_watch_and_has_it_looked_at(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 31.1: a folder whose watch failed (EACCES: an ancestor unreadable for a moment)
    # is counted, retried with backoff, and once watched, looked at: nothing made in it
    # meanwhile was heard.
    from watchdog.observers.inotify_c import InotifyFD

    from notedex.daemon import service

    monkeypatch.setattr(service, "REWATCH_FIRST", 0.01)
    real_add = InotifyFD.add_callback
    refusing = [True]

    def refuse(self: InotifyFD, path: bytes, *args: Any, **kwargs: Any) -> Any:
        if refusing[0] and path.endswith(b"late"):
            raise PermissionError(13, "Permission denied")
        return real_add(self, path, *args, **kwargs)

    monkeypatch.setattr(InotifyFD, "add_callback", refuse)
    queue = Batcher()
    supervisor = Supervisor(vault, queue)
    assert supervisor.start()
    try:
        (vault / "late").mkdir()
        wait_until(lambda: supervisor.check() and supervisor.unwatched() == ["late"])
        assert queue.tasks_pending == [WATCHES]  # the writer writes the count down
        queue.take_now()  # the folder's own creation hint
        write(vault / "late" / "unheard.md", "x")
        assert supervisor.check() and supervisor.unwatched() == ["late"]  # still refused
        refusing[0] = False
        wait_until(lambda: supervisor.check() and supervisor.unwatched() == [])
        # Its walk finds unheard.md, compared by content (its etag may tell nothing).
        assert {"late", "late/unheard.md"} <= queue.pending_paths()
        write(vault / "late" / "heard.md", "x")
        wait_until(lambda: "late/heard.md" in queue.pending_paths(), message="heard")
    finally:
        supervisor.stop()


def test_a_folders_chmod_retries_the_watches_at_once_whatever_the_backoff(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The chmod back of a locked folder is the moment its subfolders become watchable: the
    # folder's attribute event brings the retry forward (else up to a minute away).
    from watchdog.observers.inotify_c import InotifyFD

    from notedex.daemon import service

    monkeypatch.setattr(service, "REWATCH_FIRST", 3600.0)
    real_add = InotifyFD.add_callback
    refusing = [True]

    def refuse(self: InotifyFD, path: bytes, *args: Any, **kwargs: Any) -> Any:
        if refusing[0] and path.endswith(b"late"):
            raise PermissionError(13, "Permission denied")
        return real_add(self, path, *args, **kwargs)

    monkeypatch.setattr(InotifyFD, "add_callback", refuse)
    (vault / "P").mkdir()
    queue = Batcher()
    supervisor = Supervisor(vault, queue)
    assert supervisor.start()
    try:
        (vault / "P" / "late").mkdir()
        wait_until(lambda: supervisor.check() and supervisor.unwatched() == ["P/late"])
        refusing[0] = False
        assert supervisor.check() and supervisor.unwatched() == ["P/late"]  # an hour away
        (vault / "P").chmod(0o700)  # the chmod back, as it were
        wait_until(lambda: supervisor.check() and supervisor.unwatched() == [], message="healed")
    finally:
        supervisor.stop()
