"""Moves found in a change set (issue 17): which new files are indexed rows under another path.

A reconcile and an event batch both end with files to upsert and paths to delete; a file under
a new path that is a row the index already holds is a move (``store.moves`` applies it as a path
update, nothing parsed). Three tests, in order: the etag (size, mtime_ns, inode: a move within the
file system keeps all three; a note that cannot be opened now is not paired: a ``chmod``
moves no etag; a note whose change time moved is left to the content test: a rename of the
file itself moves it, and so does a same-size rewrite whose mtime was put back, which the etag
cannot tell from the rename alone, issue 31), then for notes of the same size the content hash (a copy and a
delete across file systems, a git checkout that rewrote the files), then for an attachment of a
deleted path its file name and size, unique on both sides (a checkout rewrites attachments too,
and the index holds nothing else of one: a delete and an add cost a re-resolution of every
link to its name twice, for the same rows in the end). The rows that can be paired
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

import os
from collections import defaultdict
from dataclasses import dataclass, field

from notedex.indexing.apply import RowsOf
from notedex.indexing.pool import hash_notes
from notedex.store.files import IndexedFile
from notedex.store.moves import Move
from notedex.store.writer import IndexWriter
from notedex.vault.model import VaultFile

EtagKey = tuple[int, int, int, int]

HOLD_MIN = 8
"""Unpaired ends a batch without a move needs before its ends are held (one deleted or new note
is applied at once, as ever)."""
POOL_MIN = 20_000
"""Notes hashed for a pairing in the parse pool from this many; fewer in the writer's process:
a checkout's batch hashes a few thousand (about 35 us each), and starting the pool cost the
daemon 1-2 s a batch on a loaded machine (issue 17)."""


@dataclass
class Pairing:
    """The change set with its moves taken out (what ``pair_moves`` returns)."""

    moves: list[Move] = field(default_factory=list)
    upserts: list[VaultFile] = field(default_factory=list)
    deletes: list[str] = field(default_factory=list)
    hashes: dict[str, str] = field(default_factory=dict)
    """The content hashes of new notes read so far, by path (``hold`` reuses them)."""


def pair_moves(
    writer: IndexWriter,
    upserts: list[VaultFile],
    deletes: list[str],
    *,
    hashes: dict[str, str] | None = None,
    rows_of: RowsOf | None = None,
    hinted: frozenset[str] = frozenset(),
) -> Pairing:
    """Pair files to upsert with indexed rows of other paths: (moves, the other upserts, the
    other deletes).

    A candidate row is a deleted path's or a changed path's own. By etag: only a row whose etag
    is unique among the candidates and not racy. By content: a note of the same size whose
    content hash equals the row's (equal bytes parse the same; any of several equal rows will
    do; ``hashes`` are those already read, by path). A changed path that receives another row gives up its own: moved on when it is paired
    too, deleted otherwise; a path whose row moved away and that is not paired is indexed anew.
    ``rows_of`` reads the rows of paths (``IndexWriter.file_rows`` by default). ``hinted``: the
    paths events named; a row at one of them pairs with a file no event named by content only
    (the event may be an edit that kept the size and put the mtime back, then its folder moved).
    """
    if not upserts or (not deletes and len(upserts) < 2):
        return Pairing([], upserts, deletes, dict(hashes or {}))
    read = dict(hashes or {})
    rows_of = rows_of or writer.file_rows
    own = rows_of(vf.path for vf in upserts)
    gone = rows_of(deletes)
    candidates = {**gone, **own}
    if not candidates:
        return Pairing([], upserts, deletes, read)
    moves, rest = _by_etag(upserts, candidates, own, hinted)
    taken = {row.id for row, _ in moves}
    left = [row for row in candidates.values() if row.id not in taken]
    more, rest = _by_content(writer, rest, left, read)
    taken.update(row.id for row, _ in more)
    named, rest = _by_name(rest, [row for row in gone.values() if row.id not in taken])
    moves += more + named
    if not moves:
        return Pairing([], upserts, deletes, read)
    moved_from = {row.path for row, _ in moves}
    displaced = [
        vf.path for _, vf in moves if vf.path in own and vf.path not in moved_from
    ]  # a rename over a changed note: its old row is not moved on, it goes
    kept = [path for path in deletes if path not in moved_from]
    return Pairing(moves, rest, [*kept, *displaced], read)


def hash_new(writer: IndexWriter, notes: list[VaultFile], read: dict[str, str]) -> None:
    """Add the content hash of each of ``notes`` not in ``read`` yet (read, never parsed)."""
    unread = [vf for vf in notes if vf.path not in read]
    if not unread:
        return
    workers = writer.workers if len(unread) >= POOL_MIN else 1
    digests = hash_notes(unread, workers=workers, max_bytes=writer.max_bytes)
    writer.hashed += len(unread)
    read.update((vf.path, h) for vf, h in zip(unread, digests, strict=True) if h is not None)


def _by_etag(
    upserts: list[VaultFile],
    candidates: dict[str, IndexedFile],
    own: dict[str, IndexedFile],
    hinted: frozenset[str] = frozenset(),
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
        unheard = found is not None and found.path in hinted and vf.path not in hinted
        if (
            found is None
            or found.path == vf.path
            or unheard
            or (vf.is_note and not found.same_ctime(vf))
            or not _readable_note(vf)
        ):
            rest.append(vf)
        else:
            del by_etag[key]
            moves.append((found, vf))
    return moves, rest


def _readable_note(vf: VaultFile) -> bool:
    """Whether the file, when a note, can be opened now. A ``chmod`` moves no etag, so a note made unreadable
    and then moved (its folder renamed) would keep its old row, tags and links, as if it had
    been read: it is indexed anew instead, as an unreadable note (issue 31.4)."""
    if not vf.is_note:
        return True
    try:
        os.close(os.open(vf.disk_path, os.O_RDONLY | os.O_NONBLOCK))
    except OSError:
        return False
    return True


def _by_content(
    writer: IndexWriter, upserts: list[VaultFile], rows: list[IndexedFile], read: dict[str, str]
) -> tuple[list[Move], list[VaultFile]]:
    """Notes whose size equals a candidate row's, paired by content hash (read, never parsed;
    the hashes read are added to ``read``)."""
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
    hash_new(writer, wanted, read)
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


def _by_name(
    upserts: list[VaultFile], rows: list[IndexedFile]
) -> tuple[list[Move], list[VaultFile]]:
    """New attachments paired with deleted ones of the same file name and size, unique on both
    sides. Not a guess the index can tell: it holds nothing of an attachment but its path and
    etag, and the name (its link key) stays."""
    by_key: dict[tuple[str, int], IndexedFile | None] = {}
    for row in rows:
        if not row.is_note:
            key = (row.path.rpartition("/")[2], row.size)
            by_key[key] = None if key in by_key else row
    if not by_key:
        return [], upserts
    arrivals: dict[tuple[str, int], int] = defaultdict(int)
    for vf in upserts:
        if not vf.is_note:
            arrivals[(vf.path.rpartition("/")[2], vf.size)] += 1
    moves: list[Move] = []
    rest: list[VaultFile] = []
    for vf in upserts:
        key = (vf.path.rpartition("/")[2], vf.size)
        found = None if vf.is_note or arrivals[key] != 1 else by_key.get(key)
        if found is None:
            rest.append(vf)
        else:
            del by_key[key]
            moves.append((found, vf))
    return moves, rest


def hold(
    writer: IndexWriter,
    paired: Pairing,
    hashes: dict[str, str],
    *,
    not_again: set[str],
    rows_of: RowsOf | None = None,
) -> list[str]:
    """Take out of ``paired`` the ends the next batch may pair, and return their on-disk names
    (vault-relative, as a watcher reports them: the next batch looks at them as hints, and a
    row is held by its on-disk name, which is not its NFC path when macOS wrote it NFD).

    A batch is move-like when it paired a move or has ``HOLD_MIN`` unpaired ends, deleted notes
    among them. Held: a deleted note or attachment (its bytes may be written under another path
    next), a new note whose bytes an indexed note has and a new attachment whose file name and
    size an indexed one has (a checkout wrote the new path first; the old one goes next), and a
    new empty file: created and not yet written when a walk of its folder met it (the batcher
    waits for the close of a file it was told of; a folder's walk finds files it was not told of
    yet). Never a path in ``not_again`` (held a moment ago) or a changed file. ``hashes``: the contents
    already read, by path (with ``paired.hashes``); ``rows_of`` reads rows as in ``pair_moves``.
    """
    rows = (rows_of or writer.file_rows)([*paired.deletes, *(vf.path for vf in paired.upserts)])
    new = [vf for vf in paired.upserts if vf.path not in rows and vf.path not in not_again]
    new_notes = [vf for vf in new if vf.is_note]
    targets = {vf.path for _, vf in paired.moves}  # a row a move replaces goes now
    gone = [
        path
        for path in paired.deletes
        if path not in not_again and path not in targets and path in rows
    ]
    notes_gone = sum(1 for path in gone if rows[path].is_note)
    if not paired.moves and len(new_notes) + notes_gone < HOLD_MIN:
        return []
    if not paired.moves and not notes_gone:
        return []  # only new notes, nothing leaving: copies (a folder pasted in), not a move
    read = {**hashes, **paired.hashes}
    hash_new(writer, new_notes, read)
    paired.hashes = read
    keys = {vf.path: writer.content_key(read[vf.path]) for vf in new_notes if vf.path in read}
    present = writer.indexed_contents(keys.values())
    held = {path for path, key in keys.items() if key in present} | set(gone)
    held.update(vf.path for vf in new if vf.size == 0)
    held.update(_named_elsewhere(writer, [vf for vf in new if not vf.is_note]))
    if not held:
        return []
    disk = {path: rows[path].disk_rel or path for path in gone}
    disk.update((vf.path, writer.disk_rel(vf) or vf.path) for vf in new if vf.path in held)
    paired.upserts = [vf for vf in paired.upserts if vf.path not in held]
    paired.deletes = [path for path in paired.deletes if path not in held]
    return sorted(disk.get(path, path) for path in held)


def _named_elsewhere(writer: IndexWriter, attachments: list[VaultFile]) -> set[str]:
    """The new attachments whose file name and size an indexed attachment has."""
    if not attachments:
        return set()
    indexed = {
        (path.rpartition("/")[2], size)
        for path, size in writer.attachments_of_sizes(vf.size for vf in attachments)
    }
    return {vf.path for vf in attachments if (vf.path.rpartition("/")[2], vf.size) in indexed}
