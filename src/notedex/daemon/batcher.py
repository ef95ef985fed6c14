"""Coalesce event hints into batches for the one writer thread (STYLE 5).

The watcher, the jobs and the supervisor only ever call ``add``, ``request_rescan`` and
``submit``: cheap, in memory, never blocking for long. The writer thread calls ``take``.

- Per path: any number of events for one path is one hint (the writer re-checks the disk).
- Debounce: a batch is released once events have been quiet for ``debounce`` seconds...
- ...or ``max_delay`` after its first event, so a storm still makes progress.
- A window that holds nothing but the ends of folders moved within the vault is released
  after a quieter ``folder_debounce``: the hint pair says everything a folder rename will say,
  and the writer looks at the disk anyway (issue 17). Any other hint in the window brings the
  usual debounce back.
- A file that is being written (a modify event on inotify) is held until its close event,
  at most ``hold_cap`` seconds, so we read it once, complete.
- A full rescan covers every pending path, so it replaces them.
- A deferred path (``defer``: an unpaired end of a move the writer held) goes with the next
  batch, or on its own ``delay`` later when no other batch comes (issue 17).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import Enum

DEBOUNCE = 0.075
FOLDER_DEBOUNCE = 0.02
"""The quiet window of a batch of moved folders alone: long enough for a few renames in a row
(``mv a b c dest/``: microseconds apart) to be one batch."""
MAX_DELAY = 1.0
HOLD_CAP = 2.0
DEFER = 1.0
"""A deferred path waits at most this long for a batch to go with."""

MAINTENANCE = "maintenance"
"""Task: FTS integrity check (rebuild on failure), optimize, WAL checkpoint."""
FILTERS = "filters"
"""Task: re-read Obsidian's "Excluded files" (``.obsidian/app.json`` changed)."""
WATCHES = "watches"
"""Task: write down the folders the watcher could not watch (``notedex status`` shows them)."""


class Hint(Enum):
    """What an event says about the file behind a path."""

    CHANGED = "changed"
    """Created, attributes, moved: look at it once things are quiet."""
    WRITING = "writing"
    """Modified and (on inotify) still open for writing: wait for the close."""
    SETTLED = "settled"
    """Closed after writing, or gone: nothing more to wait for."""
    FOLDER_MOVED = "folder moved"
    """Both ends of a folder moved within the vault: settled, and a window of these alone
    goes after ``folder_debounce``."""


@dataclass
class Batch:
    """One unit of work for the writer thread."""

    paths: list[str] = field(default_factory=list)
    """Vault-relative hints (files or folders, present or vanished); with ``rescan``, the
    hints it covers (their content is compared)."""
    rescan: list[str] = field(default_factory=list)
    """Causes of a requested full reconcile; non-empty means "reconcile everything"."""
    errors: list[BaseException] = field(default_factory=list)
    """Exceptions that made someone ask for the rescan (logged by the writer thread)."""
    tasks: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.paths or self.rescan or self.tasks)


class Batcher:
    """Thread-safe, in-memory queue of hints with per-path coalescing."""

    def __init__(
        self,
        *,
        debounce: float = DEBOUNCE,
        folder_debounce: float | None = None,
        max_delay: float = MAX_DELAY,
        hold_cap: float = HOLD_CAP,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.debounce = debounce
        self.folder_debounce = (
            min(FOLDER_DEBOUNCE, debounce) if folder_debounce is None else folder_debounce
        )
        self.max_delay = max_delay
        self.hold_cap = hold_cap
        self._clock = clock
        self._cond = threading.Condition(threading.Lock())
        self._ready: dict[str, None] = {}  # an ordered set
        self._held: dict[str, float] = {}  # path -> when the write began
        self._deferred: dict[str, float] = {}  # path -> when it goes on its own
        self._window_start: float | None = None
        self._folders_only = False
        """The open window holds moved folders' ends alone (``Hint.FOLDER_MOVED``)."""
        self._last_event = 0.0
        self._rescan_causes: list[str] = []
        self._rescan_due: float | None = None
        self._errors: list[BaseException] = []
        self._tasks: dict[str, None] = {}
        self._closed = False
        self.hints_added = 0
        """Path hints handed to ``add`` since the start (tests: a folder move is O(1) hints)."""

    # -- producers (any thread) -------------------------------------------------------------

    def add(self, paths: Iterable[str], hint: Hint = Hint.CHANGED) -> None:
        with self._cond:
            if self._closed:
                return
            now = self._clock()
            paths = list(paths)
            self.hints_added += len(paths)
            had_window, had_held = self._window_start is not None, bool(self._held)
            for path in paths:
                if hint is Hint.WRITING:
                    if path not in self._held:
                        self._ready.pop(path, None)
                        self._held[path] = now
                    continue
                if hint is Hint.CHANGED and path in self._held:
                    continue  # still being written: the close will release it
                self._held.pop(path, None)
                self._deferred.pop(path, None)
                self._ready[path] = None
                if self._window_start is None:
                    self._window_start = now
                    self._folders_only = True
                self._folders_only &= hint is Hint.FOLDER_MOVED
            self._last_event = now
            # The writer sleeps until its next deadline; wake it only when a new one begins.
            if (self._window_start is not None and not had_window) or (self._held and not had_held):
                self._cond.notify_all()

    def defer(self, paths: Iterable[str], delay: float = DEFER) -> None:
        """Paths that go with the next batch, whatever starts it, or ``delay`` from now."""
        with self._cond:
            if self._closed:
                return
            due = self._clock() + delay
            for path in paths:
                if path not in self._ready and path not in self._held:
                    self._deferred.setdefault(path, due)
            self._cond.notify_all()

    def request_rescan(
        self, cause: str, *, delay: float = 0.0, error: BaseException | None = None
    ) -> None:
        """Ask for a full reconcile, ``delay`` seconds from now (requests coalesce)."""
        with self._cond:
            if self._closed:
                return
            due = self._clock() + delay
            if cause not in self._rescan_causes:
                self._rescan_causes.append(cause)
            if error is not None and len(self._errors) < 10:
                self._errors.append(error)
            if self._rescan_due is None or due < self._rescan_due:
                self._rescan_due = due
            self._cond.notify_all()

    def submit(self, task: str) -> None:
        with self._cond:
            if self._closed:
                return
            self._tasks[task] = None
            self._cond.notify_all()

    def close(self) -> None:
        """Stop accepting work; ``take`` flushes pending paths at once, then returns None.

        Pending rescans and tasks are dropped: the next start reconciles anyway.
        """
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    # -- the writer thread --------------------------------------------------------------------

    def take(self, timeout: float | None = None) -> Batch | None:
        """Block until a batch is due; None on ``timeout`` or once closed and drained."""
        deadline = None if timeout is None else self._clock() + timeout
        with self._cond:
            while True:
                now = self._clock()
                batch = self._due(now)
                if batch is not None:
                    return batch
                if self._closed:
                    return None
                wake = self._next_wake(now)
                if deadline is not None:
                    if now >= deadline:
                        return None
                    wake = deadline if wake is None else min(wake, deadline)
                self._cond.wait(None if wake is None else max(wake - now, 0.001))

    def take_now(self) -> list[str]:
        """Every path that is not being written, without waiting for the debounce."""
        with self._cond:
            return self._release(self._clock())

    @property
    def closed(self) -> bool:
        """``close`` was called (``take`` then returns None once drained)."""
        with self._cond:
            return self._closed

    @property
    def pending(self) -> int:
        with self._cond:
            return len(self._ready) + len(self._held) + len(self._deferred)

    def pending_paths(self) -> set[str]:
        """Every path hint the next batches will look at (ready, being written, deferred)."""
        with self._cond:
            return {*self._ready, *self._held, *self._deferred}

    @property
    def rescan_pending(self) -> list[str]:
        with self._cond:
            return list(self._rescan_causes)

    @property
    def tasks_pending(self) -> list[str]:
        with self._cond:
            return list(self._tasks)

    # -- internals (lock held) ------------------------------------------------------------------

    def _due(self, now: float) -> Batch | None:
        if self._closed:
            paths = [*self._ready, *self._held, *self._deferred]
            self._ready.clear()
            self._held.clear()
            self._deferred.clear()
            self._window_start = None
            return Batch(paths=paths) if paths else None
        if self._rescan_due is not None and now >= self._rescan_due:
            # The reconcile reads the disk after every hint queued so far: they are covered,
            # and go with it as ``paths`` so that their content is compared even when their
            # etag did not move (issue 13.6). Files still being written will be hinted again.
            batch = Batch(
                paths=[*self._ready, *self._held, *self._deferred],
                rescan=self._rescan_causes,
                errors=self._errors,
                tasks=list(self._tasks),
            )
            self._rescan_causes, self._errors = [], []
            self._rescan_due = None
            self._tasks.clear()
            self._ready.clear()
            self._held.clear()
            self._deferred.clear()
            self._window_start = None
            return batch
        if self._tasks:
            batch = Batch(tasks=list(self._tasks))
            self._tasks.clear()
            return batch
        if self._deferred and min(self._deferred.values()) <= now:
            return Batch(paths=self._release(now))
        if self._window_start is None and not self._held:
            return None
        quiet = now - self._last_event >= self._quiet_window()
        overdue = self._window_start is not None and now - self._window_start >= self.max_delay
        expired = any(now - since >= self.hold_cap for since in self._held.values())
        if quiet or overdue or expired:
            paths = self._release(now)
            if paths:
                return Batch(paths=paths)
        return None

    def _quiet_window(self) -> float:
        folders = self._folders_only and self._window_start is not None
        return self.folder_debounce if folders else self.debounce

    def _release(self, now: float) -> list[str]:
        paths = list(self._ready)
        if paths or any(due <= now for due in self._deferred.values()):
            paths += self._deferred  # they go with the next batch
            self._deferred.clear()
        self._ready.clear()
        self._window_start = None
        for path, since in list(self._held.items()):
            if now - since >= self.hold_cap:
                del self._held[path]
                paths.append(path)
        return paths

    def _next_wake(self, now: float) -> float | None:
        candidates: list[float] = []
        if self._rescan_due is not None:
            candidates.append(self._rescan_due)
        if self._window_start is not None:
            candidates.append(
                min(self._last_event + self._quiet_window(), self._window_start + self.max_delay)
            )
        if self._held:
            candidates.append(min(self._held.values()) + self.hold_cap)
        if self._deferred:
            candidates.append(min(self._deferred.values()))
        return min(candidates) if candidates else None
