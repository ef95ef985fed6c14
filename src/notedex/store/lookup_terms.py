"""Lookup's SQL probes: where a term occurs (names, link texts, inside titles, bodies), how
many names hold it, and which notes lookup may show (ARCHITECTURE "Two-stage lookup"). Read
side and stdlib only; split out of ``store.lookup`` by stage.

note_fts's columns are exactly a note's name fields (title, tags, aliases), so a match of
note_fts with no column filter is a match of every name: lookup writes none where it means all
three (issue 30's speed budget). A filter naming every column matches the same rows, yet FTS5
tests each hit's position list against it, twice the CPU of a count (12,658 hits at 100k
notes: 0.81 to 0.38 ms) and of ``bm25()``'s IDF pass. ``tests/unit/query/test_lookup_budget.py``
checks the table's columns.
"""

from notedex.store.read import _json_ints, tag_filter, type_filter

TYPE_CHECKING = False  # no `typing` import on the query path; mypy honours the name
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Sequence
    from typing import Any

    from notedex.store.filters import NoteFilter

    Row = sqlite3.Row


_ASKED: "dict[int, dict[tuple[str, tuple[Any, ...]], bool]]" = {}
"""Per connection, while a lookup runs (``asking``): the answers of the yes-or-no probes below,
by statement and parameters. The term rules ask the same question more than once (whether
"stdio" is in a name: the CJK refinement, the near misses and the absent-subject rule each
ask; the body stage asks the bodies again): a statement each time, about 0.25M instructions
in a fresh process (issue 30's speed budget: the body stage at 100k notes asks 14 twice).
Within one read transaction the answer cannot change."""


class asking:
    """``with asking(conn):``: the probes' answers are remembered until the block ends."""

    __slots__ = ("key",)

    def __init__(self, conn: "sqlite3.Connection") -> None:
        self.key = id(conn)

    def __enter__(self) -> None:
        _ASKED[self.key] = {}

    def __exit__(self, *exc: object) -> None:
        _ASKED.pop(self.key, None)


def _any_row(conn: "sqlite3.Connection", sql: str, *params: "Any") -> bool:
    """Whether ``sql`` gives a row; remembered while ``asking``."""
    asked = _ASKED.get(id(conn))
    if asked is not None and (sql, params) in asked:
        return asked[sql, params]
    found = conn.execute(sql, params).fetchone() is not None
    if asked is not None:
        asked[sql, params] = found
    return found


def occurs(conn: "sqlite3.Connection", expression: str) -> bool:
    """Whether any note's title, tags, aliases, anchors or unresolved keys match."""
    return any(
        _any_row(conn, f"SELECT 1 FROM {table} WHERE {table} MATCH ? LIMIT 1", expression)
        for table in ("note_fts", "link_fts")
    )


def _visible(
    conn: "sqlite3.Connection", column: str, nf: "NoteFilter | None"
) -> "tuple[str, list[Any]]":
    """SQL (and its parameters) that keeps the notes of ``column`` that lookup may show: not
    excluded (SEMANTICS 1), and kept by the note filter ``nf`` when given: its type per
    candidate, its tags by index, the rest of it (folders, properties, dates) as one set."""
    params: list[Any] = []
    parts = [_not_excluded(conn, column)]
    if nf is None or not nf.active:
        return parts[0], params
    if nf.note_type:
        # per candidate, not a scan of every note through the Python fold
        typed = type_filter(conn, nf.note_type, params)
        parts.append(f"(SELECT {typed} FROM notes n WHERE n.file_id = {column})")
    for tag in nf.tags:
        parts.append("+" + tag_filter(column, tag, params))
    from notedex.store.filters import note_conditions  # only a filtered lookup loads it

    rest: list[Any] = []
    conditions = note_conditions(conn, nf, rest, tags_and_type=False)
    if conditions:
        parts.append(
            f"+{column} IN (SELECT n.file_id FROM notes n JOIN files f ON f.id = n.file_id "
            f"WHERE {' AND '.join(conditions)})"
        )
        params += rest
    return " AND ".join(parts), params


def _not_excluded(conn: "sqlite3.Connection", column: str) -> str:
    """SQL that keeps the notes of ``column`` not in Obsidian's "Excluded files" (SEMANTICS 1):
    ``1`` when no note is excluded (one seek in the partial index ``notes_excluded``), since the
    ``NOT IN`` test costs as much as the FTS5 match it filters (a count of 12,579 hits at 100k
    notes: 0.65 ms without it, 1.3 ms with it)."""
    if conn.execute("SELECT 1 FROM notes WHERE excluded = 1 LIMIT 1").fetchone() is None:
        return "1"
    return f"+{column} NOT IN (SELECT file_id FROM notes WHERE excluded = 1)"


def title_substring_hits(conn: "sqlite3.Connection", needle: str, limit: int = 200) -> "list[Row]":
    """Loose title match for stage 2: the term anywhere in a stem or title (3+ characters).

    An indexed trigram match, not a scan: its cost does not grow with the vault.
    """
    if len(needle) < 3:
        return []
    return conn.execute(_TITLE_GRAMS, ('"' + needle.replace('"', '""') + '"', limit)).fetchall()


_TITLE_GRAMS = """
    SELECT g.rowid AS file_id FROM title_grams g JOIN notes n ON n.file_id = g.rowid
    WHERE title_grams MATCH ? AND n.excluded = 0 LIMIT ?
    """


def in_titles(conn: "sqlite3.Connection", needle: str) -> bool:
    """Whether ``title_substring_hits`` finds any note: remembered while ``asking``."""
    return len(needle) >= 3 and _any_row(
        conn, _TITLE_GRAMS, '"' + needle.replace('"', '""') + '"', 1
    )


def mentioned_in_bodies(conn: "sqlite3.Connection", expression: str) -> bool:
    """Whether any note's body matches: the last place a term may occur before lookup says
    no note mentions it (ARCHITECTURE "Two-stage lookup", honest empty answers)."""
    return _any_row(conn, "SELECT 1 FROM body_fts WHERE body_fts MATCH ? LIMIT 1", expression)


def body_frequency(conn: "sqlite3.Connection", expression: str, cap: int) -> int:
    """How many notes' bodies match, counted up to ``cap`` (a bounded count: whether a word is
    generic among the bodies needs no more)."""
    sql = "SELECT count(*) FROM (SELECT 1 FROM body_fts WHERE body_fts MATCH ? LIMIT ?)"
    return int(conn.execute(sql, (expression, cap)).fetchone()[0])


def name_frequency(conn: "sqlite3.Connection", expression: str) -> int:
    """How many notes hold a term in a name (title, tags, aliases): a plain count, no BM25."""
    return int(
        conn.execute(
            "SELECT count(*) FROM note_fts WHERE note_fts MATCH ?",
            (expression,),
        ).fetchone()[0]
    )


def name_frequency_capped(conn: "sqlite3.Connection", expression: str, cap: int) -> int:
    """How many notes hold a term in a name, counted up to ``cap``: whether a word is generic
    costs the floor's rows, never every name holding a common word."""
    return int(
        conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM note_fts WHERE note_fts MATCH ? LIMIT ?)",
            (expression, cap),
        ).fetchone()[0]
    )


def names_reach(conn: "sqlite3.Connection", expression: str, floor: float) -> bool:
    """Whether ``floor`` notes or more hold a term in a name: the row at that place of the
    match exists. What ``name_frequency_capped(...) >= floor`` answers, a fifth cheaper in
    instructions (issue 30's speed budget: the generic-word probes of the tie-break, 25 of them
    for two words at 100k notes): the rows are skipped by ``OFFSET``, not counted through a
    subquery."""
    place = int(floor) if floor == int(floor) else int(floor) + 1  # the least count >= floor
    if place <= 0:
        return True
    sql = "SELECT 1 FROM note_fts WHERE note_fts MATCH ? LIMIT 1 OFFSET ?"
    return conn.execute(sql, (expression, place - 1)).fetchone() is not None


def note_count(conn: "sqlite3.Connection") -> int:
    """The notes lookup may show: every note less the excluded ones (a partial index).

    Every note is a row of ``note_fts``, and FTS5 keeps their number as the first varint of
    its averages record (``note_fts_data``, id 1): one page read, where ``count(*)`` reads an
    index of every note (2.8 ms at 100k notes, warm; more on a process's first touch). An
    index without that record (no note yet) is counted."""
    row = conn.execute("SELECT block FROM note_fts_data WHERE id = 1").fetchone()
    total = _varint(row[0]) if row is not None and isinstance(row[0], bytes) else None
    if total is None:
        total = int(conn.execute("SELECT count(*) FROM notes").fetchone()[0])
    excluded = conn.execute("SELECT count(*) FROM notes WHERE excluded = 1").fetchone()[0]
    return total - int(excluded)


def _varint(data: bytes) -> int | None:
    """SQLite's varint at the start of ``data`` (FTS5 writes its counts so): big-endian groups
    of seven bits while the high bit is set, the ninth byte whole; None if cut short."""
    value = 0
    for i, byte in enumerate(data[:9]):
        if i == 8:
            return (value << 8) | byte
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return value
    return None


def in_names(conn: "sqlite3.Connection", expression: str) -> bool:
    """Whether any note's title, tags or aliases match: a near miss is tried against names."""
    return _any_row(conn, "SELECT 1 FROM note_fts WHERE note_fts MATCH ? LIMIT 1", expression)


def name_hits(conn: "sqlite3.Connection", expression: str, limit: int) -> list[int]:
    """The first notes whose title, tags or aliases match, unranked."""
    sql = "SELECT rowid FROM note_fts WHERE note_fts MATCH ? LIMIT ?"
    return [row[0] for row in conn.execute(sql, (expression, limit))]


def fields_hit_among(
    conn: "sqlite3.Connection",
    probes: "Sequence[tuple[str, str]]",
    file_ids: "Sequence[int]",
    *,
    scan: "Sequence[bool]" = (),
) -> "list[tuple[int, int]]":
    """``field_hits_among`` for several (expression, column) probes in one statement (issue
    30's speed budget: a statement's own cost in a fresh process, paid once, not per probe):
    the (file id, probe number) pairs that match. Each probe seeks the few ids (a new FTS5
    query per id), or when its ``scan`` is true reads the term's column-restricted doclist
    once and tests each row against them: cheaper when the term hits few notes. No bm25()
    either way."""
    ids = _json_ints(file_ids)
    parts: list[str] = []
    args: list[str] = []
    for number, (expression, column) in enumerate(probes):
        rowid = "+rowid" if number < len(scan) and scan[number] else "rowid"
        parts.append(
            f"SELECT rowid, {number} FROM note_fts WHERE note_fts MATCH ? "
            f"AND {rowid} IN (SELECT value FROM json_each(?))"
        )
        args += [f"{column} : {expression}", ids]
    return [(row[0], row[1]) for row in conn.execute(" UNION ALL ".join(parts), args)]


def exact_names(conn: "sqlite3.Connection", key: str) -> list[tuple[int, int]]:
    """The notes with a name whose ``exact_name_key`` is ``key``: (file_id, alias), alias 0
    when a title (stem, frontmatter title or first H1) has it, else 1 (an alias)."""
    cursor = conn.cursor()
    cursor.row_factory = None
    return cursor.execute(
        "SELECT file_id, min(alias) FROM exact_names WHERE key = ? GROUP BY file_id", (key,)
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
