"""Applying a change set: deletions and moves first, then parsed notes in chunks, each chunk
one writer transaction that leaves a visible index consistent (bulk mode for a large one; the
fast, deferred way for a private index being built). The order is the recipe; the SQL of every
step is in store/ behind ``IndexWriter``."""

from __future__ import annotations

import collections
import contextlib
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from notedex.indexing.pool import Parsed, findings_helper, parse_batches, paused_gc
from notedex.store.files import IndexedFile
from notedex.store.writer import IndexWriter
from notedex.vault.bases import BASE_SUFFIX, read_base_file
from notedex.vault.model import VaultFile

BATCH_SIZE = 1000
# A large apply (a first index, a git checkout of thousands of notes) runs in bulk mode: bigger
# transactions, a big page cache, fewer WAL checkpoints and no FTS segment merging until the
# end. At 100k notes this halves the cold index; commits and merges were the larger half.
BULK_NOTES = 5000
BULK_BATCH_SIZE = 5000
FINDINGS_HELPER_MIN = 3_000
"""From this many notes, a private apply's findings at the end have a helper process
(``pool.findings_helper``). Measured on cold indexes with the inputs handed over as JSON
arrays (issue 12, session 11): at 3k notes it saves 2.8% of the wall time for 1.4% more CPU,
at 2k 1.4% of the wall for 2.5% more CPU (its process and hand-overs cost about the same at
any size, what it overlaps grows with the vault); at 100k it saves seconds."""
STOPPING_BATCH_SIZE = 100
"""The chunk size of an apply that starts while the daemon is stopping (the flush of what was
queued at SIGTERM): its first chunk always completes, so it is kept short."""

Progress = Callable[[int, int], None]
RowsOf = Callable[[Iterable[str]], dict[str, IndexedFile]]
"""The indexed rows of some paths, by path (``IndexWriter.file_rows``, or a caller's memo of
it: ``indexing.reconcile.apply_paths`` reads each path's row once per batch)."""


@dataclass
class ApplyReport:
    added: int = 0
    changed: int = 0
    removed: int = 0
    moved: int = 0
    """Files found under a new path with their etag: their rows were moved, not re-parsed."""
    unchanged: int = 0
    rehashed: int = 0
    """Of ``unchanged``: files whose etag was new but whose content the hash confirmed."""
    errors: int = 0
    """The errors the index holds after a reconcile (``store.read.error_count``): what `health`
    lists and `index` reports (issue 34)."""
    notes_with_errors: int = 0
    """Of the notes this apply parsed, those with a parse error (the daemon's batch log); not
    the errors the index holds, which `index` reports (``store.read.error_count``)."""
    seconds: float = 0.0
    paths: list[str] = field(default_factory=list)
    """The paths whose rows this apply wrote or removed (a move: its new path), for the
    daemon's re-check of what changed while it read (``Indexer._changed_while_read``)."""
    kept: list[str] = field(default_factory=list)
    """Reasons why rows that looked stale were kept (missing vault, unreadable folders)."""
    held: list[str] = field(default_factory=list)
    """Unpaired ends of a move-like batch left for the next one (``indexing.pairing.hold``), by
    their on-disk names: not applied here; the daemon hints them again at once."""
    unreadable: list[str] = field(default_factory=list)
    """Paths that could not be looked at now (EACCES, a folder that cannot be listed): what
    changed under them is not known yet, so the daemon looks again (issue 13)."""

    def merge(self, other: ApplyReport) -> None:
        self.added += other.added
        self.changed += other.changed
        self.removed += other.removed
        self.moved += other.moved
        self.unchanged += other.unchanged
        self.rehashed += other.rehashed
        self.notes_with_errors += other.notes_with_errors
        self.errors = other.errors  # a count of the index, not of a run: the later one
        self.paths.extend(other.paths)
        self.kept.extend(other.kept)
        self.held.extend(other.held)
        self.unreadable.extend(other.unreadable)

    def as_dict(self) -> dict[str, object]:
        return {
            "added": self.added,
            "changed": self.changed,
            "removed": self.removed,
            "moved": self.moved,
            "unchanged": self.unchanged,
            "rehashed": self.rehashed,
            "errors": self.errors,
            "seconds": round(self.seconds, 3),
            "kept": self.kept,
        }


def apply(
    writer: IndexWriter,
    upserts: Sequence[VaultFile],
    deletes: Iterable[str],
    *,
    moves: Sequence[tuple[IndexedFile, VaultFile]] = (),
    progress: Progress | None = None,
    rows_of: RowsOf | None = None,
) -> ApplyReport:
    """Index ``upserts`` (already known to differ from the index) and drop ``deletes``.

    An index that readers see (``writer.private`` false) is changed in chunks of at most
    ``BATCH_SIZE`` notes, each one committed transaction that leaves the index consistent
    (ARCHITECTURE "Freshness"): the first holds the deletions, every move and the attachments;
    each holds the registration, parsed rows, structure-search rows and findings of its notes,
    so a committed state is the index of a vault where the later chunks' files are not changed
    yet. ``progress`` runs after each chunk; what it raises stops the apply there (the daemon's
    SIGTERM), and the next reconcile finds the rest.

    A private index (one being built to be swapped in, ``store.swap``) is built the fast way:
    every new file registered at once (real row ids, so links resolve immediately; a pending
    etag, so a crash leaves them "changed"), big batches, and the structure-search rows
    recomputed once at the end through the ``fts_pending`` table, which survives a crash.
    ``rows_of``: how the rows of the paths at hand are read (``IndexWriter.file_rows`` by default).
    """
    plan = _plan(writer, upserts, deletes, moves, rows_of or writer.file_rows)
    note_count = sum(1 for vf in upserts if vf.is_note)
    apply_steps = _apply_private if writer.private else _apply_visible
    visible = STOPPING_BATCH_SIZE if writer.stop is not None and writer.stop() else BATCH_SIZE
    if note_count < BULK_NOTES:
        with paused_gc():
            size = BATCH_SIZE if writer.private else visible
            return apply_steps(writer, plan, moves, progress, size)
    with paused_gc(), writer.bulk_mode():
        size = (writer.bulk_batch_size or BULK_BATCH_SIZE) if writer.private else visible
        return apply_steps(writer, plan, moves, progress, size)


@dataclass
class _Plan:
    """The change set in the order it is written, with what is already indexed."""

    report: ApplyReport
    deletes: list[str]
    notes: list[VaultFile]
    attachments: list[VaultFile]
    existing: set[str]
    total: int
    upserts: Sequence[VaultFile]
    started: float
    walked: bool = False
    """A first index of what ``store.walked`` holds: ``notes`` and ``attachments`` are not in
    memory (``apply_walked``)."""
    note_count: int = -1


def _plan(
    writer: IndexWriter,
    upserts: Sequence[VaultFile],
    deletes: Iterable[str],
    moves: Sequence[tuple[IndexedFile, VaultFile]],
    rows: RowsOf,
) -> _Plan:
    started = time.perf_counter()
    report = ApplyReport()
    deletes = list(dict.fromkeys(deletes))
    known = rows([*deletes, *(vf.path for vf in upserts)])
    deletes = [path for path in deletes if path in known]
    notes = [vf for vf in upserts if vf.is_note]
    attachments = [vf for vf in upserts if not vf.is_note]
    report.changed = sum(1 for vf in upserts if vf.path in known)
    report.added = len(upserts) - report.changed
    existing = set(known).difference(deletes)  # a deleted path that is upserted is new
    # A path whose row moved away (a swap, a rename over it) is new unless a row moved in.
    existing.difference_update({row.path for row, _ in moves})
    existing.update(vf.path for _, vf in moves)
    total = len(notes) + len(attachments) + len(deletes)
    return _Plan(
        report, deletes, notes, attachments, existing, total, upserts, started, False, len(notes)
    )


def apply_walked(writer: IndexWriter, progress: Progress | None = None) -> ApplyReport:
    """A first index of the files ``writer.add_walked`` put aside (an index with no files and
    nothing to delete or move): ``apply`` of every one of them, the same rows in the same
    order, while neither the files nor their paths are held in memory (issue 35). The report
    lists no ``paths`` (a rebuild's callers read only its counts)."""
    started = time.perf_counter()
    note_count, attachment_count = writer.walked_counts()
    report = ApplyReport(added=note_count + attachment_count)
    plan = _Plan(report, [], [], [], set(), report.added, (), started, True, note_count)
    size = writer.bulk_batch_size or BULK_BATCH_SIZE
    with paused_gc(), writer.bulk_mode() if note_count >= BULK_NOTES else contextlib.nullcontext():
        _apply_private(writer, plan, (), progress, size if note_count >= BULK_NOTES else BATCH_SIZE)
    writer.walked_done()
    return report


def _remove_and_move(
    writer: IndexWriter, plan: _Plan, moves: Sequence[tuple[IndexedFile, VaultFile]]
) -> set[int]:
    """Inside a transaction: the deletions, then the moves; returns the dirty notes."""
    report = plan.report
    dirty: set[int] = set()
    if plan.deletes:
        dirty |= writer.delete_files(plan.deletes)
        writer.reresolve_for(set(plan.deletes), dirty)
        report.removed += len(plan.deletes)
        report.paths.extend(plan.deletes)
    if moves:
        # Paths, not content: the rows move in place, the links both ends can affect are
        # re-resolved, nothing is parsed (issue 17). All in one transaction: readers see a
        # folder move whole or not at all.
        dirty |= writer.move_files(moves)
        report.moved = len(moves)
        # The paths the rows now have: an old path keeps no row (unless another moved onto it).
        report.paths.extend(sorted({vf.path for _, vf in moves}))
    return dirty


def _apply_visible(
    writer: IndexWriter,
    plan: _Plan,
    moves: Sequence[tuple[IndexedFile, VaultFile]],
    progress: Progress | None,
    batch_size: int,
) -> ApplyReport:
    report, notes, upserts = plan.report, plan.notes, plan.upserts
    batches = _parse(writer, notes, batch_size)
    # The first chunk also holds the deletions, moves and attachments: a small apply is one
    # transaction.
    first: Parsed = next(batches, []) if notes else []
    written = done = 0
    try:
        with writer.transaction():
            dirty = _remove_and_move(writer, plan, moves)
            dirty |= _write_chunk(writer, plan, plan.attachments, first, written)
            writer.refresh_fts(dirty)
        written = len(first)
        done = len(plan.deletes) + len(plan.attachments) + written
        if progress and done:
            progress(done, plan.total)
        for parsed in batches:
            # A later chunk may be aborted inside by a stop (SIGTERM): rolled back, the index
            # stays at the last commit. The first one always completes (a flush at shutdown).
            with writer.transaction(), writer.interruptible():
                writer.refresh_fts(_write_chunk(writer, plan, (), parsed, written))
            written += len(parsed)
            done += len(parsed)
            if progress:
                progress(done, plan.total)
    finally:
        batches.close()  # an interrupted apply: stop the parse pool now
    report.paths.extend(vf.path for vf in upserts)
    _finish(writer, report, bool(upserts or plan.deletes or moves), plan.started)
    return report


def _parse(
    writer: IndexWriter, notes: Iterable[VaultFile], batch_size: int, count: int | None = None
) -> Generator[Parsed, None, None]:
    """``notes`` parsed in batches, with this writer's settings (``pool.parse_batches``)."""
    return parse_batches(
        notes,
        batch_size=batch_size,
        workers=writer.workers,
        max_bytes=writer.max_bytes,
        body_index=writer.body_index,
        count=count,
    )


def _write_chunk(
    writer: IndexWriter,
    plan: _Plan,
    attachments: Sequence[VaultFile],
    parsed: Parsed,
    written: int,
) -> set[int]:
    """Inside a transaction: register and write one chunk of notes (``plan.notes[written:]``,
    in order) and these attachments; returns the dirty notes."""
    chunk = plan.notes[written : written + len(parsed)]
    dirty: set[int] = set()
    created = writer.register(attachments, chunk, plan.existing)
    writer.write_base_docs(base_docs(attachments, writer.max_bytes))
    writer.reresolve_for(created, dirty)
    if parsed:
        writer.parsed += len(parsed)
        dirty |= writer.write_notes(parsed, {vf.path: vf for vf in chunk})
        plan.report.notes_with_errors += sum(1 for note, _, _ in parsed if note.errors)
    return dirty


def base_docs(
    attachments: Iterable[VaultFile], max_bytes: int
) -> list[tuple[str, str | None, str | None]]:
    """The ``.base`` files among ``attachments``, read and parsed: (path, JSON, error)."""
    docs: list[tuple[str, str | None, str | None]] = []
    for vf in attachments:
        if vf.path.lower().endswith(BASE_SUFFIX):
            doc, error = read_base_file(vf.disk_path, max_bytes)
            docs.append((vf.path, doc, error))
    return docs


def _finish(writer: IndexWriter, report: ApplyReport, changed: bool, started: float) -> None:
    if changed:
        with writer.transaction():
            writer.set_meta("last_indexed", repr(time.time()))
    report.seconds = time.perf_counter() - started


def _apply_private(
    writer: IndexWriter,
    plan: _Plan,
    moves: Sequence[tuple[IndexedFile, VaultFile]],
    progress: Progress | None,
    batch_size: int,
) -> ApplyReport:
    report, notes, upserts = plan.report, plan.notes, plan.upserts
    single = plan.note_count <= batch_size
    with writer.transaction():
        dirty = _remove_and_move(writer, plan, moves)
        if plan.walked:
            writer.register_walked(dirty)
            attachments = writer.walked_files(notes=False)
            writer.write_base_docs(base_docs(attachments, writer.max_bytes))
        else:
            created = writer.register(plan.attachments, notes, plan.existing)
            writer.write_base_docs(base_docs(plan.attachments, writer.max_bytes))
            writer.reresolve_for(created, dirty)
            del created
        if single and not plan.note_count:
            writer.refresh_fts(dirty)
        else:
            writer.defer_fts(dirty)
    done = plan.total - plan.note_count
    if progress and done:
        progress(done, plan.total)
    plan.existing.clear()  # a large first index would otherwise hold every new row twice
    # The files handed to the parse pool whose notes are not written yet, in order.
    handed: collections.deque[VaultFile] = collections.deque()
    source = writer.walked_files(notes=True) if plan.walked else notes

    def hand_over() -> Iterator[VaultFile]:
        for vf in source:
            handed.append(vf)
            yield vf

    # A helper process pays off where the findings at the end take seconds, not a tenth.
    helpers = writer.workers if plan.note_count >= FINDINGS_HELPER_MIN else 1
    with contextlib.ExitStack() as stack:
        # The helper of the findings at the end starts first, ready when they come.
        offload = None if single else stack.enter_context(findings_helper(helpers))
        with writer.indexes_deferred():  # back before the findings, which read them
            for parsed in _parse(writer, hand_over(), batch_size, plan.note_count):
                # Batches come in the order of the files: map just this batch's paths.
                by_path = {vf.path: vf for vf in (handed.popleft() for _ in parsed)}
                writer.parsed += len(parsed)
                with writer.transaction():
                    dirty = writer.write_notes(parsed, by_path)
                    report.notes_with_errors += sum(1 for note, _, _ in parsed if note.errors)
                    if offload is None:
                        writer.refresh_fts(dirty)
                    else:
                        # write_notes withdrew its dirty notes: only the refixed ones are left.
                        writer.defer_fts(set())
                done += len(parsed)
                if progress:
                    progress(done, plan.total)
            # The last batch (its notes, bodies and rows: about 30 MB at 5,000 notes) is not
            # held through the findings at the end, where a build's memory peaks (issue 35).
            parsed, by_path = [], {}
        if offload is not None:
            writer.flush_pending_fts(offload)
    report.paths.extend(vf.path for vf in upserts)
    _finish(writer, report, bool(plan.total or moves), plan.started)
    return report
