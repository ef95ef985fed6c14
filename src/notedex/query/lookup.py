"""Two-stage candidate lookup (ARCHITECTURE "Two-stage lookup").

Stage 1 matches the question's terms against the names: titles, tags and aliases. Stage 2 runs
only when no title or tag holds a term (and no name equals the question): it seeds from aliases,
link texts, loose title matches and unresolved link keys, then expands one hop along the links.
No seed means nothing found. A question whose subject no note mentions gets nothing
(``_missing``).

Every user term reaches FTS5 through ``vault.text.fts_phrase`` as a quoted string: no FTS
syntax typed into a question is ever interpreted.

Split by stage (each module is one more import on the hot path: ARCHITECTURE "The hot-path
import budget"): ``query.lookup_terms`` turns the question's terms into what the vault holds
(CJK pieces, near misses, the absent-subject rule), ``query.lookup_stage1`` ranks the names,
``query.lookup_stage2`` seeds and expands along the links, and this module runs them and
writes the answer. ``query.lookup_stage2`` (and its SQL, ``store.lookup_stage2``) is imported
only when stage 2 or the body stage runs: a question the names answer never loads it (issue
30's speed budget: about 1.2M instructions, 3% of interpreter start-up).
"""

from notedex.query.lookup_stage1 import (
    STEM_SLACK,
    Candidate,
    NameRows,
    _exact_names,
    _folders,
    _stage1,
    _typed_words,
)
from notedex.query.lookup_terms import _missing, near_misses, refine_terms
from notedex.query.terms import (
    MAX_TERMS,
    checked_query,
    extract_terms,
    keywords,
    name_forms,
)
from notedex.store import lookup_terms as sql
from notedex.store import read
from notedex.store.connect import read_transaction
from notedex.vault.text import fts_phrase

TYPE_CHECKING = False  # no `typing` import on the query path; mypy honours the name
if TYPE_CHECKING:
    import sqlite3
    from typing import Any

    from notedex.query.filters import NoteFilter

__all__ = ["Candidate", "_exact_names", "extract_terms", "lookup"]


def lookup(
    conn: "sqlite3.Connection",
    question: str,
    *,
    limit: int = 10,
    nf: "NoteFilter | None" = None,
) -> "dict[str, Any]":
    checked_query(question, "question")
    terms = extract_terms(question)
    said = keywords(question)
    names = [word for word, _ in said][:MAX_TERMS]
    content = [word for word, tool in said if not tool][:MAX_TERMS]
    stage = "none"
    with read_transaction(conn), sql.asking(conn):
        terms = refine_terms(conn, terms)
        terms, rewritten = near_misses(conn, question, terms)
        guessed = {r["as"]: r["term"] for r in rewritten if r["how"] == "one edit"}
        total = 0
        shown: list[Candidate] = []
        known = NameRows(conn)  # the candidates' rows, tags and aliases: read once
        missing, absent, in_text_only, generic = _missing(conn, terms, guessed)
        if absent and guessed:  # no guess stands for a question about something absent
            terms = [guessed.get(term, term) for term in terms]
            rewritten = [r for r in rewritten if r["how"] != "one edit"]
        partial: list[int] = []
        if absent:  # the subject occurs nowhere: the generic words' notes are no answer
            every = " OR ".join(e for e in map(fts_phrase, terms) if e is not None)
            partial = sql.name_hits(conn, "title : (" + every + ")", limit)  # unranked
        elif in_text_only and generic:  # the subject only in note text, the rest generic
            from notedex.query.lookup_stage2 import _body

            total, shown = _body(conn, terms, nf, limit, subject=in_text_only)
            stage = "body" if total else "none"
        if terms and not absent and not total:
            forms = name_forms(question)
            total, shown, weights = _stage1(
                conn, terms, names, forms, nf, limit + STEM_SLACK, content
            )
            shown, dropped = _typed_words(conn, shown, terms, known)
            tools = [word for word, tool in said if tool][:MAX_TERMS]
            shown = _folders(conn, shown, weights, tools, known)
            total, shown = total - dropped, shown[:limit]
            stage = "title_tags" if total else "none"
            if in_text_only:  # a word only note text holds, with distinctive name words
                from notedex.query.lookup_stage2 import _body, _text_first

                shown, lifted = _text_first(conn, shown, in_text_only)
                if not lifted:  # no named note says it: the notes whose text has every term
                    in_text, texts = _body(conn, terms, nf, limit, every=True)
                    if in_text:
                        total, shown, stage = in_text, texts, "body"
            if not total:
                from notedex.query.lookup_stage2 import _filter, _stage2

                found = _filter(conn, _stage2(conn, terms), nf)
                ordered = sorted(found.values(), key=lambda c: (-c.score, c.rank, c.file_id))
                total, shown = len(ordered), ordered[:limit]
                stage = "graph_expansion" if total else "none"
            if not total:  # the last stage: the words in note text
                from notedex.query.lookup_stage2 import _body

                total, shown = _body(conn, terms, nf, limit)
                stage = "body" if total else "none"
        ids = [c.file_id for c in shown]
        rows = {r["file_id"]: r for r in known.notes(ids)}
        seed_ids = sorted({s for c in shown for s, _ in c.seeds})
        seed_paths = (
            {r["file_id"]: r["path"] for r in read.notes_by_ids(conn, seed_ids)} if seed_ids else {}
        )
        partial_rows = {r["file_id"]: r["path"] for r in known.notes(partial)} if partial else {}
        partial_paths = [partial_rows[i] for i in partial if i in partial_rows]
        tags = known.tags_of(ids)  # nothing to read for no id (a miss)
        aliases = known.aliases_of(ids)
    candidates = []
    for cand in shown:
        row = rows[cand.file_id]
        via = dict(cand.via)
        if cand.seeds:
            seed_id, relation = cand.seeds[0]
            via = {
                "stage": "graph_expansion",
                "seed": seed_paths.get(seed_id),
                "relation": relation,
            }
            if len(cand.seeds) > 1:
                via["otherSeeds"] = sorted(
                    {seed_paths[s] for s, _ in cand.seeds[1:] if s in seed_paths} - {via["seed"]}
                )
        candidates.append(
            {
                "path": row["path"],
                "title": row["title"],
                "id": row["id"],
                "type": row["type"],
                "status": row["status"],
                "tags": tags.get(cand.file_id, []),
                "aliases": aliases.get(cand.file_id, []),
                "score": round(cand.score, 3),
                "hits": cand.hits,
                "via": via,
            }
        )
    narrowed = total > len(shown)
    return {
        "query": question,
        "terms": terms,
        "stage": stage,
        "total": total,
        "shown": len(shown),
        "narrowed": narrowed,
        "message": _message(stage, total, len(shown), terms, missing if absent else []),
        "candidates": candidates,
        "missing": missing,
        "partial": partial_paths,
        "rewritten": rewritten,
    }


def lookup_page(
    conn: "sqlite3.Connection",
    question: str,
    *,
    offset: int,
    limit: int,
    nf: "NoteFilter | None" = None,
) -> "dict[str, Any]":
    """``lookup``'s candidates ``offset`` to ``offset + limit``, with ``offset``, ``limit`` and
    ``hasMore``: one page rule for ``lookup --offset`` and the MCP tool."""
    data = lookup(conn, question, limit=offset + limit, nf=nf)
    page = data["candidates"][offset:]
    data["candidates"] = page
    data["shown"] = len(page)
    data["narrowed"] = data["total"] > offset + len(page) or offset > 0
    if offset:
        data["message"] = page_message("candidates", offset, len(page), data["total"])
    data.update(offset=offset, limit=limit, hasMore=data["total"] > offset + len(page))
    return data


def page_message(what: str, offset: int, shown: int, total: int) -> str:
    """``candidates 11-20 of 34``, or what a page past the end says."""
    if not shown:
        return f"no {what} past {offset}; {total} in all"
    return f"{what} {offset + 1}-{offset + shown} of {total}"


def _message(stage: str, total: int, shown: int, terms: list[str], absent: list[str]) -> str:
    if absent:
        return f"no note mentions {' or '.join(absent)}; no matching notes"
    if not terms:
        return "no keywords left in the question after removing stop words; no matching notes"
    if total == 0:
        return "no matching notes"
    if stage == "body":  # disclosed: found in note text, never in a name
        count = f"narrowed to {shown} of {total}" if total > shown else str(total)
        ranked = " (ranked by relevance)" if total > shown else ""
        return (
            f"{count} candidate{'s' if total != 1 else ''} from note text only{ranked}: "
            "no title, tag or alias holds the question's subject"
        )
    if total > shown:
        return (
            f"narrowed to {shown} of {total} candidates (ranked by matched terms, then relevance)"
        )
    where = (
        "titles and tags" if stage == "title_tags" else "aliases, link texts and their neighbours"
    )
    return f"{total} candidate{'s' if total != 1 else ''} from {where}"
