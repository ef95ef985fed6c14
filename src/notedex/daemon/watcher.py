"""Watch the vault with watchdog; the handler only enqueues hints (STYLE 5).

- ``VaultEventHandler.dispatch`` never raises and never touches the disk: it turns an event
  into vault-relative paths (both ends of a move) and hands them to the ``Batcher``. Paths
  with a hidden segment (``.obsidian``, ``.git``, ``.trash``, ``.x.md.swp``) are dropped.
- A folder moved within the vault is one hint pair (both ends: the writer looks under each
  once); the move events watchdog makes up for every file and folder under it
  (``is_synthetic``) are dropped, as the folder hint covers them (issue 17: a folder of 12k
  notes was 12k hints that kept the batch from starting). On inotify they are not even made
  (``daemon.inotify``: no walk of the moved tree). A move into or out of the vault is no pair:
  a created or deleted folder, as before (the deletions watchdog makes up for the subfolders of
  a folder moved out are dropped too: the folder's hint covers them). The polling observer's per-file moves are real (its
  snapshot diff), not synthetic, and are kept.
- ``start_observer`` prefers inotify (FSEvents on macOS) and falls back to polling for
  ``--poll``, a network file system, an inotify error (ENOSPC, EMFILE) or too few watches.
- A kernel queue overflow (watchdog's ``EventsLostEvent``, after the events read before it and
  once its watches are rebuilt) is a rescan.

About 420 lines: the observer's health (``RunningObserver``: alive, broken, drain) and the
probes that choose polling (watch counting, mount table) are read together with the start
that uses them; splitting the probes out is a candidate for the next refactor.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from watchdog.events import (
    DirAttribEvent,
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    EventsLostEvent,
    FileAttribEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
    FileSystemMovedEvent,
)
from watchdog.observers.api import BaseObserver
from watchdog.observers.polling import PollingObserver

from notedex.daemon.batcher import FILTERS, Batcher, Hint
from notedex.daemon.logging import get_logger
from notedex.vault.files import is_hidden_path
from notedex.vault.walk import FolderHook

log = get_logger("notedex.daemon.watcher")

# watchdog's event_filter: only these reach the handler, and on inotify only their bits are
# asked of the kernel. No open/close-without-write events: our own reads would wake us.
# No DirModifiedEvent (every file event also touches its folder). A DirAttribEvent (a chmod,
# chown or touch of the folder itself; never a file made in it) is a hint for the folder: one
# made unreadable, or readable again, sends no other event (ARCHITECTURE "Unreadable is visible").
EVENT_FILTER: list[type[FileSystemEvent]] = [
    DirAttribEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileAttribEvent,
    FileMovedEvent,
    FileClosedEvent,
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    EventsLostEvent,
]

OBSIDIAN_SETTINGS = ".obsidian/app.json"
OVERFLOW_RESCAN = "inotify queue overflow"
"""The rescan cause for an ``EventsLostEvent`` (the kernel's event queue overflowed)."""
POLL_INTERVAL = 1.0
DRAIN_TIMEOUT = 1.0
"""At most this long at a stop for queued events (watchdog holds a lone move 0.5 s)."""
INOTIFY_WATCH_LIMIT = "/proc/sys/fs/inotify/max_user_watches"
NETWORK_FILESYSTEMS = frozenset(
    {
        "9p", "afs", "ceph", "cifs", "davfs", "fuse.davfs2", "fuse.gvfsd-fuse", "fuse.rclone",
        "fuse.s3fs", "fuse.sshfs", "glusterfs", "ncpfs", "nfs", "nfs4", "smb3", "smbfs",
    }
)  # fmt: skip


class VaultEventHandler(FileSystemEventHandler):
    """Turns watchdog events into hints for the batcher. Runs on the observer thread."""

    def __init__(
        self,
        root: Path,
        batcher: Batcher,
        *,
        hold_until_close: bool,
        fault: str | None = None,
        on_folder_mode: Callable[[], None] | None = None,
    ) -> None:
        super().__init__()
        self._root = os.fspath(root).rstrip(os.sep) or os.sep
        self._prefix = self._root if self._root.endswith(os.sep) else self._root + os.sep
        self._batcher = batcher
        self.hold_until_close = hold_until_close
        """On inotify, a modified file is read after its close event (FileClosedEvent)."""
        self._fault = fault
        self._on_folder_mode = on_folder_mode
        """Told of a folder's DirAttribEvent (a chmod back may make a folder watchable)."""

    def dispatch(self, event: FileSystemEvent) -> None:
        try:
            if self._fault == "handler" and "fault" in os.fsdecode(event.src_path):
                raise RuntimeError("injected fault (NOTEDEX_TEST_FAULT=handler)")
            self._enqueue(event)
        except Exception as exc:
            # A lost event must not mean a stale index: let a full rescan find what it was.
            with contextlib.suppress(Exception):
                self._batcher.request_rescan("event handler error", error=exc)

    def _enqueue(self, event: FileSystemEvent) -> None:
        if isinstance(event, EventsLostEvent):
            # The kernel's queue overflowed: watchdog has rebuilt its watches and delivered
            # the events read before the overflow; what came after is lost.
            self._batcher.request_rescan(OVERFLOW_RESCAN)
            return
        if event.is_synthetic and isinstance(event, FileSystemMovedEvent | DirDeletedEvent):
            return  # under a moved folder, whose own hint covers it
        if isinstance(event, DirAttribEvent) and self._on_folder_mode is not None:
            self._on_folder_mode()  # a flag: the supervisor retries the watches it lacks
        src = self._relative(event.src_path)
        dest = self._relative(event.dest_path) if isinstance(event, FileSystemMovedEvent) else None
        if src == "" and isinstance(event, DirAttribEvent):
            # Its mode may have changed: only the vault walk can tell what it can read now.
            self._batcher.request_rescan("the vault folder's mode or times changed")
            return
        if src == "" or dest == "":
            # The vault folder itself was deleted or moved: the supervisor takes over.
            self._batcher.request_rescan(f"the vault folder was {event.event_type}")
            return
        kind = event.event_type
        if kind == "closed":
            hint = Hint.SETTLED
        elif kind == "modified" and self.hold_until_close:
            hint = Hint.WRITING
        else:
            hint = Hint.CHANGED
        paths = []
        for rel in (src, dest):
            if rel is None:
                continue
            if is_hidden_path(rel):
                if rel == OBSIDIAN_SETTINGS:
                    self._batcher.submit(FILTERS)
                continue
            paths.append(rel)
        if not paths:
            return
        if kind == "moved":
            # Both ends are re-checked; the source is gone, the destination is complete. A
            # folder moved within the vault needs no quiet window of its own (issue 17).
            folder = isinstance(event, DirMovedEvent) and len(paths) == 2
            self._batcher.add(paths, Hint.FOLDER_MOVED if folder else Hint.SETTLED)
        else:
            self._batcher.add(paths, Hint.SETTLED if kind == "deleted" else hint)

    def _relative(self, raw: bytes | str) -> str | None:
        """Vault-relative ``/`` path (``""`` for the root), or None for paths outside the vault."""
        if not raw:
            return None
        path = os.fsdecode(raw)
        if path == self._root:
            return ""
        if not path.startswith(self._prefix):
            return None
        rel = path[len(self._prefix) :]
        return rel.replace(os.sep, "/") if os.sep != "/" else rel


# -- observers -------------------------------------------------------------------------------


@dataclass
class RunningObserver:
    observer: BaseObserver
    kind: str
    """"inotify", "fsevents", "polling"..."""
    fallback_reason: str | None = None
    """Why we poll, when we poll."""

    def alive(self) -> bool:
        return self.broken() is None

    def folder_hook(self) -> FolderHook | None:
        """Under a deferred start (``start_observer(deferred=True)``), what adds each folder's
        watch as the start-up walk reaches it; None when every folder is watched already."""
        if getattr(self.observer, "deferred", False):
            hook: FolderHook = self.observer.watch_folder  # type: ignore[attr-defined]
            return hook
        return None

    def broken(self) -> str | None:
        """None while events flow; else why not (the supervisor's restart cause)."""
        try:
            emitters = list(self.observer.emitters)
        except RuntimeError:  # the set changed while we looked
            return None
        if not (self.observer.is_alive() and emitters and all(e.is_alive() for e in emitters)):
            return "the watcher stopped"
        # The inotify reader thread: when it dies, the emitters wait forever, looking alive.
        reader = getattr(self.observer, "_inotify_fd", None)
        if isinstance(reader, threading.Thread) and not reader.is_alive():
            return "the inotify reader thread ended"
        for emitter in emitters:
            failed = getattr(getattr(emitter, "_inotify", None), "failed", None)
            if isinstance(failed, BaseException):
                return f"an inotify callback failed ({failed!r})"
        return None

    def out_of_watches(self) -> OSError | None:
        """The ENOSPC that left a folder made after the start unwatched, if any (inotify)."""
        try:
            emitters = list(self.observer.emitters)
        except RuntimeError:
            return None
        for emitter in emitters:
            group = getattr(emitter, "_inotify", None)
            error = getattr(group, "out_of_watches", None)
            if isinstance(error, OSError):
                return error
        return None

    def unwatched(self) -> list[str]:
        """Folders under the vault whose watch could not be added, for now (inotify)."""
        return sorted(os.fsdecode(p) for group in self._groups() for p in group.not_watched())

    def rewatch_due(self) -> bool:
        return any(group.rewatch_due for group in self._groups())

    def rewatch(self, *, full: bool = False) -> list[str]:
        """Add the missing watches (``daemon.inotify``); the folders watched now that were not."""
        return [os.fsdecode(p) for group in self._groups() for p in group.rewatch(full=full)]

    def _groups(self) -> list[Any]:
        """Our inotify watch groups (none under polling or watchdog's own observer)."""
        try:
            emitters = list(self.observer.emitters)
        except RuntimeError:
            return []
        groups = (getattr(emitter, "_inotify", None) for emitter in emitters)
        return [group for group in groups if callable(getattr(group, "rewatch", None))]

    def drain(self, timeout: float = DRAIN_TIMEOUT, pause: float = 0.02) -> None:
        """Before a stop: let the events already queued reach the handler (inotify), so a note
        saved just before SIGTERM is in the last batch. Quiet twice in a row, or ``timeout``.

        The polling observer takes one last snapshot now, so a save less than one poll interval
        before the stop is in the last batch too, and its events are waited for.
        """
        pending = getattr(self.observer, "pending", None)
        if self.kind == "polling":
            for emitter in list(self.observer.emitters):
                try:
                    emitter.queue_events(0)  # PollingEmitter: snapshot and diff now
                except Exception as exc:  # the next start's reconcile still finds it
                    log.warning("last snapshot failed", error=repr(exc))
            queue = self.observer.event_queue
            pending = lambda: bool(queue.unfinished_tasks)  # noqa: E731
        if not callable(pending):
            return
        deadline = time.monotonic() + timeout
        quiet = 0
        while quiet < 2 and time.monotonic() < deadline:
            quiet = 0 if pending() else quiet + 1
            time.sleep(pause)

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self.observer.stop()
        with contextlib.suppress(RuntimeError):
            self.observer.join(timeout=10)


def start_observer(
    root: Path,
    make_handler: Callable[[bool], FileSystemEventHandler],
    *,
    poll: bool = False,
    poll_interval: float = POLL_INTERVAL,
    deferred: bool = False,
) -> RunningObserver:
    """Start watching ``root`` recursively; ``make_handler(hold_until_close)`` builds the handler.

    ``deferred`` (our inotify observer only): watch the root alone now, and each folder under
    it when the caller's walk reaches it (``RunningObserver.folder_hook``): the daemon's start
    lists the tree once (issue 35). ENOSPC then shows after the start (``out_of_watches``),
    so the watch count that checks the whole tree is skipped.
    """
    reason: str | None = "--poll was given" if poll else None
    if reason is None:
        fs_type = network_filesystem(root)
        if fs_type is not None:
            reason = (
                f"the vault is on a network file system ({fs_type}): events are unreliable there"
            )
    if reason is None:
        try:
            native, kind = _native_observer(deferred=True) if deferred else _native_observer()
        except OSError as exc:  # no inotify instance at all (EMFILE)
            native, kind, reason = None, "none", _inotify_error_advice(exc)
    if reason is None and native is not None:
        try:
            native.schedule(
                make_handler(kind == "inotify"),
                os.fspath(root),
                recursive=True,
                event_filter=EVENT_FILTER,
            )
            native.start()
        except OSError as exc:
            _quietly_stop(native)
            reason = _inotify_error_advice(exc)
        else:
            if kind == "inotify" and not getattr(native, "deferred", False):
                reason = watch_shortfall(root)
            if reason is None:
                return RunningObserver(native, kind)
            _quietly_stop(native)
    log.warning("polling", reason=reason, interval=poll_interval)
    observer = PollingObserver(timeout=poll_interval)
    observer.schedule(
        make_handler(False), os.fspath(root), recursive=True, event_filter=EVENT_FILTER
    )
    observer.start()
    return RunningObserver(observer, "polling", reason)


def _native_observer(*, deferred: bool = False) -> tuple[BaseObserver, str]:
    if sys.platform.startswith("linux"):
        from watchdog.version import VERSION_STRING

        checked: list[str] = []
        try:  # it imports watchdog's private names: another release may lack them
            from notedex.daemon.inotify import BUILT_FOR, VaultInotifyObserver
        except ImportError as exc:
            missing: str | None = repr(exc)
        else:
            if VERSION_STRING in BUILT_FOR:
                return VaultInotifyObserver(deferred=deferred), "inotify"
            missing, checked = None, sorted(BUILT_FOR)
        # Our subclass leans on watchdog's private parts: under a release it was not checked
        # against it may hear nothing at all. watchdog's own observer hears everything; what
        # it lacks are refinements (daemon.inotify).
        from watchdog.observers.inotify import InotifyObserver

        log.warning(
            "watchdog release not checked",
            watchdog=VERSION_STRING,
            checked=checked,
            error=missing,
            using="watchdog's own inotify observer",
        )
        return InotifyObserver(), "inotify"
    from watchdog.observers import Observer

    observer = Observer()
    return observer, type(observer).__name__.removesuffix("Observer").lower() or "native"


def _quietly_stop(observer: BaseObserver) -> None:
    with contextlib.suppress(Exception):
        observer.stop()
    with contextlib.suppress(Exception):
        observer.join(timeout=5)


def _inotify_error_advice(exc: OSError) -> str:
    if exc.errno == errno.ENOSPC:
        return f"inotify ran out of watches ({exc}); {sysctl_advice()}"
    if exc.errno == errno.EMFILE:
        return (
            f"too many inotify instances ({exc}); raise fs.inotify.max_user_instances "
            "(e.g. `sudo sysctl fs.inotify.max_user_instances=512`)"
        )
    return f"the native file watcher failed to start: {exc}"


def sysctl_advice(folders: int | None = None) -> str:
    limit = _read_int(INOTIFY_WATCH_LIMIT)
    wanted = max(524_288, 2 * (folders or 0))
    return (
        f"fs.inotify.max_user_watches is {limit if limit is not None else 'unknown'}; raise it "
        f"with `sudo sysctl fs.inotify.max_user_watches={wanted}` and make it permanent in "
        f"/etc/sysctl.d/90-notedex.conf, then restart the daemon"
    )


def watch_shortfall(root: Path, *, attempts: int = 3, pause: float = 0.2) -> str | None:
    """None when inotify watches every folder; else why we should poll.

    watchdog 7.1.1 raises ENOSPC (the user's watch limit reached) from the start itself; this
    count is the check that does not rely on it (watchdog 7.1.0 skipped such a folder without
    telling us): one watch per folder, hidden ones included. Folders made meanwhile are
    watched a moment later, hence a few attempts.
    """

    watches = folders = 0
    for attempt in range(attempts):
        folders = count_folders(root)
        watches_now = count_inotify_watches()
        if watches_now is None:
            return None  # cannot tell (no /proc): trust the observer
        watches = watches_now
        if watches >= folders:
            return None
        if attempt + 1 < attempts:
            time.sleep(pause)
    return f"inotify watches only {watches} of {folders} folders; {sysctl_advice(folders)}"


def count_folders(root: Path) -> int:
    """Folders watchdog's recursive inotify watch needs: root and every real subfolder."""
    return sum(1 for _ in os.walk(root, followlinks=False))


def count_inotify_watches() -> int | None:
    """Watches held by this process's inotify instances, from ``/proc/self/fdinfo``."""
    try:
        fds = os.listdir("/proc/self/fd")
    except OSError:
        return None
    total = 0
    found = False
    for fd in fds:
        try:
            if os.readlink(f"/proc/self/fd/{fd}") != "anon_inode:inotify":
                continue
            with open(f"/proc/self/fdinfo/{fd}", encoding="ascii", errors="replace") as info:
                total += sum(1 for line in info if line.startswith("inotify wd:"))
            found = True
        except OSError:
            continue
    return total if found else None


def network_filesystem(root: Path, mountinfo: str | None = None) -> str | None:
    """The file system type of ``root`` when it is a network one (Linux), else None."""
    if mountinfo is None:
        try:
            with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as handle:
                mountinfo = handle.read()
        except OSError:
            return None
    target = os.fspath(root)
    best: tuple[int, str] | None = None
    for line in mountinfo.splitlines():
        left, sep, right = line.partition(" - ")
        fields = left.split()
        if not sep or len(fields) < 5 or not right:
            continue
        mount_point = _unescape_mount(fields[4])
        inside = target == mount_point or target.startswith(mount_point.rstrip("/") + "/")
        if inside and (best is None or len(mount_point) >= best[0]):
            best = (len(mount_point), right.split()[0])
    if best is not None and best[1] in NETWORK_FILESYSTEMS:
        return best[1]
    return None


def _unescape_mount(field: str) -> str:
    # mountinfo escapes space, tab, newline and backslash as \ooo octal.
    out: list[str] = []
    i = 0
    while i < len(field):
        if field[i] == "\\" and i + 4 <= len(field) and field[i + 1 : i + 4].isdigit():
            out.append(chr(int(field[i + 1 : i + 4], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def _read_int(path: str) -> int | None:
    try:
        with open(path, encoding="ascii") as handle:
            return int(handle.read().strip())
    except (OSError, ValueError):
        return None
