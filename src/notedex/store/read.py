"""Read-only queries of the notes' rows, named after what they answer: the notes a listing keeps
(with a ``NoteFilter``), their tags and aliases, the reported problems, the index's totals and
the tag pane's counts. Stdlib only: the query path imports this (every command's, lookup's too).

Every function of ``store``'s read side takes a read-only ``sqlite3.Connection``
(``connect_readonly``) whose rows are ``sqlite3.Row``. The other query-side SQL, by job:
``store.health_lists`` (health's lists), ``store.graph_rows`` (`graph`), ``store.one_note``
(the note a command names, and what `show`, `quote` and `mentions` read of it),
``store.relinks`` (what `fix` and `mv` read), ``store.lookup*`` (lookup) and
``store.fulltext`` (search).
"""

from notedex.store.schema_head import NOTE_TITLE

TYPE_CHECKING = False  # no `typing` import on the query path; mypy honours the name
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterable, Sequence
    from typing import Any

    Row = sqlite3.Row

    from notedex.store.filters import NoteFilter

NOTE_COLUMNS = f"""
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
REPORTED_PROBLEMS = """
    FROM problems p
    WHERE p.severity = ? AND p.path NOT IN (
        SELECT f.path FROM notes n JOIN files f ON f.id = n.file_id WHERE n.excluded = 1)
"""
NOTE_LINKS = "FROM links l JOIN notes n ON n.file_id = l.source_id"


def problem_code() -> str:
    """A stored problem's code (``notedex.codes.STORED_KINDS``) as SQL for a row ``p``: its kind,
    but for the two kinds the writer selects by. Built on use: ``notedex.codes`` is no import
    of every query (issue 30's speed budget: lookup never reads a problem)."""
    from notedex.codes import STORED_KINDS

    return (
        "CASE p.kind "
        + " ".join(f"WHEN '{kind}' THEN '{code}'" for kind, code in STORED_KINDS.items())
        + " ELSE p.kind END"
    )


AMBIGUOUS_LINKS = "l.ambiguous = 1 AND n.excluded = 0"


def error_count(conn: "sqlite3.Connection") -> int:
    """The errors the index holds: what `health` lists and `status` counts (``counts``, whose
    one statement uses the same rows), and what `index` reports (issue 34: one error count)."""
    row = conn.execute(f"SELECT count(*) {REPORTED_PROBLEMS}", ("error",)).fetchone()
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
               (SELECT count(*) {REPORTED_PROBLEMS}),
               (SELECT count(*) {REPORTED_PROBLEMS})
               + (SELECT count(*) {NOTE_LINKS} WHERE {AMBIGUOUS_LINKS})
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
    params.append(fold_name(note_type))
    return "nx_fold(n.type) = ?"


def fold_name(text: str | None) -> str | None:
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
    conn.create_function("nx_fold", 1, fold_name, deterministic=True)


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
    sql = f"SELECT {NOTE_COLUMNS} FROM notes n JOIN files f ON f.id = n.file_id"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY " + (order_by(conn, nf, params) if nf is not None else "f.path")
    if limit is not None:
        sql += " LIMIT ?"
        params.append(limit)
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
        SELECT p.path, p.kind, p.message, {problem_code()} AS code {REPORTED_PROBLEMS}
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


def notes_by_ids(conn: "sqlite3.Connection", file_ids: "Sequence[int]") -> "list[Row]":
    return conn.execute(
        f"SELECT {NOTE_COLUMNS} FROM notes n JOIN files f ON f.id = n.file_id "
        "WHERE f.id IN (SELECT value FROM json_each(?))",
        (_json_ints(file_ids),),
    ).fetchall()


def has_unreadable_notes(conn: "sqlite3.Connection") -> bool:
    """Notes that could not be read last time: retried by the writer whatever their etag."""
    return conn.execute("SELECT 1 FROM problems WHERE kind = 'read' LIMIT 1").fetchone() is not None


# -- streamed whole-vault answers (issue 35) --------------------------------------------------
# Cursors in vault-path order, so that `scan` and `graph` write their documents while reading
# rows; what the whole-answer builders kept in dicts is a merge of ordered cursors here, or a
# TEMP table (the connection's own, writable on a read-only connection) probed by key.


def unmapped(conn: "sqlite3.Connection") -> None:
    """Read through SQLite's page cache (bounded) rather than the reader's memory map, whose
    touched pages count in the process's resident memory: a streamed answer reads the whole
    index once, and would otherwise hold as much of it as it read."""
    conn.execute("PRAGMA mmap_size = 0")
