"""The parse pool: notes are parsed (and their bodies segmented) in worker processes, in
order and in batches, so the writer process only runs SQL."""

from __future__ import annotations

import collections
import contextlib
import gc
import itertools
import multiprocessing
import multiprocessing.context
import os
import signal
import sys
from collections.abc import Generator, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from typing import cast

from notedex.store.findings import Offload, run_here
from notedex.store.noterows import Derived, derive
from notedex.vault.model import Note, VaultFile
from notedex.vault.parse import hash_note, read_note
from notedex.vault.text import segment

PARALLEL_THRESHOLD = 400  # below this, a process pool costs more than it saves
CHUNK = 100  # notes per task handed to a worker
# Hashing a note costs a few hundredths of parsing it: the pool pays off later, in bigger tasks.
HASH_PARALLEL_THRESHOLD = 2000
HASH_CHUNK = 1000

Parsed = list[tuple[Note, str, Derived]]
"""Each note (its body dropped), its body segmented for body_fts, and what its rows need
computed from it alone (``store.noterows.derive``)."""

_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def die_with_parent() -> None:
    """Worker initializer: end when the process that started us ends (issue 13.15).

    A worker blocks on the pool's call queue, whose pipe it holds both ends of, so a writer
    killed mid-parse (``kill -9``, an OOM kill) would leave its workers waiting forever. On
    Linux the kernel sends SIGTERM when the parent (the forkserver, which itself ends with the
    daemon) exits; elsewhere the pool's own shutdown is all there is.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # the parent was gone before the prctl took effect
        os._exit(0)


def start_worker() -> None:
    """Worker initializer: end with the parent, and leave the stop signals to it.

    A Ctrl-C in a terminal, ``timeout -s INT`` and a supervisor signal the whole process group:
    the workers too. A worker that took SIGINT printed multiprocessing's traceback (read as a
    crash) and could leave the pool waiting on a pipe for good (issue 31.8). It ignores SIGINT;
    SIGTERM ends it silently (the default action: a fork inherits the CLI's Python handler,
    which would raise KeyboardInterrupt here). The parent stops its workers itself
    (``stop_workers``).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    die_with_parent()


_live: set[ProcessPoolExecutor] = set()
"""The pools of this process now running: ``stop_workers`` ends their workers."""
_stopped: list[bool] = []


def _context() -> multiprocessing.context.BaseContext | None:
    """How the workers start: on Linux from a forkserver (``poolserver``), never as forks of
    this process (issue 35). A fork begins with every page of its parent mapped, so each of a
    cold build's three workers counted the writer's whole heap at the time (the walk's files:
    about 450 MB at 1M notes) in the tree's memory, and a worker that touched an object copied
    its page. A forkserver's child starts from the small server, which imported the parse
    code once. The daemon sets the same start method for the whole process
    (``daemon.service``); elsewhere (macOS) the default, spawn, is already clean."""
    if not sys.platform.startswith("linux"):
        return None
    from multiprocessing import forkserver

    multiprocessing.set_forkserver_preload(["notedex.indexing.poolserver"])
    # Started with SIGINT blocked, which the server and its workers inherit: a Ctrl-C or
    # ``timeout -s INT`` signals the whole group, and a server still importing its preload
    # printed a KeyboardInterrupt traceback (issue 31.8). It ends with this process anyway.
    from multiprocessing import resource_tracker

    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        with _stderr_to_null():
            resource_tracker.ensure_running()
            forkserver.ensure_running()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    return multiprocessing.get_context("forkserver")


@contextlib.contextmanager
def _stderr_to_null() -> Iterator[None]:
    """The resource tracker and the forkserver start with their stderr on the null device.
    A pool of a forkserver registers its semaphores with the tracker, and a stop
    (``stop_workers``, then ``os._exit``) leaves them for it to remove, with a warning per stop
    on the stderr it inherited: after the one line a stopped command promises. The server is
    a fresh interpreter that does not keep the blocked SIGINT: a Ctrl-C while it imports its
    preload printed a KeyboardInterrupt traceback (``tests/system/test_signals.py``). Its
    workers inherit its stderr; what they raise comes back through the pool, not stderr."""
    saved = os.dup(2)
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, 2)
        finally:
            os.close(null)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


@contextlib.contextmanager
def _pool(workers: int) -> Iterator[ProcessPoolExecutor]:
    """A process pool for the ``with`` block. On the way out it waits for the chunks still
    running (after an exception, not for those not started), or for nothing once
    ``stop_workers`` has killed the workers."""
    pool = ProcessPoolExecutor(max_workers=workers, initializer=start_worker, mp_context=_context())
    _live.add(pool)
    failed = False
    try:
        yield pool
    except BaseException:
        failed = True
        raise
    finally:
        _live.discard(pool)
        # Once stopped, never wait: a worker killed while it wrote its answer leaves half a
        # message in the result pipe, which the pool's thread then waits on for good.
        pool.shutdown(wait=not _stopped, cancel_futures=failed)


def stop_workers() -> None:
    """A stop signal reached this process (the CLI's handler, issue 31.8): end every worker of
    every running pool at once. Waiting for their chunks took 7-9 s; a worker holds nothing
    worth saving (the writer commits, the workers only parse and hash), so SIGKILL it. The
    pools are then left as they are (not joined): the process ends soon after, with ``os._exit``
    (``notedex.cli``)."""
    _stopped.append(True)
    for pool in list(_live):
        processes = getattr(pool, "_processes", None) or {}
        for process in list(processes.values()):
            with contextlib.suppress(OSError, ValueError):
                process.kill()


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Suspend the cyclic garbage collector during bulk work.

    Indexing creates hundreds of thousands of acyclic objects; every full collection would
    walk the whole growing heap, which made a 100k-note index take about twice as long.
    Reference counting still frees everything; one collection runs at the end.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect()


@contextlib.contextmanager
def findings_helper(workers: int) -> Iterator[Offload]:
    """The ``Offload`` of a large private apply's findings (``IndexWriter.flush_pending_fts``):
    one worker process, which derives the link texts, checks the anchors, runs the `typo`
    search and counts the tags while the writer writes the search rows; the second core sits
    idle there otherwise (issue 12: a cold index's serial end). Enter it before the batches:
    it starts now (``_context``: not a fork of this process). In this process when
    ``workers`` is 1. The helper never opens the index (a process that shares an open
    connection's state with it must not)."""
    if workers <= 1:
        yield run_here
        return
    with _pool(1) as pool:
        pool.submit(int).result()  # started now, ready when the batches end
        yield pool.submit


_DROPPED: tuple[tuple[str, object], ...] = (
    ("body", ""),
    ("links", ()),
    ("tags", ()),
    ("aliases", ()),
    ("warnings", ()),
    ("headings", ()),
    ("block_ids", ()),
    ("tasks", ()),
    ("properties", {}),
)
"""What a parsed note crosses to the writer without: its body (the segmented text replaces
it) and what only its rows read, which cross as ``noterows.Prepared`` (issue 35, build35b):
the writer reads a parsed note's path, stem, titles and errors."""


def parse_chunk(items: Sequence[tuple[str, str]], max_bytes: int, body_index: bool) -> Parsed:
    """Worker-process entry point: parse (disk_path, path) pairs, segment each body for FTS.

    The CPU work happens here so the writer process only runs SQL. The raw body is dropped
    from the Note (the segmented text replaces it) to halve what crosses the process boundary,
    and so is what only its rows read (``_DROPPED``; the rows cross as plain tuples): in place,
    on the Note just made here and seen by nobody else yet (``dataclasses.replace`` ran the
    frozen class's ``__init__`` again, 0.02 s of CPU per 3,000 notes).

    The cyclic garbage collector waits meanwhile (issue 35, build35c): a chunk makes tens of
    thousands of objects, none in a cycle (reference counting frees them), and a collection
    every 700 of them was about 4% of a worker's CPU. It runs again after the chunk as it
    would have (no collection is forced: the objects alive then are the chunk's answer).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        out: Parsed = []
        for disk, path in items:
            note = read_note(disk, path, max_bytes=max_bytes)
            body = segment(note.body) if body_index and note.body else ""
            derived = derive(note)
            for name, empty in _DROPPED:  # frozen for everyone else (STYLE 9)
                object.__setattr__(note, name, empty)
            out.append((note, body, derived))
        return out
    finally:
        if enabled:
            gc.enable()


def parse_batches(
    notes: Iterable[VaultFile],
    *,
    batch_size: int,
    workers: int,
    max_bytes: int,
    body_index: bool,
    count: int | None = None,
) -> Generator[Parsed, None, None]:
    """Yield parsed notes in batches, in the order of ``notes``; parse in worker processes
    for large sets. ``notes`` is read as the chunks are handed out (a first index streams
    them from its walk, ``store.walked``); ``count``: how many there are, when ``notes`` is
    no sequence. Closing the generator early cancels the chunks not started yet."""
    total = count if count is not None else len(cast(Sequence[VaultFile], notes))
    files = iter(notes)

    def items(size: int) -> list[tuple[str, str]]:
        return [(vf.disk_path, vf.path) for vf in itertools.islice(files, size)]

    if total < PARALLEL_THRESHOLD or workers <= 1:
        while chunk := items(batch_size):
            yield parse_chunk(chunk, max_bytes, body_index)
        return
    pending: Parsed = []
    # A bounded window of chunks in flight, in order: about one batch ahead, so workers keep
    # parsing while a batch is written, yet parsed notes never pile up in memory when the
    # writer is the slower side (pool.map would submit every chunk at once).
    window = batch_size // CHUNK + 2 * workers
    with _pool(workers) as pool:
        in_flight: collections.deque[Future[Parsed]] = collections.deque()
        more = True
        while more or in_flight:
            while more and len(in_flight) < window:
                chunk = items(CHUNK)  # each chunk's items are made when it is submitted
                if not chunk:
                    more = False
                    break
                in_flight.append(pool.submit(parse_chunk, chunk, max_bytes, body_index))
            if not in_flight:
                break
            pending.extend(in_flight.popleft().result())
            if len(pending) >= batch_size:
                try:
                    yield pending
                except GeneratorExit:
                    for future in in_flight:
                        future.cancel()  # a stopped apply waits only for the running chunks
                    raise
                pending = []
    if pending:
        yield pending


def hash_chunk(items: Sequence[tuple[str, int, int, int]], max_bytes: int) -> list[str | None]:
    """Worker-process entry point: the content hash of each (disk_path, size, mtime_ns, inode),
    or None when the file cannot be read or what was read no longer has that etag."""
    out: list[str | None] = []
    for disk, size, mtime_ns, inode in items:
        found = hash_note(disk, max_bytes=max_bytes)
        if found is None:
            out.append(None)
            continue
        content_hash, info = found
        same = (info.st_size, info.st_mtime_ns, info.st_ino) == (size, mtime_ns, inode)
        out.append(content_hash if same else None)
    return out


def hash_notes(notes: Sequence[VaultFile], *, workers: int, max_bytes: int) -> list[str | None]:
    """``hash_chunk`` of every note, in order: in worker processes (the parse pool's) for a
    large set, such as a vault restored from a backup (every inode new)."""
    items = [(vf.disk_path, vf.size, vf.mtime_ns, vf.inode) for vf in notes]
    if len(items) < HASH_PARALLEL_THRESHOLD or workers <= 1:
        return hash_chunk(items, max_bytes)
    chunks = [items[start : start + HASH_CHUNK] for start in range(0, len(items), HASH_CHUNK)]
    out: list[str | None] = []
    with _pool(workers) as pool:
        for hashes in pool.map(hash_chunk, chunks, [max_bytes] * len(chunks)):
            out.extend(hashes)
    return out
