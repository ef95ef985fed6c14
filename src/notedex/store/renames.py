"""The rename history behind the `renamed` suggestion (SEMANTICS 8.3): which files were seen
moved or renamed, kept to the newest ``RENAME_HISTORY``. A move applied in place (store.moves)
is recorded by its caller; a note deleted and a note of the same content created in one apply
(a sync tool, a copy and a delete) is paired here. All the SQL of the ``renames`` table."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Container, Iterable, Sequence

from notedex.store.schema import RENAME_HISTORY
from notedex.vault.resolve import file_name_key, file_stem_key

_GONE = "CREATE TEMP TABLE IF NOT EXISTS gone_notes(path TEXT PRIMARY KEY, hash INTEGER NOT NULL)"
_NEW = "CREATE TEMP TABLE IF NOT EXISTS new_notes(id INTEGER PRIMARY KEY)"
# The history of the deleted files, carried over to the note they are paired with.
_GONE_HISTORY = (
    "CREATE TEMP TABLE IF NOT EXISTS gone_history("
    "seq INTEGER PRIMARY KEY, old_key TEXT, old_path TEXT, gone_path TEXT)"
)
_UNREAD = -1  # schema.content_key of a note that could not be read: pairs with nothing
RECENT_NS = 60 * 10**9
"""A note created this recently before one of its content is deleted was moved there: the
daemon may see a move into a new folder as two batches, the create first."""


def old_key(path: str) -> str:
    """What a broken link to the old path is keyed by: a note's stem, an attachment's name."""
    return file_stem_key(path) or file_name_key(path)


def link_keys(key: str) -> tuple[str, str]:
    """The ``links.name_key`` values of links to a file whose ``old_key`` is ``key``."""
    return key, key + ".md"


def record(
    conn: sqlite3.Connection,
    renamed: Sequence[tuple[str, int]],
    *,
    kept_names: Container[int] = frozenset(),
) -> set[str]:
    """Inside a transaction: each (old path, file id now) joins the history. Returns the link
    keys whose broken links' suggestions change (``linkfixes.refix``): links to the old names,
    and links already suggesting these files (their new path is the suggestion now).

    ``kept_names``: the files among them that kept their name (a folder rename). A broken link
    to a name a file still has gets the `folder` fix, which outranks `renamed` (SEMANTICS 8.3),
    and the move refixes it when that fix can change (``LinkTargets.reresolve_moved``): their
    old names' keys are not returned."""
    if not renamed:
        return set()
    ids = json.dumps(sorted({file_id for _, file_id in renamed}))
    keys = {
        key
        for path, file_id in renamed
        if file_id not in kept_names
        for key in link_keys(old_key(path))
    }
    keys |= {
        key
        for (stored,) in conn.execute(
            "SELECT DISTINCT old_key FROM renames WHERE file_id IN (SELECT value FROM json_each(?))",
            (ids,),
        )
        for key in link_keys(stored)
    }
    # Only the newest RENAME_HISTORY can stay: the older ones of a large move are not written.
    conn.executemany(
        "INSERT INTO renames(old_key, old_path, file_id) VALUES (?, ?, ?)",
        [(old_key(path), path, file_id) for path, file_id in renamed[-RENAME_HISTORY:]],
    )
    conn.execute(
        "DELETE FROM renames WHERE seq <= (SELECT max(seq) FROM renames) - ?", (RENAME_HISTORY,)
    )
    return keys


def forget_files(conn: sqlite3.Connection, paths: Iterable[str]) -> set[str]:
    """Inside a transaction, before these files' rows are deleted: their history goes (a
    deleted file is no suggestion), and the notes they were one apply away from being paired
    with are remembered (``pair_recreated``). Returns the link keys whose broken links
    suggested them."""
    encoded = json.dumps(sorted(set(paths)), ensure_ascii=False)
    conn.execute(_GONE)
    conn.execute(
        "INSERT OR IGNORE INTO temp.gone_notes(path, hash) "
        "SELECT f.path, n.content_hash FROM files f CROSS JOIN notes n ON n.file_id = f.id "
        f"WHERE f.path IN (SELECT value FROM json_each(?)) AND n.content_hash <> {_UNREAD}",
        (encoded,),
    )
    ids = "SELECT id FROM files WHERE path IN (SELECT value FROM json_each(?))"
    keys = {
        key
        for (stored,) in conn.execute(
            f"SELECT DISTINCT old_key FROM renames WHERE file_id IN ({ids})", (encoded,)
        )
        for key in link_keys(stored)
    }
    conn.execute(_GONE_HISTORY)
    conn.execute(
        "INSERT INTO temp.gone_history(seq, old_key, old_path, gone_path) "
        "SELECT r.seq, r.old_key, r.old_path, f.path FROM renames r "
        "CROSS JOIN files f ON f.id = r.file_id "
        f"WHERE r.file_id IN ({ids})",
        (encoded,),
    )
    conn.execute(f"DELETE FROM renames WHERE file_id IN ({ids})", (encoded,))
    return keys | _pair_with_recent(conn, encoded)


def _pair_with_recent(conn: sqlite3.Connection, encoded_paths: str) -> set[str]:
    """Deleted notes whose content a note indexed in the last minute holds, unique on both
    sides, were renamed to it (the create came in an earlier batch)."""
    pairs = conn.execute(
        f"""
        SELECT min(g.path), min(n.file_id) FROM files g CROSS JOIN notes o ON o.file_id = g.id
        CROSS JOIN notes n ON n.content_hash = o.content_hash CROSS JOIN files f ON f.id = n.file_id
        WHERE g.path IN (SELECT value FROM json_each(?1)) AND o.content_hash <> {_UNREAD}
          AND n.file_id <> o.file_id AND f.indexed_ns > ?2
          AND f.path NOT IN (SELECT value FROM json_each(?1))
        GROUP BY o.content_hash
        HAVING count(DISTINCT g.path) = 1 AND count(DISTINCT n.file_id) = 1
        """,
        {"1": encoded_paths, "2": time.time_ns() - RECENT_NS},  # ?N: named (Python 3.14)
    ).fetchall()
    if not pairs:
        return set()
    _carry_history(conn, pairs)
    # Paired now: not again at the end of the apply.
    conn.execute(
        "DELETE FROM temp.gone_notes WHERE path IN (SELECT value FROM json_each(?))",
        (json.dumps([path for path, _ in pairs], ensure_ascii=False),),
    )
    return record(conn, pairs)


def note_created(conn: sqlite3.Connection, paths: Iterable[str]) -> None:
    """Inside a transaction: files registered by this apply, candidates for a pairing with a
    note deleted by it (only while there is one)."""
    conn.execute(_GONE)
    if conn.execute("SELECT 1 FROM temp.gone_notes LIMIT 1").fetchone() is None:
        return
    conn.execute(_NEW)
    conn.execute(
        "INSERT OR IGNORE INTO temp.new_notes(id) SELECT id FROM files "
        "WHERE is_note = 1 AND path IN (SELECT value FROM json_each(?))",
        (json.dumps(sorted(set(paths)), ensure_ascii=False),),
    )


def pair_recreated(conn: sqlite3.Connection) -> set[str]:
    """At the end of an apply (its notes written): a deleted note and a created one whose
    content hash is the same, and unique on both sides, are a rename. Records them and
    forgets this apply's deleted and created notes. Returns the link keys whose broken links'
    suggestions change."""
    conn.execute(_GONE)
    conn.execute(_NEW)
    pairs: list[tuple[str, int]] = []
    if conn.execute("SELECT 1 FROM temp.new_notes LIMIT 1").fetchone() is not None:
        pairs = conn.execute(
            """
            SELECT min(g.path), min(n.file_id) FROM temp.new_notes c
            CROSS JOIN notes n ON n.file_id = c.id
            CROSS JOIN temp.gone_notes g ON g.hash = n.content_hash
            WHERE g.path NOT IN (SELECT path FROM files)
            GROUP BY n.content_hash
            HAVING count(DISTINCT g.path) = 1 AND count(DISTINCT n.file_id) = 1
            """
        ).fetchall()
    _carry_history(conn, pairs)
    conn.execute("DELETE FROM temp.gone_notes")
    conn.execute("DELETE FROM temp.new_notes")
    conn.execute("DELETE FROM temp.gone_history")
    return record(conn, pairs)


def _carry_history(conn: sqlite3.Connection, pairs: Sequence[tuple[str, int]]) -> None:
    """A note renamed before keeps its history: [[First name]] follows it too."""
    conn.execute(_GONE_HISTORY)
    conn.executemany(
        "INSERT INTO renames(old_key, old_path, file_id) SELECT old_key, old_path, ? "
        "FROM temp.gone_history WHERE gone_path = ? ORDER BY seq",
        [(file_id, path) for path, file_id in pairs],
    )


def renamed_to(conn: sqlite3.Connection, key: str) -> str | None:
    """The path now of the file most recently seen leaving a name with this ``old_key``."""
    row = conn.execute(
        "SELECT f.path FROM renames r CROSS JOIN files f ON f.id = r.file_id "
        "WHERE r.old_key = ? ORDER BY r.seq DESC LIMIT 1",
        (key,),
    ).fetchone()
    return None if row is None else str(row[0])
