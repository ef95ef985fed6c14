"""Findings upkeep: the structure-search rows (note_fts, link_fts), ``fts_pending`` and health's
precomputed findings (orphans, unlinked notes, broken links; SEMANTICS 8). All their SQL."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable

from notedex.store.schema import (
    BROKEN_KEY,
    LINK_TEXT,
    LONELY_NO,
    LONELY_ORPHAN,
    LONELY_UNLINKED,
    NOTE_TITLE,
)

STRUCTURE_FTS = ("note_fts", "link_fts")
"""The two structure-search tables over the view note_fts_text."""


def withdraw(conn: sqlite3.Connection, ids: Iterable[int]) -> None:
    """Take these notes' structure-search rows out before any of their inputs change.

    note_fts and link_fts are external content over the view note_fts_text: FTS5 deletes a row by
    tokenizing what the view gives for it, which must still be what was indexed. A
    withdrawn note waits in fts_pending (crash-safe) until refresh_fts inserts it again;
    withdrawing it twice is a no-op. Ids of attachments and of notes not written yet are
    only recorded.
    """
    wanted = json.dumps(sorted(ids))
    if wanted == "[]":
        return
    for table in STRUCTURE_FTS:
        conn.execute(
            f"""
            DELETE FROM {table} WHERE rowid IN (
                SELECT n.file_id FROM notes n
                WHERE n.file_id IN (SELECT value FROM json_each(?))
                  AND n.file_id NOT IN (SELECT id FROM fts_pending))
            """,
            (wanted,),
        )
    conn.execute("INSERT OR IGNORE INTO fts_pending(id) SELECT value FROM json_each(?)", (wanted,))


def has_pending(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM fts_pending LIMIT 1").fetchone() is not None


def refresh_fts(conn: sqlite3.Connection, dirty: set[int]) -> None:
    """Insert the structure-search rows of every withdrawn note (and of ``dirty``) again,
    from the tables, and recompute their health findings.

    The withdrawn notes are moved from ``fts_pending`` in SQL: after a first index that is
    every note, which as Python ints and tuples cost about 15 MB.
    """
    withdraw(conn, dirty)  # notes new to the index, or dirty without a change of inputs
    set_dirty(conn, ())
    conn.execute("INSERT OR IGNORE INTO temp.dirty_notes(id) SELECT id FROM fts_pending")
    conn.execute("DELETE FROM fts_pending")
    if conn.execute("SELECT 1 FROM temp.dirty_notes LIMIT 1").fetchone() is None:
        return
    for table, columns in (
        ("note_fts", "title, tags, aliases"),
        ("link_fts", "anchors, unresolved"),
    ):
        conn.execute(
            f"""
            INSERT INTO {table}(rowid, {columns}) SELECT file_id, {columns} FROM note_fts_text
            WHERE file_id IN (SELECT id FROM temp.dirty_notes)
            """
        )
    refresh_findings(conn)


def set_dirty(conn: sqlite3.Connection, ids: Iterable[int]) -> None:
    """Fill ``temp.dirty_notes``, the notes whose findings refresh_findings recomputes."""
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS dirty_notes(id INTEGER PRIMARY KEY)")
    conn.execute("DELETE FROM temp.dirty_notes")
    conn.executemany("INSERT OR IGNORE INTO temp.dirty_notes(id) VALUES (?)", [(i,) for i in ids])


def set_every_note_dirty(conn: sqlite3.Connection) -> None:
    set_dirty(conn, (row[0] for row in conn.execute("SELECT file_id FROM notes").fetchall()))


def clear_pending(conn: sqlite3.Connection) -> None:
    conn.execute("DELETE FROM fts_pending")


def drop_findings_of(conn: sqlite3.Connection, path: str) -> None:
    """A note's rows are cleared: its own findings go with them."""
    conn.execute(
        f"DELETE FROM lonely_notes WHERE lonely IN ({LONELY_ORPHAN}, {LONELY_UNLINKED}) AND path = ?",
        (path,),
    )
    conn.execute("DELETE FROM broken_links WHERE source = ?", (path,))


def refresh_findings(conn: sqlite3.Connection) -> None:
    """Recompute health's findings (SEMANTICS 8) of the notes in ``temp.dirty_notes``.

    Every note whose backlinks or outgoing references can have changed is dirty (the same
    notes whose anchors or unresolved keys change; a change of the Excluded files adds the
    targets of notes whose exclusion changed), so the tables stay exact.
    """
    # Every statement is driven by the dirty notes (CROSS JOIN fixes the order: the planner
    # knows nothing of the temp table and would walk all notes, files or broken links).
    dirty_paths = "SELECT (SELECT path FROM files WHERE id = d.id) FROM temp.dirty_notes d"
    conn.execute(
        f"DELETE FROM lonely_notes WHERE lonely IN ({LONELY_ORPHAN}, {LONELY_UNLINKED}) "
        f"AND path IN ({dirty_paths})"
    )
    conn.execute(f"DELETE FROM broken_links WHERE source IN ({dirty_paths})")
    conn.execute(
        f"""
        INSERT INTO lonely_notes(lonely, path, title)
        SELECT s.lonely, f.path, s.title FROM (
            SELECT n.file_id, {NOTE_TITLE} AS title, CASE
                -- SEMANTICS 1/8: a link from an excluded note is no incoming link
                -- (Obsidian's graph hides excluded files, edges included).
                WHEN EXISTS (SELECT 1 FROM links l
                             WHERE l.target_id = n.file_id AND l.source_id <> n.file_id
                               AND l.source_id NOT IN (SELECT file_id FROM notes WHERE excluded = 1))
                    THEN {LONELY_NO}
                WHEN EXISTS (SELECT 1 FROM links l
                             WHERE l.source_id = n.file_id AND l.linkpath <> ''
                               AND (l.target_id IS NULL OR l.target_id <> l.source_id))
                    THEN {LONELY_UNLINKED}
                ELSE {LONELY_ORPHAN} END AS lonely
            FROM temp.dirty_notes d CROSS JOIN notes n ON n.file_id = d.id
            WHERE n.excluded = 0
        ) s CROSS JOIN files f ON f.id = s.file_id
        WHERE s.lonely <> {LONELY_NO}
        """
    )
    # links.name_key is set exactly on the unresolved links that are not self-links.
    conn.execute(
        f"""
        INSERT INTO broken_links(source, line, col, seq, text, target)
        SELECT f.path, l.line, l.col, l.seq, {LINK_TEXT}, {BROKEN_KEY}
        FROM temp.dirty_notes d CROSS JOIN notes n ON n.file_id = d.id
        CROSS JOIN files f ON f.id = d.id CROSS JOIN links l ON l.source_id = d.id
        WHERE n.excluded = 0 AND l.name_key IS NOT NULL
        """
    )
