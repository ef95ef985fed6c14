"""Lookup's stage 2, when stage 1 finds nothing: seeds from aliases, link texts, loose title
matches and unresolved link keys, then one hop along the links; and the body stage, the last,
when the words are in note text only (ARCHITECTURE "Two-stage lookup"). Split out of
``query.lookup`` by stage; the SQL is ``store.lookup_stage2``'s.
"""

from notedex.query.lookup_stage1 import Candidate
from notedex.query.lookup_terms import MIN_LOOSE_CHARS
from notedex.store import lookup_stage2 as sql
from notedex.store import lookup_terms as probe
from notedex.store import read
from notedex.vault.text import fts_phrase, is_cjk

TYPE_CHECKING = False  # no `typing` import on the query path; mypy honours the name
if TYPE_CHECKING:
    import sqlite3

    from notedex.query.filters import NoteFilter

MAX_HITS_PER_QUERY = 20_000
MAX_SEEDS = 200


def _match(conn: "sqlite3.Connection", column: str, expression: str) -> "list[sqlite3.Row]":
    return sql.fts_note_hits(conn, expression, MAX_HITS_PER_QUERY, column)


_SEED_FIELDS = (("aliases", "alias"), ("anchors", "link text"), ("unresolved", "unresolved link"))


def _stage2(conn: "sqlite3.Connection", terms: list[str]) -> dict[int, Candidate]:
    seeds: dict[int, Candidate] = {}
    for term in terms:
        expression = fts_phrase(term)
        assert expression is not None
        for column, relation in _SEED_FIELDS:
            for row in _match(conn, column, expression):
                seed = seeds.setdefault(row["file_id"], Candidate(row["file_id"]))
                seed.hit(term, relation, row["rank"])
        # Loose title match: the word as typed anywhere in a title (the trigram index), never
        # a Porter stem as a prefix (`generator` is `gener*`, which is "General settings"), and
        # only for a word of MIN_LOOSE_CHARS or more (a CJK run: three, the trigram's size).
        if len(term) >= (3 if is_cjk(term) else MIN_LOOSE_CHARS):
            for row in probe.title_substring_hits(conn, term.lower()):
                seed = seeds.setdefault(row["file_id"], Candidate(row["file_id"]))
                seed.hit(term, "title (loose)", 0.0)
    # SEMANTICS 1: notes in Obsidian's "Excluded files" stay out of lookup, seeds included.
    for excluded in sql.excluded_ids(conn, list(seeds)):
        del seeds[excluded]
    if not seeds:
        return {}
    ranked = sorted(seeds.values(), key=lambda c: (-len(c.hits), c.rank, c.file_id))[:MAX_SEEDS]
    found: dict[int, Candidate] = {}
    for seed in ranked:
        matched = sorted({f for fields in seed.hits.values() for f in fields})
        seed.score = 1.0 + len(seed.hits)  # >= 2: every seed above every neighbour (< 1)
        seed.via = {
            "stage": "graph_expansion",
            "seed": None,
            "relation": "seed",
            "matched": matched,
        }
        found[seed.file_id] = seed
    seed_ids = [s.file_id for s in ranked]
    for row in sql.neighbours(conn, seed_ids):
        other = row["other"]
        if other in found and not found[other].seeds:
            continue  # a seed stays a seed
        cand = found.setdefault(other, Candidate(other))
        cand.seeds.append((row["seed"], row["relation"]))
    neighbours = [c for c in found.values() if c.seeds]
    degrees = sql.link_degrees(conn, [c.file_id for c in neighbours])
    for cand in neighbours:
        cand.score = _neighbour_score(len({s for s, _ in cand.seeds}), degrees.get(cand.file_id, 1))
    return found


def _neighbour_score(seeds: int, degree: int) -> float:
    """Grows with the seeds a neighbour links with, damped by its degree; always below 1.

    (1 - 2**-seeds) / sqrt(1 + degree): a hub linked with every seed ranks below a note that
    links with two seeds and little else, and no neighbour ranks above a seed (>= 2).
    """
    return (1.0 - 0.5**seeds) / (1 + max(degree, seeds)) ** 0.5


def _filter(
    conn: "sqlite3.Connection", found: dict[int, Candidate], nf: "NoteFilter | None"
) -> dict[int, Candidate]:
    if not found:
        return found
    ids = list(found)
    drop = sql.excluded_ids(conn, ids)
    if nf is not None and nf.active:
        allowed = {r["file_id"] for r in read.notes(conn, nf)}
        drop |= set(ids) - allowed
    return {i: c for i, c in found.items() if i not in drop}


def _body(
    conn: "sqlite3.Connection",
    terms: list[str],
    nf: "NoteFilter | None",
    limit: int,
    *,
    every: bool = False,
    subject: "list[str] | None" = None,
) -> tuple[int, list[Candidate]]:
    """The body stage (issue 30, the lead's decision): the notes whose body holds every term
    that some body holds, best BM25 of the body index first, at most ``limit``; a term no body
    holds (a name's word) is left out, as tier 2 leaves out a term no name holds; with
    ``every``, a term no body holds finds nothing instead (a name's distinctive word: stage 1
    answers it). When no body holds them all and ``every`` is not asked, the terms of
    ``subject`` alone (those note text alone holds: the other words are generic). Each
    candidate says it was found in note text: ``hits`` ``body``, ``via`` ``{"stage": "body",
    "matched": ["body"]}``, ``score`` the terms it holds (ARCHITECTURE "Two-stage lookup")."""
    held: list[tuple[str, str]] = []
    for term in terms:
        expression = fts_phrase(term)
        if expression is not None and probe.mentioned_in_bodies(conn, expression):
            held.append((term, expression))
    if not held or (every and len(held) < len(terms)):
        return 0, []
    total, rows = sql.body_hits(conn, " AND ".join(e for _, e in held), limit, nf)
    if not total and subject and not every:
        held = [(term, e) for term, e in held if term in subject]
        expression = " AND ".join(e for _, e in held)
        total, rows = sql.body_hits(conn, expression, limit, nf) if held else (0, [])
    found: list[Candidate] = []
    for row in rows:
        cand = Candidate(row["file_id"])
        for term, _ in held:
            cand.hit(term, "body", 0.0)
        cand.rank = row["rank"]
        cand.score = float(len(held))
        cand.via = {"stage": "body", "matched": ["body"]}
        found.append(cand)
    return total, found


def _text_first(
    conn: "sqlite3.Connection", shown: list[Candidate], terms: list[str]
) -> tuple[list[Candidate], bool]:
    """Stage 1's page with the notes whose text holds every term that only note text holds
    among the names (``terms``) first, each such hit shown as ``body``; and whether any did
    (issue 30: `couchdb sync` puts the sync note whose text says CouchDB first)."""
    expressions = [(term, fts_phrase(term)) for term in terms]
    held = [(term, e) for term, e in expressions if e is not None]
    if not shown or not held:
        return shown, False
    ids = [c.file_id for c in shown]
    holding = sql.body_holds(conn, " AND ".join(e for _, e in held), ids)
    for cand in shown:
        if cand.file_id in holding:
            for term, _ in held:
                cand.hit(term, "body", 0.0)
    first = [c for c in shown if c.file_id in holding]
    return first + [c for c in shown if c.file_id not in holding], bool(first)
