"""daemon/batcher.py: debounce, storm cap, the hold of files being written, rescans and tasks (a fake clock)."""

from __future__ import annotations

import threading
import time

import pytest

from notedex.daemon import batcher as batcher_module
from notedex.daemon.batcher import MAINTENANCE, Batch, Batcher, Hint


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


def test_batcher_rescan_takes_the_pending_paths_along(
    fake_batcher: Batcher, clock: FakeClock
) -> None:
    fake_batcher.add(["a.md", "b.md"])
    fake_batcher.add(["c.md"], Hint.WRITING)
    error = RuntimeError("boom")
    fake_batcher.request_rescan("overflow", error=error)
    fake_batcher.request_rescan("overflow")
    fake_batcher.request_rescan("hourly")
    batch = fake_batcher.take(timeout=0)
    assert batch is not None
    assert batch.rescan == ["overflow", "hourly"] and batch.errors == [error]
    # The rescan covers them, and compares their content (issue 13.6): they go along with it.
    assert batch.paths == ["a.md", "b.md", "c.md"]
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


def test_batcher_defaults_are_in_the_documented_range() -> None:
    assert 0.05 <= batcher_module.DEBOUNCE <= 0.1
    assert batcher_module.MAX_DELAY >= batcher_module.DEBOUNCE


def test_batcher_deferred_paths_go_with_the_next_batch(
    fake_batcher: Batcher, clock: FakeClock
) -> None:
    fake_batcher.defer(["held.md"], delay=1.0)
    assert fake_batcher.take(timeout=0) is None and fake_batcher.pending == 1
    clock.advance(0.3)
    fake_batcher.add(["other.md"])
    clock.advance(0.1)
    batch = fake_batcher.take(timeout=0)
    assert batch is not None and batch.paths == ["other.md", "held.md"]
    assert fake_batcher.pending == 0


def test_batcher_deferred_paths_go_alone_after_their_delay(
    fake_batcher: Batcher, clock: FakeClock
) -> None:
    fake_batcher.defer(["held.md"], delay=1.0)
    clock.advance(0.9)
    assert fake_batcher.take(timeout=0) is None
    clock.advance(0.1)
    batch = fake_batcher.take(timeout=0)
    assert batch is not None and batch.paths == ["held.md"]


def test_batcher_a_new_event_for_a_deferred_path_makes_it_ordinary(
    fake_batcher: Batcher, clock: FakeClock
) -> None:
    fake_batcher.defer(["held.md"], delay=5.0)
    fake_batcher.add(["held.md"])
    clock.advance(0.1)
    batch = fake_batcher.take(timeout=0)
    assert batch is not None and batch.paths == ["held.md"]
    assert fake_batcher.pending == 0


def test_batcher_close_and_rescan_take_deferred_paths_along(
    fake_batcher: Batcher, clock: FakeClock
) -> None:
    fake_batcher.defer(["held.md"], delay=5.0)
    fake_batcher.request_rescan("test")
    batch = fake_batcher.take(timeout=0)
    assert batch is not None and batch.rescan == ["test"] and batch.paths == ["held.md"]
    fake_batcher.defer(["again.md"], delay=5.0)
    fake_batcher.close()
    last = fake_batcher.take(timeout=0)
    assert last is not None and last.paths == ["again.md"]


def test_batcher_pending_paths_are_every_hint_the_next_batches_take(
    fake_batcher: Batcher, clock: FakeClock
) -> None:
    fake_batcher.add(["a.md"])
    fake_batcher.add(["b.md"], Hint.WRITING)
    fake_batcher.defer(["c.md"])
    assert fake_batcher.pending_paths() == {"a.md", "b.md", "c.md"}
    clock.advance(0.1)
    assert fake_batcher.take(timeout=0) is not None
    assert fake_batcher.pending_paths() == {"b.md"}


def test_batcher_releases_moved_folders_alone_after_their_shorter_window(
    fake_batcher: Batcher, clock: FakeClock
) -> None:
    """Issue 17: a folder rename's hint pair says all it will say; a window of moved folders'
    ends alone goes after ``folder_debounce``, not the usual debounce."""
    assert fake_batcher.folder_debounce == batcher_module.FOLDER_DEBOUNCE < fake_batcher.debounce
    fake_batcher.add(["a", "b"], Hint.FOLDER_MOVED)
    fake_batcher.add(["c", "d"], Hint.FOLDER_MOVED)  # `mv a c dest/`: one batch
    clock.advance(fake_batcher.folder_debounce * 0.9)
    assert fake_batcher.take(timeout=0) is None  # a rename in a row may still come
    clock.advance(fake_batcher.folder_debounce * 0.1 + 1e-9)
    batch = fake_batcher.take(timeout=0)
    assert batch is not None and batch.paths == ["a", "b", "c", "d"]


@pytest.mark.parametrize("folder_first", [True, False])
def test_batcher_any_other_hint_brings_the_usual_window_back(
    fake_batcher: Batcher, clock: FakeClock, folder_first: bool
) -> None:
    hints = [(["a", "b"], Hint.FOLDER_MOVED), (["b/n.md"], Hint.CHANGED)]
    for paths, hint in hints if folder_first else hints[::-1]:
        fake_batcher.add(paths, hint)
    clock.advance(fake_batcher.folder_debounce + 1e-9)
    assert fake_batcher.take(timeout=0) is None  # an edit inside the renamed folder: wait
    clock.advance(fake_batcher.debounce - fake_batcher.folder_debounce)
    batch = fake_batcher.take(timeout=0)
    assert batch is not None and sorted(batch.paths) == ["a", "b", "b/n.md"]
    fake_batcher.add(["x", "y"], Hint.FOLDER_MOVED)  # the next window starts afresh
    clock.advance(fake_batcher.folder_debounce + 1e-9)
    assert fake_batcher.take(timeout=0) is not None
