"""Lookup's SQL for stage 2: the seeds (aliases, link texts, unresolved keys) and one hop
along the links; and for the body stage, the notes whose text holds the terms (ARCHITECTURE
"Two-stage lookup"). Read side and stdlib only; split out of ``store.lookup`` by stage.
"""

from notedex.store.lookup import _NOTE_BM25
from notedex.store.lookup_terms import _visible
from notedex.store.read import _json_ints

TYPE_CHECKING = False  # no `typing` import on the query path; mypy honours the name
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Sequence

    from notedex.store.filters import NoteFilter

    Row = sqlite3.Row

# BM25 weights per column: anchors, unresolved (link_fts); note_fts's are stage 1's.
_LINK_BM25 = "bm25(link_fts, 2.0, 1.0)"
_LINK_COLUMNS = ("anchors", "unresolved")


def fts_note_hits(
    conn: "sqlite3.Connection", expression: str, limit: int = 5000, column: str | None = None
) -> "list[Row]":
    """Notes whose structure-search text matches an FTS5 expression (built by vault.text).

    ``column`` is one of title, tags, aliases (note_fts) or anchors, unresolved (link_fts);
    None matches title, tags and aliases.
    """
    table, bm25 = ("link_fts", _LINK_BM25) if column in _LINK_COLUMNS else ("note_fts", _NOTE_BM25)
    query = expression if column is None else f"{column} : {expression}"
    return conn.execute(
        f"SELECT rowid AS file_id, {bm25} AS rank FROM {table} WHERE {table} MATCH ? "
        "ORDER BY rank LIMIT ?",
        (query, limit),
    ).fetchall()


def neighbours(conn: "sqlite3.Connection", file_ids: "Sequence[int]") -> "list[Row]":
    """One hop along the link graph, both directions, between notes.

    ``relation`` reads from the neighbour's side: "links to seed" or "linked from seed".
    """
    ids = _json_ints(file_ids)
    return conn.execute(
        """
        SELECT l.source_id AS seed, l.target_id AS other, 'linked from seed' AS relation
        FROM links l JOIN notes n ON n.file_id = l.target_id
        WHERE l.source_id IN (SELECT value FROM json_each(?)) AND l.target_id <> l.source_id
        UNION
        SELECT l.target_id AS seed, l.source_id AS other, 'links to seed' AS relation
        FROM links l
        WHERE l.target_id IN (SELECT value FROM json_each(?)) AND l.target_id <> l.source_id
        """,
        (ids, ids),
    ).fetchall()


def link_degrees(conn: "sqlite3.Connection", file_ids: "Sequence[int]") -> dict[int, int]:
    """Links in and out of each note (other notes only): how much of a hub it is."""
    ids = _json_ints(file_ids)
    return {
        row[0]: row[1]
        for row in conn.execute(
            """
            SELECT id, sum(n) FROM (
                SELECT source_id AS id, count(*) AS n FROM links
                WHERE source_id IN (SELECT value FROM json_each(?1)) AND target_id IS NOT NULL
                  AND target_id <> source_id GROUP BY source_id
                UNION ALL
                SELECT target_id, count(*) FROM links
                WHERE target_id IN (SELECT value FROM json_each(?1)) AND target_id <> source_id
                GROUP BY target_id
            ) GROUP BY id
            """,
            {"1": ids},  # ?1 binds by name (a sequence is an error from Python 3.14)
        )
    }


def excluded_ids(conn: "sqlite3.Connection", file_ids: "Sequence[int]") -> set[int]:
    return {
        row[0]
        for row in conn.execute(
            "SELECT file_id FROM notes WHERE excluded = 1 "
            "AND file_id IN (SELECT value FROM json_each(?))",
            (_json_ints(file_ids),),
        )
    }


def body_hits(
    conn: "sqlite3.Connection",
    expression: str,
    limit: int,
    nf: "NoteFilter | None" = None,
) -> "tuple[int, list[Row]]":
    """The body stage: how many notes lookup may show have a body matching ``expression``, and
    the best ``limit`` of them by the body's BM25 (``file_id``, ``rank``; ties by file id).
    FTS5 scores every match, as ``search`` does; nothing else is read."""
    visible, params = _visible(conn, "body_fts.rowid", nf)
    where = f"FROM body_fts WHERE body_fts MATCH ? AND {visible}"
    total = conn.execute(f"SELECT count(*) {where}", [expression, *params]).fetchone()[0]
    if not total:
        return 0, []
    rows = conn.execute(
        f"SELECT rowid AS file_id, bm25(body_fts) AS rank {where} ORDER BY rank, rowid LIMIT ?",
        [expression, *params, limit],
    ).fetchall()
    return int(total), rows


def body_holds(conn: "sqlite3.Connection", expression: str, file_ids: "Sequence[int]") -> set[int]:
    """Which of ``file_ids`` have a body matching ``expression``: a rowid test, so FTS5 seeks
    the few ids; no bm25()."""
    sql = (
        "SELECT rowid FROM body_fts WHERE body_fts MATCH ? "
        "AND rowid IN (SELECT value FROM json_each(?))"
    )
    return {row[0] for row in conn.execute(sql, (expression, _json_ints(file_ids)))}
