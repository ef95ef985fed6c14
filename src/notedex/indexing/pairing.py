"""Moves found in a change set (issue 17): which new files are indexed rows under another path.

A reconcile and an event batch both end with files to upsert and paths to delete; a file under
a new path that is a row the index already holds is a move (``store.moves`` applies it as a path
update, nothing parsed). Two tests, in order: the etag (size, mtime_ns, inode: a move within the
file system keeps all three), then for notes of the same size the content hash (a copy and a
delete across file systems, a git checkout that rewrote the files). The rows that can be paired
are those of the deleted paths and those of the changed paths themselves, so a swap of two paths
that both stay, or a rename over an existing note, is a move too.

``hold`` is the daemon's pairing across batches (a ``git checkout`` writes each moved file anew
and unlinks the old one; its stream of events is cut into batches by the batcher's cap, so one
end of a move can land in one batch and the other in the next). In a move-like batch, the ends
left unpaired that the next batch could pair are held: not applied now, hinted again at once,
applied as they are then (a path is held once: a held delete that nothing pairs is a delete one
batch later). Only memory holds them: after a crash the start's reconcile compares the disk.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from notedex.indexing.pool import hash_notes
from notedex.store.files import IndexedFile
from notedex.store.moves import Move
from notedex.store.writer import IndexWriter
from notedex.vault.model import VaultFile

EtagKey = tuple[int, int, int, int]

HOLD_MIN = 8
"""Unpaired ends a batch without a move needs before its ends are held (one deleted or new note
is applied at once, as ever)."""


@dataclass
class Pairing:
    """The change set with its moves taken out (what ``pair_moves`` returns)."""

    moves: list[Move] = field(default_factory=list)
    upserts: list[VaultFile] = field(default_factory=list)
    deletes: list[str] = field(default_factory=list)


def pair_moves(
    writer: IndexWriter,
    upserts: list[VaultFile],
    deletes: list[str],
    *,
    hashes: dict[str, str] | None = None,
) -> Pairing:
    """Pair files to upsert with indexed rows of other paths: (moves, the other upserts, the
    other deletes).

    A candidate row is a deleted path's or a changed path's own. By etag: only a row whose etag
    is unique among the candidates and not racy. By content: a note of the same size whose
    content hash equals the row's (equal bytes parse the same; any of several equal rows will
    do; ``hashes`` are those already read, by path). A changed path that receives another row gives up its own: moved on when it is paired
    too, deleted otherwise; a path whose row moved away and that is not paired is indexed anew.
    """
    if not upserts or (not deletes and len(upserts) < 2):
        return Pairing([], upserts, deletes)
    own = writer.file_rows(vf.path for vf in upserts)
    candidates = {**writer.file_rows(deletes), **own}
    if not candidates:
        return Pairing([], upserts, deletes)
    moves, rest = _by_etag(upserts, candidates, own)
    taken = {row.id for row, _ in moves}
    left = [row for row in candidates.values() if row.id not in taken]
    more, rest = _by_content(writer, rest, left, hashes or {})
    moves.extend(more)
    if not moves:
        return Pairing([], upserts, deletes)
    moved_from = {row.path for row, _ in moves}
    displaced = [
        vf.path for _, vf in moves if vf.path in own and vf.path not in moved_from
    ]  # a rename over a changed note: its old row is not moved on, it goes
    kept = [path for path in deletes if path not in moved_from]
    return Pairing(moves, rest, [*kept, *displaced])


def _by_etag(
    upserts: list[VaultFile], candidates: dict[str, IndexedFile], own: dict[str, IndexedFile]
) -> tuple[list[Move], list[VaultFile]]:
    by_etag: dict[EtagKey, IndexedFile | None] = {}
    for row in candidates.values():
        if row.inode and not row.racy:
            key = (row.is_note, row.size, row.mtime_ns, row.inode)
            by_etag[key] = None if key in by_etag else row
    moves: list[Move] = []
    rest: list[VaultFile] = []
    for vf in upserts:
        key = (int(vf.is_note), vf.size, vf.mtime_ns, vf.inode)
        found = by_etag.get(key)
        if found is None or found.path == vf.path:
            rest.append(vf)
        else:
            del by_etag[key]
            moves.append((found, vf))
    return moves, rest


def _by_content(
    writer: IndexWriter, upserts: list[VaultFile], rows: list[IndexedFile], known: dict[str, str]
) -> tuple[list[Move], list[VaultFile]]:
    """Notes whose size equals a candidate row's, paired by content hash (read, never parsed)."""
    sizes = {row.size for row in rows if row.is_note}
    wanted = [vf for vf in upserts if vf.is_note and vf.size in sizes]
    if not wanted:
        return [], upserts
    keys = writer.content_keys([row.id for row in rows if row.is_note and row.size in sizes])
    by_content: dict[tuple[int, int], list[IndexedFile]] = defaultdict(list)
    for row in rows:
        key = keys.get(row.id)
        if key is not None:
            by_content[(row.size, key)].append(row)
    unread = [vf for vf in wanted if vf.path not in known]
    hashes = hash_notes(unread, workers=writer.workers, max_bytes=writer.max_bytes)
    writer.hashed += len(unread)
    read = {**known, **{vf.path: h for vf, h in zip(unread, hashes, strict=True) if h is not None}}
    new_key = {vf.path: writer.content_key(read[vf.path]) for vf in wanted if vf.path in read}
    # Equal bytes pair only as many to as many: one deleted note and two new copies of it is no
    # move but a guess, and a guess must not become rename history (SEMANTICS 8.3).
    arrivals: dict[tuple[int, int], int] = defaultdict(int)
    for vf in wanted:
        if vf.path in new_key:
            arrivals[(vf.size, new_key[vf.path])] += 1
    for group, rows_of in list(by_content.items()):
        if arrivals.get(group, 0) != len(rows_of):
            del by_content[group]
    moves: list[Move] = []
    rest: list[VaultFile] = []
    for vf in upserts:
        key = new_key.get(vf.path)
        same = by_content.get((vf.size, key)) if key is not None else None
        found = next((r for r in same if r.path != vf.path), None) if same else None
        if found is None or same is None:
            rest.append(vf)
        else:
            same.remove(found)
            moves.append((found, vf))
    return moves, rest


def hold(
    writer: IndexWriter, paired: Pairing, hashes: dict[str, str], *, not_again: set[str]
) -> list[str]:
    """Take out of ``paired`` the ends the next batch may pair, and return their paths.

    A batch is move-like when it paired a move or has ``HOLD_MIN`` unpaired ends, deleted notes
    among them. Held: a deleted note (its bytes may be written under another path next), and a
    new note whose bytes an indexed note has (a checkout wrote the new path first; the old one
    goes next). Never a
    path in ``not_again`` (held a moment ago), a changed note or an attachment (no content
    pairing). ``hashes``: the contents already read, by path.
    """
    rows = writer.file_rows([*paired.deletes, *(vf.path for vf in paired.upserts)])
    new = [
        vf
        for vf in paired.upserts
        if vf.is_note and vf.path not in rows and vf.path not in not_again
    ]
    targets = {vf.path for _, vf in paired.moves}  # a row a move replaces goes now
    gone = [
        path
        for path in paired.deletes
        if path not in not_again and path not in targets and path in rows and rows[path].is_note
    ]
    if not paired.moves and len(new) + len(gone) < HOLD_MIN:
        return []
    if not paired.moves and not gone:
        return []  # only new notes, nothing leaving: copies (a folder pasted in), not a move
    unread = [vf for vf in new if vf.path not in hashes]
    read = dict(hashes)
    for vf, digest in zip(
        unread, hash_notes(unread, workers=writer.workers, max_bytes=writer.max_bytes), strict=True
    ):
        if digest is not None:
            read[vf.path] = digest
    writer.hashed += len(unread)
    keys = {vf.path: writer.content_key(read[vf.path]) for vf in new if vf.path in read}
    present = writer.indexed_contents(keys.values())
    held = {path for path, key in keys.items() if key in present} | set(gone)
    if not held:
        return []
    paired.upserts = [vf for vf in paired.upserts if vf.path not in held]
    paired.deletes = [path for path in paired.deletes if path not in held]
    return sorted(held)
