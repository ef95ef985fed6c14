"""Read-only queries, named after what they answer. Stdlib only: the query path imports this.

Every function takes a read-only ``sqlite3.Connection`` (``connect_readonly``) whose rows are
``sqlite3.Row``. Over 400 lines on purpose: it is the whole query-side SQL, one module on the
hot path, where every further module is one more import for every query.
"""

from notedex.store.schema import (
    BROKEN_ANCHOR_FIELDS,
    BROKEN_ANCHOR_JOIN,
    LINK_KIND,
    LINK_TEXT,
    LONELY_DEAD_END,
    LONELY_ORPHAN,
    LONELY_UNLINKED,
    NOTE_TITLE,
)

TYPE_CHECKING = False  # no `typing` import on the query path; mypy honours the name
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterable, Sequence
    from typing import Any

    Row = sqlite3.Row
    RankedRow = Row | dict[str, Any]  # a stage-1 row: SQLite's, or built from two statements

_NOTE_COLUMNS = f"""
    f.id AS file_id, f.path AS path, f.disk_rel AS disk_rel, f.mtime_ns AS mtime_ns,
    f.size AS size, n.stem AS stem, {NOTE_TITLE} AS title, n.frontmatter_title AS frontmatter_title,
    n.first_h1 AS first_h1, n.note_id AS id, n.type AS type, n.status AS status,
    n.excluded AS excluded, n.content_hash AS content_hash, n.properties AS properties
"""


def meta(conn: "sqlite3.Connection") -> dict[str, str]:
    return {row[0]: row[1] for row in conn.execute("SELECT key, value FROM meta")}


# What the reports count, shared by the lists (health) and the totals (status) so they agree:
# nothing from a note in Obsidian's "Excluded files" (SEMANTICS 1). The excluded paths are
# collected once (partial index notes_excluded), not looked up for every problem.
_REPORTED_PROBLEMS = """
    FROM problems p
    WHERE p.severity = ? AND p.path NOT IN (
        SELECT f.path FROM notes n JOIN files f ON f.id = n.file_id WHERE n.excluded = 1)
"""
_NOTE_LINKS = "FROM links l JOIN notes n ON n.file_id = l.source_id"
_AMBIGUOUS = "l.ambiguous = 1 AND n.excluded = 0"


def counts(conn: "sqlite3.Connection") -> dict[str, int]:
    """Totals for `status`: notes count what `scan` lists (Excluded files apart, SEMANTICS 1);
    errors, warnings and broken links count exactly what health lists."""
    row = conn.execute(
        f"""
        SELECT (SELECT count(*) FROM notes WHERE excluded = 0),
               (SELECT count(*) FROM notes WHERE excluded = 1),
               (SELECT count(*) FROM files WHERE is_note = 0),
               (SELECT count(*) FROM links),
               (SELECT count(*) FROM broken_links),
               (SELECT count(*) {_REPORTED_PROBLEMS}),
               (SELECT count(*) {_REPORTED_PROBLEMS})
               + (SELECT count(*) {_NOTE_LINKS} WHERE {_AMBIGUOUS})
        """,
        ("error", "warning"),
    ).fetchone()
    keys = ("notes", "excludedNotes", "attachments", "links", "brokenLinks", "errors", "warnings")
    return dict(zip(keys, (int(v) for v in row), strict=True))


def _nfc(text: str) -> str:
    import unicodedata  # already loaded by vault.text on the query path

    return unicodedata.normalize("NFC", text)


def _tag_filter(column: str, tag: str, params: "list[Any]") -> str:
    """SQL that keeps notes with ``tag``; SEMANTICS 4: nested a/b/c also counts for a and a/b."""
    # keys are stored NFC + lower(): a tag typed or pasted NFD (macOS) must find them
    key = _nfc(tag.lstrip("#")).lower()
    params += [key, key + "/", key + "0"]
    return (
        f"{column} IN (SELECT t.file_id FROM tags t JOIN tag_names k ON k.id = t.tag_id "
        "WHERE k.tag_key = ? OR (k.tag_key > ? AND k.tag_key < ?))"
    )


def _type_filter(conn: "sqlite3.Connection", note_type: str, params: "list[Any]") -> str:
    """``--type``: case-insensitive like ``--tag`` (NFC, then ``str.lower``, beyond ASCII)."""
    conn.create_function("nx_fold", 1, _fold, deterministic=True)
    params.append(_fold(note_type))
    return "nx_fold(n.type) = ?"


def _fold(text: str | None) -> str | None:
    return None if text is None else _nfc(text).lower()


def notes(
    conn: "sqlite3.Connection",
    *,
    tag: str | None = None,
    note_type: str | None = None,
    include_excluded: bool = False,
) -> "list[Row]":
    return notes_in_path_order(
        conn, tag=tag, note_type=note_type, include_excluded=include_excluded
    ).fetchall()


def notes_in_path_order(
    conn: "sqlite3.Connection",
    *,
    tag: str | None = None,
    note_type: str | None = None,
    include_excluded: bool = False,
) -> "sqlite3.Cursor":
    """``notes`` as a cursor, for answers written while their rows are read (issue 35)."""
    where = [] if include_excluded else ["n.excluded = 0"]
    params: list[Any] = []
    if tag:
        where.append(_tag_filter("n.file_id", tag, params))
    if note_type:
        where.append(_type_filter(conn, note_type, params))
    sql = f"SELECT {_NOTE_COLUMNS} FROM notes n JOIN files f ON f.id = n.file_id"
    if where:
        sql += " WHERE " + " AND ".join(where)
    return conn.execute(sql + " ORDER BY f.path", params)


def tags_by_note(
    conn: "sqlite3.Connection", file_ids: "Iterable[int] | None" = None
) -> dict[int, list[str]]:
    return _grouped(
        conn,
        "SELECT t.file_id, k.tag FROM tags t JOIN tag_names k ON k.id = t.tag_id",
        "t.file_id",
        file_ids,
        "t.position",
    )


def aliases_by_note(
    conn: "sqlite3.Connection", file_ids: "Iterable[int] | None" = None
) -> dict[int, list[str]]:
    return _grouped(conn, "SELECT file_id, alias FROM aliases", "file_id", file_ids, "position")


def _grouped(
    conn: "sqlite3.Connection", select: str, key: str, ids: "Iterable[int] | None", order: str
) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    if ids is None:
        rows = conn.execute(f"{select} ORDER BY {key}, {order}")
    else:
        id_list = list(ids)
        if not id_list:
            return out
        rows = conn.execute(
            f"{select} WHERE {key} IN (SELECT value FROM json_each(?)) ORDER BY {key}, {order}",
            (_json_ints(id_list),),
        )
    for file_id, value in rows:
        out.setdefault(file_id, []).append(value)
    return out


def _json_ints(values: "Sequence[int]") -> str:
    return "[" + ",".join(str(int(v)) for v in values) + "]"


def problems(conn: "sqlite3.Connection", severity: str) -> "list[Row]":
    return problems_in_path_order(conn, severity).fetchall()


def problems_in_path_order(conn: "sqlite3.Connection", severity: str) -> "sqlite3.Cursor":
    return conn.execute(
        f"""
        SELECT p.path, p.kind, p.message {_REPORTED_PROBLEMS}
        ORDER BY p.path, p.id
        """,
        (severity,),
    )


def orphans(conn: "sqlite3.Connection") -> "list[Row]":
    """SEMANTICS 8: no incoming link from another note and no outgoing reference at all."""
    return _lonely(conn, f"= {LONELY_ORPHAN}")


def unlinked(conn: "sqlite3.Connection") -> "list[Row]":
    """No incoming link from another note, but at least one outgoing reference."""
    return _lonely(conn, f"= {LONELY_UNLINKED}")


def notes_without_backlinks(conn: "sqlite3.Connection") -> "list[Row]":
    """Orphans and unlinked notes in one pass: no incoming link from another note.

    ``has_outgoing`` tells them apart (SEMANTICS 8): 0 is an orphan, 1 is unlinked; orphans
    come first, each kind by path. The writer keeps these findings in ``lonely_notes``: this
    reads them, it probes no note.
    """
    return _lonely(conn, f"IN ({LONELY_ORPHAN}, {LONELY_UNLINKED})")


def dead_ends(conn: "sqlite3.Connection") -> "list[Row]":
    """SEMANTICS 8.8: notes with no outgoing reference, by path (stored by the writer)."""
    return _lonely(conn, f"= {LONELY_DEAD_END}")


def unused_attachments(conn: "sqlite3.Connection") -> "list[Row]":
    """SEMANTICS 8.9: attachments no note links to or embeds, by path (stored by the writer)."""
    return conn.execute("SELECT path FROM unused_attachments ORDER BY path").fetchall()


def dead_ends_json(conn: "sqlite3.Connection") -> tuple[int, bytes]:
    """``dead_ends`` as (count, the JSON objects ``{"path","title"}`` joined by commas)."""
    return _lonely_json(conn, LONELY_DEAD_END)


def unused_attachments_json(conn: "sqlite3.Connection") -> tuple[int, bytes]:
    """``unused_attachments`` as (count, the JSON objects ``{"path"}`` joined by commas)."""
    return _json_list(conn, *health_json_sql("unusedAttachments"))


def _json_list(
    conn: "sqlite3.Connection", sql: str, params: "Sequence[str]" = ()
) -> tuple[int, bytes]:
    """``sql`` selects one JSON object ``j`` per row, in report order: (how many, the objects
    joined by commas, as UTF-8), concatenated by SQLite, so Python makes one object, not one
    per row, and never decodes it (a str of 16 MB with CJK in it is 32-64 MB to build, and
    encoded again on the way out).

    group_concat takes the rows in the subquery's order: SQLite never flattens a subquery
    with ORDER BY into an aggregate query (its flattening rule 16), and the tests pin the
    order of every list.
    """
    cursor = conn.cursor()
    cursor.row_factory = None
    count, text = cursor.execute(
        f"SELECT count(*), CAST(coalesce(group_concat(j, ','), '') AS BLOB) FROM ({sql})", params
    ).fetchone()
    return int(count), bytes(text)


def _lonely(conn: "sqlite3.Connection", state: str) -> "list[Row]":
    return conn.execute(
        f"""
        SELECT path, title, lonely = {LONELY_UNLINKED} AS has_outgoing FROM lonely_notes
        WHERE lonely {state} ORDER BY lonely, path
        """
    ).fetchall()


def orphans_json(conn: "sqlite3.Connection") -> tuple[int, bytes]:
    """``orphans`` as (count, the JSON objects ``{"path","title"}`` joined by commas)."""
    return _lonely_json(conn, LONELY_ORPHAN)


def unlinked_json(conn: "sqlite3.Connection") -> tuple[int, bytes]:
    """``unlinked`` as (count, the JSON objects ``{"path","title"}`` joined by commas)."""
    return _lonely_json(conn, LONELY_UNLINKED)


def _lonely_json(conn: "sqlite3.Connection", lonely: int) -> tuple[int, bytes]:
    """The stored JSON objects of one kind of lonely note (lonely_docs), by path."""
    return _json_list(
        conn, f"SELECT doc AS j FROM lonely_docs WHERE lonely = {lonely} ORDER BY path"
    )


def broken_links(conn: "sqlite3.Connection") -> "list[Row]":
    """SEMANTICS 8: source, line, column, the link as written, and its broken key (target)."""
    return conn.execute(
        "SELECT source, line, col AS column, text, target, suggestion, reason FROM broken_links "
        "ORDER BY source, line, col, seq"
    ).fetchall()


def broken_links_json(conn: "sqlite3.Connection") -> tuple[int, bytes]:
    """``broken_links`` as (count, the JSON objects joined by commas): source, line, column,
    text, target, suggestion, reason, as the writer's triggers stored them (broken_link_docs)."""
    return _json_list(conn, *health_json_sql("brokenLinks"))


def broken_anchors(conn: "sqlite3.Connection") -> "list[Row]":
    """SEMANTICS 10: source, line, column, the link as written, the target note's path, the
    subpath, its kind, and the suggested subpath with its reason (or NULLs)."""
    columns = ", ".join(f"{sql} AS {name}" for name, sql in BROKEN_ANCHOR_FIELDS)
    return conn.execute(
        f"SELECT {columns} {BROKEN_ANCHOR_JOIN} ORDER BY s.path, l.line, l.col, l.seq"
    ).fetchall()


def broken_anchors_json(conn: "sqlite3.Connection") -> tuple[int, bytes]:
    """``broken_anchors`` as (count, the JSON objects joined by commas), same order and keys:
    the documents the writer stored (broken_anchor_docs), read in their key's order."""
    return _json_list(conn, *health_json_sql("brokenAnchors"))


def ambiguous_links(conn: "sqlite3.Connection") -> "list[Row]":
    return conn.execute(
        f"""
        SELECT f.path AS source, l.line, l.col AS column, {LINK_TEXT} AS text, t.path AS target
        {_NOTE_LINKS} JOIN files f ON f.id = l.source_id JOIN files t ON t.id = l.target_id
        WHERE {_AMBIGUOUS}
        ORDER BY f.path, l.line, l.col
        """
    ).fetchall()


def warnings_json(conn: "sqlite3.Connection") -> tuple[int, bytes]:
    """health's warnings (SEMANTICS 8.4) as (count, the JSON objects ``{"path","message"}``
    joined by commas): the stored warnings, then a warning per ambiguous link, by path (a
    path's stored warnings first, by id, then its ambiguous links, by line and column), as
    ``query.reports._problems`` lists them; a test pins the two equal."""
    return _json_list(conn, *health_json_sql("warnings"))


def errors_json(conn: "sqlite3.Connection") -> tuple[int, bytes]:
    """health's errors (SEMANTICS 8.5) as (count, the JSON objects ``{"path","message"}``)."""
    return _json_list(conn, *health_json_sql("errors"))


def graph_edges(conn: "sqlite3.Connection") -> "list[Row]":
    """Edges between files (count = occurrences); unresolved targets carry their linkpath."""
    return graph_edges_by_source(conn).fetchall()


def graph_edges_by_source(conn: "sqlite3.Connection") -> "sqlite3.Cursor":
    """``graph_edges`` as a cursor: the rows of one source path come together, in path order."""
    return conn.execute(
        """
        SELECT f.path AS source, t.path AS target, l.linkpath AS linkpath,
               t.is_note AS target_is_note, count(*) AS count
        FROM links l JOIN files f ON f.id = l.source_id JOIN notes n ON n.file_id = l.source_id
        LEFT JOIN files t ON t.id = l.target_id
        WHERE l.linkpath <> '' AND (l.target_id IS NULL OR l.target_id <> l.source_id)
          AND n.excluded = 0
        GROUP BY l.source_id, coalesce(l.target_id, -1),
                 CASE WHEN l.target_id IS NULL THEN l.linkpath END
        ORDER BY f.path, coalesce(t.path, l.linkpath)
        """
    )


_EDGE_COLUMNS = """
    l.source_id AS source_id, f.path AS source, l.target_id AS target_id, t.path AS target,
    l.linkpath AS linkpath, t.is_note AS target_is_note, count(*) AS count
"""
_EDGE_FROM = """
    FROM links l JOIN files f ON f.id = l.source_id JOIN notes n ON n.file_id = l.source_id
    LEFT JOIN files t ON t.id = l.target_id
"""


def graph_edges_touching(conn: "sqlite3.Connection", file_ids: "Sequence[int]") -> "list[Row]":
    """``graph_edges`` (same rules, plus both ends' ids) that start or end at one of ``file_ids``.

    An edge between two of them comes twice (once from each side); the caller keeps one.
    """
    return conn.execute(
        f"""
        SELECT {_EDGE_COLUMNS} {_EDGE_FROM}
        WHERE l.source_id IN (SELECT value FROM json_each(?1)) AND l.linkpath <> ''
          AND (l.target_id IS NULL OR l.target_id <> l.source_id) AND n.excluded = 0
        GROUP BY l.source_id, coalesce(l.target_id, -1),
                 CASE WHEN l.target_id IS NULL THEN l.linkpath END
        UNION ALL
        SELECT {_EDGE_COLUMNS} {_EDGE_FROM}
        WHERE l.target_id IN (SELECT value FROM json_each(?1)) AND l.target_id <> l.source_id
          AND l.linkpath <> '' AND n.excluded = 0
        GROUP BY l.source_id, l.target_id
        """,
        (_json_ints(file_ids),),
    ).fetchall()


def graph_node_paths_among(conn: "sqlite3.Connection", paths: "Sequence[str]") -> set[str]:
    """Which of ``paths`` are nodes of the whole ``graph``: a listed note or a link's target."""
    import json

    return {
        row[0]
        for row in conn.execute(
            """
            SELECT f.path FROM files f LEFT JOIN notes n ON n.file_id = f.id
            WHERE f.path IN (SELECT value FROM json_each(?))
              AND (n.excluded = 0 OR EXISTS (SELECT 1 FROM links l WHERE l.target_id = f.id))
            """,
            (json.dumps(list(paths)),),
        )
    }


def notes_after(conn: "sqlite3.Connection", after: str, limit: int) -> "list[Row]":
    """A page of the notes ``scan`` lists, by path: the first ``limit`` sorted after ``after``."""
    return conn.execute(
        f"SELECT {_NOTE_COLUMNS} FROM notes n JOIN files f ON f.id = n.file_id "
        "WHERE n.excluded = 0 AND f.path > ? ORDER BY f.path LIMIT ?",
        (after, limit),
    ).fetchall()


def note_by_path(conn: "sqlite3.Connection", path: str) -> "Row | None":
    return conn.execute(
        f"SELECT {_NOTE_COLUMNS} FROM notes n JOIN files f ON f.id = n.file_id WHERE f.path = ?",
        (path,),
    ).fetchone()


def notes_by_title(conn: "sqlite3.Connection", title: str) -> "list[Row]":
    """Case-insensitive match on path without .md, stem, or title (SEMANTICS 7's fold)."""
    import unicodedata

    def fold(text: str | None) -> str | None:
        return None if text is None else unicodedata.normalize("NFC", text).lower()

    # SQLite's lower() folds ASCII only: "ÉTÉ" must find "été" as links do.
    conn.create_function("nx_fold", 1, fold, deterministic=True)
    key = fold(title) or ""
    match = (
        f"nx_fold(f.path) IN (?1, ?1 || '.md') OR nx_fold(n.stem) = ?1 "
        f"OR nx_fold({NOTE_TITLE}) = ?1"
    )
    among = _title_candidates(key)
    params: tuple[str, ...] = (key,)
    where = match  # without candidates: every note's names folded in Python, 0.3 s at 100k
    if among is not None:
        where, params = f"n.file_id IN ({among}) AND ({match})", (key, *_title_needles(key))
    return conn.execute(
        f"""
        SELECT {_NOTE_COLUMNS} FROM notes n JOIN files f ON f.id = n.file_id
        WHERE {where}
        ORDER BY length(f.path), f.path
        """,
        params,
    ).fetchall()


def _caseless_or_ascii(ch: str) -> bool:
    """ASCII, or a character with no case that NFC keeps: CJK ideographs, kana, Hangul."""
    return (
        ch < "\x80"
        or "\u4e00" <= ch <= "\u9fff"
        or "\u3041" <= ch <= "\u3096"
        or "\u30a1" <= ch <= "\u30fa"
        or "\uac00" <= ch <= "\ud7a3"
    )


def _title_needles(key: str) -> tuple[str, ...]:
    """The trigram phrases: the key (a stem or title equal to it holds it), and the key's last
    segment without ``.md`` (a path equal to the key, or to it plus ``.md``, ends with the
    note's stem, which then holds that segment). When the segment is the key (no ``/``, no
    ``.md``: the usual title), the first phrase already finds every stem that holds it."""
    segment = key.rpartition("/")[2].removesuffix(".md")
    whole = '"' + key.replace('"', '""') + '"'
    if segment == key:
        return (whole,)
    return whole, 'stem : "' + segment.replace('"', '""') + '"'


def _title_candidates(key: str) -> str | None:
    """SQL for the notes that may fold to ``key`` (a superset, confirmed by the exact match),
    from the title trigram index; None when the index cannot promise that.

    It can when the key is ASCII and characters without case (``_caseless_or_ascii``) and
    both phrases have 3 or more characters: every stored name is NFC, and the only NFC
    character that ``str.lower()`` turns into one of those is an ASCII capital (U+0130 brings
    U+0307 along), so a name that folds to the key holds only such characters, which the
    trigram tokenizer folds exactly as ``str.lower()`` does (ASCII case; none for the rest).
    """
    segment = key.rpartition("/")[2].removesuffix(".md")
    if len(segment) < 3 or not all(_caseless_or_ascii(ch) for ch in key):
        return None
    if segment == key:  # one phrase (``_title_needles``): one trigram search, not two
        return "SELECT rowid FROM title_grams WHERE title_grams MATCH ?2"
    return (
        "SELECT rowid FROM title_grams WHERE title_grams MATCH ?2 "
        "UNION SELECT rowid FROM title_grams WHERE title_grams MATCH ?3"
    )


def notes_by_alias(conn: "sqlite3.Connection", key: str, folded: str) -> "list[Row]":
    """Notes with an alias that folds to ``folded``; ``key`` is its ``name_key`` (the index)."""
    import unicodedata

    conn.create_function(
        "nx_fold", 1, lambda t: unicodedata.normalize("NFC", t).lower(), deterministic=True
    )
    return conn.execute(
        f"""
        SELECT DISTINCT {_NOTE_COLUMNS} FROM aliases a
        JOIN notes n ON n.file_id = a.file_id JOIN files f ON f.id = n.file_id
        WHERE a.alias_key = ? AND nx_fold(a.alias) = ? ORDER BY f.path
        """,
        (key, folded),
    ).fetchall()


def notes_by_note_id(conn: "sqlite3.Connection", note_id: str) -> "list[Row]":
    """Notes whose frontmatter ``id`` is ``note_id`` (exact; a scan, for `show` only)."""
    return conn.execute(
        f"SELECT {_NOTE_COLUMNS} FROM notes n JOIN files f ON f.id = n.file_id "
        "WHERE n.note_id = ? ORDER BY f.path",
        (note_id,),
    ).fetchall()


def note_ids_with_prefix(conn: "sqlite3.Connection", prefix: str) -> list[str]:
    """The frontmatter ids that start with ``prefix`` (``capture`` picks a free one)."""
    return [
        row[0]
        for row in conn.execute(
            "SELECT note_id FROM notes WHERE substr(note_id, 1, ?) = ?", (len(prefix), prefix)
        )
    ]


def notes_by_ids(conn: "sqlite3.Connection", file_ids: "Sequence[int]") -> "list[Row]":
    return conn.execute(
        f"SELECT {_NOTE_COLUMNS} FROM notes n JOIN files f ON f.id = n.file_id "
        "WHERE f.id IN (SELECT value FROM json_each(?))",
        (_json_ints(file_ids),),
    ).fetchall()


def note_outline(conn: "sqlite3.Connection", file_id: int) -> str | None:
    """notes.outline of one note (store/outline.py decodes it)."""
    row = conn.execute("SELECT outline FROM notes WHERE file_id = ?", (file_id,)).fetchone()
    return row[0] if row else None


def outgoing_links(conn: "sqlite3.Connection", file_id: int) -> "list[Row]":
    return conn.execute(
        f"""
        SELECT {LINK_KIND} AS kind, {LINK_TEXT} AS raw, l.linkpath, l.subpath, l.display, l.line,
               l.col AS column, t.path AS target, l.ambiguous
        FROM links l LEFT JOIN files t ON t.id = l.target_id
        WHERE l.source_id = ? ORDER BY l.line, l.col, l.seq
        """,
        (file_id,),
    ).fetchall()


def backlinks(conn: "sqlite3.Connection", file_id: int) -> "list[Row]":
    return conn.execute(
        f"""
        SELECT f.path AS source, {LINK_KIND} AS kind, {LINK_TEXT} AS raw, l.line, l.col AS column
        FROM links l JOIN files f ON f.id = l.source_id
        WHERE l.target_id = ? AND l.source_id <> ? ORDER BY f.path, l.line, l.col
        """,
        (file_id, file_id),
    ).fetchall()


def note_problems(conn: "sqlite3.Connection", path: str) -> "list[Row]":
    return conn.execute(
        "SELECT severity, kind, message FROM problems WHERE path = ? ORDER BY id", (path,)
    ).fetchall()


def has_unreadable_notes(conn: "sqlite3.Connection") -> bool:
    """Notes that could not be read last time: retried by the writer whatever their etag."""
    return conn.execute("SELECT 1 FROM problems WHERE kind = 'read' LIMIT 1").fetchone() is not None


def file_etags(conn: "sqlite3.Connection") -> "list[Row]":
    return conn.execute(
        "SELECT path, disk_rel, size, mtime_ns, inode, indexed_ns FROM files"
    ).fetchall()


# -- lookup ----------------------------------------------------------------------------------


# BM25 weights per column: title, tags, aliases (note_fts); anchors, unresolved (link_fts).
_NOTE_BM25 = "bm25(note_fts, 10.0, 6.0, 4.0)"
# Tier 2's rank: BM25 over a note's names alone, title and aliases (name_fts), so tags do not
# lengthen the row (ARCHITECTURE "Two-stage lookup").
_NAME_BM25 = "bm25(name_fts, 10.0, 4.0)"
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


def occurs(conn: "sqlite3.Connection", expression: str) -> bool:
    """Whether any note's title, tags, aliases, anchors or unresolved keys match."""
    return any(
        conn.execute(
            f"SELECT 1 FROM {table} WHERE {table} MATCH ? LIMIT 1", (expression,)
        ).fetchone()
        is not None
        for table in ("note_fts", "link_fts")
    )


def exact_names(conn: "sqlite3.Connection", key: str) -> list[tuple[int, int]]:
    """The notes with a name whose ``exact_name_key`` is ``key``: (file_id, alias), alias 0
    when a title (stem, frontmatter title or first H1) has it, else 1 (an alias)."""
    cursor = conn.cursor()
    cursor.row_factory = None
    return cursor.execute(
        "SELECT file_id, min(alias) FROM exact_names WHERE key = ? GROUP BY file_id", (key,)
    ).fetchall()


def ranked_field_hits(
    conn: "sqlite3.Connection",
    matches: "Sequence[tuple[int, str]]",
    exact: "Sequence[int]" = (),
    *,
    tag: str | None = None,
    note_type: str | None = None,
    limit: int = 10,
) -> "tuple[int, list[RankedRow]]":
    """Stage 1 of lookup: the ranking tiers, then BM25 within a tier, over bounded work.

    ``matches`` are (term index, FTS5 expression) pairs, each matched once against title,
    tags and aliases; a note is a candidate when a term hits its title or tags, or when it is
    in ``exact`` (a title or alias equals the keywords, worked out by the caller). Tier 1:
    ``exact``; tier 2: every term hits the title or an alias; tier 3: the rest. Within a tier:
    distinct terms hit, terms in the title, then BM25 (whose row is title, tags and aliases
    only). Returns (total candidates, the top ``limit`` rows with ``file_id``, ``tier``,
    ``terms``, ``title_terms``, ``tag_terms``, ``alias_terms`` (terms hitting the title or
    tags, the title, the tags, the aliases) and ``rank``; with two terms or more, also
    ``title_mask``, ``tag_mask`` and ``alias_mask``: bit ``i`` set when term index ``i`` hit
    that field).

    ``total`` is a plain count over the match (no BM25). The page is ranked over the first
    *pool* that fills it (ARCHITECTURE "Two-stage lookup", bounded ranking): each pool is a
    set of candidates, found by FTS5 alone, whose every member sorts before every candidate
    outside it, so its top ``limit`` is the top ``limit`` of all; BM25 runs only on it.
    """
    if not matches:
        return 0, []
    exact_ids = _json_ints(exact)
    expressions = [expression for _, expression in matches]
    structure = " OR ".join(f"({{title tags}} : {e})" for e in expressions)
    visible, params = _visible(conn, "note_fts.rowid", tag, note_type)
    hit = conn.execute(
        f"SELECT count(*) FROM note_fts WHERE note_fts MATCH ? AND {visible}",
        [structure, *params],
    ).fetchone()[0]
    if not hit and not exact:
        return 0, []
    rows: list[RankedRow] = []
    if hit + len(exact) > limit:
        for number, (table, pool) in enumerate(_stage1_pools(expressions)):
            # a pool too small to fill the page is skipped on a count (no BM25): its size
            # and the exact names bound the candidates it holds
            seen, seen_params = _visible(conn, f"{table}.rowid", tag, note_type)
            count = f"SELECT count(*) FROM {table} WHERE {table} MATCH ? AND {seen}"
            pooled = conn.execute(count, [pool, *seen_params]).fetchone()[0]
            if pooled + len(exact) < limit:
                continue
            titled = number == 0
            rows = _ranked(conn, matches, exact_ids, tag, note_type, limit, pool, titled=titled)
            if len(rows) >= limit:
                break
    if len(rows) < limit:
        rows = _ranked(conn, matches, exact_ids, tag, note_type, limit, None)
    extra = _alias_only_exact(conn, rows, limit, expressions, exact_ids, tag, note_type)
    return hit + extra, rows


def _alias_only_exact(
    conn: "sqlite3.Connection",
    rows: "Sequence[RankedRow]",
    limit: int,
    expressions: "Sequence[str]",
    exact_ids: str,
    tag: str | None,
    note_type: str | None,
) -> int:
    """The candidates the count of title and tag hits misses: exact names that a term hits
    only in an alias. They sort first (tier 1), so the page holds them all unless it is
    tier 1 to the end; only then are they counted in SQL."""
    if exact_ids == "[]":
        return 0
    if not rows or len(rows) < limit or rows[-1]["tier"] != 1:
        return sum(1 for row in rows if row["tier"] == 1 and not row["terms"])
    anywhere = "{title tags aliases} : (" + " OR ".join(expressions) + ")"
    structure = " OR ".join(f"({{title tags}} : {e})" for e in expressions)
    visible, params = _visible(conn, "note_fts.rowid", tag, note_type)
    sql = (
        "SELECT count(*) FROM note_fts WHERE note_fts MATCH ? "
        f"AND +rowid IN (SELECT value FROM json_each(?)) AND {visible}"
    )
    alias_only = conn.execute(sql, [anywhere, exact_ids, *params]).fetchone()[0]
    return int(alias_only - conn.execute(sql, [structure, exact_ids, *params]).fetchone()[0])


def _visible(
    conn: "sqlite3.Connection", column: str, tag: str | None, note_type: str | None
) -> "tuple[str, list[Any]]":
    """SQL (and its parameters) that keeps the notes of ``column`` that lookup may show: not
    excluded (SEMANTICS 1), and with ``--type`` and ``--tag`` when given."""
    params: list[Any] = []
    parts = [_not_excluded(conn, column)]
    if note_type:
        # per candidate, not a scan of every note through the Python fold
        typed = _type_filter(conn, note_type, params)
        parts.append(f"(SELECT {typed} FROM notes n WHERE n.file_id = {column})")
    if tag:
        parts.append("+" + _tag_filter(column, tag, params))
    return " AND ".join(parts), params


def _not_excluded(conn: "sqlite3.Connection", column: str) -> str:
    """SQL that keeps the notes of ``column`` not in Obsidian's "Excluded files" (SEMANTICS 1):
    ``1`` when no note is excluded (one seek in the partial index ``notes_excluded``), since the
    ``NOT IN`` test costs as much as the FTS5 match it filters (a count of 12,579 hits at 100k
    notes: 0.65 ms without it, 1.3 ms with it)."""
    if conn.execute("SELECT 1 FROM notes WHERE excluded = 1 LIMIT 1").fetchone() is None:
        return "1"
    return f"+{column} NOT IN (SELECT file_id FROM notes WHERE excluded = 1)"


def _stage1_pools(expressions: "Sequence[str]") -> list[tuple[str, str]]:
    """Candidate pools as (FTS5 table, expression), each a prefix of the stage-1 order (tier,
    terms hit, terms in the title); the exact names join every pool. The first two involve
    names only, so they are counted over name_fts, whose doclists lack the tag hits.

    1. every term in the title: tier 2 with every term hit and every term in the title, the
       best key below tier 1;
    2. every term in the title or an alias: all of tier 2 (two terms or more);
    3. and every term in the title or tags: tier 3 with every term hit;
    4. (two terms) and a term in the title: with one of two terms hit, those in the title.
    Past the last pool, everything is ranked.
    """
    every = "(" + " AND ".join(expressions) + ")"
    titled = ("name_fts", f"title : {every}")
    if len(expressions) == 1:
        return [titled]
    named = f"{{title aliases}} : {every}"
    hit = f"({named}) OR ({{title tags}} : {every})"
    pools = [titled, ("name_fts", named), ("note_fts", hit)]
    if len(expressions) == 2:
        pools.append(("note_fts", f"{hit} OR (title : ({expressions[0]} OR {expressions[1]}))"))
    return pools


def _ranked(
    conn: "sqlite3.Connection",
    matches: "Sequence[tuple[int, str]]",
    exact_ids: str,
    tag: str | None,
    note_type: str | None,
    limit: int,
    pool: str | None,
    *,
    titled: bool = False,
) -> "list[RankedRow]":
    """The top ``limit`` candidates of ``pool`` (None: of all), in stage-1 order; ``titled``:
    the pool is the first, every term in the title (``_stage1_pools``)."""
    if titled and (len(matches) == 1 or exact_ids.count(",") < _SEEK_EXACT):
        # several terms and many exact names: ranking those over note_fts scans each term's
        # whole doclist, as the one statement of the pool does (_ranked_many): that one is cheaper
        return _ranked_titled(conn, matches, exact_ids, tag, note_type, limit)
    if len(matches) == 1 and pool is None and not tag and not note_type:
        return _ranked_one(conn, matches[0][1], exact_ids, limit)
    return _ranked_many(conn, matches, exact_ids, tag, note_type, limit, pool)


_TAGS_ALIASES = "bm25(note_fts, 0.0, 1.0, 0.0) < 0 AS tag_terms, bm25(note_fts, 0.0, 0.0, 1.0) < 0 AS alias_terms"
"""Whether the term hit the tags, the aliases: with ``title_terms``, the fields a one-term
lookup shows, at no further query (a row's second ``bm25()`` reuses what the first loaded)."""


def _ranked_one(
    conn: "sqlite3.Connection", expression: str, exact_ids: str, limit: int
) -> "list[RankedRow]":
    """One term without filters, every candidate: the best rows, no aggregation (a GROUP BY
    or window B-tree costs several times the match). The column-restricted ``bm25(...) < 0``
    says whether the term hit those columns; tier 2's rank is the name_fts one (``names``)."""
    tier = """CASE WHEN rowid IN (SELECT value FROM json_each(?1)) THEN 1
                    WHEN bm25(note_fts, 1.0, 0.0, 1.0) < 0 THEN 2 ELSE 3 END"""
    return conn.execute(
        f"""
        WITH names(id, r) AS MATERIALIZED (
            SELECT rowid, {_NAME_BM25} FROM name_fts WHERE name_fts MATCH ?3)
        SELECT rowid AS file_id,
               CASE WHEN {tier} = 2 THEN (SELECT r FROM names WHERE id = note_fts.rowid)
                    ELSE {_NOTE_BM25} END AS rank,
               bm25(note_fts, 1.0, 1.0, 0.0) < 0 AS terms,
               bm25(note_fts, 1.0, 0.0, 0.0) < 0 AS title_terms,
               {_TAGS_ALIASES},
               {tier} AS tier
        FROM note_fts WHERE note_fts MATCH ?2 AND {_not_excluded(conn, "rowid")}
          AND (terms OR tier = 1)
        ORDER BY tier, terms DESC, title_terms DESC, rank, rowid
        LIMIT ?4
        """,
        (exact_ids, "{title tags aliases} : " + expression, expression, limit),
    ).fetchall()


def _ranked_titled(
    conn: "sqlite3.Connection",
    matches: "Sequence[tuple[int, str]]",
    exact_ids: str,
    tag: str | None,
    note_type: str | None,
    limit: int,
) -> "list[RankedRow]":
    """The pool of notes with every term in the title, and the exact names.

    The exact names (tier 1) are ranked over note_fts as everywhere; every other pooled note
    has the same key (tier 2, every term hit, every term in the title), so it is ranked by
    name_fts alone: one bm25() per name hit, and note_fts's doclists (with the tag hits) are
    never scanned for them. Which terms hit a tag or an alias of the shown tier-2 notes is
    asked for those few ids only (``field_hits_among``).
    """
    rows: list[RankedRow] = []
    if exact_ids != "[]":
        rows += _ranked_exact(conn, matches, exact_ids, tag, note_type, limit)
    if len(rows) >= limit:
        return rows
    visible, params = _visible(conn, "name_fts.rowid", tag, note_type)
    every = "(" + " AND ".join(expression for _, expression in matches) + ")"
    titled = (
        "bm25(name_fts, 1.0, 0.0) < 0"  # one term: it hit the title
        if len(matches) == 1
        else "+rowid IN (SELECT rowid FROM name_fts WHERE name_fts MATCH 'title : ' || ?2)"
    )
    named = conn.execute(
        f"""
        SELECT rowid AS file_id, {_NAME_BM25} AS rank
        FROM name_fts WHERE name_fts MATCH ?2 AND {titled}
          AND +rowid NOT IN (SELECT value FROM json_each(?1)) AND {visible}
        ORDER BY rank, rowid LIMIT ?
        """,
        [exact_ids, every, *params, limit - len(rows)],
    ).fetchall()
    ids = [row[0] for row in named]
    masks = {file_id: [0, 0] for file_id in ids}  # the terms in a tag, in an alias (bits)
    for index, expression in matches:
        for field, column in enumerate(("tags", "aliases")):
            for file_id in field_hits_among(conn, expression, column, ids) if ids else ():
                masks[file_id][field] |= 1 << index
    every_term = sum(1 << index for index, _ in matches)
    rows += [
        {
            "file_id": row[0],
            "rank": row[1],
            "terms": len(matches),
            "title_terms": len(matches),
            "tag_terms": masks[row[0]][0].bit_count(),
            "alias_terms": masks[row[0]][1].bit_count(),
            "tier": 2,
            "title_mask": every_term,
            "tag_mask": masks[row[0]][0],
            "alias_mask": masks[row[0]][1],
        }
        for row in named
    ]
    return rows


_SEEK_EXACT = 4
"""Up to this many exact names are ranked by rowid seeks (FTS5 filters once per id, and bm25()
computes its IDF again each time: about 0.3 ms a term and id at 100k notes); more by one scan
of each term's doclist (1.5-3 ms a term), written ``+rowid``."""


def _rowid_in(exact_ids: str) -> str:
    """The rowid test of ranking the exact names alone: seeks for a few, else one scan."""
    return "rowid IN" if exact_ids.count(",") < _SEEK_EXACT else "+rowid IN"


def _ranked_exact(
    conn: "sqlite3.Connection",
    matches: "Sequence[tuple[int, str]]",
    exact_ids: str,
    tag: str | None,
    note_type: str | None,
    limit: int,
) -> "list[RankedRow]":
    """The exact names (tier 1) in stage-1 order, over note_fts."""
    if len(matches) > 1:
        return _ranked_many(conn, matches, exact_ids, tag, note_type, limit, "")
    visible, params = _visible(conn, "note_fts.rowid", tag, note_type)
    return conn.execute(
        f"""
        SELECT rowid AS file_id, {_NOTE_BM25} AS rank,
               bm25(note_fts, 1.0, 1.0, 0.0) < 0 AS terms,
               bm25(note_fts, 1.0, 0.0, 0.0) < 0 AS title_terms,
               {_TAGS_ALIASES}, 1 AS tier
        FROM note_fts WHERE note_fts MATCH ? AND {_rowid_in(exact_ids)} (SELECT value FROM json_each(?))
          AND {visible}
        ORDER BY terms DESC, title_terms DESC, rank, rowid LIMIT ?
        """,
        ["{title tags aliases} : " + matches[0][1], exact_ids, *params, limit],
    ).fetchall()


def _ranked_many(
    conn: "sqlite3.Connection",
    matches: "Sequence[tuple[int, str]]",
    exact_ids: str,
    tag: str | None,
    note_type: str | None,
    limit: int,
    pool: str | None,
) -> "list[RankedRow]":
    """The general stage-1 statement: per-term hits, summed per note, tiered and ordered.

    ``pool``: only the notes matching this FTS5 expression, and the exact names; "": the exact
    names only; None: every note. Tier 2's rank is the BM25 of every term over name_fts (``names``: the one match of
    all the terms, whose bm25() sums the terms' own).
    """
    restrict = ""
    params: list[Any] = []
    if pool is not None:
        restrict = f" AND {'+rowid IN' if pool else _rowid_in(exact_ids)} (SELECT id FROM pool)"
        params += [pool, exact_ids]
    every = "(" + " AND ".join(expression for _, expression in matches) + ")"
    params.append(every)
    union = " UNION ALL ".join(
        f"SELECT rowid AS file_id, ? AS term, {_NOTE_BM25} AS rank, "
        "bm25(note_fts, 1.0, 0.0, 0.0) < 0 AS in_title, "
        "bm25(note_fts, 1.0, 1.0, 0.0) < 0 AS in_title_tags, "
        "bm25(note_fts, 1.0, 0.0, 1.0) < 0 AS in_name, "
        f"{_TAGS_ALIASES} FROM note_fts WHERE note_fts MATCH ?{restrict}"
        for _ in matches
    )
    for term, expression in matches:
        params += [term, "{title tags aliases} : " + expression]
    params += [exact_ids, len(matches), exact_ids]
    visible, visible_params = _visible(conn, "a.file_id", tag, note_type)
    params += [*visible_params, limit]
    names = f"SELECT rowid, {_NAME_BM25} FROM name_fts WHERE name_fts MATCH ?{restrict}"
    if pool == "":  # tier 1 alone: no name ranks
        names = "SELECT NULL, NULL WHERE ? IS NULL"
    pooled = ""
    if pool == "":
        pooled = "pool(id) AS MATERIALIZED (SELECT value FROM json_each(?2) WHERE ?1 = ''),"
    elif pool is not None:
        pooled = (
            "pool(id) AS MATERIALIZED (SELECT rowid FROM note_fts WHERE note_fts MATCH ? "
            "UNION SELECT value FROM json_each(?)),"
        )
    return conn.execute(
        f"""
        WITH {pooled}
        names(id, r) AS MATERIALIZED ({names}),
        hits AS MATERIALIZED ({union}),  -- bm25() cannot run inside the aggregate
        agg AS (
            -- one hits row per (note, term): a sum of the 0/1 flags counts distinct terms
            -- without the three DISTINCT B-trees per group (a third of the statement)
            SELECT file_id,
                   sum(in_title_tags) AS terms,
                   sum(in_title) AS title_terms,
                   sum(in_name) AS named,
                   sum(tag_terms) AS tag_terms,
                   sum(alias_terms) AS alias_terms,
                   sum(rank) AS rank,
                   -- which terms hit each field (bit i: term i), for the shown rows' hits
                   sum(in_title << term) AS title_mask,
                   sum(tag_terms << term) AS tag_mask,
                   sum(alias_terms << term) AS alias_mask
            FROM hits GROUP BY file_id
        )
        SELECT a.file_id, a.tier, a.terms, a.title_terms, a.tag_terms, a.alias_terms,
               CASE WHEN a.tier = 2 THEN (SELECT r FROM names WHERE id = a.file_id)
                    ELSE a.rank END AS rank,
               a.title_mask, a.tag_mask, a.alias_mask
        FROM (
            SELECT file_id, terms, title_terms, tag_terms, alias_terms, rank,
                   title_mask, tag_mask, alias_mask,
                   CASE WHEN file_id IN (SELECT value FROM json_each(?)) THEN 1
                        WHEN named = ? THEN 2 ELSE 3 END AS tier
            FROM agg
            WHERE terms > 0 OR file_id IN (SELECT value FROM json_each(?))
        ) a
        WHERE {visible}
        ORDER BY a.tier, a.terms DESC, a.title_terms DESC, rank, a.file_id
        LIMIT ?
        """,
        params,
    ).fetchall()


def field_hits_among(
    conn: "sqlite3.Connection", expression: str, column: str, file_ids: "Sequence[int]"
) -> set[int]:
    """Which of ``file_ids`` match ``expression`` in ``column``: the details of shown rows.

    A plain rowid test, so FTS5 seeks the few ids; no bm25(), whose IDF would read the
    term's whole doclist."""
    return {
        row[0]
        for row in conn.execute(
            "SELECT rowid FROM note_fts WHERE note_fts MATCH ? "
            "AND rowid IN (SELECT value FROM json_each(?))",
            (f"{column} : {expression}", _json_ints(file_ids)),
        )
    }


def title_substring_hits(conn: "sqlite3.Connection", needle: str, limit: int = 200) -> "list[Row]":
    """Loose title match for stage 2: the term anywhere in a stem or title (3+ characters).

    An indexed trigram match, not a scan: its cost does not grow with the vault.
    """
    if len(needle) < 3:
        return []
    return conn.execute(
        """
        SELECT g.rowid AS file_id FROM title_grams g JOIN notes n ON n.file_id = g.rowid
        WHERE title_grams MATCH ? AND n.excluded = 0 LIMIT ?
        """,
        ('"' + needle.replace('"', '""') + '"', limit),
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
            (ids,),
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


# -- tags and mentions -----------------------------------------------------------------------


def tag_spellings(conn: "sqlite3.Connection") -> list[tuple[str, str, int]]:
    """Every tag spelling with the notes (not excluded) that carry it, as (``tag_key``,
    ``tag``, notes), by key then spelling: the writer's counts (store/tagcounts.py). A note
    holds each tag key once (SEMANTICS 4.9), so the counts add up per key."""
    cursor = conn.cursor()
    cursor.row_factory = None
    return cursor.execute(
        """
        SELECT k.tag_key, k.tag, u.notes FROM tag_uses u CROSS JOIN tag_names k ON k.id = u.tag_id
        ORDER BY k.tag_key, k.tag
        """
    ).fetchall()


def notes_tagged_under(conn: "sqlite3.Connection") -> dict[str, int]:
    """For each tag key and each parent of one, the notes (not excluded) with it or a tag
    nested in it (SEMANTICS 4.8), each note once: the writer's counts (store/tagcounts.py)."""
    cursor = conn.cursor()
    cursor.row_factory = None
    return dict(cursor.execute("SELECT tag_key, notes FROM tag_rollup").fetchall())


def tagged_note_count(conn: "sqlite3.Connection") -> int:
    """The notes (not excluded) with at least one tag."""
    return int(conn.execute("SELECT count(*) FROM tagged_notes").fetchone()[0])


def aliases_of(conn: "sqlite3.Connection", file_id: int) -> list[str]:
    return [
        row[0]
        for row in conn.execute(
            "SELECT alias FROM aliases WHERE file_id = ? ORDER BY position", (file_id,)
        )
    ]


def body_matches(conn: "sqlite3.Connection", expression: str, limit: int) -> "list[Row]":
    """Notes (not excluded) whose body matches an FTS5 expression: ``file_id``, ``path``,
    ``disk_rel``, at most ``limit``, by path."""
    return conn.execute(
        """
        SELECT f.id AS file_id, f.path AS path, f.disk_rel AS disk_rel
        FROM body_fts b CROSS JOIN notes n ON n.file_id = b.rowid CROSS JOIN files f ON f.id = b.rowid
        WHERE body_fts MATCH ? AND n.excluded = 0
        LIMIT ?
        """,
        (expression, limit),
    ).fetchall()


# -- streamed whole-vault answers (issue 35) --------------------------------------------------
# Cursors in vault-path order, so that `scan` and `graph` write their documents while reading
# rows; what the whole-answer builders kept in dicts is a merge of ordered cursors here, or a
# TEMP table (the connection's own, writable on a read-only connection) probed by key.


def unmapped(conn: "sqlite3.Connection") -> None:
    """Read through SQLite's page cache (bounded) rather than the reader's memory map, whose
    touched pages count in the process's resident memory: a streamed answer reads the whole
    index once, and would otherwise hold as much of it as it read."""
    conn.execute("PRAGMA mmap_size = 0")


def names_in_path_order(conn: "sqlite3.Connection", kind: str) -> "sqlite3.Cursor":
    """(path, name) of every file's tags (``kind`` "tags") or aliases, by path then position:
    ``tags_by_note``/``aliases_by_note`` as a stream to merge with ``notes_in_path_order``."""
    if kind == "tags":
        return conn.execute(
            """
            SELECT f.path, k.tag FROM tags t JOIN tag_names k ON k.id = t.tag_id
            JOIN files f ON f.id = t.file_id ORDER BY f.path, t.position
            """
        )
    return conn.execute(
        "SELECT f.path, a.alias FROM aliases a JOIN files f ON f.id = a.file_id "
        "ORDER BY f.path, a.position"
    )


_GRAPH_LINKS = """
    FROM links l JOIN files f ON f.id = l.source_id JOIN notes n ON n.file_id = l.source_id
    WHERE l.linkpath <> '' AND n.excluded = 0
"""


def graph_linked_files(conn: "sqlite3.Connection") -> "sqlite3.Cursor":
    """The link targets that are files but no listed note, in the order ``graph_edges`` first
    reaches them: by the first source path linking to them, then by path."""
    return conn.execute(
        """
        SELECT t.path AS target, t.is_note AS target_is_note, min(f.path) AS first
        FROM links l JOIN files f ON f.id = l.source_id JOIN notes n ON n.file_id = l.source_id
        JOIN files t ON t.id = l.target_id
        WHERE l.linkpath <> '' AND n.excluded = 0 AND l.target_id <> l.source_id
          AND NOT EXISTS (SELECT 1 FROM notes tn WHERE tn.file_id = t.id AND tn.excluded = 0)
        GROUP BY l.target_id ORDER BY first, t.path
        """
    )


def graph_broken_links(conn: "sqlite3.Connection") -> "sqlite3.Cursor":
    """(source path, linkpath) of every unresolved graph link, once each, in edge order."""
    return conn.execute(
        f"SELECT DISTINCT f.path, l.linkpath {_GRAPH_LINKS} AND l.target_id IS NULL "
        "ORDER BY f.path, l.linkpath"
    )


def graph_file_node(conn: "sqlite3.Connection", path: str) -> bool:
    """Whether ``path`` is a file node of the whole graph: a listed note or a graph link's
    target (the links ``graph_edges`` reads)."""
    return (
        conn.execute(
            f"""
            SELECT 1 FROM files t WHERE t.path = ?1 AND (
              EXISTS (SELECT 1 FROM notes tn WHERE tn.file_id = t.id AND tn.excluded = 0)
              OR EXISTS (SELECT 1 {_GRAPH_LINKS} AND l.target_id = t.id
                         AND l.source_id <> t.id))
            """,
            (path,),
        ).fetchone()
        is not None
    )


def unresolved_ids_start(conn: "sqlite3.Connection") -> None:
    """An empty TEMP table of unresolved keys and their graph node ids."""
    conn.execute(
        "CREATE TEMP TABLE IF NOT EXISTS graph_unresolved"
        " (key TEXT PRIMARY KEY, id TEXT NOT NULL UNIQUE) WITHOUT ROWID"
    )
    conn.execute("DELETE FROM temp.graph_unresolved")


def unresolved_id(conn: "sqlite3.Connection", key: str) -> str | None:
    row = conn.execute("SELECT id FROM temp.graph_unresolved WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def unresolved_id_taken(conn: "sqlite3.Connection", node_id: str) -> bool:
    return (
        conn.execute("SELECT 1 FROM temp.graph_unresolved WHERE id = ?", (node_id,)).fetchone()
        is not None
    )


def unresolved_id_add(conn: "sqlite3.Connection", key: str, node_id: str) -> None:
    conn.execute("INSERT INTO temp.graph_unresolved (key, id) VALUES (?, ?)", (key, node_id))


def health_json_sql(name: str) -> "tuple[str, tuple[str, ...]]":
    """The statement (and its parameters) selecting one JSON object ``j`` per finding of the
    health list ``name``, in report order: what ``*_json`` concatenate, and what a streamed
    ``health --json`` reads row by row."""
    if name in ("orphanNotes", "unlinkedNotes", "deadEnds"):
        lonely = {
            "orphanNotes": LONELY_ORPHAN,
            "unlinkedNotes": LONELY_UNLINKED,
            "deadEnds": LONELY_DEAD_END,
        }[name]
        return f"SELECT doc AS j FROM lonely_docs WHERE lonely = {lonely} ORDER BY path", ()
    if name == "brokenLinks":
        return "SELECT doc AS j FROM broken_link_docs ORDER BY source, line, col, seq", ()
    if name == "brokenAnchors":
        return "SELECT doc AS j FROM broken_anchor_docs ORDER BY source, line, col, seq", ()
    if name == "unusedAttachments":
        return "SELECT json_object('path', path) AS j FROM unused_attachments ORDER BY path", ()
    if name == "warnings":
        return (
            f"""
            SELECT json_object('path', path, 'message', message) AS j FROM (
                SELECT p.path AS path, p.message AS message, 0 AS part, p.id AS a, 0 AS b
                {_REPORTED_PROBLEMS}
                UNION ALL
                SELECT f.path, 'line ' || l.line || ': ' || {LINK_TEXT} || ' is ambiguous; resolved to '
                       || t.path || ' by Obsidian''s tie-break (same folder first, then shortest path)',
                       1, l.line, l.col
                {_NOTE_LINKS} JOIN files f ON f.id = l.source_id JOIN files t ON t.id = l.target_id
                WHERE {_AMBIGUOUS}
            ) ORDER BY path, part, a, b
            """,
            ("warning",),
        )
    if name == "errors":
        return (
            f"SELECT json_object('path', p.path, 'message', p.message) AS j {_REPORTED_PROBLEMS} "
            "ORDER BY p.path, p.id",
            ("error",),
        )
    raise ValueError(f"no health list {name!r}")


def health_json_rows(conn: "sqlite3.Connection", name: str) -> "Iterable[str]":
    """The JSON objects of the health list ``name``, one per row, in report order."""
    cursor = conn.cursor()
    cursor.row_factory = None
    for (doc,) in cursor.execute(*health_json_sql(name)):
        yield doc


def health_finding_count(conn: "sqlite3.Connection") -> int:
    """Broken links plus broken anchors: what makes ``health`` exit 1, known before a byte."""
    row = conn.execute(
        "SELECT (SELECT count(*) FROM broken_link_docs) + (SELECT count(*) FROM broken_anchor_docs)"
    ).fetchone()
    return int(row[0])
