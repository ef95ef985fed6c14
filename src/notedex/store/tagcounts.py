"""The tag counts `tags` reads (SEMANTICS 4.10), kept exact by the writer: the triggers of the
schema mark the spellings and notes whose tags or exclusion changed (tags_dirty,
tagged_dirty); ``refresh`` recounts only those, at the end of every findings refresh. So
`tags` reads a row per spelling and per key instead of every (note, tag) row."""

from __future__ import annotations

import json
import sqlite3

# SEMANTICS 1.9: an excluded note's tags are not counted.
_COUNTED = "t.file_id NOT IN (SELECT file_id FROM notes WHERE excluded = 1)"


def refresh(conn: sqlite3.Connection) -> None:
    """Inside the writer's transaction: recount what the triggers marked, then clear the marks.

    Nothing marked (a save of a note without tags, whose tags did not change): no statement.
    """
    if conn.execute("SELECT 1 FROM tagged_dirty LIMIT 1").fetchone() is None:
        return  # every change of a tags row or an exclusion marks its note here too
    keys = [
        row[0]
        for row in conn.execute(
            "SELECT k.tag_key FROM tags_dirty d CROSS JOIN tag_names k ON k.id = d.tag_id"
        )
    ]
    conn.execute("DELETE FROM tag_uses WHERE tag_id IN (SELECT d.tag_id FROM tags_dirty d)")
    conn.execute(
        f"""
        INSERT INTO tag_uses(tag_id, notes)
        SELECT t.tag_id, count(*) FROM tags_dirty d CROSS JOIN tags t ON t.tag_id = d.tag_id
        WHERE {_COUNTED} GROUP BY t.tag_id
        """
    )
    _recount_keys(conn, keys)
    conn.execute("DELETE FROM tagged_notes WHERE file_id IN (SELECT d.file_id FROM tagged_dirty d)")
    conn.execute(
        """
        INSERT INTO tagged_notes(file_id) SELECT d.file_id FROM tagged_dirty d
        WHERE EXISTS (SELECT 1 FROM tags t WHERE t.file_id = d.file_id)
          AND d.file_id NOT IN (SELECT file_id FROM notes WHERE excluded = 1)
        """
    )
    conn.execute("DELETE FROM tags_dirty")
    conn.execute("DELETE FROM tagged_dirty")


def _recount_keys(conn: sqlite3.Connection, keys: list[str]) -> None:
    """tag_rollup for each key and each of its parents: the notes with that key or a key
    nested in it (SEMANTICS 4.8), each note once, over the key's range of ``tag_names_key``."""
    if not keys:
        return
    wanted: set[str] = set()
    for key in keys:
        parts = key.split("/")
        wanted.update("/".join(parts[:depth]) for depth in range(1, len(parts) + 1))
    encoded = json.dumps(sorted(wanted), ensure_ascii=False)
    conn.execute(
        "DELETE FROM tag_rollup WHERE tag_key IN (SELECT value FROM json_each(?))", (encoded,)
    )
    conn.execute(
        f"""
        INSERT INTO tag_rollup(tag_key, notes)
        SELECT p.value, count(DISTINCT t.file_id) FROM json_each(?) p
        CROSS JOIN tag_names k ON k.tag_key = p.value
            OR (k.tag_key > p.value || '/' AND k.tag_key < p.value || '0')
        CROSS JOIN tags t ON t.tag_id = k.id
        WHERE {_COUNTED}
        GROUP BY p.value
        """,
        (encoded,),
    )
