"""watchdog's inotify observer, without stale watches for a folder that left the vault (issue 13).

watchdog keeps, per recursive watch, two maps: watch descriptor -> path and path -> watch
descriptor. A folder moved out of the vault (``mv V/P/F /outside/F``: an IN_MOVED_FROM with no
IN_MOVED_TO) keeps its kernel watches and both map entries. When the folder comes back
(``mv /outside/F V/G``), ``inotify_add_watch`` hands back the *same* descriptor (same inode),
and watchdog maps it to ``V/G`` but leaves ``V/P/F -> wd`` behind. A later move of the old
parent (``mv V/P V/P2``) rewrites every path under ``V/P/``, the stale one included, so the
descriptor of ``G`` now reports ``V/P2/F/...``: the folder that came back goes deaf.

The rule here: a folder has one path. ``_WatchGroup._add_callback`` notices a descriptor that
already had another path, and drops that old path and every watch under it before the walk that
follows re-adds the subtree at its new place. A folder moved out for good (the lone
IN_MOVED_FROM that watchdog reports as a deletion) loses its watches too, so a folder in the
trash outside the vault is not watched forever. A folder moved within the tree is queued as
one ``DirMovedEvent``: watchdog's walk of the moved tree for a synthetic event per entry is
skipped (issue 17). A folder that cannot be watched for want of
watches (ENOSPC after the start) is remembered in ``out_of_watches``, not skipped silently.

watchdog holds an IN_MOVED_FROM up to 0.5 s for its IN_MOVED_TO, in a queue whose reader,
once it has taken a held IN_MOVED_FROM as its head, sleeps out the whole 0.5 s even when the
pair arrives meanwhile, and everything queued behind waits too. A lone rename rarely meets it
(the reader must wake between the two events); a stream of renames meets it again and again:
3,000 file renames reached the handler 1.25 s after the last one (0.10 s with this queue,
median of 5). ``_PromptQueue`` wakes the reader when the queue changes, so a paired move goes
out at once; a lone IN_MOVED_FROM still waits 0.5 s (issue 17).

watchdog calls a group's callbacks on the inotify reader thread (``InotifyFD``): an exception
there ends that thread, and every event after it is lost while the observer and its emitters
still look alive. So each callback is guarded: the error is kept in ``failed`` (the supervisor
restarts the watcher and rescans, ``RunningObserver.broken``), and the reader lives on.

This leans on watchdog 7's private watch maps, move grouper and emitter; ``BUILT_FOR`` names
the releases it was checked against, pyproject.toml pins them, and
``tests/unit/daemon/test_inotify.py`` fails if a release changes them. Under any other release
``daemon.watcher`` uses watchdog's own ``InotifyObserver`` instead: watchdog 7.1.1 replaced the
flat maps by a tree of folders, and this subclass, which fills the maps, then heard nothing.
"""

from __future__ import annotations

import errno
import logging
import os
import select
import time
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

from watchdog.events import DirMovedEvent
from watchdog.observers.inotify import InotifyEmitter, InotifyObserver, InotifyWatchGroup
from watchdog.observers.inotify_c import InotifyEvent, WatchDescriptor
from watchdog.observers.inotify_move_event_grouper import (
    GroupedInotifyEvent,
    InotifyMoveEventGrouper,
    PathedInotifyEvent,
)
from watchdog.utils.delayed_queue import DelayedQueue

from notedex.daemon.logging import get_logger

# Re-adding a watch this group already holds (the descriptor of a folder that came back) makes
# watchdog warn that our callback "will be Overwritten": that is exactly what we want.
_REWATCH_WARNING = r"Callback with id .* already exists for watch"

log = get_logger("notedex.daemon.inotify")

BUILT_FOR = frozenset({"7.1.0"})
"""The watchdog releases whose private parts this module was checked against."""

T = TypeVar("T")


class _PromptQueue(DelayedQueue[T]):
    """watchdog's ``DelayedQueue`` (FIFO; a delayed head waits ``delay`` from its insertion)
    whose ``get`` waits on the queue's condition instead of sleeping: a put (the pair of a
    held IN_MOVED_FROM is put right after it is removed) or a close wakes it."""

    def get(self) -> T | None:
        with self._not_empty:
            while True:
                while not self._queue and not self._closed:
                    self._not_empty.wait()
                if self._closed:
                    return None
                head, inserted, delay = self._queue[0]
                left = inserted + self.delay - time.monotonic() if delay else 0.0
                if left <= 0:
                    self._queue.popleft()
                    return head
                self._not_empty.wait(left)

    def remove(self, predicate: Callable[[T], bool]) -> T | None:
        found = super().remove(predicate)
        if found is not None:
            with self._not_empty:
                self._not_empty.notify()
        return found


class _Grouper(InotifyMoveEventGrouper):
    def __init__(self) -> None:
        super().__init__()
        self._queue = _PromptQueue(self.delay)


class _WatchGroup(InotifyWatchGroup):
    def __post_init__(self) -> None:
        self._move_event_grouper = _Grouper()  # before the watches exist: no event missed
        super().__post_init__()

    out_of_watches: OSError | None = None
    """Set when a folder could not be watched for want of watches (ENOSPC): watchdog alone
    skips it silently; the supervisor switches to polling (``RunningObserver.out_of_watches``)."""
    failed: BaseException | None = None
    """The first exception a callback raised on the reader thread (its events may be lost)."""

    def on_event(self, event: InotifyEvent) -> None:
        try:
            super().on_event(event)
        except Exception as exc:
            self._failed(exc)

    def on_watch_deleted(self, wd: WatchDescriptor) -> None:
        try:
            super().on_watch_deleted(wd)
        except Exception as exc:
            self._failed(exc)

    def on_queue_overflow(self) -> None:
        try:
            super().on_queue_overflow()
        except Exception as exc:
            self._failed(exc)

    def _failed(self, exc: Exception) -> None:
        if self.failed is None:
            self.failed = exc
            log.error("inotify callback failed", error=repr(exc), exc_info=exc)

    def _add_callback(self, path: bytes) -> None:
        try:
            wd = self._inotify_fd.add_callback(path, self.event_mask, self._callback, self._id)
        except OSError as exc:
            if exc.errno == errno.ENOSPC:
                self.out_of_watches = exc
            # As watchdog: a descendant may vanish or be unreadable; the root must be watched.
            if path == self.path:
                raise
            return
        old = self._active_callbacks_by_watch.get(wd)
        if old is not None and old != path:
            self._drop_tree(old, keep=wd)
        self._active_callbacks_by_path[path] = wd
        self._active_callbacks_by_watch[wd] = path

    def _drop_tree(self, top: bytes, *, keep: WatchDescriptor | None = None) -> None:
        """Forget ``top`` and every watched path under it; remove their kernel watches but
        ``keep``'s (it is being re-bound to the folder's new path)."""
        prefix = top + os.sep.encode()
        stale = [
            (path, wd)
            for path, wd in self._active_callbacks_by_path.items()
            if (path == top or path.startswith(prefix))
            and self._active_callbacks_by_watch.get(wd) == path
        ]
        gone: list[WatchDescriptor] = []
        for path, wd in stale:
            if wd == keep:
                del self._active_callbacks_by_path[path]
            else:
                gone.append(wd)
        if gone:
            # Removes the kernel watch (when no other group shares it) and both map entries.
            self._remove_callbacks(gone)

    def forget_moved_out(self, path: bytes) -> None:
        """``path`` was moved out of the watched tree for good: stop watching it."""
        with self._lock:
            if not self.is_active or path == self.path:
                return
            wd = self._active_callbacks_by_path.get(path)
            if wd is not None and self._active_callbacks_by_watch.get(wd) == path:
                self._drop_tree(path)


class _Emitter(InotifyEmitter):
    def on_thread_start(self) -> None:
        self._inotify = _WatchGroup(
            self._inotify_fd,
            os.fsencode(self.watch.path),
            is_recursive=self.watch.is_recursive,
            event_mask=self.get_event_mask_from_filter(),
            follow_symlink=self.watch.follow_symlink,
        )

    def build_and_queue_event(
        self, event: GroupedInotifyEvent, *, full_events: bool = False
    ) -> None:
        if not isinstance(event, PathedInotifyEvent) and event[0].ev.is_directory:
            # A folder moved within the tree: one DirMovedEvent, without the synthetic move
            # per file and folder under it that watchdog makes by walking the new tree (the
            # handler drops them anyway, daemon.watcher; issue 17). Its folder-modified
            # events are not in our filter.
            move_from, move_to = event
            src, dest = self._decode_path(move_from.path), self._decode_path(move_to.path)
            self.queue_event(DirMovedEvent(src, dest))
            return
        super().build_and_queue_event(event, full_events=full_events)
        group = self._inotify
        if (
            isinstance(event, PathedInotifyEvent)
            and event.ev.is_moved_from
            and event.ev.is_directory
            and isinstance(group, _WatchGroup)
        ):
            # No IN_MOVED_TO paired with it within watchdog's delay: it left the tree.
            group.forget_moved_out(event.path)


class _StopRace(logging.Filter):
    """Drop watchdog's "queue_events() called when the thread is inactive": an emitter that
    reads once more while it is being stopped logs it as an ERROR, on every clean stop that
    loses the race (issue 13.15). Nothing is wrong then, and nothing is lost."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "called when the thread is inactive" not in record.getMessage()


_STOP_RACE = _StopRace()


class VaultInotifyObserver(InotifyObserver):
    """``InotifyObserver`` whose recursive watches follow a folder that leaves and comes back."""

    def __init__(self, **kwargs: Any) -> None:
        warnings.filterwarnings("ignore", message=_REWATCH_WARNING, category=RuntimeWarning)
        logger = logging.getLogger("watchdog.observers.inotify")
        if _STOP_RACE not in logger.filters:
            logger.addFilter(_STOP_RACE)
        super().__init__(**kwargs)
        # InotifyObserver names its emitter class in BaseObserver.__init__: swap in ours.
        self._emitter_class = _Emitter

    def pending(self) -> bool:
        """Whether events are still on their way to the handler: in the kernel's queue, in
        watchdog's move grouper (an IN_MOVED_FROM waits 0.5 s for its pair), or in the
        observer's queue. The shutdown drain waits for this to be False."""
        fd = getattr(self._inotify_fd, "_inotify_fd", None)
        if isinstance(fd, int):
            try:
                if select.select([fd], [], [], 0)[0]:
                    return True
            except (OSError, ValueError):
                pass
        for emitter in list(self.emitters):
            grouper = getattr(getattr(emitter, "_inotify", None), "_move_event_grouper", None)
            if getattr(getattr(grouper, "_queue", None), "_queue", None):
                return True
        return not self.event_queue.empty()


__all__ = ["VaultInotifyObserver"]
