"""`tags`: every tag with its note count, nested tags rolled up into their parents as in
Obsidian's tag pane (SEMANTICS 4.10)."""

from __future__ import annotations

import sqlite3
from typing import Any

from notedex.store import read
from notedex.store.connect import read_transaction


def tags(conn: sqlite3.Connection) -> dict[str, Any]:
    """The tag tree as a flat list in tree order (a parent before its children, siblings by
    their folded key): each tag's spelling, ``count`` (notes with it or a tag nested in it),
    ``direct`` (notes with exactly it), ``parent`` and ``depth``."""
    with read_transaction(conn):
        rows = read.tag_spellings(conn)
        direct: dict[str, int] = {}
        spelling: dict[str, tuple[int, str]] = {}  # key -> (-notes, spelling): most used first
        for row in rows:
            key, notes = row["tag_key"], int(row["notes"])
            direct[key] = direct.get(key, 0) + notes
            spelling[key] = min(spelling.get(key, (0, "\U0010ffff")), (-notes, row["tag"]))
        keys = set(direct)
        for key in direct:  # a parent no note carries itself still has a row (the pane shows it)
            parts = key.split("/")
            for depth in range(1, len(parts)):
                parent = "/".join(parts[:depth])
                keys.add(parent)
                if parent not in spelling:
                    written = spelling[key][1].split("/")
                    spelling[parent] = (0, "/".join(written[:depth]))
        parents = {key.rpartition("/")[0] for key in keys if "/" in key}
        counts = {
            key: read.notes_tagged_under(conn, key) if key in parents else direct[key]
            for key in keys
        }
        tagged = read.tagged_note_count(conn)
    ordered = sorted(keys, key=lambda k: k.split("/"))
    return {
        "tags": [
            {
                "tag": spelling[key][1],
                "count": counts[key],
                "direct": direct.get(key, 0),
                "parent": spelling[key.rpartition("/")[0]][1] if "/" in key else None,
                "depth": key.count("/"),
            }
            for key in ordered
        ],
        "tagCount": len(ordered),
        "taggedNoteCount": tagged,
    }
