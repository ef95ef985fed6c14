"""Unused attachments (SEMANTICS 8.9): which attachments a refresh re-checks when attachment
paths are created, moved or deleted. The finding itself is declared (``notedex.codes``,
``file_where``) and kept by the generic upkeep (store/linkfindings.py); a deleted file's rows
go with it (``linkfindings.drop_of``)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable

from notedex.store.files import LOOKUP_CHUNK


def attachments_changed(conn: sqlite3.Connection, paths: Iterable[str]) -> set[int]:
    """Attachments created, moved or deleted (``paths``: the paths they have or had): the ids
    of those that exist, to be re-checked as dirty (SEMANTICS 8.9)."""
    ordered = sorted(set(paths))
    ids: set[int] = set()
    for start in range(0, len(ordered), LOOKUP_CHUNK):
        encoded = json.dumps(ordered[start : start + LOOKUP_CHUNK], ensure_ascii=False)
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
    return {
        row[0]
        for row in conn.execute(
            "SELECT f.id FROM temp.moved_paths m CROSS JOIN files f ON f.id = m.id "
            "WHERE f.is_note = 0"
        )
    }
