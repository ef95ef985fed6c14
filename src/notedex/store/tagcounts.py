"""The tag counts `tags` reads (SEMANTICS 4.10), kept exact by the writer: the notes whose tags
or exclusion changed are marked (tagged_dirty: by the schema's triggers, and by store/notes.py
where it inserts tag rows); ``refresh`` compares
what each marked note adds now with what it added before (tag_note_keys) and applies the
difference to the counts, at the end of every findings refresh. So `tags` reads a row per
spelling and per key instead of every (note, tag) row, and a save costs what its note's tags
cost, not what the notes sharing them cost."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from concurrent.futures import Future
from itertools import chain

TaggedRows = tuple[str, str, str]
"""Every tag of the marked notes that count (``read_marked``): the JSON arrays of their file
ids, tag ids and tag keys, built by SQLite (a first index reads 200,000 at 100k notes: as rows
they cost the writer's thread their fetch and, for the helper, their pickling)."""
Counted = tuple[list[tuple[int, str]], "Counter[int]", "Counter[str]"]
"""``count``'s answer: the marked notes' tag_note_keys rows, and what they add to the counts."""


def read_marked(conn: sqlite3.Connection) -> TaggedRows | None:
    """The tags of the notes marked since the last refresh; None when none is marked (a save
    of a note without tags, whose tags did not change)."""
    if conn.execute("SELECT 1 FROM tagged_dirty LIMIT 1").fetchone() is None:
        return None
    # SEMANTICS 1.9: an excluded note's tags are not counted (nor a note no longer there).
    row: TaggedRows = conn.execute(
        """
        SELECT json_group_array(d.file_id), json_group_array(t.tag_id),
               json_group_array(k.tag_key)
        FROM tagged_dirty d
        CROSS JOIN tags t ON t.file_id = d.file_id CROSS JOIN tag_names k ON k.id = t.tag_id
        WHERE NOT EXISTS (SELECT 1 FROM notes n WHERE n.file_id = d.file_id AND n.excluded = 1)
        """
    ).fetchone()
    return row


def count(tagged: TaggedRows) -> Counted:
    """What each marked note adds now: its tag ids, and its keys with every parent of a
    nested one (the tag pane's roll-up). Pure: runs in another process at a large build's
    end (``findings.Offload``). Each key's roll-up is made once, and each counter is counted
    in one call (a first index counts every note: 0.6 s at 100k notes, then 0.4 s)."""
    ids_of: dict[int, set[int]] = {}
    keys_of: dict[int, set[str]] = {}
    rolled: dict[str, tuple[str, ...]] = {}
    file_ids, tag_ids, tag_keys = (json.loads(array) for array in tagged)
    for file_id, tag_id, key in zip(file_ids, tag_ids, tag_keys, strict=True):
        keys = rolled.get(key)
        if keys is None:
            parts = key.split("/")
            keys = rolled[key] = tuple(
                "/".join(parts[:depth]) for depth in range(1, len(parts) + 1)
            )
        ids = ids_of.get(file_id)
        if ids is None:
            ids_of[file_id] = {tag_id}
            keys_of[file_id] = set(keys)
        else:
            ids.add(tag_id)
            keys_of[file_id].update(keys)
    uses = Counter(chain.from_iterable(ids_of.values()))
    rollup = Counter(chain.from_iterable(keys_of.values()))
    rows = [(file_id, _int_list(ids)) for file_id, ids in ids_of.items()]
    return rows, uses, rollup


def _rolled_up(keys: list[str]) -> set[str]:
    """Every key of ``keys`` with each parent of a nested one (``a/b/c``: ``a``, ``a/b``,
    ``a/b/c``), each once: what a note adds to ``tag_rollup``, as ``count`` rolls it up."""
    rolled: set[str] = set()
    for key in keys:
        parts = key.split("/")
        rolled.update("/".join(parts[:depth]) for depth in range(1, len(parts) + 1))
    return rolled


def refresh(conn: sqlite3.Connection, counted: Future[Counted] | None = None) -> None:
    """Inside the writer's transaction: count the marked notes again, then clear the marks.
    ``counted``: ``count`` of ``read_marked``, already under way (``findings.refresh_fts``).

    Nothing marked: no statement but one look.
    """
    if counted is None:
        tagged = read_marked(conn)
        if tagged is None:
            return
        rows, uses, rollup = count(tagged)
    else:
        rows, uses, rollup = counted.result()
    gone: list[tuple[int]] = []
    # What a marked note added before: its counted spellings, and their keys rolled up again
    # (a spelling's key never changes, and tag_names keeps every spelling tag_uses counts:
    # maintenance.optimize). Issue 35, size: the keys were stored beside the ids, 4.4 MB of
    # JSON at 100k notes.
    for file_id, old_ids, old_keys in conn.execute(
        "SELECT k.file_id, k.tag_ids, (SELECT json_group_array(n.tag_key) FROM json_each(k.tag_ids)"
        " j CROSS JOIN tag_names n ON n.id = j.value) FROM tagged_dirty d "
        "CROSS JOIN tag_note_keys k ON k.file_id = d.file_id"
    ):
        uses.subtract(json.loads(old_ids))
        rollup.subtract(_rolled_up(json.loads(old_keys)))
        gone.append((file_id,))
    conn.executemany("DELETE FROM tag_note_keys WHERE file_id = ?", gone)
    conn.executemany("DELETE FROM tagged_notes WHERE file_id = ?", gone)
    conn.executemany("INSERT INTO tag_note_keys(file_id, tag_ids) VALUES (?, ?)", rows)
    conn.executemany("INSERT INTO tagged_notes(file_id) VALUES (?)", [(r[0],) for r in rows])
    _add(conn, "tag_uses", "tag_id", uses)
    _add(conn, "tag_rollup", "tag_key", rollup)
    conn.execute("DELETE FROM tagged_dirty")


def _int_list(ids: set[int]) -> str:
    """``json.dumps(sorted(ids))`` for ints, without the encoder's calls: a first index writes
    one per tagged note (a test holds the two equal)."""
    if len(ids) == 1:  # most notes: one tag
        (only,) = ids
        return f"[{only}]"
    return "[" + ", ".join(map(str, sorted(ids))) + "]"


def _add(
    conn: sqlite3.Connection, table: str, key: str, delta: Counter[int] | Counter[str]
) -> None:
    """Add ``delta`` to the ``notes`` of ``table``'s rows; a row that reaches 0 goes."""
    changed = [(k, n) for k, n in delta.items() if n]
    conn.executemany(
        f"INSERT INTO {table}({key}, notes) VALUES (?, ?) "
        f"ON CONFLICT({key}) DO UPDATE SET notes = notes + excluded.notes",
        changed,
    )
    conn.executemany(
        f"DELETE FROM {table} WHERE {key} = ? AND notes <= 0", [(k,) for k, _ in changed]
    )
