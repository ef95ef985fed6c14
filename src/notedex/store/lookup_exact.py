"""Tier 1 of a one-word lookup in a large vault, ranked without scanning the word's doclist
(issue 30's speed budget: the keyword at 100k notes).

``store.lookup`` ranks the exact names (the notes a title or an alias of which equals the
question) with one ``bm25()`` statement over the stretch of the word's doclist between the
first and the last of them. For one word, it first reads the word's count of name hits and its
IDF back from one exact name's bm25() (``store.lookup_terms.read_back_first``); when it costs
less (``store.lookup._cheaper_apart``), ``exact_counted`` here seeks each exact name for its
hits per column, counted from ``highlight()``'s marks, and ranks them by FTS5's formula: the
same floats, bit for bit, in the same order (tests/unit/query/test_lookup_bm25.py).

Imported only by the lookups it serves: every other lookup pays nothing for it. Read side and
stdlib only, like ``store.lookup``.
"""

from notedex.store.lookup_terms import (
    NOTE_WEIGHTS,
    _varints,
    bm25_score,
    table_averages,
)
from notedex.vault.text import segment_or_empty

TYPE_CHECKING = False  # no `typing` import on the query path; mypy honours the name
if TYPE_CHECKING:
    import sqlite3
    from typing import Any

    RankedRow = sqlite3.Row | dict[str, Any]  # store.lookup's row contract


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
    ``read_back_first`` read back: the count, the IDF, and the rowid and score it read them from.
    Each exact name is sought (no bm25(), so no pass over the doclist each) for its hits per
    column and its docsize record, and ranked by the formula; the name ``first`` scored must
    score so again from its counted hits. None when anything cannot be told exactly:
    ``_ranked_exact`` then ranks them."""
    _, idf, scored, score = first
    conn.create_function("nx_segment", 1, segment_or_empty, deterministic=True)
    try:
        found = conn.execute(_hits_counted(), [phrase, exact_ids]).fetchall()
    except conn.OperationalError:  # a name nx_segment cannot cut: the old statement ranks
        return None
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
