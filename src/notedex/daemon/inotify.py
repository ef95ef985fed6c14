"""watchdog's inotify observer, with a prompt move grouper, one event per folder move, a folder
that has one path, and callbacks that cannot kill the reader silently (issues 13 and 17).

Checked against watchdog 7.1.1, which tracks a recursive watch as a tree of folders
(``DirNode``): a folder moved within the tree is one subtree move, and a folder moved out of it
(a lone IN_MOVED_FROM, reported as a deletion after 0.5 s) loses its watches. What watchdog
still does not do, this subclass does:

- A folder has one path. A folder moved out of the vault and back in before watchdog reports
  the move out (``mv V/F /outside/F; mv /outside/F V/G`` within 0.5 s) still has its kernel
  watches, so ``inotify_add_watch`` hands back the *same* descriptors for ``V/G``: watchdog adds
  tree nodes at ``V/G`` and keeps the old ones at ``V/F`` with the same descriptors. When the move
  out is then reported, watchdog removes the watches found under ``V/F``, which are ``V/G``'s:
  the folder that came back goes deaf (and a folder made later at an old path is never
  watched, its stale node looking watched). ``_WatchGroup._add_callback`` notices a descriptor
  already held by a node at another path and moves that node, with its subtree, to the new
  path, as watchdog does for a move within the tree.
- A folder moved within the tree is queued as one ``DirMovedEvent``: watchdog's walk of the
  moved tree for a synthetic move per file and folder under it is skipped (issue 17: a folder
  of 12k notes was 12k events).
- A folder made after the start that cannot be watched for want of watches (ENOSPC) is
  remembered in ``out_of_watches``: watchdog 7.1.1 raises it from the start, but after the start
  only logs it. The supervisor then switches to polling.
- A folder whose watch cannot be added for any other reason (EACCES while an ancestor is
  briefly unreadable, a folder renamed away mid-walk: ENOENT) is not forgotten, as watchdog
  forgets it (issue 31): it is kept in ``unwatched`` (logged once), and ``rewatch`` adds it,
  and any other folder of the vault that has no watch, again (ARCHITECTURE "Watches that heal").

watchdog holds an IN_MOVED_FROM up to 0.5 s for its IN_MOVED_TO, in a queue whose reader,
once it has taken a held IN_MOVED_FROM as its head, sleeps out the whole 0.5 s even when the
pair arrives meanwhile, and everything queued behind waits too. A lone rename rarely meets it
(the reader must wake between the two events); a stream of renames meets it again and again:
3,000 file renames reached the handler 1.25 s after the last one (0.10 s with this queue,
median of 5; watchdog 7.1.1's queue still sleeps). ``_PromptQueue`` wakes the reader when the
queue changes, so a paired move goes out at once; a lone IN_MOVED_FROM still waits 0.5 s
(issue 17).

watchdog calls a group's callbacks on its inotify dispatcher thread: an exception there stops
the inotify reader, and every event after it is lost while the observer and its emitters still
look alive. So each callback is guarded: the error is kept in ``failed`` (the supervisor
restarts the watcher and rescans, ``RunningObserver.broken``), and the reader lives on.

A kernel queue overflow needs nothing here: watchdog 7.1.1 rebuilds the watches, delivers the
events read before the overflow, then an ``EventsLostEvent``, which ``daemon.watcher`` turns
into a rescan.

This leans on watchdog's private watch tree, move grouper, emitter and reader; ``BUILT_FOR``
names the releases it was checked against, and ``tests/unit/daemon/test_inotify.py`` fails if
a release changes them. pyproject.toml allows a range (``>=7.1.1,<8``, its floor in
``BUILT_FOR``): under any other release in it (or one whose private names this module cannot
import) ``daemon.watcher`` uses watchdog's own ``InotifyObserver`` instead and logs
``watchdog release not checked`` (the subclass written for 7.1.0 filled flat watch maps that
7.1.1 replaced by the tree, and then heard nothing). To check a new release: install it, run
the daemon tests with it added here, and add it for good if they pass (docs/architecture.md,
"Dependency ranges").
"""

from __future__ import annotations

import errno
import os
import select
import stat
import time
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

from watchdog.events import DirMovedEvent
from watchdog.observers.inotify import (
    _INVALID_WD,
    InotifyEmitter,
    InotifyObserver,
    InotifyWatchGroup,
)
from watchdog.observers.inotify_c import InotifyEvent, WatchDescriptor
from watchdog.observers.inotify_move_event_grouper import (
    GroupedInotifyEvent,
    InotifyMoveEventGrouper,
    PathedInotifyEvent,
)
from watchdog.utils.delayed_queue import DelayedQueue

from notedex.daemon.logging import get_logger

# Re-adding a watch this group already holds (the descriptor of a folder that came back) makes
# watchdog warn that our callback "will be overwritten": that is exactly what we want.
_REWATCH_WARNING = r"Callback with id .* already exists for watch"

log = get_logger("notedex.daemon.inotify")

BUILT_FOR = frozenset({"7.1.1"})
"""The watchdog releases whose private parts this module was checked against: the version gate
(``daemon.watcher._native_observer``) uses this subclass on these only."""

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
        self.unwatched: dict[bytes, str] = {}
        """Folders whose watch could not be added (EACCES...), and why: ``rewatch`` retries."""
        self._lost = False
        """A watch failed with ENOENT: the folder may live on under another path (an ancestor
        renamed mid-walk), so the next ``rewatch`` walks the whole tree."""
        super().__post_init__()

    out_of_watches: OSError | None = None
    """Set when a folder made after the start could not be watched for want of watches
    (ENOSPC): watchdog only logs it; the supervisor switches to polling
    (``RunningObserver.out_of_watches``)."""
    failed: BaseException | None = None
    """The first exception a callback raised on the dispatcher thread (its events may be lost)."""

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

    def on_events_lost(self) -> None:
        try:
            super().on_events_lost()
        except Exception as exc:
            self._failed(exc)

    def _failed(self, exc: Exception) -> None:
        if self.failed is None:
            self.failed = exc
            log.error("inotify callback failed", error=repr(exc), exc_info=exc)

    def _add_callback(self, path: bytes) -> None:
        """watchdog's, but an ENOSPC after the start is kept in ``out_of_watches``, and a
        descriptor already held at another path moves that node (the folder left and came
        back) instead of leaving it behind."""
        existing = self._find_node_by_path(path)
        if existing is not None and existing.wd != _INVALID_WD:
            return
        try:
            wd = self._inotify_fd.add_callback(path, self.event_mask, self._callback, self._id)
        except OSError as exc:
            # As watchdog: the root must be watched, and so must every folder during the start
            # (ENOSPC, EMFILE raise from start()); a descendant that vanished or cannot be
            # watched now is remembered, where watchdog forgets it (issue 31).
            if path == self.path:
                raise
            if exc.errno in {errno.ENOSPC, errno.EMFILE}:
                if not self.is_active:
                    raise
                if self.out_of_watches is None:
                    self.out_of_watches = exc
            self._not_watched(path, exc)
            return
        if wd == _INVALID_WD:
            # watchdog swallows EACCES and hands back -1, with a callback filed under it.
            self._inotify_fd.remove_callbacks([(wd, self._id)])
            denied = PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fsdecode(path))
            if path == self.path:
                raise denied
            self._not_watched(path, denied)
            return
        if self.unwatched.pop(path, None) is not None:
            log.info("folder watched again", path=os.fsdecode(path))
        if self._rebind(path, wd):
            return
        if self._insert_node(path, wd) is None:
            self._inotify_fd.remove_callbacks([(wd, self._id)])

    def _not_watched(self, path: bytes, exc: OSError) -> None:
        """Keep a folder whose watch failed for ``rewatch``; one log line per folder."""
        if exc.errno in {errno.ENOENT, errno.ENOTDIR}:
            self._lost = True  # gone, or renamed with an ancestor: the next rewatch walks
            return
        if path not in self.unwatched:
            log.warning(
                "folder not watched",
                path=os.fsdecode(path),
                error=exc.strerror or str(exc),
                action="retrying; a rescan watches it too",
            )
        self.unwatched[path] = exc.strerror or str(exc)

    def watch_folder(self, path: bytes, *, recursive: bool) -> None:
        """Watch ``path`` now (a deferred start: the vault walk tells of each folder before it
        lists it), with the folders under it when ``recursive``. Once out of watches, no more:
        the supervisor switches to polling (``out_of_watches``). Any thread but the
        dispatcher."""
        with self._lock:
            if not self.is_active or self.out_of_watches is not None:
                return
            if recursive:
                self._add_all_callbacks(path)
            else:
                self._add_callback(path)

    def rewatch(self, *, full: bool = False) -> list[bytes]:
        """Add the watches that are missing: those of ``unwatched`` (and the folders under
        them), and with ``full`` (or after an ENOENT) those of every folder under the root.
        Returns the folders watched now that were not: the events made in them meanwhile are
        lost, so the caller has them looked at. Called from any thread but the dispatcher."""
        with self._lock:
            if not self.is_active:
                return []
            full |= self._lost
            self._lost = False
            tops = list(self.unwatched)
        # The walk holds no lock: events go on meanwhile. ``_add_callback`` checks again.
        folders = self._folders() if full else tops
        added: list[bytes] = []
        for path in folders:
            with self._lock:
                if not self.is_active:
                    return added
                if self._watched(path):
                    continue
                if _gone(path):
                    self.unwatched.pop(path, None)  # nothing to watch
                    continue
                try:
                    self._add_all_callbacks(path)
                except OSError as exc:  # the root itself: kept for the next try
                    self._not_watched(path, exc)
                if self._watched(path):
                    added.append(path)
        return added

    @property
    def rewatch_due(self) -> bool:
        """Some folder has no watch that should have one (``rewatch`` adds it)."""
        return bool(self.unwatched) or self._lost

    def not_watched(self) -> list[bytes]:
        """The folders ``unwatched`` holds now (any thread)."""
        with self._lock:
            return sorted(self.unwatched)

    def _watched(self, path: bytes) -> bool:
        node = self._find_node_by_path(path)
        return node is not None and node.wd != _INVALID_WD

    def _folders(self) -> list[bytes]:
        """Every folder a recursive watch of the root needs (symlinked ones excepted, as
        watchdog does), parents before children."""
        found = [self.path]
        for top, dirnames, _ in os.walk(self.path):
            for name in dirnames:
                path = os.path.join(top, name)
                if not os.path.islink(path):
                    found.append(path)
        return found

    def _rebind(self, path: bytes, wd: WatchDescriptor) -> bool:
        """``wd`` is a folder already watched elsewhere in the tree (it left the vault and came
        back before its move out was reported): move its node, with the subtree, to ``path``.
        True when ``path``'s node is that node now."""
        stale = self._nodes_by_wd.get(wd)
        if wd == _INVALID_WD or stale is None or stale is self._root:
            return False
        old = self._reconstruct_path_iterative(stale)
        if old is not None and self._move_watches(old, path):
            return self._find_node_by_path(path) is stale
        # Not movable (its old place is already gone): detach it, so that removing its old
        # place later cannot take the descriptor away from the node that ``path`` gets now.
        if stale.parent is not None and stale.parent.children.get(stale.name) is stale:
            del stale.parent.children[stale.name]
        stale.parent = None
        return False


class _DeferredWatchGroup(_WatchGroup):
    """A group that watches only its root at the start; the other folders are watched as the
    start-up reconcile's walk reaches them (``watch_folder``), so the start lists the vault's
    tree once instead of three times (watchdog's walk, the watch count, the reconcile's walk;
    issue 35). ENOSPC then arrives after the start: ``out_of_watches``."""

    def _activate(self) -> None:
        with self._lock:
            if self.is_active:
                return
            self._add_callback(self.path)  # raises when the root cannot be watched
            self._is_active = True


def _gone(path: bytes) -> bool:
    """``path`` is no folder any more; not merely out of reach (EACCES above it)."""
    try:
        return not stat.S_ISDIR(os.stat(path).st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return True
    except OSError:
        return False


class _Emitter(InotifyEmitter):
    def __init__(self, *args: Any, deferred: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deferred = deferred

    def on_thread_start(self) -> None:
        group = _DeferredWatchGroup if self._deferred else _WatchGroup
        self._inotify = group(
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
            # A folder moved within the tree (its watches moved with it, in the group): one
            # DirMovedEvent, without the synthetic move per file and folder under it that
            # watchdog makes by walking the new tree (the handler drops them anyway,
            # daemon.watcher; issue 17). Its folder-modified events are not in our filter.
            move_from, move_to = event
            src, dest = self._decode_path(move_from.path), self._decode_path(move_to.path)
            self.queue_event(DirMovedEvent(src, dest))
            return
        super().build_and_queue_event(event, full_events=full_events)


class VaultInotifyObserver(InotifyObserver):
    """``InotifyObserver`` with the refinements above (the top of this module)."""

    def __init__(self, *, deferred: bool = False, **kwargs: Any) -> None:
        warnings.filterwarnings("ignore", message=_REWATCH_WARNING, category=RuntimeWarning)
        super().__init__(**kwargs)
        # InotifyObserver names its emitter class in BaseObserver.__init__: swap in ours.
        self._emitter_class = _Emitter
        self.deferred = deferred
        """Only the root is watched at the start; ``watch_folder`` adds the others."""
        if deferred:
            self._emitter_kwargs["deferred"] = True

    def watch_folder(self, rel: str, recursive: bool) -> None:
        """``vault.walk.FolderHook``: watch the folder at ``rel`` (relative to the watched
        root on disk) in every group (one: the vault's)."""
        for emitter in list(self.emitters):
            group = getattr(emitter, "_inotify", None)
            if isinstance(group, _WatchGroup):
                group.watch_folder(
                    os.path.join(group.path, os.fsencode(rel)) if rel else group.path,
                    recursive=recursive,
                )

    def pending(self) -> bool:
        """Whether events are still on their way to the handler: in the kernel's queue, in
        watchdog's queue of raw reads waiting for its dispatcher thread, in its move grouper
        (an IN_MOVED_FROM waits 0.5 s for its pair), or in the observer's queue. The shutdown
        drain waits for this to be False (twice in a row: a read being dispatched is in none)."""
        reader = self._inotify_fd  # None until the first schedule
        if reader is not None:
            raw = getattr(reader, "_raw_queue", None)
            if raw is not None and not raw.empty():
                return True
            fd = getattr(reader, "_inotify_fd", None)
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
