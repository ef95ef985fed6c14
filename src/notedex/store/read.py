"""Read-only queries, named after what they answer. Stdlib only: the query path imports this.

Every function takes a read-only ``sqlite3.Connection`` (``connect_readonly``) whose rows are
``sqlite3.Row``. Over 400 lines on purpose: it is the query-side SQL of every command but
lookup (``store.lookup``) and search (``store.fulltext``), one module on the hot path.
"""

from notedex.codes import FILE_FINDINGS, LINK_FINDINGS, STORED_KINDS
from notedex.store.schema import (
    BROKEN_ANCHOR_FIELDS,
    BROKEN_ANCHOR_JOIN,
    BROKEN_LINK_DOC,
    LINK_KIND,
    LINK_TEXT,
    NOTE_TITLE,
)

TYPE_CHECKING = False  # no `typing` import on the query path; mypy honours the name
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterable, Sequence
    from typing import Any

    Row = sqlite3.Row

    from notedex.store.filters import NoteFilter

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
# A stored problem's code (notedex.codes.STORED_KINDS): its kind, but for the two kinds the
# writer selects by.
_PROBLEM_CODE = (
    "CASE p.kind "
    + " ".join(f"WHEN '{kind}' THEN '{code}'" for kind, code in STORED_KINDS.items())
    + " ELSE p.kind END"
)
AMBIGUOUS_CODE = "ambiguous-link"
_AMBIGUOUS = "l.ambiguous = 1 AND n.excluded = 0"


def error_count(conn: "sqlite3.Connection") -> int:
    """The errors the index holds: what `health` lists and `status` counts (``counts``, whose
    one statement uses the same rows), and what `index` reports (issue 34: one error count)."""
    row = conn.execute(f"SELECT count(*) {_REPORTED_PROBLEMS}", ("error",)).fetchone()
    return int(row[0])


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


def tag_filter(column: str, tag: str, params: "list[Any]") -> str:
    """SQL that keeps notes with ``tag``; SEMANTICS 4: nested a/b/c also counts for a and a/b."""
    # keys are stored NFC + lower(): a tag typed or pasted NFD (macOS) must find them
    key = _nfc(tag.lstrip("#")).lower()
    params += [key, key + "/", key + "0"]
    return (
        f"{column} IN (SELECT t.file_id FROM tags t JOIN tag_names k ON k.id = t.tag_id "
        "WHERE k.tag_key = ? OR (k.tag_key > ? AND k.tag_key < ?))"
    )


def type_filter(conn: "sqlite3.Connection", note_type: str, params: "list[Any]") -> str:
    """``--type``: case-insensitive like ``--tag`` (NFC, then ``str.lower``, beyond ASCII)."""
    register_fold(conn)
    params.append(_fold(note_type))
    return "nx_fold(n.type) = ?"


def _fold(text: str | None) -> str | None:
    return None if text is None else _nfc(text).lower()


def register_fold(conn: "sqlite3.Connection") -> None:
    """``nx_fold(text)``: NFC, then ``str.lower`` (SQLite's lower() folds ASCII only). Once
    per connection: a streamed, filtered scan builds three queries with the note filter while
    the first ones run, and SQLite refuses to redefine a function then."""
    try:
        conn.execute("SELECT nx_fold('')").fetchone()
        return
    except conn.OperationalError:  # no such function yet (no `import sqlite3`: tasks' path)
        pass
    conn.create_function("nx_fold", 1, _fold, deterministic=True)


def notes(
    conn: "sqlite3.Connection",
    nf: "NoteFilter | None" = None,
    *,
    include_excluded: bool = False,
) -> "list[Row]":
    """The notes ``nf`` keeps (all when None), in its order (path by default)."""
    return notes_in_path_order(conn, nf, include_excluded=include_excluded).fetchall()


def notes_in_path_order(
    conn: "sqlite3.Connection",
    nf: "NoteFilter | None" = None,
    *,
    include_excluded: bool = False,
    limit: int | None = None,
) -> "sqlite3.Cursor":
    """``notes`` as a cursor, for answers written while their rows are read (issue 35): the
    notes ``nf`` keeps, by path unless ``nf.sort`` orders them otherwise."""
    from notedex.store.filters import note_conditions, order_by

    where = [] if include_excluded else ["n.excluded = 0"]
    params: list[Any] = []
    if nf is not None:
        where += note_conditions(conn, nf, params)
    sql = f"SELECT {_NOTE_COLUMNS} FROM notes n JOIN files f ON f.id = n.file_id"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY " + (order_by(conn, nf, params) if nf is not None else "f.path")
    if limit is not None:
        sql += " LIMIT ?"
        params.append(limit)
    return conn.execute(sql, params)


def note_count(conn: "sqlite3.Connection", nf: "NoteFilter | None" = None) -> int:
    """How many notes ``notes_in_path_order(conn, nf)`` lists (a paged answer's total)."""
    from notedex.store.filters import note_conditions

    params: list[Any] = []
    where = ["n.excluded = 0", *(note_conditions(conn, nf, params) if nf is not None else ())]
    sql = "SELECT count(*) FROM notes n JOIN files f ON f.id = n.file_id WHERE " + " AND ".join(
        where
    )
    return int(conn.execute(sql, params).fetchone()[0])


def notes_with_names(conn: "sqlite3.Connection", nf: "NoteFilter") -> "sqlite3.Cursor":
    """``notes_in_path_order(conn, nf)`` (any order ``nf`` sorts by), each row with its
    ``tags_json`` and ``aliases_json``: a JSON array of its tags and of its aliases, by
    position, built by SQLite per row (one seek into each table's file_id key). A scan sorted
    another way than by path streams these rows (issue 35): the sort is SQLite's (its sorter
    spills to temporary files), and no dict of every note's names is built in Python."""
    from notedex.store.filters import note_conditions, order_by

    params: list[Any] = []
    where = " AND ".join(["n.excluded = 0", *note_conditions(conn, nf, params)])
    names = """,
        (SELECT json_group_array(tag) FROM (SELECT k.tag AS tag FROM tags t
           JOIN tag_names k ON k.id = t.tag_id WHERE t.file_id = f.id ORDER BY t.position))
          AS tags_json,
        (SELECT json_group_array(alias) FROM (SELECT a.alias AS alias FROM aliases a
           WHERE a.file_id = f.id ORDER BY a.position)) AS aliases_json"""
    sql = f"SELECT {_NOTE_COLUMNS}{names} FROM notes n JOIN files f ON f.id = n.file_id"
    sql += f" WHERE {where} ORDER BY " + order_by(conn, nf, params)
    return conn.execute(sql, params)


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
        SELECT p.path, p.kind, p.message, {_PROBLEM_CODE} AS code {_REPORTED_PROBLEMS}
        ORDER BY p.path, p.id
        """,
        (severity,),
    )


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


def broken_links(conn: "sqlite3.Connection") -> "list[Row]":
    """SEMANTICS 8: source, line, column, the link as written, and its broken key (target)."""
    return conn.execute(
        "SELECT source, line, col AS column, text, target, suggestion, reason "
        "FROM broken_links ORDER BY source, line, col, seq"
    ).fetchall()


def broken_anchors(conn: "sqlite3.Connection") -> "list[Row]":
    """SEMANTICS 10: source, line, column, the link as written, the target note's path, the
    subpath, its kind, and the suggested subpath with its reason (or NULLs)."""
    columns = ", ".join(f"{sql} AS {key}" for key, sql in BROKEN_ANCHOR_FIELDS)
    return conn.execute(
        f"SELECT {columns} {BROKEN_ANCHOR_JOIN} ORDER BY s.path, l.line, l.col, l.seq"
    ).fetchall()


def ambiguous_links(conn: "sqlite3.Connection") -> "list[Row]":
    return conn.execute(
        f"""
        SELECT f.path AS source, l.line, l.col AS column, {LINK_TEXT} AS text, t.path AS target
        {_NOTE_LINKS} JOIN files f ON f.id = l.source_id JOIN files t ON t.id = l.target_id
        WHERE {_AMBIGUOUS}
        ORDER BY f.path, l.line, l.col
        """
    ).fetchall()


def graph_edges(conn: "sqlite3.Connection") -> "list[Row]":
    """Edges between files (count = occurrences); unresolved targets carry their linkpath."""
    return graph_edges_by_source(conn).fetchall()


def graph_edges_by_source(conn: "sqlite3.Connection", kept: bool = False) -> "sqlite3.Cursor":
    """``graph_edges`` as a cursor: the rows of one source path come together, in path order;
    with ``kept``, only the kept notes' (``graph_kept_start``)."""
    return conn.execute(
        f"""
        SELECT f.path AS source, t.path AS target, l.linkpath AS linkpath,
               t.is_note AS target_is_note, count(*) AS count
        FROM links l JOIN files f ON f.id = l.source_id JOIN notes n ON n.file_id = l.source_id
        LEFT JOIN files t ON t.id = l.target_id
        WHERE l.linkpath <> '' AND (l.target_id IS NULL OR l.target_id <> l.source_id)
          AND n.excluded = 0 {_KEPT_SOURCE if kept else ""}
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
        {"1": _json_ints(file_ids)},  # ?1 binds by name (a sequence is an error from 3.14)
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
    # SQLite's lower() folds ASCII only: "ÉTÉ" must find "été" as links do.
    register_fold(conn)
    key = _fold(title) or ""
    match = (
        f"nx_fold(f.path) IN (?1, ?1 || '.md') OR nx_fold(n.stem) = ?1 "
        f"OR nx_fold({NOTE_TITLE}) = ?1"
    )
    among = _title_candidates(key)
    params = {"1": key}  # ?1, ?2, ?3 bind by name (a sequence is an error from Python 3.14)
    where = match  # without candidates: every note's names folded in Python, 0.3 s at 100k
    if among is not None:
        where = f"n.file_id IN ({among}) AND ({match})"
        params.update((str(i), needle) for i, needle in enumerate(_title_needles(key), 2))
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
    register_fold(conn)
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


UNREADABLE_WALK_MESSAGE = "cannot %"
"""A ``LIKE`` pattern: the walk problems whose path keeps its rows without a look, a folder it
could not list, an entry it could not look at or a symlink it could not follow (``vault.walk``:
they alone start with "cannot ", tests/unit/vault/test_walk.py)."""


def unread_above(conn: "sqlite3.Connection", path: str) -> "list[Row]":
    """The walk problems at ``path`` or a folder above it (the vault root included) that kept
    its rows unread: the note may be out of date (ARCHITECTURE "Unreadable is visible")."""
    parts = path.split("/")
    places = ["", *("/".join(parts[:end]) for end in range(1, len(parts) + 1))]
    marks = ", ".join("?" * len(places))
    return conn.execute(
        f"SELECT path, message FROM problems WHERE kind = 'walk' AND severity = 'error' "
        f"AND message LIKE ? AND path IN ({marks}) ORDER BY length(path), path",
        (UNREADABLE_WALK_MESSAGE, *places),
    ).fetchall()


def has_unreadable_notes(conn: "sqlite3.Connection") -> bool:
    """Notes that could not be read last time: retried by the writer whatever their etag."""
    return conn.execute("SELECT 1 FROM problems WHERE kind = 'read' LIMIT 1").fetchone() is not None


# -- lookup ----------------------------------------------------------------------------------
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


def note_tags_among(conn: "sqlite3.Connection", nf: "NoteFilter") -> list[tuple[int, str, str]]:
    """(file id, tag key, spelling) of every tag of the notes ``nf`` keeps (not excluded)."""
    from notedex.store.filters import notes_kept

    params: list[Any] = []
    kept = notes_kept(conn, "t.file_id", nf, params)
    cursor = conn.cursor()
    cursor.row_factory = None
    return cursor.execute(
        f"SELECT t.file_id, k.tag_key, k.tag FROM tags t JOIN tag_names k ON k.id = t.tag_id "
        f"WHERE {kept}",
        params,
    ).fetchall()


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


def names_in_path_order(
    conn: "sqlite3.Connection", kind: str, nf: "NoteFilter | None" = None
) -> "sqlite3.Cursor":
    """(path, name) of every file's tags (``kind`` "tags") or aliases, by path then position:
    ``tags_by_note``/``aliases_by_note`` as a stream to merge with ``notes_in_path_order``.
    With an active ``nf``, only those of the notes ``notes_in_path_order(conn, nf)`` lists
    (issue 32: a filtered scan of 41 notes read the 330,000 tags of a 100k vault), walked
    from ``files`` in path order: no sort, and no plan that starts from every tag."""
    if nf is not None and nf.active:
        return _kept_names_in_path_order(conn, kind, nf)
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


def _kept_names_in_path_order(
    conn: "sqlite3.Connection", kind: str, nf: "NoteFilter"
) -> "sqlite3.Cursor":
    from notedex.store.filters import note_conditions

    params: list[Any] = []
    where = " AND ".join(["n.excluded = 0", *note_conditions(conn, nf, params)])
    if kind == "tags":
        names = (
            "k.tag FROM files f CROSS JOIN notes n ON n.file_id = f.id"
            " CROSS JOIN tags t ON t.file_id = f.id CROSS JOIN tag_names k ON k.id = t.tag_id"
        )
    else:
        names = (
            "t.alias FROM files f CROSS JOIN notes n ON n.file_id = f.id"
            " CROSS JOIN aliases t ON t.file_id = f.id"
        )
    return conn.execute(f"SELECT f.path, {names} WHERE {where} ORDER BY f.path, t.position", params)


_GRAPH_LINKS = """
    FROM links l JOIN files f ON f.id = l.source_id JOIN notes n ON n.file_id = l.source_id
    WHERE l.linkpath <> '' AND n.excluded = 0
"""
_KEPT_SOURCE = " AND l.source_id IN (SELECT file_id FROM temp.graph_kept)"
"""With ``kept``: only the links of the notes in the TEMP table ``graph_kept_start`` fills."""


def _listed_note(kept: bool, column: str = "t.id") -> str:
    """``column`` is a graph's note node: a listed note, or with ``kept`` one the filter kept."""
    if kept:
        return f"EXISTS (SELECT 1 FROM temp.graph_kept k WHERE k.file_id = {column})"
    return f"EXISTS (SELECT 1 FROM notes tn WHERE tn.file_id = {column} AND tn.excluded = 0)"


def graph_kept_start(conn: "sqlite3.Connection", nf: "NoteFilter") -> None:
    """A TEMP table (the read-only connection's own, SQLite-side) of the file ids of the notes
    ``nf`` keeps: a filtered graph's notes, whose links alone it draws (issue 35: probed by
    the streamed graph's queries instead of a Python set of kept paths)."""
    from notedex.store.filters import note_conditions

    params: list[Any] = []
    where = " AND ".join(["n.excluded = 0", *note_conditions(conn, nf, params)])
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS graph_kept (file_id INTEGER PRIMARY KEY)")
    conn.execute("DELETE FROM temp.graph_kept")
    conn.execute(
        "INSERT INTO temp.graph_kept SELECT n.file_id FROM notes n JOIN files f"
        f" ON f.id = n.file_id WHERE {where}",
        params,
    )


def graph_linked_files(conn: "sqlite3.Connection", kept: bool = False) -> "sqlite3.Cursor":
    """The link targets that are files but no listed note, in the order ``graph_edges`` first
    reaches them: by the first source path linking to them, then by path. With ``kept``, of
    the kept notes' links, and no kept note (``graph_kept_start``)."""
    return conn.execute(
        f"""
        SELECT t.path AS target, t.is_note AS target_is_note, min(f.path) AS first
        FROM links l JOIN files f ON f.id = l.source_id JOIN notes n ON n.file_id = l.source_id
        JOIN files t ON t.id = l.target_id
        WHERE l.linkpath <> '' AND n.excluded = 0 AND l.target_id <> l.source_id
          {_KEPT_SOURCE if kept else ""} AND NOT {_listed_note(kept)}
        GROUP BY l.target_id ORDER BY first, t.path
        """
    )


def graph_broken_links(conn: "sqlite3.Connection", kept: bool = False) -> "sqlite3.Cursor":
    """(source path, linkpath) of every unresolved graph link, once each, in edge order."""
    return conn.execute(
        f"SELECT DISTINCT f.path, l.linkpath {_GRAPH_LINKS} AND l.target_id IS NULL "
        f"{_KEPT_SOURCE if kept else ''} ORDER BY f.path, l.linkpath"
    )


def graph_file_node(conn: "sqlite3.Connection", path: str, kept: bool = False) -> bool:
    """Whether ``path`` is a file node of the whole graph: a listed note or a graph link's
    target (the links ``graph_edges`` reads); with ``kept``, of the filtered graph."""
    return (
        conn.execute(
            f"""
            SELECT 1 FROM files t WHERE t.path = ?1 AND (
              {_listed_note(kept)}
              OR EXISTS (SELECT 1 {_GRAPH_LINKS} AND l.target_id = t.id
                         AND l.source_id <> t.id {_KEPT_SOURCE if kept else ""}))
            """,
            {"1": path},
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
    health list ``name``, in report order: what ``health_list_json`` concatenates, and what a
    streamed ``health`` (JSON and text) reads row by row."""
    if name == "brokenLinks":
        return (
            f"SELECT {BROKEN_LINK_DOC} AS j FROM broken_links ORDER BY source, line, col, seq",
            (),
        )
    if name == "brokenAnchors":
        return "SELECT doc AS j FROM broken_anchor_docs ORDER BY source, line, col, seq", ()
    if name == "warnings":
        return (
            f"""
            SELECT json_object('path', path, 'message', message, 'code', code) AS j FROM (
                SELECT p.path AS path, p.message AS message, {_PROBLEM_CODE} AS code,
                       0 AS part, p.id AS a, 0 AS b
                {_REPORTED_PROBLEMS}
                UNION ALL
                SELECT f.path, 'line ' || l.line || ': ' || {LINK_TEXT} || ' is ambiguous; resolved to '
                       || t.path || ' by Obsidian''s tie-break (same folder first, then shortest path)',
                       '{AMBIGUOUS_CODE}', 1, l.line, l.col
                {_NOTE_LINKS} JOIN files f ON f.id = l.source_id JOIN files t ON t.id = l.target_id
                WHERE {_AMBIGUOUS}
            ) ORDER BY path, part, a, b
            """,
            ("warning",),
        )
    if name == "errors":
        return (
            f"SELECT json_object('path', p.path, 'message', p.message, 'code', {_PROBLEM_CODE}) "
            f"AS j {_REPORTED_PROBLEMS} "
            "ORDER BY p.path, p.id",
            ("error",),
        )
    for finding in LINK_FINDINGS:
        if name == finding.list_key:
            return (
                f"""
                SELECT json_object('source', s.path, 'line', l.line, 'column', l.col,
                                   'text', {LINK_TEXT}) AS j
                FROM link_findings x CROSS JOIN links l ON l.source_id = x.source_id
                  AND l.seq = x.seq CROSS JOIN files s ON s.id = x.source_id
                WHERE x.code = ? ORDER BY s.path, l.line, l.col, l.seq
                """,
                (finding.code,),
            )
    for finding in FILE_FINDINGS:
        if name == finding.list_key:
            return (
                f"SELECT json_object({_file_fields(finding.file_fields)}) AS j "
                "FROM file_findings WHERE code = ? ORDER BY path",
                (finding.code,),
            )
    raise ValueError(f"no health list {name!r}")


def _file_fields(fields: "tuple[str, ...]") -> str:
    """``json_object``'s arguments for a file finding's ``file_fields`` (``path``, ``title``:
    columns of ``file_findings``), in their order."""
    return ", ".join(f"'{key}', {key}" for key in fields)


def health_list_json(conn: "sqlite3.Connection", name: str) -> tuple[int, bytes]:
    """The health list ``name`` as (count, its JSON objects joined by commas, UTF-8)."""
    return _json_list(conn, *health_json_sql(name))


def health_json_rows(conn: "sqlite3.Connection", name: str) -> "Iterable[str]":
    """The JSON objects of the health list ``name``, one per row, in report order."""
    cursor = conn.cursor()
    cursor.row_factory = None
    for (doc,) in cursor.execute(*health_json_sql(name)):
        yield doc


HEALTH_BATCH = 256
"""Findings a ``health_json_batches`` batch holds (tens of KB of JSON)."""


def health_json_batches(
    conn: "sqlite3.Connection", name: str, size: int = HEALTH_BATCH
) -> "Iterable[tuple[int, bytes]]":
    """The JSON objects of the health list ``name`` in report order, ``size`` at a time: (how
    many, their UTF-8 joined by commas). SQLite hands each object over as a BLOB, so it is
    never decoded into a str to be encoded again on the way out, and Python joins a batch in
    one call instead of handling each of the tens of thousands of rows (issue 33)."""
    sql, params = health_json_sql(name)
    cursor = conn.cursor()
    cursor.row_factory = None
    cursor.execute(f"SELECT CAST(j AS BLOB) FROM ({sql})", params)
    while batch := cursor.fetchmany(size):
        yield len(batch), b",".join([j for (j,) in batch])


def kept_paths_start(conn: "sqlite3.Connection", nf: "NoteFilter") -> None:
    """A TEMP table (the read-only connection's own, SQLite-side) of the paths of the notes
    ``nf`` keeps: what a filtered, streamed ``health`` probes a finding's note against
    (``kept_path``) instead of holding a set of every kept path (issue 35)."""
    from notedex.store.filters import note_conditions

    params: list[Any] = []
    where = " AND ".join(["n.excluded = 0", *note_conditions(conn, nf, params)])
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS kept_paths (path TEXT PRIMARY KEY) WITHOUT ROWID")
    conn.execute("DELETE FROM temp.kept_paths")
    conn.execute(
        "INSERT INTO temp.kept_paths SELECT f.path FROM notes n JOIN files f"
        f" ON f.id = n.file_id WHERE {where}",
        params,
    )


def kept_path(conn: "sqlite3.Connection", path: str) -> bool:
    """Whether ``path`` is in the TEMP table ``kept_paths_start`` filled."""
    found = conn.execute("SELECT 1 FROM temp.kept_paths WHERE path = ?", (path,)).fetchone()
    return found is not None


def seen_paths_start(conn: "sqlite3.Connection") -> None:
    """An empty TEMP table of the paths a streamed list has written (``seen_path_add``)."""
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS seen_paths (path TEXT PRIMARY KEY) WITHOUT ROWID")
    conn.execute("DELETE FROM temp.seen_paths")


def seen_path_add(conn: "sqlite3.Connection", path: str) -> bool:
    """Add ``path`` to ``seen_paths``; whether it was not there yet."""
    cursor = conn.execute("INSERT OR IGNORE INTO temp.seen_paths (path) VALUES (?)", (path,))
    return cursor.rowcount == 1


def health_finding_count(conn: "sqlite3.Connection") -> int:
    """Broken links plus broken anchors: what makes ``health`` exit 1, known before a byte.
    Counted in the findings' own tables, row for row those of their documents (the triggers
    keep both), whose pages hold every document: 56 ms cold at 100k notes against a few."""
    row = conn.execute(
        "SELECT (SELECT count(*) FROM broken_links) + (SELECT count(*) FROM broken_anchors)"
    ).fetchone()
    return int(row[0])


def vault_paths(conn: "sqlite3.Connection") -> dict[str, str]:
    """Every indexed file's vault path (notes and attachments) and its on-disk spelling: what
    `fix` resolves a suggestion against (SEMANTICS 7) and the file it opens."""
    return {
        path: disk_rel or path
        for path, disk_rel in conn.execute("SELECT path, disk_rel FROM files ORDER BY path")
    }


def links_touching(conn: "sqlite3.Connection", paths: "list[str]") -> "list[Row]":
    """The links from or into the files at ``paths``: source path, line, column, the text as
    written, linkpath and the target's path (NULL when unresolved). What `mv` re-resolves
    after a move: the links of the moved files and those into files that share a name with
    one (issue 33: a probe by source and by target, not a read of every link)."""
    import json

    return conn.execute(
        f"""
        WITH chosen(id) AS (
            SELECT id FROM files WHERE path IN (SELECT value FROM json_each(?))
        )
        SELECT f.path AS source, l.line, l.col AS column, {LINK_TEXT} AS text, l.linkpath,
               t.path AS target
        FROM links l JOIN files f ON f.id = l.source_id LEFT JOIN files t ON t.id = l.target_id
        WHERE l.linkpath != ''
          AND (l.source_id IN (SELECT id FROM chosen) OR l.target_id IN (SELECT id FROM chosen))
        ORDER BY f.path, l.seq
        """,
        (json.dumps(paths),),
    ).fetchall()


def paths_filed_under(conn: "sqlite3.Connection", keys: "Iterable[str]") -> "list[str]":
    """The paths of the files filed under ``keys`` (``vault.resolve.file_keys``), by the index
    files_name_key: a probe per name (a note's stem key k is its name key k.md), not a fold of
    every path of the vault (issue 33: 0.7 s of a folder `mv` at 100k notes)."""
    import json

    from notedex.vault.resolve import file_keys, file_name_crc, key_crc

    keys = set(keys)
    # The index's expression: the writer registers it, a read connection does here.
    conn.create_function("nx_file_name_crc", 1, file_name_crc, deterministic=True)
    names = json.dumps(sorted({key_crc(name) for key in keys for name in (key, key + ".md")}))
    rows = conn.execute(
        "SELECT path FROM files WHERE nx_file_name_crc(path) IN (SELECT value FROM json_each(?))",
        (names,),
    )
    return sorted(path for (path,) in rows if not keys.isdisjoint(file_keys(path)))


def health_row_count(conn: "sqlite3.Connection", name: str) -> int:
    """How many findings the health list ``name`` has (a section's heading comes first),
    counted on what the JSON reads: the writer's stored documents, not the joins of the rows."""
    sql, params = health_json_sql(name)
    return int(conn.execute(f"SELECT count(*) FROM ({sql})", params).fetchone()[0])


def health_code_counts(conn: "sqlite3.Connection") -> dict[str, int]:
    """The warnings and errors by code, and the broken links and anchors inside comments
    (``in-comment``): what health's ``counts`` adds to its lists' lengths (issue 33)."""
    counts: dict[str, int] = {}
    # Both severities in one pass (_REPORTED_PROBLEMS without its severity).
    reported = _REPORTED_PROBLEMS.replace("p.severity = ? AND ", "")
    for code, count in conn.execute(
        f"SELECT {_PROBLEM_CODE} AS code, count(*) {reported} GROUP BY code"
    ):
        counts[code] = counts.get(code, 0) + int(count)
    ambiguous = conn.execute(f"SELECT count(*) {_NOTE_LINKS} WHERE {_AMBIGUOUS}").fetchone()[0]
    if ambiguous:
        counts[AMBIGUOUS_CODE] = counts.get(AMBIGUOUS_CODE, 0) + int(ambiguous)
    # By the links in comments (the partial index links_in_comment: `+` keeps the planner off
    # links_unresolved, every broken link), not by every stored
    # document (reading them all cost 4 ms at 10k notes): a broken link is a link with a name
    # key from a reported note (store.findings), a broken anchor has its row.
    counts["in-comment"] = int(
        conn.execute(
            """
            SELECT (SELECT count(*) FROM links l WHERE l.in_comment = 1
                      AND +l.name_key IS NOT NULL AND NOT EXISTS (
                          SELECT 1 FROM notes x WHERE x.file_id = l.source_id AND x.excluded = 1))
                 + (SELECT count(*) FROM links l CROSS JOIN broken_anchors b
                      ON b.source_id = l.source_id AND b.seq = l.seq WHERE l.in_comment = 1)
            """
        ).fetchone()[0]
    )
    return counts
