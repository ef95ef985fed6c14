"""Moves as path updates (issue 17): a file that left one path and is found under another
with the same etag keeps its row id and every row parsed from it; only what depends on the
path changes (its name keys, stem, exclusion, problems, findings and link resolution)."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Sequence

from notedex.store import findings
from notedex.store.files import IndexedFile
from notedex.store.links import LinkTargets
from notedex.vault.files import note_stem
from notedex.vault.model import VaultFile
from notedex.vault.walk import is_excluded

Move = tuple[IndexedFile, VaultFile]
"""The indexed row of the path a file left, and the file under its new path."""


def move_files(
    conn: sqlite3.Connection,
    moves: Sequence[Move],
    *,
    links: LinkTargets,
    filters: tuple[str, ...],
    disk_rel: Callable[[VaultFile], str | None],
) -> set[int]:
    """Inside a transaction: give each moved file its new path in place (a new path never has
    a row: only a path that left the index is paired with one new to it). Returns the notes
    whose structure-search rows and findings change (the caller re-resolves the links of
    other notes that the old and new paths can affect)."""
    if not moves:
        return set()
    ids = [known.id for known, _ in moves]
    note_ids = [known.id for known, _ in moves if known.is_note]
    encoded = json.dumps(ids)
    targets = {
        row[0]
        for row in conn.execute(
            "SELECT DISTINCT target_id FROM links WHERE target_id IS NOT NULL "
            "AND source_id IN (SELECT value FROM json_each(?))",
            (encoded,),
        )
    }
    dirty = {*note_ids, *targets}
    # Out before any input changes: FTS5 deletes external-content rows by their old text.
    findings.withdraw(conn, dirty)
    conn.execute(
        "INSERT INTO title_grams(title_grams, rowid, stem, frontmatter_title) "
        "SELECT 'delete', file_id, stem, frontmatter_title FROM notes "
        "WHERE file_id IN (SELECT value FROM json_each(?))",
        (json.dumps(note_ids),),
    )
    for known, _ in moves:
        links.removed(known.id, known.path)
        findings.drop_findings_of(conn, known.path)
    now = time.time_ns()
    conn.executemany(
        "UPDATE files SET path = ?, disk_rel = ?, size = ?, mtime_ns = ?, inode = ?, "
        "indexed_ns = ? WHERE id = ?",
        [
            (vf.path, disk_rel(vf), vf.size, vf.mtime_ns, vf.inode, now, known.id)
            for known, vf in moves
        ],
    )
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS moved_paths(old TEXT PRIMARY KEY, new TEXT)")
    conn.execute("DELETE FROM temp.moved_paths")
    conn.executemany(
        "INSERT INTO temp.moved_paths(old, new) VALUES (?, ?)",
        [(known.path, vf.path) for known, vf in moves],
    )
    conn.execute(
        "UPDATE problems SET path = (SELECT new FROM temp.moved_paths WHERE old = problems.path) "
        "WHERE kind <> 'walk' AND path IN (SELECT old FROM temp.moved_paths)"
    )
    conn.executemany(
        "UPDATE notes SET stem = ?, excluded = ? WHERE file_id = ?",
        [
            (note_stem(vf.path), int(is_excluded(vf.path, filters)), known.id)
            for known, vf in moves
            if known.is_note
        ],
    )
    conn.execute(
        "INSERT INTO title_grams(rowid, stem, frontmatter_title) "
        "SELECT file_id, stem, frontmatter_title FROM notes "
        "WHERE file_id IN (SELECT value FROM json_each(?))",
        (json.dumps(note_ids),),
    )
    links.added({vf.path for _, vf in moves})
    # The moved notes' own links resolve from their new folder (SEMANTICS 7).
    links.reresolve_sources(note_ids, dirty, lambda touched: findings.withdraw(conn, touched))
    dirty |= findings.record_renames(conn, [(known.path, known.id) for known, _ in moves])
    return dirty
