"""Tier 1 of a one-word lookup in a large vault, ranked without scanning the word's doclist
(issue 30's speed budget: the keyword at 100k notes, 10.7M instructions to 5.9M).

``store.lookup`` ranks the exact names (the notes a title or an alias of which equals the
question) with one ``bm25()`` statement over the stretch of the word's doclist between the
first and the last of them, and reads the word's count of name hits back from their ranks.
Here the count and the IDF are read back from one exact name's bm25() (``first_exact``), and
when that costs less (``cheaper_apart``) each exact name is sought for its hits per column,
counted from ``highlight()``'s marks, and ranked by FTS5's formula (``exact_counted``): the
same floats, bit for bit, in the same order (tests/unit/query/test_lookup_bm25.py).

Imported only by the lookups it serves: every other lookup pays nothing for it. Read side and
stdlib only, like ``store.lookup``.
"""

from notedex.store.lookup_terms import (
    BM25_B,
    BM25_K1,
    NOTE_WEIGHTS,
    _varints,
    bm25_score,
    hits_from_ranks,
    ids_of,
    table_averages,
)
from notedex.vault.text import segment_or_empty

TYPE_CHECKING = False  # no `typing` import on the query path; mypy honours the name
if TYPE_CHECKING:
    import sqlite3
    from typing import Any

    RankedRow = sqlite3.Row | dict[str, Any]  # store.lookup's row contract


def tier1(
    conn: "sqlite3.Connection",
    phrase: str,
    exact_ids: str,
    averages: bytes,
    limit: int,
    *,
    seeks: bool,
) -> "tuple[list[RankedRow] | None, int] | None":
    """The exact names of a one-token ``phrase`` (``store.lookup._one_token``) ranked, and the
    word's count of name hits: (the rows, the count); (None, the count) when
    ``store.lookup._ranked_exact`` ranks them for less (``seeks``: it would seek each name,
    with a pass over the doclist each); None when the count cannot be read back exactly."""
    first = first_exact(conn, phrase, exact_ids, averages)
    if first is None:
        return None
    if not cheaper_apart(first[0], exact_ids, _varints(averages)[0], seeks=seeks):
        return None, first[0]
    return exact_counted(conn, phrase, exact_ids, averages, limit, first), first[0]


_HIT = "CAST(X'FF' AS TEXT)"
"""``highlight()``'s mark before each hit: a byte that no UTF-8 text holds, so every one
counted in its output is a hit, whatever a name says."""


def _hits_counted() -> str:
    """The statement of ``exact_counted``: each exact name's rowid, its hits in the title,
    the tags and the aliases, counted from ``highlight()``'s marks, and its docsize record.
    ``highlight()`` reads the names through note_fts's content view, whose ``nx_segment`` must
    be registered."""
    marked = ", ".join(f"highlight(note_fts, {column}, {_HIT}, '')" for column in range(3))
    counted = ", ".join(
        f"length(CAST(h{column} AS BLOB)) - length(CAST(replace(h{column}, {_HIT}, '') AS BLOB))"
        for column in range(3)
    )
    return f"""
        WITH h(id, h0, h1, h2, sz) AS MATERIALIZED (
            SELECT rowid, {marked},
                   (SELECT sz FROM note_fts_docsize WHERE id = note_fts.rowid)
            FROM note_fts WHERE note_fts MATCH ? AND rowid IN (SELECT value FROM json_each(?)))
        SELECT id, {counted}, sz FROM h
        """


def first_exact(
    conn: "sqlite3.Connection", phrase: str, exact_ids: str, averages: bytes
) -> "tuple[int, float, int, float] | None":
    """The term's count of name hits and its IDF, read back (``hits_from_ranks``) from the
    ``bm25()`` of the first exact name it hits: one pass of bm25() over the doclist, which
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


def cheaper_apart(hits: int, exact_ids: str, rows: int, *, seeks: bool) -> bool:
    """Whether ranking the exact names from their counted hits (``exact_counted``: a seek
    and a highlight() each, ``_COUNTED_COST``) costs less than ``_ranked_exact``, now that the
    term's ``hits`` are known: its scan of the doclist's stretch between the first and the last
    exact name (``_SPAN_COST`` a hit, the hits spread evenly over the ``rows``) and its own
    bm25() pass (``_PASS_COST`` a hit), or for a few names a seek each with a pass each. At 100k
    notes `python` (12,658 hits, 8 exact names over 60% of the rowids) is ranked apart, 10.7M
    instructions to 5.9M; a word in 1,000 names is not (its scan is short)."""
    ids = ids_of(exact_ids)
    apart = _COUNTED_COST * (len(ids) - 1)
    if seeks:
        return apart < hits * _PASS_COST * len(ids)
    span = hits * (max(ids) - min(ids)) / max(rows, 1)
    return apart < hits * _PASS_COST + span * _SPAN_COST


_COUNTED_COST = 250_000
"""Instructions a seek and a highlight() of one exact name cost (``exact_counted``, measured
at 100k notes)."""

_SPAN_COST = 920
"""Instructions a hit of the doclist's stretch costs ``_ranked_exact``'s scan (FTS5's next row
and the test of its rowid)."""

_PASS_COST = 280
"""Instructions a hit costs a bm25() pass over the doclist (its IDF)."""


def exact_counted(
    conn: "sqlite3.Connection",
    phrase: str,
    exact_ids: str,
    averages: bytes,
    limit: int,
    first: "tuple[int, float, int, float]",
) -> "list[RankedRow] | None":
    """Tier 1 for one term: ``_ranked_exact``'s rows and order, without its scan of the
    doclist (issue 30's speed budget: the keyword at 100k notes).

    bm25() of a row is FTS5's formula over the row's weighted count of hits ``f``, its tokens
    ``D`` and the term's IDF (``store.lookup_terms.bm25_score``). ``first`` is what
    ``first_exact`` read back: the count, the IDF, and the rowid and score it read them from.
    Each exact name is sought (no bm25(), so no pass over the doclist each) for its hits per
    column and its docsize record, and ranked by the formula; the name ``first`` scored must
    score so again from its counted hits. None when anything cannot be told exactly:
    ``_ranked_exact`` then ranks them."""
    _, idf, scored, score = first
    conn.create_function("nx_segment", 1, segment_or_empty, deterministic=True)
    found = conn.execute(_hits_counted(), [phrase, exact_ids]).fetchall()
    if any(not isinstance(count, int) for row in found for count in row[1:4]):
        return None
    average = table_averages(averages)[1]
    on_title, on_tags, on_aliases = NOTE_WEIGHTS
    rows: list[RankedRow] = []
    for file_id, title, tags, aliases, sizes in found:
        try:
            size = sum(_varints(sizes))
        except (ValueError, TypeError):
            return None
        if file_id == scored and bm25_score(idf, title + tags + aliases, size, average) != score:
            return None  # its hits were not counted as FTS5 counts them
        weighted = on_title * title + on_tags * tags + on_aliases * aliases
        rows.append(
            {
                "file_id": file_id,
                "rank": bm25_score(idf, weighted, size, average),
                "terms": int(title + tags + aliases > 0),
                "title_terms": int(title > 0),
                "tag_terms": int(tags > 0),
                "alias_terms": int(aliases > 0),
                "tier": 1,
            }
        )
    if scored not in {row["file_id"] for row in rows}:
        return None
    rows.sort(key=lambda r: (-r["terms"], -r["title_terms"], r["rank"], r["file_id"]))
    return rows[:limit]
