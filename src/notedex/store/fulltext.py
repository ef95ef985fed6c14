"""Full-text body search and export rows. Stdlib only: the query path imports this module.

``body_fts`` indexes ``vault.text.segment(body)`` per note (rowid = files.id); its text is kept
compressed for the writer alone, so nothing here reads it. Every FTS5
expression reaching this module is built by ``query.search`` from quoted strings; nothing here
interprets user syntax.
"""

from __future__ import annotations

from notedex.store.connect import sqlite3  # the `_sqlite3` C module at run time (store.connect)
from notedex.store.schema import NOTE_TITLE, TOKENIZER

TYPE_CHECKING = False  # no `typing` import on the query path (a hot-path module); mypy honours it
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from notedex.store.filters import NoteFilter

    Row = sqlite3.Row


def _ids(values: Sequence[int]) -> str:
    return "[" + ",".join(str(int(v)) for v in values) + "]"


# -- body search -------------------------------------------------------------------------------


def body_match_count(
    conn: sqlite3.Connection, expression: str, nf: NoteFilter | None = None
) -> int:
    """How many reportable notes (not Obsidian-excluded, kept by ``nf``) match the expression.

    Every match, less the excluded notes that match: FTS5 counts its matches without visiting
    them, and the excluded notes are few (a partial index), so no join per hit (15 ms of a
    30k-hit count at 100k notes, against under 2 ms).
    """
    if nf is not None and nf.active:
        params: list[Any] = [expression]
        kept = _kept(conn, nf, params, "body_fts.rowid")
        sql = f"SELECT count(*) FROM body_fts WHERE body_fts MATCH ? AND {kept}"
        return int(conn.execute(sql, params).fetchone()[0])
    row = conn.execute(
        """
        SELECT (SELECT count(*) FROM body_fts WHERE body_fts MATCH ?)
             - (SELECT count(*) FROM body_fts WHERE body_fts MATCH ?
                AND rowid IN (SELECT file_id FROM notes WHERE excluded = 1))
        """,
        (expression, expression),
    ).fetchone()
    return int(row[0])


# bm25 of every match, in FTS5 alone: no join per match (the joins cost as much as bm25 itself at
# 100k notes) and no test per match (the excluded notes are left out among the rows fetched).
_RANKED = """
    SELECT rowid, bm25(body_fts) AS score FROM body_fts WHERE body_fts MATCH ?
    ORDER BY score LIMIT ?
"""

# Everything, joined per match: the reference order, and the way when a tie at the cut is wider
# than MAX_FETCH.
_RANKED_JOINED = f"""
    SELECT bm25(body_fts) AS bm25_score, f.path, f.disk_rel, {NOTE_TITLE}
    FROM body_fts b JOIN notes n ON n.file_id = b.rowid JOIN files f ON f.id = b.rowid
    WHERE body_fts MATCH ? AND n.excluded = 0
    ORDER BY bm25_score, f.path
    LIMIT ? OFFSET ?
"""

# The rows fetched that are reportable notes, with their paths and titles.
_PAGE_ROWS = f"""
    SELECT f.id, f.path, f.disk_rel, {NOTE_TITLE}
    FROM files f JOIN notes n ON n.file_id = f.id
    WHERE f.id IN (SELECT value FROM json_each(?)) AND n.excluded = 0
"""

TIE_SLACK = 16
"""Matches fetched past the page, so that notes tied with the page's last score are in hand."""
MAX_FETCH = 1 << 16
"""Past this many matches fetched, a tie at the cut is left to one sort of the whole match."""


def _kept(
    conn: sqlite3.Connection, nf: NoteFilter, params: list[Any], column: str = "b.rowid"
) -> str:
    from notedex.store.filters import notes_kept

    return notes_kept(conn, column, nf, params)


def body_matches(
    conn: sqlite3.Connection,
    expression: str,
    *,
    limit: int,
    offset: int = 0,
    nf: NoteFilter | None = None,
) -> list[tuple[float, str, str | None, str]]:
    """One page of matching notes, best bm25 first (ties by path, so pages are stable):
    ``(bm25, path, disk_rel, title)`` as plain tuples (no Row per hit).

    Every match is scored (a bound on the matches ranked would choose the top by something
    other than relevance: docs/cli.md "search"), but in FTS5 alone: the best ``offset + limit``
    plus some slack and the number of excluded notes, by score, and only those are joined to
    their paths and titles. The page is exactly the page of the full order (score, then path):
    when the page's last reportable row scores better than the last row fetched, every note
    scoring as well is in hand; otherwise the fetch is widened until it is (ARCHITECTURE "The
    body index").
    """
    if limit <= 0:
        return []
    cursor = conn.cursor()
    cursor.row_factory = None
    if nf is not None and nf.active:  # SQLite ranks the notes the filter keeps, joined
        params: list[Any] = [expression]
        kept_sql = _kept(conn, nf, params)
        sql = _RANKED_JOINED.replace("n.excluded = 0", "n.excluded = 0 AND " + kept_sql)
        return cursor.execute(sql, [*params, limit, offset]).fetchall()
    want = offset + limit
    excluded = cursor.execute("SELECT count(*) FROM notes WHERE excluded = 1").fetchone()[0]
    fetch = want + TIE_SLACK + excluded
    while fetch <= MAX_FETCH:
        top = cursor.execute(_RANKED, (expression, fetch)).fetchall()
        found = cursor.execute(_PAGE_ROWS, (_ids([rowid for rowid, _ in top]),)).fetchall()
        shown = {row[0]: row for row in found}
        kept = [(score, shown[rowid]) for rowid, score in top if rowid in shown]
        if len(top) < fetch:  # every match is in hand
            break
        if len(kept) >= want and kept[want - 1][0] < top[-1][1]:
            cut = kept[want - 1][0]
            kept = [row for row in kept if row[0] <= cut]
            break
        fetch *= 4
    else:  # a tie that large, a deep page or many excluded notes: SQLite sorts the whole match
        return cursor.execute(_RANKED_JOINED, (expression, limit, offset)).fetchall()
    ranked = sorted((score, path, disk_rel, title) for score, (_, path, disk_rel, title) in kept)
    return ranked[offset:want]


def index_term(token: str) -> str | None:
    """The one term the body index holds for ``token`` (case folded, diacritics removed,
    porter-stemmed: what ``body_fts`` matches it against); None when it is not one term."""
    mem = sqlite3.connect(":memory:")
    try:
        mem.execute(f"CREATE VIRTUAL TABLE one USING fts5(body, tokenize = '{TOKENIZER}')")
        mem.execute("INSERT INTO one(body) VALUES (?)", (token,))
        mem.execute("CREATE VIRTUAL TABLE terms USING fts5vocab(one, 'instance')")
        found = mem.execute("SELECT term FROM terms").fetchall()
    finally:
        mem.close()
    return str(found[0][0]) if len(found) == 1 else None


def first_offsets(conn: sqlite3.Connection, term: str) -> dict[str, tuple[int, int, int]]:
    """For every note whose indexed body holds ``term``: its path -> (the content key it was
    indexed with, the token offset of the term's first instance in ``segment(body)``, the
    file's size then: a read of that many bytes and one more is the whole file while it is
    that content, ``VaultReader.read_sized``). Read
    from the index's position lists (an ``fts5vocab`` table of the connection's own, in TEMP),
    no body read: where a search hit's first match is, when the file is still that content."""
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.body_instances"
        " USING fts5vocab(main, 'body_fts', 'instance')"
    )
    cursor = conn.cursor()
    cursor.row_factory = None
    rows = cursor.execute(
        """
        SELECT f.path, n.content_hash, m.first, f.size
        FROM (SELECT doc, min(offset) AS first FROM temp.body_instances WHERE term = ?
              GROUP BY doc) m
        CROSS JOIN files f ON f.id = m.doc CROSS JOIN notes n ON n.file_id = m.doc
        """,
        (term,),
    )
    return {path: (key, first, size) for path, key, first, size in rows}


def body_match_paths(
    conn: sqlite3.Connection, expression: str, *, limit: int, nf: NoteFilter | None = None
) -> list[str]:
    """The vault paths of up to ``limit`` matching notes (kept by ``nf``) in path order, without
    bm25 (which reads every hit's column sizes): ``search --paths --sort path`` (issue 32)."""
    cursor = conn.cursor()
    cursor.row_factory = None
    params: list[Any] = [expression]
    kept = f" AND {_kept(conn, nf, params)}" if nf is not None and nf.active else ""
    rows = cursor.execute(
        f"""
        SELECT f.path
        FROM body_fts b JOIN notes n ON n.file_id = b.rowid JOIN files f ON f.id = b.rowid
        WHERE body_fts MATCH ? AND n.excluded = 0{kept}
        ORDER BY f.path
        LIMIT ?
        """,
        (*params, limit),
    ).fetchall()
    return [row[0] for row in rows]


def highlight_texts(
    expression: str, shown: str, texts: dict[int, str], marks: tuple[str, str]
) -> dict[int, str]:
    """Match (already segmented) texts as they are on disk now, in one private in-memory table.

    For each text that matches ``expression``: the text with ``marks`` around each token that
    ``shown`` matches. The positions of search hits come from here, never from the stored
    index, which may be older than the file and holds no text (ARCHITECTURE "The index").
    """
    if not texts:
        return {}
    mem = sqlite3.connect(":memory:")
    try:
        mem.execute(f"CREATE VIRTUAL TABLE one USING fts5(body, tokenize = '{TOKENIZER}')")
        mem.executemany("INSERT INTO one(rowid, body) VALUES (?, ?)", texts.items())
        sql = "SELECT rowid, highlight(one, 0, ?, ?) FROM one WHERE one MATCH ?"
        args: tuple[str, ...] = (marks[0], marks[1], shown)
        if shown != expression:
            sql += " AND rowid IN (SELECT rowid FROM one WHERE one MATCH ?)"
            args += (expression,)
        rows = mem.execute(sql, args).fetchall()
    finally:
        mem.close()
    return {int(r[0]): str(r[1]) for r in rows}


def token_characters(chars: str) -> dict[str, bool]:
    """Whether the body index's tokenizer keeps each of ``chars`` inside a token (True) or
    splits at it (False), asked of FTS5 itself in a private in-memory table: ``a``, the
    character, ``b`` is one token or two (issue 35: a symbol newer than Unicode 3.2, an
    emoji, is either, by the tables of the SQLite that reads the index)."""
    if not chars:
        return {}
    mem = sqlite3.connect(":memory:")
    try:
        mem.execute(f"CREATE VIRTUAL TABLE one USING fts5(body, tokenize = '{TOKENIZER}')")
        mem.execute("CREATE VIRTUAL TABLE terms USING fts5vocab(one, 'instance')")
        mem.executemany(
            "INSERT INTO one(rowid, body) VALUES (?, ?)",
            [(i + 1, f"a{ch}b") for i, ch in enumerate(chars)],
        )
        counts = dict(mem.execute("SELECT doc, count(*) FROM terms GROUP BY doc").fetchall())
    finally:
        mem.close()
    return {ch: counts.get(i + 1) == 1 for i, ch in enumerate(chars)}


def body_index_empty(conn: sqlite3.Connection) -> bool:
    """No row in the body index (body indexing switched off). Not a count: that reads every
    page of ``body_store`` (40 ms at 100k notes, for a search that finds nothing)."""
    return conn.execute("SELECT 1 FROM body_store LIMIT 1").fetchone() is None


# -- export -----------------------------------------------------------------------------------


def export_notes(
    conn: sqlite3.Connection,
    *,
    modified_after_ns: int | None = None,
    nf: NoteFilter | None = None,
) -> sqlite3.Cursor:
    """Reportable notes for an export, by path, as a cursor read row by row; optionally only
    those modified after a time, and only those an active note filter ``nf`` keeps."""
    where = "n.excluded = 0"
    params: list[Any] = []
    if modified_after_ns is not None:
        where += " AND f.mtime_ns > ?"
        params.append(modified_after_ns)
    if nf is not None and nf.active:  # issue 32: the kept notes' rows only, not every note's
        from notedex.store.filters import note_conditions

        where = " AND ".join([where, *note_conditions(conn, nf, params)])
    return conn.execute(
        f"""
        SELECT f.id AS file_id, f.path AS path, f.disk_rel AS disk_rel, f.mtime_ns AS mtime_ns,
               n.stem AS stem, n.properties AS properties
        FROM notes n JOIN files f ON f.id = n.file_id
        WHERE {where}
        ORDER BY f.path
        """,
        params,
    )


def link_targets_in_path_order(
    conn: sqlite3.Connection, nf: NoteFilter | None = None
) -> sqlite3.Cursor:
    """Each file's references as (source path, target path or NULL, linkpath) rows, by source
    path, then in document order: a stream to merge with ``export_notes`` (issue 35); with an
    active note filter ``nf``, only the references of the notes it keeps (issue 32).

    Self-links (``[[#Heading]]`` or a link that lands on its own note) are left out. The files
    lead (CROSS JOIN), by their path index: SQLite sorts one file's links at a time, never
    every link of the vault.
    """
    cursor = conn.cursor()
    cursor.row_factory = None
    kept = ""
    params: list[Any] = []
    if nf is not None and nf.active:
        from notedex.store.filters import note_conditions

        conditions = note_conditions(conn, nf, params)
        kept = " AND ".join(["", "n.excluded = 0", *conditions])
    notes = " CROSS JOIN notes n ON n.file_id = f.id" if kept else ""
    return cursor.execute(
        f"""
        SELECT f.path, t.path, l.linkpath
        FROM files f{notes} CROSS JOIN links l ON l.source_id = f.id
        LEFT JOIN files t ON t.id = l.target_id
        WHERE l.linkpath <> '' AND (l.target_id IS NULL OR l.target_id <> l.source_id){kept}
        ORDER BY f.path, l.line, l.col, l.seq
        """,
        params,
    )
