"""Applying a change set: deletions and registrations first, then parsed notes in batches
(bulk mode for a large one), each batch one writer transaction. The order is the recipe;
the SQL of every step is in store/ behind ``IndexWriter``."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from notedex.indexing.pool import parse_batches, paused_gc
from notedex.store.files import IndexedFile
from notedex.store.writer import IndexWriter
from notedex.vault.model import VaultFile

BATCH_SIZE = 1000
# A large apply (a first index, a git checkout of thousands of notes) runs in bulk mode: bigger
# transactions, a big page cache, fewer WAL checkpoints and no FTS segment merging until the
# end. At 100k notes this halves the cold index; commits and merges were the larger half.
BULK_NOTES = 5000
BULK_BATCH_SIZE = 5000

Progress = Callable[[int, int], None]


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
    seconds: float = 0.0
    paths: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    """Reasons why rows that looked stale were kept (missing vault, unreadable folders)."""
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
        self.errors += other.errors
        self.paths.extend(other.paths)
        self.kept.extend(other.kept)
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
) -> ApplyReport:
    """Index ``upserts`` (already known to differ from the index) and drop ``deletes``.

    Order: deletions; then every new file is registered at once (real row ids, and for
    notes a pending etag, so links anywhere in this apply resolve immediately and a crash
    leaves them "changed" for the next reconcile); then notes are parsed (in worker
    processes when there are many) and written in batches. Structure-search rows are
    recomputed once per apply: inside the single transaction of a small apply, or at the
    end of a large one through the ``fts_pending`` table, which survives a crash.
    """
    if sum(1 for vf in upserts if vf.is_note) < BULK_NOTES:
        with paused_gc():
            return _apply(writer, upserts, deletes, moves, progress, BATCH_SIZE)
    with paused_gc(), writer.bulk_mode():
        batch_size = writer.bulk_batch_size or BULK_BATCH_SIZE
        return _apply(writer, upserts, deletes, moves, progress, batch_size)


def _apply(
    writer: IndexWriter,
    upserts: Sequence[VaultFile],
    deletes: Iterable[str],
    moves: Sequence[tuple[IndexedFile, VaultFile]],
    progress: Progress | None,
    batch_size: int,
) -> ApplyReport:
    started = time.perf_counter()
    report = ApplyReport()
    deletes = list(dict.fromkeys(deletes))
    known = writer.file_rows([*deletes, *(vf.path for vf in upserts)])
    deletes = [path for path in deletes if path in known]
    notes = [vf for vf in upserts if vf.is_note]
    attachments = [vf for vf in upserts if not vf.is_note]
    total = len(notes) + len(attachments) + len(deletes)
    single = len(notes) <= batch_size
    report.changed = sum(1 for vf in upserts if vf.path in known)
    report.added = len(upserts) - report.changed
    existing = set(known).difference(deletes)  # a deleted path that is upserted is new
    # A path whose row moved away (a swap, a rename over it) is new unless a row moved in.
    existing.difference_update({row.path for row, _ in moves})
    existing.update(vf.path for _, vf in moves)
    del known  # a large first index would otherwise hold every new row twice

    with writer.transaction():
        dirty: set[int] = set()
        if deletes:
            dirty |= writer.delete_files(deletes)
            writer.reresolve_for(set(deletes), dirty)
            report.removed += len(deletes)
            report.paths.extend(deletes)
        if moves:
            # Paths, not content: the rows move in place, the links both ends can affect are
            # re-resolved, nothing is parsed (issue 17).
            dirty |= writer.move_files(moves)
            moved = {known.path for known, _ in moves} | {vf.path for _, vf in moves}
            writer.reresolve_for(moved, dirty)
            report.moved = len(moves)
            report.paths.extend(sorted(moved))
        created = writer.register(attachments, notes, existing)
        writer.reresolve_for(created, dirty)
        del created
        if single and not notes:
            writer.refresh_fts(dirty)
        else:
            writer.defer_fts(dirty)
    done = len(deletes) + len(attachments)
    if progress and (deletes or attachments):
        progress(done, total)

    del existing
    written = 0
    batches = parse_batches(
        notes,
        batch_size=batch_size,
        workers=writer.workers,
        max_bytes=writer.max_bytes,
        body_index=writer.body_index,
    )
    for parsed in batches:
        # Batches come in the order of ``notes``: map just this batch's paths.
        by_path = {vf.path: vf for vf in notes[written : written + len(parsed)]}
        written += len(parsed)
        writer.parsed += len(parsed)
        with writer.transaction():
            dirty = writer.write_notes(parsed, by_path)
            report.errors += sum(1 for note, _ in parsed if note.errors)
            if single:
                writer.refresh_fts(dirty)
            else:
                writer.defer_fts(dirty)
        done += len(parsed)
        if progress:
            progress(done, total)
    if not single:
        writer.flush_pending_fts()

    report.paths.extend(vf.path for vf in upserts)
    if upserts or deletes or moves:
        with writer.transaction():
            writer.set_meta("last_indexed", repr(time.time()))
    report.seconds = time.perf_counter() - started
    return report
