"""`health`'s lists, named after what they answer: broken links and anchors, ambiguous links,
the declared findings, warnings and errors, as rows or as the JSON documents the report writes
(concatenated by SQLite, or in batches), their counts by code, and the TEMP tables a filtered or
``--paths`` health probes. Stdlib only: `health` is on the query path (`lookup` and `search`
never import this module). What `status` counts of the same rows is ``store.read.counts``.
"""

from notedex.codes import FILE_FINDINGS, LINK_FINDINGS
from notedex.store.read import (
    AMBIGUOUS_LINKS,
    NOTE_LINKS,
    REPORTED_PROBLEMS,
    _json_list,
    problem_code,
)
from notedex.store.schema import (
    BROKEN_ANCHOR_FIELDS,
    BROKEN_ANCHOR_JOIN,
    BROKEN_LINK_DOC,
    LINK_TEXT,
)

PROBLEM_CODE = problem_code()  # health reads problems: built once, at import

TYPE_CHECKING = False  # no `typing` import on the query path; mypy honours the name
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterable

    Row = sqlite3.Row

    from notedex.store.filters import NoteFilter

AMBIGUOUS_CODE = "ambiguous-link"


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
        {NOTE_LINKS} JOIN files f ON f.id = l.source_id JOIN files t ON t.id = l.target_id
        WHERE {AMBIGUOUS_LINKS}
        ORDER BY f.path, l.line, l.col
        """
    ).fetchall()


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
                SELECT p.path AS path, p.message AS message, {PROBLEM_CODE} AS code,
                       0 AS part, p.id AS a, 0 AS b
                {REPORTED_PROBLEMS}
                UNION ALL
                SELECT f.path, 'line ' || l.line || ': ' || {LINK_TEXT} || ' is ambiguous; resolved to '
                       || t.path || ' by Obsidian''s tie-break (same folder first, then shortest path)',
                       '{AMBIGUOUS_CODE}', 1, l.line, l.col
                {NOTE_LINKS} JOIN files f ON f.id = l.source_id JOIN files t ON t.id = l.target_id
                WHERE {AMBIGUOUS_LINKS}
            ) ORDER BY path, part, a, b
            """,
            ("warning",),
        )
    if name == "errors":
        return (
            f"SELECT json_object('path', p.path, 'message', p.message, 'code', {PROBLEM_CODE}) "
            f"AS j {REPORTED_PROBLEMS} "
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
    from notedex.store.filters import fill_kept

    conn.execute("CREATE TEMP TABLE IF NOT EXISTS kept_paths (path TEXT PRIMARY KEY) WITHOUT ROWID")
    fill_kept(conn, nf, "kept_paths", "f.path")


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


def health_row_count(conn: "sqlite3.Connection", name: str) -> int:
    """How many findings the health list ``name`` has (a section's heading comes first),
    counted on what the JSON reads: the writer's stored documents, not the joins of the rows."""
    sql, params = health_json_sql(name)
    return int(conn.execute(f"SELECT count(*) FROM ({sql})", params).fetchone()[0])


def health_code_counts(conn: "sqlite3.Connection") -> dict[str, int]:
    """The warnings and errors by code, and the broken links and anchors inside comments
    (``in-comment``): what health's ``counts`` adds to its lists' lengths (issue 33)."""
    counts: dict[str, int] = {}
    # Both severities in one pass (REPORTED_PROBLEMS without its severity).
    reported = REPORTED_PROBLEMS.replace("p.severity = ? AND ", "")
    for code, count in conn.execute(
        f"SELECT {PROBLEM_CODE} AS code, count(*) {reported} GROUP BY code"
    ):
        counts[code] = counts.get(code, 0) + int(count)
    ambiguous = conn.execute(f"SELECT count(*) {NOTE_LINKS} WHERE {AMBIGUOUS_LINKS}").fetchone()[0]
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
