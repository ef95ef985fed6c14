"""How many notes a term's names hit, read back from the ranks FTS5's ``bm25()`` gave the exact
names (issue 30's speed budget: the keyword lookup at 100k notes).

``bm25()`` counts the rows its phrase matches, over the whole table, before it scores the first
row (its IDF); stage 1 counts the same rows again for the answer's total (12,658 for `python`
at 100k notes: 5M instructions). A row's score is FTS5's documented formula (``fts5_aux.c``)::

    idf   = log((N - hits + 0.5) / (hits + 0.5)), 1e-6 when not above 0 (not read back here)
    score = -(0.0 + idf * (f * (k1 + 1)) / (f + k1 * (1 - b + b * D / avgdl)))

with k1 = 1.2, b = 0.75, ``f`` the term's weighted occurrences in the row (weights of 1: its
occurrences), ``D`` the row's tokens (the ``*_docsize`` record), ``N`` and ``avgdl`` the
table's rows and tokens a row (the ``*_data`` averages record, id 1). Given a score and ``D``,
each whole ``f`` gives one ``hits``; the count is taken only when that formula, evaluated as
FTS5 evaluates it (the same IEEE operations in the same order, the same ``log``: SQLite's
``ln()``), gives every row's score back bit for bit, and one count alone does. Anything else (several phrases, the IDF's floor, a record that
does not read) is None: the caller counts.

Read side and stdlib only, without ``math`` (the query path does not load it:
``tests/unit/query/test_lookup_weights.py``).
"""

TYPE_CHECKING = False  # no `typing` import on the query path; mypy honours the name
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Sequence

K1 = 1.2
B = 0.75


def varints(data: bytes) -> list[int]:
    """Every SQLite varint of ``data`` in order (FTS5's records): big-endian groups of seven
    bits while the high bit is set, the ninth byte whole."""
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


def score(idf: float, f: int, size: int, average: float) -> float:
    """FTS5's ``bm25()`` of one phrase with weights of 1, given its IDF: ``f`` occurrences in a
    row of ``size`` tokens, ``average`` tokens a row (the same operations in the same order)."""
    total = 0.0
    total += idf * ((f * (K1 + 1.0)) / (f + K1 * (1 - B + B * float(size) / average)))
    return -1.0 * total


def hits_from_ranks(
    conn: "sqlite3.Connection", table: str, ranked: "Sequence[tuple[int, float]]"
) -> int | None:
    """The rows of ``table`` (an FTS5 table of lookup's) that the one phrase matches, from
    ``bm25(table, 1.0, ...)`` of some of them (``ranked``: row id, score); None when that
    cannot be told exactly."""
    if not ranked:
        return None
    block = conn.execute(f"SELECT block FROM {table}_data WHERE id = 1").fetchone()
    if block is None or not isinstance(block[0], bytes):
        return None
    ids = "[" + ",".join(str(int(file_id)) for file_id, _ in ranked) + "]"
    sizes = dict(
        conn.execute(
            f"SELECT id, sz FROM {table}_docsize WHERE id IN (SELECT value FROM json_each(?))",
            (ids,),
        ).fetchall()
    )
    try:
        averages = varints(block[0])
        rows, tokens = averages[0], sum(averages[1:])
        lengths = [(value, sum(varints(sizes[file_id]))) for file_id, value in ranked]
    except (ValueError, TypeError, KeyError):
        return None
    if rows <= 0 or not all(value < 0.0 for value, _ in lengths):
        return None
    average = float(tokens) / float(rows)
    # the counts the first row allows, one a whole number of occurrences (its IDF is -score
    # over the rest of the formula, and the count follows from the IDF) give or take one
    value, size = lengths[0]
    counts: set[int] = set()
    for f in range(1, size + 1):
        idf = -value / score(-1.0, f, size, average)
        if 1e-3 < idf < 700.0:
            near = round((rows + 1) / (_E**idf + 1) - 0.5)
            counts.update(h for h in (near - 1, near, near + 1) if 0 < h < rows)
    if not counts:
        return None
    ordered = sorted(counts)
    ratios = [(float(rows - h) + 0.5) / (h + 0.5) for h in ordered]
    try:  # SQLite's ln() is the C library's log(), the one FTS5 calls (no `math` import)
        logs = conn.execute("SELECT " + ", ".join("ln(?)" for _ in ratios), ratios).fetchone()
    except conn.OperationalError:  # an SQLite built without its math functions: count
        return None
    found = [
        hits
        for hits, idf in zip(ordered, logs, strict=True)
        if idf is not None
        and idf > 1e-3  # never at the IDF's floor, where counts above half the rows tie
        and all(any(score(idf, f, n, average) == v for f in range(1, n + 1)) for v, n in lengths)
    ]
    return found[0] if len(found) == 1 else None


_E = 2.718281828459045
"""e, for the estimate only (``**`` is the C library's pow(): no `math` import); the count is
then checked with SQLite's ln()."""
