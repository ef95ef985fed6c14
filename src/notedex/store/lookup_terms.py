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


_ASKED: "dict[int, dict[tuple[str, tuple[Any, ...]], Any]]" = {}
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
    block = averages_record(conn)
    try:
        total: int | None = _varints(block)[0] if block is not None else None
    except (ValueError, IndexError):  # cut short, empty
        total = None
    if total is None:
        total = int(conn.execute("SELECT count(*) FROM notes").fetchone()[0])
    excluded = conn.execute("SELECT count(*) FROM notes WHERE excluded = 1").fetchone()[0]
    return total - int(excluded)


def averages_record(conn: "sqlite3.Connection") -> bytes | None:
    """note_fts's averages record (``note_fts_data``, id 1: its rows, then each column's
    tokens, as varints), read once a lookup (``asking``: the count of notes and the count read
    back from the ranks both read it)."""
    asked = _ASKED.get(id(conn))
    if asked is not None and ("averages", ()) in asked:
        return asked["averages", ()]
    row = conn.execute("SELECT block FROM note_fts_data WHERE id = 1").fetchone()
    block = row[0] if row is not None and isinstance(row[0], bytes) else None
    if asked is not None:
        asked["averages", ()] = block
    return block


def _varints(data: bytes) -> list[int]:
    """Every SQLite varint of ``data`` in order (FTS5 writes its counts and sizes so):
    big-endian groups of seven bits while the high bit is set, the ninth byte whole; a
    ValueError if one is cut short."""
    out: list[int] = []
    at = 0
    while at < len(data):
        value = 0
        for i in range(9):
            if at + i >= len(data):
                raise ValueError("a varint cut short")
            byte = data[at + i]
            if i == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        out.append(value)
        at += i + 1
    return out


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


# The count of a term's name hits read back from the ranks FTS5's bm25() gave some of them
# (issue 30's speed budget: the keyword lookup at 100k notes). bm25() counts the rows its phrase
# matches, over the whole table, before it scores the first row (its IDF); stage 1 counted the
# same rows again for the answer's total (12,658 for `python` at 100k notes: 5M instructions).
# A row's score is FTS5's documented formula (fts5_aux.c):
#
#     idf   = log((N - hits + 0.5) / (hits + 0.5)), 1e-6 when not above 0
#     score = -(0.0 + idf * (f * (k1 + 1)) / (f + k1 * (1 - b + b * D / avgdl)))
#
# with k1 = 1.2, b = 0.75, f the phrase's weighted occurrences in the row (weights of 1: its
# occurrences), D the row's tokens (the *_docsize record), N and avgdl the table's rows and
# tokens a row (the *_data averages record, id 1). Given a score and D, each whole f gives one
# count; the count is taken only when that formula, evaluated as FTS5 evaluates it (the same
# IEEE operations in the same order; the log is SQLite's ln(), the C library's log() that FTS5
# calls, so no `math` import), gives every row's score back bit for bit, one count alone
# fitting, and the IDF not near its floor. Anything else is None: the caller counts.

NOTE_WEIGHTS = (10, 6, 4)
"""Lookup's BM25 weights of note_fts's columns: title, tags, aliases (ARCHITECTURE "The
ranking model")."""

BM25_K1 = 1.2
BM25_B = 0.75


def bm25_score(idf: float, f: int, size: int, average: float) -> float:
    """FTS5's ``bm25()`` of one phrase with weights of 1, given its IDF: ``f`` occurrences in a
    row of ``size`` tokens, ``average`` tokens a row (the same operations in the same order)."""
    k1, b = BM25_K1, BM25_B
    total = 0.0
    total += idf * ((f * (k1 + 1.0)) / (f + k1 * (1 - b + b * float(size) / average)))
    return -1.0 * total


def hits_from_ranks(
    conn: "sqlite3.Connection",
    averages: bytes,
    ranked: "Sequence[tuple[float, bytes]]",
    occurrences: "Sequence[int]" = (),
) -> tuple[int, float] | None:
    """The rows of an FTS5 table of lookup's that one phrase matches, and the phrase's IDF
    (SQLite's own float), from ``bm25(table, 1.0, ...)`` of some of them (``ranked``: the
    score and the row's ``*_docsize`` record) and the table's averages record; None when that
    cannot be told exactly, or the table holds fewer than ``READ_BACK_ROWS`` rows.
    ``occurrences``, when given, is each ranked row's count of the phrase (its ``f``): only
    that count is tried for the row."""
    try:
        rows, average = table_averages(averages)
        lengths = [(value, sum(_varints(sizes))) for value, sizes in ranked]
    except (ValueError, TypeError, IndexError):
        return None
    if rows < READ_BACK_ROWS or not lengths or not all(value < 0.0 for value, _ in lengths):
        return None
    tried = [
        [occurrences[at]] if at < len(occurrences) else range(1, size + 1)
        for at, (_, size) in enumerate(lengths)
    ]
    # the counts each row allows, one a whole number of occurrences (its IDF is -score over
    # the rest of the formula, and the count follows from the IDF) give or take one
    allowed: set[int] | None = None
    for (value, size), fs in zip(lengths, tried, strict=True):
        counts: set[int] = set()
        for f in fs:
            idf = -value / bm25_score(-1.0, f, size, average)
            if 1e-3 < idf < 700.0:
                near = round((rows + 1) / (_E**idf + 1) - 0.5)
                counts.update(h for h in (near - 1, near, near + 1) if 0 < h < rows)
        allowed = counts if allowed is None else allowed & counts
    if not allowed:
        return None
    ordered = sorted(allowed)
    ratios = [(float(rows - h) + 0.5) / (h + 0.5) for h in ordered]
    try:  # SQLite's ln() is the C library's log(), the one FTS5 calls (no `math` import)
        logs = conn.execute("SELECT " + ", ".join("ln(?)" for _ in ratios), ratios).fetchone()
    except conn.OperationalError:  # an SQLite built without its math functions: count
        return None
    found = [
        (hits, idf)
        for hits, idf in zip(ordered, logs, strict=True)
        if idf is not None
        and idf > 1e-3  # never at the IDF's floor, where counts above half the rows tie
        and all(
            any(bm25_score(idf, f, n, average) == v for f in fs)
            for (v, n), fs in zip(lengths, tried, strict=True)
        )
    ]
    return found[0] if len(found) == 1 else None


def table_averages(averages: bytes) -> tuple[int, float]:
    """An FTS5 table's rows and tokens a row (``avgdl``: its total tokens over every column
    ÷ its rows, as FTS5's bm25() works it out) from its averages record; a ValueError or an
    IndexError if the record is cut short."""
    record = _varints(averages)
    return record[0], float(sum(record[1:])) / float(record[0])


def read_back_first(
    conn: "sqlite3.Connection", phrase: str, exact_ids: str, averages: bytes
) -> "tuple[int, float, int, float] | None":
    """A term's count of name hits and its IDF, read back (``hits_from_ranks``) from the
    ``bm25()`` of the first of ``exact_ids`` (the notes it names exactly) it hits: one pass of bm25() over the doclist, which
    every ranking of the exact names pays. Returns (the count, the IDF, that name's rowid and
    score); None when not told exactly.

    The name's count of hits ``f`` comes from the same row's bm25() with every weight doubled
    (which reuses what the first loaded): the ratio of the two scores is ``2(f + K) / (2f +
    K)``, with ``K = k1·(1 - b + b·D/avgdl)`` and no IDF in it, so ``f`` follows, and only
    that count is tried."""
    row = conn.execute(
        "SELECT rowid, bm25(note_fts, 1.0, 1.0, 1.0), bm25(note_fts, 2.0, 2.0, 2.0), "
        "(SELECT sz FROM note_fts_docsize WHERE id = note_fts.rowid) FROM note_fts "
        "WHERE note_fts MATCH ? AND rowid IN (SELECT value FROM json_each(?)) LIMIT 1",
        [phrase, exact_ids],
    ).fetchone()
    if row is None or not isinstance(row[1], float) or not isinstance(row[2], float):
        return None
    try:
        size = sum(_varints(row[3]))
        average = table_averages(averages)[1]
    except (ValueError, TypeError, IndexError):
        return None
    if not row[1] < 0.0 or not row[2] / row[1] > 1.0:  # at the IDF's floor, or no hit
        return None
    ratio = row[2] / row[1]
    spread = BM25_K1 * (1 - BM25_B + BM25_B * float(size) / average)
    hits_in_row = round(spread * (2 - ratio) / (2 * (ratio - 1)))
    read = hits_from_ranks(conn, averages, [(row[1], row[3])], [max(hits_in_row, 1)])
    return None if read is None else (read[0], read[1], row[0], row[1])


READ_BACK_ROWS = 30_000
"""Below this many notes a term's count costs less than reading it back (one more statement:
about 0.15M instructions in a fresh process; `python` in 1,265 names at 10k notes is counted
in about as much)."""

_E = 2.718281828459045
"""e, for the estimate only (``**`` is the C library's pow(): no `math` import); the count is
then checked with SQLite's ln()."""


def ids_of(exact_ids: str) -> set[int]:
    """The ids of ``store.read._json_ints``'s JSON array of integers."""
    return {int(part) for part in exact_ids.strip("[]").split(",") if part.strip()}
