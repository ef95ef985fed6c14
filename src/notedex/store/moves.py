"""Moves as path updates (issue 17): a file that left one path and is found under another
(same etag, or same size and content hash: ``indexing.pairing``) keeps its row id and every row
parsed from it; only what depends on the path changes (its name keys, stem, exclusion, problems,
findings and link resolution). A swap or a rotation of paths goes through placeholder paths
inside the same transaction, so readers never see one."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence

from notedex.store import findings, linkfixes
from notedex.store.files import LOOKUP_CHUNK, IndexedFile
from notedex.store.links import LinkTargets
from notedex.store.schema import PATH_ANCHOR_DOCS, moved_anchor_docs, trigger_ddl
from notedex.vault.files import note_stem
from notedex.vault.model import VaultFile
from notedex.vault.resolve import affected_name_keys, file_keys
from notedex.vault.walk import is_excluded

Move = tuple[IndexedFile, VaultFile]
"""The indexed row of the path a file left, and the file under its new path."""


PARKED = "\x00moving/"
"""The prefix of a placeholder path: no vault path starts with NUL."""


def content_keys(conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, int]:
    """notes.content_hash by file id, for the rows that have a hash (a note that was read)."""
    keys: dict[int, int] = {}
    for start in range(0, len(ids), LOOKUP_CHUNK):
        keys.update(
            conn.execute(
                "SELECT file_id, content_hash FROM notes WHERE content_hash <> -1 "
                "AND file_id IN (SELECT value FROM json_each(?))",
                (json.dumps(list(ids[start : start + LOOKUP_CHUNK])),),
            )
        )
    return keys


def indexed_contents(conn: sqlite3.Connection, keys: Iterable[int]) -> set[int]:
    """The content keys among ``keys`` that an indexed note has (``notes_content`` index)."""
    wanted = sorted(set(keys))
    found: set[int] = set()
    for start in range(0, len(wanted), LOOKUP_CHUNK):
        found.update(
            row[0]
            for row in conn.execute(
                "SELECT DISTINCT content_hash FROM notes "
                "WHERE content_hash IN (SELECT value FROM json_each(?))",
                (json.dumps(wanted[start : start + LOOKUP_CHUNK]),),
            )
        )
    return found


def move_files(
    conn: sqlite3.Connection,
    moves: Sequence[Move],
    *,
    links: LinkTargets,
    filters: tuple[str, ...],
    disk_rel: Callable[[VaultFile], str | None],
) -> set[int]:
    """Inside a transaction: give each moved file its new path in place. A new path has no row
    when this runs, except the row of another moved file (a swap, a rotation): those rows are
    parked under a placeholder path first. The links either end can affect are re-resolved
    here (SEMANTICS 7.10). Returns the notes whose structure-search rows and findings change
    (withdrawn already: the caller's ``refresh_fts`` puts them back)."""
    if not moves:
        return set()
    taken = {vf.path for _, vf in moves}
    if not any(known.path in taken for known, _ in moves):
        return _move(conn, moves, links=links, filters=filters, disk_rel=disk_rel)
    parked: list[Move] = []
    final: list[Move] = []
    for known, vf in moves:
        if known.path in taken:
            # NUL in the stem too: no link text can name a parked row.
            spot = known._replace(path=f"{PARKED}\x00{known.id}.md")
            parked.append((known, dataclasses.replace(vf, path=spot.path)))
            final.append((spot, vf))
        else:
            final.append((known, vf))
    dirty = _move(conn, parked, links=links, filters=filters, disk_rel=disk_rel)
    return dirty | _move(conn, final, links=links, filters=filters, disk_rel=disk_rel)


def _move(
    conn: sqlite3.Connection,
    moves: Sequence[Move],
    *,
    links: LinkTargets,
    filters: tuple[str, ...],
    disk_rel: Callable[[VaultFile], str | None],
) -> set[int]:
    note_ids = [known.id for known, _ in moves if known.is_note]
    # A note whose stem and exclusion stay (a folder rename) keeps its structure-search rows,
    # title trigrams and findings as they are, under the new path: none of them depend on the
    # folder. Only the others are withdrawn and recomputed. The targets of their links keep
    # their rows (the backlink texts, `anchors`, are the links' own display and linkpath, not
    # the source's name or path; a link the move re-resolves is withdrawn by that) unless the
    # source's exclusion changes: that changes whether its links count as incoming (8.1).
    excluded = [
        known.id
        for known, vf in moves
        if known.is_note and is_excluded(known.path, filters) != is_excluded(vf.path, filters)
    ]
    # The stem and the name keys of a file are its name's (vault.files.note_stem,
    # resolve.file_keys): a file that keeps its name (a folder rename) keeps them.
    new_name = [(known, vf) for known, vf in moves if _name(known.path) != _name(vf.path)]
    renamed_stems = [
        known.id
        for known, vf in new_name
        if known.is_note and note_stem(known.path) != note_stem(vf.path)
    ]
    heavy = list(dict.fromkeys([*renamed_stems, *excluded]))
    # A file whose name keys stay (a folder rename) keeps its place in the key index, and the
    # links by its name need a look only where a path decides (LinkTargets.reresolve_moved).
    renamed = [(known, vf) for known, vf in new_name if file_keys(known.path) != file_keys(vf.path)]
    targets = {
        row[0]
        for row in conn.execute(
            "SELECT DISTINCT target_id FROM links WHERE target_id IS NOT NULL "
            "AND source_id IN (SELECT value FROM json_each(?))",
            (json.dumps(excluded),),
        )
    }
    # A moved alias owner: the fix suggested for a broken link to its alias names its path.
    linkfixes.refix_aliases_of(conn, note_ids)
    dirty = {*heavy, *targets}
    # Out before any input changes: FTS5 deletes external-content rows by their old text.
    findings.withdraw(conn, dirty)
    conn.execute(
        "INSERT INTO title_grams(title_grams, rowid, stem, frontmatter_title) "
        "SELECT 'delete', file_id, stem, frontmatter_title FROM notes "
        "WHERE file_id IN (SELECT value FROM json_each(?))",
        (json.dumps(heavy),),
    )
    renewed = set(heavy)
    for known, _ in moves:
        if known.id in renewed:
            findings.drop_findings_of(conn, known.path)
    _set_paths(conn, moves, disk_rel)
    findings.rename_findings(conn)
    conn.executemany(
        "UPDATE notes SET stem = ?, excluded = ? WHERE file_id = ?",
        [
            (note_stem(vf.path), int(is_excluded(vf.path, filters)), known.id)
            for known, vf in moves
            if known.id in renewed
        ],
    )
    conn.execute(
        "INSERT INTO title_grams(rowid, stem, frontmatter_title) "
        "SELECT file_id, stem, frontmatter_title FROM notes "
        "WHERE file_id IN (SELECT value FROM json_each(?))",
        (json.dumps(heavy),),
    )

    def withdraw(ids: Iterable[int], *, sides: int = findings.BOTH_SIDES) -> None:
        findings.withdraw_links(conn, ids, sides=sides)  # their links or the links into them

    # SEMANTICS 7.10: the links by a name that came or went, all of them...
    changed = {known.path for known, _ in renamed} | {vf.path for _, vf in renamed}
    links.reresolve_for(changed, dirty, withdraw)
    linkfixes.refix_fixes_naming(conn, links, changed)
    # ...and of the other names, and of the moved notes' own links, those a path decides.
    kept_names = {known.id for known, _ in moves}.difference(known.id for known, _ in renamed)
    kept = {
        key for known, vf in moves if known.id in kept_names for key in affected_name_keys(vf.path)
    }
    links.reresolve_moved(note_ids, kept, dirty, withdraw)
    # A file whose name stays exactly (not only its keys: a new case is a new `folder` fix).
    same_name = {known.id for known, vf in moves if _name(known.path) == _name(vf.path)}
    findings.record_renames(conn, [(known.path, known.id) for known, _ in moves], same_name)
    # As for a delete and a create: the `typo` fixes (SEMANTICS 8.3) and the unused
    # attachments (8.9) the old and new paths can change.
    linkfixes.typo_neighbours_moved(conn, [(known.path, vf.path) for known, vf in moves])
    dirty |= findings.attachments_moved(conn)  # the moves of temp.moved_paths (_set_paths)
    return dirty


def _name(path: str) -> str:
    return path.rpartition("/")[2]


def _set_paths(
    conn: sqlite3.Connection, moves: Sequence[Move], disk_rel: Callable[[VaultFile], str | None]
) -> None:
    """The files' new paths and etags, the stored documents of their broken anchors, and the
    paths of their problems (a walk problem is the walk's own). All set-based over
    ``temp.moved_paths``: the documents' paths are updated in two statements over the moved
    ids, not by the per-file trigger (``PATH_ANCHOR_DOCS``, set aside meanwhile: a TEMP
    trigger, restored by a rollback too): the trigger's two statements per file were most of a
    folder rename's path updates."""
    conn.execute(
        "CREATE TEMP TABLE IF NOT EXISTS moved_paths(old TEXT PRIMARY KEY, new TEXT, "
        "id INTEGER UNIQUE, disk_rel TEXT, size INTEGER, mtime_ns INTEGER, inode INTEGER, "
        "ctime_ns INTEGER)"
    )
    conn.execute("DELETE FROM temp.moved_paths")
    conn.executemany(
        "INSERT INTO temp.moved_paths(old, new, id, disk_rel, size, mtime_ns, inode, ctime_ns) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                known.path,
                vf.path,
                known.id,
                disk_rel(vf),
                vf.size,
                vf.mtime_ns,
                vf.inode,
                vf.ctime_ns,
            )
            for known, vf in moves
        ],
    )
    conn.execute(f"DROP TRIGGER IF EXISTS temp.{PATH_ANCHOR_DOCS}")
    try:
        conn.execute(
            "UPDATE files SET (path, disk_rel, size, mtime_ns, inode, ctime_ns) = ("
            "SELECT new, disk_rel, size, mtime_ns, inode, ctime_ns FROM temp.moved_paths "
            "WHERE id = files.id), indexed_ns = ? WHERE id IN (SELECT id FROM temp.moved_paths)",
            (time.time_ns(),),
        )
    finally:
        conn.execute(trigger_ddl(PATH_ANCHOR_DOCS))
    for statement in moved_anchor_docs("temp.moved_paths"):
        conn.execute(statement)
    conn.execute(
        "UPDATE problems SET path = (SELECT new FROM temp.moved_paths WHERE old = problems.path) "
        "WHERE kind <> 'walk' AND path IN (SELECT old FROM temp.moved_paths)"
    )
