"""Lookup's SQL for stage 1: the names ranked in tiers over bounded work (ARCHITECTURE
"Two-stage lookup", bounded ranking), and tier 1's exact-name seek.

Read side and stdlib only, like ``store.read`` (the query path imports it). Split out of
``store.read`` (issue 30), then by stage: one module per command's or stage's SQL costs no
query time (the measure is in docs/benchmarks.md). Stage 2's SQL is in ``store.lookup_stage2``;
where a term occurs, how many names hold it, and which notes lookup may show, in
``store.lookup_terms``; one word's exact names ranked from their counted hits, in
``store.lookup_exact`` (imported only when it runs). About 640 lines on purpose: the tiers'
statements, the pools and the exact-name shortcuts (issue 30's speed budget) share one row
contract (``RankedRow``) and are chosen among in one place; a split would be one more import
on the command people call most (0.2M instructions, measured for the count read back from the
ranks).
"""

from notedex.store import lookup_terms
from notedex.store.lookup_terms import (
    NOTE_WEIGHTS,
    _not_excluded,
    _varints,
    _visible,
    averages_record,
    fields_hit_among,
    hits_from_ranks,
    ids_of,
    read_back_first,
)
from notedex.store.read import _json_ints

TYPE_CHECKING = False  # no `typing` import on the query path; mypy honours the name
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Sequence
    from typing import Any

    from notedex.store.filters import NoteFilter

    Row = sqlite3.Row
    RankedRow = Row | dict[str, Any]  # a stage-1 row: SQLite's, or built from two statements

# BM25 weights per column: title, tags, aliases (note_fts).
_NOTE_BM25 = "bm25(note_fts, {:.1f}, {:.1f}, {:.1f})".format(*NOTE_WEIGHTS)
# Tier 2's rank: BM25 over a note's names alone, title and aliases (name_fts), so tags do not
# lengthen the row (ARCHITECTURE "Two-stage lookup").
_NAME_BM25 = "bm25(name_fts, 10.0, 4.0)"


def ranked_field_hits(
    conn: "sqlite3.Connection",
    matches: "Sequence[tuple[int, str]]",
    exact: "Sequence[int]" = (),
    *,
    nf: "NoteFilter | None" = None,
    limit: int = 10,
    weights: "Sequence[int] | None" = None,
    named: "Sequence[int]" = (),
) -> "tuple[int, list[RankedRow]]":
    """Stage 1 of lookup: the ranking tiers, then BM25 within a tier, over bounded work.

    ``matches`` are (term index, FTS5 expression) pairs, each matched once against title,
    tags and aliases; a note is a candidate when a term hits its title, tags or aliases, or
    when it is in ``exact`` (a title or alias equals the question, worked out by the caller);
    with no title or tag hit and no exact name, there is none (stage 2 seeds from aliases).
    Tier 1: ``exact``; tier 2: every term hits the title or an alias; tier 3: the rest. Within
    a tier: the weighted coverage (the sum of ``weights``, one integer a term, of the terms
    hit; equal weights when None: distinct terms hit), terms in the title, then BM25 (whose
    row is title, tags and aliases only). Returns (total candidates, the top ``limit`` rows with ``file_id``, ``tier``,
    ``terms``, ``title_terms``, ``tag_terms``, ``alias_terms`` (terms hitting the title or
    tags, the title, the tags, the aliases) and ``rank``; with two terms or more, also
    ``title_mask``, ``tag_mask`` and ``alias_mask``: bit ``i`` set when term index ``i`` hit
    that field).

    ``total`` is a plain count over the match (no BM25); ``named``, each term's count of names
    when the caller has them (two terms: the total is worked out from them). The page is ranked over the first
    *pool* that fills it (ARCHITECTURE "Two-stage lookup", bounded ranking): each pool is a
    set of candidates, found by FTS5 alone, whose every member sorts before every candidate
    outside it, so its top ``limit`` is the top ``limit`` of all; BM25 runs only on it.
    """
    if not matches:
        return 0, []
    exact_ids = _json_ints(exact)
    expressions = [expression for _, expression in matches]
    weights = list(weights) if weights is not None else [1] * len(matches)
    structure = " OR ".join(f"({{title tags}} : {e})" for e in expressions)
    visible, params = _visible(conn, "note_fts.rowid", nf)
    count = f"SELECT count(*) FROM note_fts WHERE note_fts MATCH ? AND {visible}"
    # whether a title or tag is hit at all: the first match answers, not a count of them all
    some = f"SELECT 1 FROM note_fts WHERE note_fts MATCH ? AND {visible} LIMIT 1"
    if not exact and conn.execute(some, [structure, *params]).fetchone() is None:
        return 0, []
    anywhere = "(" + " OR ".join(expressions) + ")"  # every name column (store.lookup_terms)
    tier1, pooled, known = _tier1_first(conn, expressions, matches, exact_ids, nf, limit, visible)
    if known is not None:  # read back from tier 1's ranks
        hit = known
    elif len(named) == 2 == len(expressions) and visible == "1":
        # two terms, each one's count of names known (``named``, over the same columns and
        # every note): the notes hit by either are both counts less those hit by both, an
        # AND that FTS5 walks along the rarer term's doclist, where the OR reads both whole
        # (issue 30's speed budget: two words at 100k notes)
        both = "(" + " AND ".join(expressions) + ")"
        hit = named[0] + named[1] - conn.execute(count, [both, *params]).fetchone()[0]
    else:
        hit = conn.execute(count, [anywhere, *params]).fetchone()[0]
    rows: list[RankedRow] = []
    if hit + len(exact) > limit:
        for number, (table, pool) in enumerate(_stage1_pools(expressions, weights)):
            # a pool too small to fill the page is skipped on a count (no BM25): its size
            # and the exact names bound the candidates it holds. Counted up to the page (a
            # pool that fills it needs no more rows read: issue 30's speed budget)
            if number or pooled is None:
                pooled = _pooled(conn, table, pool, nf, limit)
            if pooled + len(exact) < limit:
                continue
            titled = number == 0
            rows = _ranked(
                conn,
                matches,
                exact_ids,
                nf,
                limit,
                pool,
                titled=titled,
                weights=weights,
                hits=list(named) if len(named) == len(matches) > 1 else [hit] * len(matches),
                tier1=tier1 if titled else None,
            )
            if len(rows) >= limit:
                break
    if len(rows) < limit:
        rows = _ranked(conn, matches, exact_ids, nf, limit, None, weights=weights)
    extra = _unhit_exact(conn, rows, limit, anywhere, exact_ids, nf, hit)
    return hit + extra, rows


def _pooled(
    conn: "sqlite3.Connection", table: str, pool: str, nf: "NoteFilter | None", limit: int
) -> int:
    """The candidates of a pool (``_stage1_pools``), counted up to the page: a pool that fills
    it needs no more rows read (issue 30's speed budget)."""
    seen, seen_params = _visible(conn, f"{table}.rowid", nf)
    count = f"SELECT count(*) FROM (SELECT 1 FROM {table} WHERE {table} MATCH ? AND {seen} LIMIT ?)"
    return int(conn.execute(count, [pool, *seen_params, limit]).fetchone()[0])


def _tier1_first(
    conn: "sqlite3.Connection",
    expressions: "Sequence[str]",
    matches: "Sequence[tuple[int, str]]",
    exact_ids: str,
    nf: "NoteFilter | None",
    limit: int,
    visible: str,
) -> "tuple[list[RankedRow] | None, int | None, int | None]":
    """One term (one FTS5 phrase), no note hidden, exact names ranked by ``bm25()``, and the
    title pool fills the page: the exact names are ranked first, and the count of the term's
    name hits is read back from their ranks (``store.lookup_terms.hits_from_ranks``), not counted again (12,658
    hits of `python` at 100k notes: 5M instructions). Returns (tier 1's rows, the title pool's
    count, the hits), each None when not known this way."""
    if len(matches) != 1 or visible != "1" or "," not in exact_ids:
        return None, None, None
    phrase = expressions[0]
    if (
        len(phrase) < 2
        or phrase[0] != '"'
        or phrase[-1] != '"'
        or '"' in phrase[1:-1].replace('""', "")
    ):
        return None, None, None
    table, pool = _stage1_pools(expressions, [1])[0]
    pooled = _pooled(conn, table, pool, nf, limit)
    if pooled + exact_ids.count(",") + 1 < limit:  # the title pool is not ranked: nothing saved
        return None, pooled, None
    averages = averages_record(conn)
    try:  # a small vault is counted (``READ_BACK_ROWS``): its tier 1 reads no records
        records = averages is not None and _varints(averages)[0] >= lookup_terms.READ_BACK_ROWS
    except (ValueError, IndexError):
        records = False
    if records and averages is not None and _one_token(phrase):
        first = read_back_first(conn, phrase, exact_ids, averages)
        if first is not None:  # the count, read back from one exact name's rank
            hits = first[0]
            seeks = exact_ids.count(",") < _SEEK_EXACT
            if _cheaper_apart(hits, exact_ids, _varints(averages)[0], seeks=seeks):
                # only here: the module costs every other lookup nothing
                from notedex.store.lookup_exact import exact_counted

                ranked = exact_counted(conn, phrase, exact_ids, averages, limit, first)
                if ranked is not None:
                    return ranked, pooled, hits
            return _ranked_exact(conn, matches, exact_ids, nf, limit), pooled, hits
    rows = _ranked_exact(conn, matches, exact_ids, nf, limit, records=records)
    hit = None
    if records and averages is not None:
        found = hits_from_ranks(conn, averages, [(row["names_rank"], row["sizes"]) for row in rows])
        hit = found[0] if found is not None else None
    return rows, pooled, hit


def _cheaper_apart(hits: int, exact_ids: str, rows: int, *, seeks: bool) -> bool:
    """Whether ranking the exact names from their counted hits (``store.lookup_exact.exact_counted``: a seek
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
"""Instructions a seek and a highlight() of one exact name cost (``store.lookup_exact.exact_counted``, measured
at 100k notes)."""

_SPAN_COST = 920
"""Instructions a hit of the doclist's stretch costs ``_ranked_exact``'s scan (FTS5's next row
and the test of its rowid)."""

_PASS_COST = 280
"""Instructions a hit costs a bm25() pass over the doclist (its IDF)."""


def _one_token(phrase: str) -> bool:
    """Whether an FTS5 phrase is one token as typed: ASCII letters and digits, one token of
    unicode61, so no two of its hits overlap and ``highlight()`` marks each one apart
    (``store.lookup_exact``)."""
    word = phrase[1:-1]
    return word.isascii() and word.isalnum()


def _unhit_exact(
    conn: "sqlite3.Connection",
    rows: "Sequence[RankedRow]",
    limit: int,
    anywhere: str,
    exact_ids: str,
    nf: "NoteFilter | None",
    hits: int,
) -> int:
    """The candidates the count of name hits misses: exact names that no term hits (a name of
    stop and notes-tool words only). They sort first (tier 1), so the page holds them all
    unless it is tier 1 to the end; only then are they counted in SQL: by a seek per exact
    name when they are few beside the ``hits`` (no bm25() here, so a seek does not read the
    doclist again), else by one scan of the doclist (``_SEEK_COUNT``)."""
    if exact_ids == "[]":
        return 0
    if not rows or len(rows) < limit or rows[-1]["tier"] != 1:
        return sum(1 for row in rows if row["tier"] == 1 and not row["terms"])
    visible, params = _visible(conn, "note_fts.rowid", nf)
    seek = (exact_ids.count(",") + 1) * _SEEK_COUNT < hits
    hit = conn.execute(
        "SELECT count(*) FROM note_fts WHERE note_fts MATCH ? "
        f"AND {'rowid' if seek else '+rowid'} IN (SELECT value FROM json_each(?)) AND {visible}",
        [anywhere, exact_ids, *params],
    ).fetchone()[0]
    shown, shown_params = _visible(conn, "j.value", nf)
    every = conn.execute(
        f"SELECT count(*) FROM json_each(?) j WHERE {shown}", [exact_ids, *shown_params]
    ).fetchone()[0]
    return int(every - hit)


_SEEK_COUNT = 100
"""A rowid seek of a count (no bm25()) costs about as much as this many rows of a doclist
scan: 148 notes named "python" among 128,782 hits at 1M notes are counted in 2.6 ms by seeks,
12 ms by a scan (issue 35's lookup at 1M)."""


def _stage1_pools(expressions: "Sequence[str]", weights: "Sequence[int]") -> list[tuple[str, str]]:
    """Candidate pools as (FTS5 table, expression), each a prefix of the stage-1 order (tier,
    weighted coverage, terms in the title); the exact names join every pool. The
    first two involve names only, so they are counted over name_fts, whose doclists lack the
    tag hits.

    1. every term in the title: tier 2 with every term hit and every term in the title, the
       best key below tier 1;
    2. every term in the title or an alias: all of tier 2 (two terms or more);
    3. and every term in a title, tags or aliases: tier 3 with every term hit;
    4. (two terms) and the rarer term anywhere in the names (its weight is above the other's),
       or, of two terms of one weight, a term in the title.
    Past the last pool, everything is ranked.
    """
    every = "(" + " AND ".join(expressions) + ")"
    titled = ("name_fts", f"title : {every}")
    if len(expressions) == 1:
        return [titled]
    named = f"{{title aliases}} : {every}"
    hit = f"({named}) OR {every}"
    pools = [titled, ("name_fts", named), ("note_fts", hit)]
    if len(expressions) == 2:
        if weights[0] != weights[1]:
            rarer = expressions[0] if weights[0] > weights[1] else expressions[1]
            pools.append(("note_fts", f"{hit} OR {rarer}"))
        else:
            pools.append(("note_fts", f"{hit} OR (title : ({expressions[0]} OR {expressions[1]}))"))
    return pools


def _ranked(
    conn: "sqlite3.Connection",
    matches: "Sequence[tuple[int, str]]",
    exact_ids: str,
    nf: "NoteFilter | None",
    limit: int,
    pool: str | None,
    *,
    titled: bool = False,
    weights: "Sequence[int] | None" = None,
    hits: "Sequence[int]" = (),
    tier1: "list[RankedRow] | None" = None,
) -> "list[RankedRow]":
    """The top ``limit`` candidates of ``pool`` (None: of all), in stage-1 order; ``titled``:
    the pool is the first, every term in the title (``_stage1_pools``); ``hits``, per term of
    ``matches``, how many notes it hits at most (how long its doclist is); ``tier1``, the
    exact names already ranked (``_tier1_first``)."""
    if titled and (len(matches) == 1 or exact_ids.count(",") < _SEEK_EXACT):
        # several terms and many exact names: ranking those over note_fts scans each term's
        # whole doclist, as the one statement of the pool does (_ranked_many): that one is cheaper
        return _ranked_titled(conn, matches, exact_ids, nf, limit, hits, tier1)
    if len(matches) == 1 and pool is None and (nf is None or not nf.active):
        return _ranked_one(conn, matches[0][1], exact_ids, limit)
    return _ranked_many(conn, matches, exact_ids, nf, limit, pool, weights)


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
               bm25(note_fts, 1.0, 1.0, 1.0) < 0 AS terms,
               bm25(note_fts, 1.0, 0.0, 0.0) < 0 AS title_terms,
               {_TAGS_ALIASES},
               {tier} AS tier
        FROM note_fts WHERE note_fts MATCH ?2 AND {_not_excluded(conn, "rowid")}
        ORDER BY tier, terms DESC, title_terms DESC, rank, rowid
        LIMIT ?4
        """,
        {"1": exact_ids, "2": expression, "3": expression, "4": limit},
    ).fetchall()


def _ranked_titled(
    conn: "sqlite3.Connection",
    matches: "Sequence[tuple[int, str]]",
    exact_ids: str,
    nf: "NoteFilter | None",
    limit: int,
    hits: "Sequence[int]" = (),
    tier1: "list[RankedRow] | None" = None,
) -> "list[RankedRow]":
    """The pool of notes with every term in the title, and the exact names (``tier1``: already
    ranked).

    The exact names (tier 1) are ranked over note_fts as everywhere; every other pooled note
    has the same key (tier 2, every term hit, every term in the title), so it is ranked by
    name_fts alone: one bm25() per name hit, and note_fts's doclists (with the tag hits) are
    never scanned for them. Which terms hit a tag or an alias of the shown tier-2 notes is
    asked for those few ids only (``fields_hit_among``, one statement).
    """
    rows: list[RankedRow] = []
    if exact_ids != "[]":
        rows += tier1 if tier1 is not None else _ranked_exact(conn, matches, exact_ids, nf, limit)
    if len(rows) >= limit:
        return rows
    visible, params = _visible(conn, "name_fts.rowid", nf)
    every = "(" + " AND ".join(expression for _, expression in matches) + ")"
    titled = (
        "bm25(name_fts, 1.0, 0.0) < 0"  # one term: it hit the title
        if len(matches) == 1
        else "+rowid IN (SELECT rowid FROM name_fts WHERE name_fts MATCH 'title : ' || ?)"
    )
    # the exact names are left out here, not in SQL: a test per pooled row (1,827 notes with
    # "python" in the title at 100k notes: 1.3M instructions) where the page asks for as many
    # more rows as there are exact names, at most, and drops them (the order is total)
    exact = ids_of(exact_ids)
    named = [
        row
        for row in conn.execute(
            f"""
            SELECT rowid AS file_id, {_NAME_BM25} AS rank
            FROM name_fts WHERE name_fts MATCH ? AND {titled} AND {visible}
            ORDER BY rank, rowid LIMIT ?
            """,
            [
                every,
                *([every] if len(matches) > 1 else []),
                *params,
                limit - len(rows) + len(exact),
            ],
        ).fetchall()
        if row[0] not in exact
    ][: limit - len(rows)]
    ids = [row[0] for row in named]
    masks = {file_id: [0, 0] for file_id in ids}  # the terms in a tag, in an alias (bits)
    probes = [
        (index, field, expression, column, hits[at] if at < len(hits) else None)
        for at, (index, expression) in enumerate(matches)
        for field, column in enumerate(("tags", "aliases"))
    ]
    asked = [(expression, column) for _, _, expression, column, _ in probes]
    # a rowid seek costs about as much as _SEEK_ROWS rows of a doclist scan: a term hitting
    # few notes is scanned (a CJK term in 1,661 names at 100k notes: 0.85 to 0.35 ms), one
    # hitting many sought, each term on its own (`python grammar`: grammar scanned)
    scan = [n is not None and n < _SEEK_ROWS * len(ids) for *_, n in probes]
    for file_id, number in fields_hit_among(conn, asked, ids, scan=scan) if ids else ():
        index, field = probes[number][0], probes[number][1]
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


_SEEK_ROWS = 300
"""A rowid seek of a field test (a new FTS5 query per id: 10-40 µs) costs about as many rows
of a scan of the term's doclist (0.05-0.1 µs a row; measured at 100k notes): for the page's 15
ids, a term in fewer than 4,500 notes is scanned."""

_SEEK_EXACT = 4
"""Up to this many exact names are ranked by rowid seeks (FTS5 filters once per id, and bm25()
computes its IDF again each time: about 0.3 ms a term and id at 100k notes); more by one scan
of each term's doclist (1.5-3 ms a term), written ``+rowid``."""


def _rowid_in(exact_ids: str) -> str:
    """The rowid test of ranking the exact names alone: seeks for a few, else one scan."""
    return "rowid IN" if exact_ids.count(",") < _SEEK_EXACT else "+rowid IN"


def _rowid_span(exact_ids: str) -> str:
    """The scan of ``_rowid_in`` narrowed to the exact names' rowids, smallest to largest
    (issue 30's speed budget): FTS5 takes a rowid range as its own constraint and reads only
    that stretch of each doclist (the eight notes named "python" of 12,658 hits at 100k
    notes: 3.0 ms to 2.1 ms in a fresh process). Nothing for seeks: their plan stays. The
    bounds are integers of the ids' JSON, written as literals."""
    if exact_ids.count(",") < _SEEK_EXACT:
        return ""
    ids = ids_of(exact_ids)
    return f" AND rowid BETWEEN {min(ids)} AND {max(ids)}"


def _ranked_exact(
    conn: "sqlite3.Connection",
    matches: "Sequence[tuple[int, str]]",
    exact_ids: str,
    nf: "NoteFilter | None",
    limit: int,
    *,
    records: bool = False,
) -> "list[RankedRow]":
    """The exact names (tier 1) in stage-1 order, over note_fts; with ``records`` (one term),
    each row's ``names_rank`` (its ``bm25()`` with weights of 1) and ``sizes`` (its docsize
    record): what ``hits_from_ranks`` reads."""
    if "," not in exact_ids:  # one exact name: nothing to order it against (``_one_exact``)
        return _one_exact(conn, matches, int(exact_ids.strip("[]")), nf)
    if len(matches) > 1:
        return _ranked_many(conn, matches, exact_ids, nf, limit, "")
    visible, params = _visible(conn, "note_fts.rowid", nf)
    return conn.execute(
        f"""
        SELECT rowid AS file_id, {_NOTE_BM25} AS rank,{_RECORDS if records else ""}
               bm25(note_fts, 1.0, 1.0, 1.0) < 0 AS terms,
               bm25(note_fts, 1.0, 0.0, 0.0) < 0 AS title_terms,
               {_TAGS_ALIASES}, 1 AS tier
        FROM note_fts WHERE note_fts MATCH ? AND {_rowid_in(exact_ids)} (SELECT value FROM json_each(?))
          {_rowid_span(exact_ids)} AND {visible}
        ORDER BY terms DESC, title_terms DESC, rank, rowid LIMIT ?
        """,
        [matches[0][1], exact_ids, *params, limit],
    ).fetchall()


_RECORDS = """
               bm25(note_fts, 1.0, 1.0, 1.0) AS names_rank,
               (SELECT sz FROM note_fts_docsize WHERE id = note_fts.rowid) AS sizes,
"""


def _one_exact(
    conn: "sqlite3.Connection",
    matches: "Sequence[tuple[int, str]]",
    file_id: int,
    nf: "NoteFilter | None",
) -> "list[RankedRow]":
    """The row ``_ranked_exact`` gives for a single exact name, without bm25(): alone in tier 1,
    its rank orders it against nothing (the page's later tiers sort after it whatever it is),
    and bm25() would read each term's whole doclist for its IDF (issue 30's speed budget: the
    two-word lookup at 100k notes). Which terms hit its title, tags and aliases is asked by a
    rowid seek each, in one statement; no term hit: no row, as the match gives none."""
    visible, params = _visible(conn, "note_fts.rowid", nf)
    parts: list[str] = []
    args: list[Any] = []
    for index, expression in matches:
        for field, column in enumerate(("title", "tags", "aliases")):
            parts.append(
                f"SELECT {int(index)}, {field} FROM note_fts "
                f"WHERE note_fts MATCH ? AND rowid = ? AND {visible}"
            )
            args += [f"{column} : ({expression})", file_id, *params]
    masks = [0, 0, 0]  # the terms hitting the title, the tags, the aliases (bit i: term i)
    for index, field in conn.execute(" UNION ALL ".join(parts), args).fetchall():
        masks[field] |= 1 << index
    hit = masks[0] | masks[1] | masks[2]
    if not hit:
        return []
    row: dict[str, Any] = {
        "file_id": file_id,
        "tier": 1,
        "rank": 0.0,
        "terms": hit.bit_count(),
        "title_terms": masks[0].bit_count(),
        "tag_terms": masks[1].bit_count(),
        "alias_terms": masks[2].bit_count(),
    }
    if len(matches) > 1:  # _ranked_many's fields: the masks and the coverage (weights of 1)
        row.update(title_mask=masks[0], tag_mask=masks[1], alias_mask=masks[2])
        row["coverage"] = row["terms"]
    return [row]


def _ranked_many(
    conn: "sqlite3.Connection",
    matches: "Sequence[tuple[int, str]]",
    exact_ids: str,
    nf: "NoteFilter | None",
    limit: int,
    pool: str | None,
    weights: "Sequence[int] | None" = None,
) -> "list[RankedRow]":
    """The general stage-1 statement: per-term hits, summed per note, tiered and ordered.

    ``pool``: only the notes matching this FTS5 expression, and the exact names; "": the exact
    names only; None: every note. ``weights``: one integer a term (the weighted coverage is
    their sum over the terms hit); None: 1 each. Tier 2's rank is the BM25 of every term over
    name_fts (``names``: the one match of all the terms, whose bm25() sums the terms' own).
    """
    weights = list(weights) if weights is not None else [1] * len(matches)
    restrict = ""
    params: list[Any] = []
    if pool is not None:
        restrict = f" AND {'+rowid IN' if pool else _rowid_in(exact_ids)} (SELECT id FROM pool)"
        restrict += "" if pool else _rowid_span(exact_ids)
        params += [pool, exact_ids] if pool else [exact_ids, pool]  # the order `pooled` reads
    every = "(" + " AND ".join(expression for _, expression in matches) + ")"
    params.append(every)
    union = " UNION ALL ".join(
        f"SELECT rowid AS file_id, ? AS term, ? AS weight, {_NOTE_BM25} AS rank, "
        "bm25(note_fts, 1.0, 0.0, 0.0) < 0 AS in_title, "
        "bm25(note_fts, 1.0, 0.0, 1.0) < 0 AS in_name, "
        f"{_TAGS_ALIASES} FROM note_fts WHERE note_fts MATCH ?{restrict}"
        for _ in matches
    )
    for (term, expression), weight in zip(matches, weights, strict=True):
        params += [term, int(weight), expression]
    params += [exact_ids, len(matches), exact_ids]
    visible, visible_params = _visible(conn, "a.file_id", nf)
    params += [*visible_params, limit]
    names = f"SELECT rowid, {_NAME_BM25} FROM name_fts WHERE name_fts MATCH ?{restrict}"
    if pool == "":  # tier 1 alone: no name ranks
        names = "SELECT NULL, NULL WHERE ? IS NULL"
    pooled = ""
    if pool == "":
        pooled = "pool(id) AS MATERIALIZED (SELECT value FROM json_each(?) WHERE ? = ''),"
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
                   count(*) AS terms,
                   sum(weight) AS coverage,
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
               a.title_mask, a.tag_mask, a.alias_mask, a.coverage
        FROM (
            SELECT file_id, terms, coverage, title_terms, tag_terms, alias_terms, rank,
                   title_mask, tag_mask, alias_mask,
                   CASE WHEN file_id IN (SELECT value FROM json_each(?)) THEN 1
                        WHEN named = ? THEN 2 ELSE 3 END AS tier
            FROM agg
            WHERE terms > 0 OR file_id IN (SELECT value FROM json_each(?))
        ) a
        WHERE {visible}
        ORDER BY a.tier, a.coverage DESC, a.title_terms DESC, rank, a.file_id
        LIMIT ?
        """,
        params,
    ).fetchall()
