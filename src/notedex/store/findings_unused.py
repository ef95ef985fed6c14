"""Unused attachments (SEMANTICS 8.9), one finding of health's: the rows of the attachments
created, moved or deleted, and of the dirty attachments. Split out of store/findings.py
(issue 33), which calls ``refresh`` from ``refresh_findings``."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable

from notedex.store.files import LOOKUP_CHUNK


def attachments_changed(conn: sqlite3.Connection, paths: Iterable[str]) -> set[int]:
    """Attachments created, moved or deleted (``paths``: the paths they have or had): the
    rows of the paths they left go; returns the ids of those that exist, to be re-checked
    as dirty (SEMANTICS 8.9)."""
    ordered = sorted(set(paths))
    ids: set[int] = set()
    for start in range(0, len(ordered), LOOKUP_CHUNK):
        encoded = json.dumps(ordered[start : start + LOOKUP_CHUNK], ensure_ascii=False)
        conn.execute(
            "DELETE FROM unused_attachments WHERE path IN (SELECT value FROM json_each(?))",
            (encoded,),
        )
        ids.update(
            row[0]
            for row in conn.execute(
                "SELECT id FROM files WHERE is_note = 0 "
                "AND path IN (SELECT value FROM json_each(?))",
                (encoded,),
            )
        )
    return ids


def attachments_moved(conn: sqlite3.Connection) -> set[int]:
    """``attachments_changed`` of the moves in ``temp.moved_paths`` (store.moves, once their
    rows have the new paths): read from that table, not from 24,000 paths sent as JSON."""
    for side in ("old", "new"):
        conn.execute(
            f"DELETE FROM unused_attachments WHERE path IN (SELECT {side} FROM temp.moved_paths)"
        )
    return {
        row[0]
        for row in conn.execute(
            "SELECT f.id FROM temp.moved_paths m CROSS JOIN files f ON f.id = m.id "
            "WHERE f.is_note = 0"
        )
    }


def refresh(conn: sqlite3.Connection) -> None:
    """SEMANTICS 8.9 for the dirty attachments (their incoming links changed)."""
    conn.execute(
        """
        DELETE FROM unused_attachments WHERE path IN (
            SELECT f.path FROM temp.dirty_notes d CROSS JOIN files f ON f.id = d.id
            WHERE f.is_note = 0)
        """
    )
    conn.execute(
        """
        INSERT OR IGNORE INTO unused_attachments(path)
        SELECT f.path FROM temp.dirty_notes d CROSS JOIN files f ON f.id = d.id
        WHERE f.is_note = 0 AND NOT EXISTS (SELECT 1 FROM links l WHERE l.target_id = f.id)
        """
    )
