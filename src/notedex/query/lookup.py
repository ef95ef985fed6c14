"""Two-stage candidate lookup (ARCHITECTURE "Two-stage lookup").

Stage 1 matches the question's terms against the names: titles, tags and aliases. Stage 2 runs
only when no title or tag holds a term (and no name equals the question): it seeds from aliases,
link texts, loose title matches and unresolved link keys, then expands one hop along the links.
No seed means nothing found. A question whose subject no note mentions gets nothing
(``_missing``).

Every user term reaches FTS5 through ``vault.text.fts_phrase`` as a quoted string: no FTS
syntax typed into a question is ever interpreted.

Over 400 lines on purpose: it is lookup's whole term-to-candidate logic (near misses, the
absent-subject rule, both stages) in one module on the hot path, where a further module is one
more import for every query (ARCHITECTURE "The hot-path import budget").
"""

from notedex.query.terms import (
    MAX_QUERY_CHARS,
    MAX_TERMS,
    checked_query,
    extract_terms,
    keywords,
    name_forms,
)
from notedex.store import lookup as sql
from notedex.store import read
from notedex.store.connect import read_transaction
from notedex.vault.text import alnum_runs, exact_name_key, fts_phrase, is_cjk, split_words

TYPE_CHECKING = False  # no `typing` import on the query path; mypy honours the name
if TYPE_CHECKING:
    import sqlite3
    from typing import Any

MAX_HITS_PER_QUERY = 20_000
MAX_SEEDS = 200
MIN_LOOSE_CHARS = 4
"""The shortest Latin word a loose title match is tried for: `gen` is inside too many titles."""


class Candidate:
    """A note found by a stage, with what it matched and how it was reached."""

    __slots__ = ("file_id", "hits", "rank", "score", "seeds", "tier", "via")

    def __init__(self, file_id: int) -> None:
        self.file_id = file_id
        self.hits: dict[str, list[str]] = {}
        """term -> the fields it hit, in the order found."""
        self.rank = 0.0
        """Sum of BM25 ranks (lower is better), the tie-break after the score."""
        self.seeds: list[tuple[int, str]] = []
        """Stage 2 neighbours: (seed file id, relation from this note's side)."""
        self.via: dict[str, Any] = {}
        self.score = 0.0
        self.tier = 3
        """Stage 1's tier: 1 a name equals the question, 2 every term hits a name, 3 the rest."""

    def hit(self, term: str, field_name: str, rank: float) -> None:
        fields = self.hits.setdefault(term, [])
        if field_name not in fields:
            fields.append(field_name)
        self.rank += rank


def _match(conn: "sqlite3.Connection", column: str, expression: str) -> "list[sqlite3.Row]":
    return sql.fts_note_hits(conn, expression, MAX_HITS_PER_QUERY, column)


def _exact_names(
    conn: "sqlite3.Connection", names: list[str], forms: "list[str] | None" = None
) -> tuple[dict[int, str], int]:
    """Tier 1: notes with a title or an alias equal to the keywords or to one of the question's
    ``forms`` (``terms.name_forms``), all folded by ``match_key``.

    Maps each to the field that matched: ``title`` (preferred) or ``alias``, with how many of
    the first ones matched a form (the rest: only the keywords). One seek in the
    ``exact_names`` index per key, which the writer keys with the same fold
    (``exact_name_key``). The notes equal to a form of the question as written come first in
    the dict: they are the better match (``整理笔记`` is the title 整理笔记 before 整理).
    """
    form_keys = [exact_name_key(form) for form in forms or ()]
    keys = [*form_keys]
    if any(fts_phrase(word) is not None for word in names):
        keys.append(exact_name_key(" ".join(names)))
    found: dict[int, str] = {}
    strong = 0
    # dict order: the forms first, then the keywords (a dict keeps its first insertion)
    for wanted in dict.fromkeys(key for key in keys if key):
        for file_id, alias in sql.exact_names(conn, wanted):
            field = "alias" if alias else "title"
            if found.get(file_id) != "title":
                found[file_id] = field
        if wanted in form_keys:
            strong = len(found)
    return found, strong


def _weighted(
    conn: "sqlite3.Connection", matches: "list[tuple[int, str]]"
) -> "tuple[list[tuple[int, str]], list[int]]":
    """The terms that some name holds, each with its weight: how rare it is among the names.

    BM25's IDF over the notes' names (title, tags, aliases), ln(1 + (N - n + 0.5) / (n + 0.5))
    for a term in n of N notes, rounded to a whole number: a
    term outweighs another when it is about e times rarer, not when one name more holds the
    other (integers also make a sum exact, so two notes hitting the same terms tie). A term no
    name holds is left out: it hits nothing in stage 1, and tier 2 asks every term that can
    hit to hit a name.
    ARCHITECTURE "Two-stage lookup", the ranking model.
    """
    from math import log  # a built-in module: no file to read

    notes = max(sql.note_count(conn), 1)
    kept: list[tuple[int, str]] = []
    weights: list[int] = []
    for index, expression in matches:
        named = sql.name_frequency(conn, expression)
        if named:
            kept.append((index, expression))
            weights.append(int(log(1 + (notes - named + 0.5) / (named + 0.5)) + 0.5))
    return kept, weights


_STAGE1_FIELDS = (("title", "title"), ("tags", "tags"), ("aliases", "alias"))


def _fill_hits(
    conn: "sqlite3.Connection",
    terms: list[str],
    matches: "list[tuple[int, str]]",
    rows: "list[Any]",
    shown: dict[int, Candidate],
) -> None:
    """Which field each term hit, for the shown candidates only."""
    if len(matches) == 1:  # the row says which fields the one term hit
        term = terms[matches[0][0]]
        for row in rows:
            flags = (row["title_terms"], row["tag_terms"], row["alias_terms"])
            for (_column, field_name), flag in zip(_STAGE1_FIELDS, flags, strict=True):
                if flag:
                    shown[row["file_id"]].hit(term, field_name, 0.0)
    elif all(expression.startswith('"') for _, expression in matches):
        # one phrase per term: the ranking's per-term flags say which fields each term hit
        # (a phrase hits a field exactly when its column-restricted bm25() is below 0)
        for row in rows:
            masks = (row["title_mask"], row["tag_mask"], row["alias_mask"])
            for index, _ in matches:
                for (_column, field_name), mask in zip(_STAGE1_FIELDS, masks, strict=True):
                    if mask >> index & 1:
                        shown[row["file_id"]].hit(terms[index], field_name, 0.0)
    else:  # a term of several phrases: each must hit within the one field
        for index, expression in matches:
            for column, field_name in _STAGE1_FIELDS:
                for file_id in sql.field_hits_among(conn, expression, column, list(shown)):
                    shown[file_id].hit(terms[index], field_name, 0.0)


def _stage1(
    conn: "sqlite3.Connection",
    terms: list[str],
    names: list[str],
    forms: list[str],
    tag: str | None,
    note_type: str | None,
    limit: int,
) -> tuple[int, list[Candidate], dict[str, int]]:
    """The names (titles, tags, aliases), ranked in tiers inside SQLite, the terms weighted by
    their rarity among the names (``_weighted``) when there are two or more.

    One match per term ranks everything; which field each term hit is then worked out for
    the shown candidates only.
    """
    expressions = [fts_phrase(term) for term in terms]
    matches = [(i, e) for i, e in enumerate(expressions) if e is not None]
    exact, strong_count = _exact_names(conn, names, forms)
    weights = None
    if len(matches) > 1:
        matches, weights = _weighted(conn, matches)
    total, rows = sql.ranked_field_hits(
        conn, matches, list(exact), tag=tag, note_type=note_type, limit=limit, weights=weights
    )
    shown = {row["file_id"]: Candidate(row["file_id"]) for row in rows}
    _fill_hits(conn, terms, matches, rows, shown)
    for row in rows:
        cand = shown[row["file_id"]]
        cand.tier = row["tier"]
        cand.rank = row["rank"]
        cand.score = float(row["terms"])
        cand.via = {"stage": "title_tags"}
        if row["file_id"] in exact:
            cand.via["matched"] = [exact[row["file_id"]]]
        elif cand.hits and all(fields == ["alias"] for fields in cand.hits.values()):
            cand.via["matched"] = ["alias"]  # a candidate by its aliases alone (issue 30)
    # Tier 1 (the page's first rows) puts a name equal to the question as written before one
    # equal to its keywords only; the SQL order stays within each.
    strong = set(list(exact)[:strong_count])
    tier1 = [c for c in shown.values() if c.file_id in exact]
    rest = [c for c in shown.values() if c.file_id not in exact]
    tier1.sort(key=lambda c: c.file_id not in strong)
    weighed = dict(zip((terms[i] for i, _ in matches), weights or [1] * len(matches), strict=True))
    return total, tier1 + rest, weighed


_NAME_FIELDS = ("title", "alias", "tags", "folder")


def _folders(
    conn: "sqlite3.Connection", shown: list[Candidate], weights: dict[str, int]
) -> list[Candidate]:
    """Folder names are names too (issue 30): the page's candidates re-sorted with the folders
    of their paths as a fourth name field, and a note hitting in more name fields first.

    A term hits a folder when a word of a folder name is the typed word inflected
    (``_same_word``; a CJK term: inside the folder name). The key within stage 1's order: the
    tier (tier 2 when every term hits the title, an alias or a folder), the weighted coverage
    with the folder hits, the distinct name fields hit (title, alias, tags, folder: the file
    name and H1 are one field), the terms hit in the title, then stage 1's order. Only the
    page and ``STEM_SLACK`` more are re-sorted: a folder lifts a candidate, never admits one
    (ARCHITECTURE "The ranking model")."""
    if not shown:
        return shown
    paths = {r["file_id"]: r["path"] for r in read.notes_by_ids(conn, [c.file_id for c in shown])}
    for cand in shown:
        parts = paths.get(cand.file_id, "").split("/")[:-1]
        words = {w.lower() for part in parts for w in alnum_runs(part)}
        for term in weights:
            low = term.lower()
            if is_cjk(term):
                in_folder = any(low in part for part in parts)
            else:
                in_folder = any(_same_word(low, w) for w in words)
            if in_folder:
                cand.hit(term, "folder", 0.0)

    keys: list[tuple[int, int, frozenset[str], int, int, int]] = []
    for position, cand in enumerate(shown):
        fields = {f for hits in cand.hits.values() for f in hits if f in _NAME_FIELDS}
        named = [t for t in weights if {"title", "alias", "folder"} & set(cand.hits.get(t, ()))]
        tier = cand.tier if cand.tier == 1 else (2 if len(named) == len(weights) else 3)
        coverage = sum(w for t, w in weights.items() if cand.hits.get(t))
        titled = sum(1 for t in weights if "title" in cand.hits.get(t, ()))
        cand.tier = tier
        terms_hit = frozenset(t for t in weights if cand.hits.get(t))
        if tier != 1:  # the score: the distinct terms hit, a folder hit counted
            cand.score = float(len(terms_hit))
        keys.append((tier, -coverage, terms_hit, -len(fields), -titled, position))
    # notes hitting the same terms are one group, placed where its first member sorts by
    # stage 1's order; within it, more name fields first
    first: dict[tuple[int, int, frozenset[str]], int] = {}
    for key in sorted(keys, key=lambda k: (k[0], k[1], k[5])):
        first.setdefault(key[:3], key[5])
    order = sorted(
        range(len(shown)),
        key=lambda i: (
            keys[i][0],
            keys[i][1],
            first[keys[i][:3]],
            keys[i][3],
            keys[i][4],
            keys[i][5],
        ),
    )
    return [shown[i] for i in order]


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
            for row in sql.title_substring_hits(conn, term.lower()):
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
    conn: "sqlite3.Connection", found: dict[int, Candidate], tag: str | None, note_type: str | None
) -> dict[int, Candidate]:
    if not found:
        return found
    ids = list(found)
    drop = sql.excluded_ids(conn, ids)
    if tag or note_type:
        allowed = {r["file_id"] for r in read.notes(conn, tag=tag, note_type=note_type)}
        drop |= set(ids) - allowed
    return {i: c for i, c in found.items() if i not in drop}


MAX_DECOMPOSE_CHARS = 12


def _occurs(conn: "sqlite3.Connection", term: str) -> bool:
    expression = fts_phrase(term)
    return expression is not None and sql.occurs(conn, expression)


def _is_katakana(ch: str) -> bool:
    return "\u30a1" <= ch <= "\u30ff" or "\uff66" <= ch <= "\uff9f"


def _may_cut(run: str, i: int) -> bool:
    """A piece of a run may start or end at ``i`` unless that splits a katakana word.

    A katakana word is a loanword: ``コンピュータ`` cut into ``ュー`` is no keyword.
    """
    return not (0 < i < len(run) and _is_katakana(run[i - 1]) and _is_katakana(run[i]))


PARTICLES = frozenset(("up", "in", "out", "on", "off", "down", "over", "back"))
"""The English particles that make compounds when written apart (`set up` of "setup", `log in`
of "login"): the stop words drop them, so the compound is tried joined."""
MIN_EDIT_CHARS = 5
"""The shortest word a one-edit variant is tried for: one edit of four letters is another word."""
MAX_VARIANT_HITS = 50


def _joined(
    conn: "sqlite3.Connection", question: str, terms: list[str], rewritten: "list[dict[str, str]]"
) -> list[str]:
    """Compounds written apart, joined when a name holds the joined word: ``how do I set up
    templates`` -> terms ``setup``, ``templates`` (ARCHITECTURE "Two-stage lookup", near
    misses). Only a word followed by a particle is tried: nothing else is lost to a stop list."""
    words = split_words(question[:MAX_QUERY_CHARS])
    for i in range(len(words) - 1):
        first, second = words[i], words[i + 1]
        if second.lower() not in PARTICLES or not (first + second).isascii():
            continue
        if not (first + second).isalpha():
            continue
        joined = (first + second).lower()
        expression = fts_phrase(joined)
        if expression is None or not sql.in_names(conn, expression):
            continue
        lowered = [term.lower() for term in terms]
        kept = [
            t
            for t, low in zip(terms, lowered, strict=True)
            if low not in (first.lower(), second.lower())
        ]
        at = lowered.index(first.lower()) if first.lower() in lowered else len(kept)
        terms = [*kept[:at], joined, *kept[at:]]
        rewritten.append({"term": f"{first} {second}", "as": joined, "how": "joined"})
    return list(dict.fromkeys(terms))


def _variant(conn: "sqlite3.Connection", term: str) -> str | None:
    """The word of the names one edit away from ``term`` (a letter dropped, added, changed, or
    two swapped) that the most of the first matching names hold: ``smyth`` -> ``smith``."""
    low = term.lower()
    letters = "abcdefghijklmnopqrstuvwxyz"
    variants: set[str] = set()
    for i in range(len(low) + 1):
        variants.update(low[:i] + ch + low[i:] for ch in letters)
        if i < len(low):
            variants.add(low[:i] + low[i + 1 :])
            variants.update(low[:i] + ch + low[i + 1 :] for ch in letters)
        if i < len(low) - 1:
            variants.add(low[:i] + low[i + 1] + low[i] + low[i + 2 :])
    variants.discard(low)
    ordered = sorted(v for v in variants if len(v) >= MIN_EDIT_CHARS - 1)
    expression = "{title tags aliases} : (" + " OR ".join(f'"{v}"' for v in ordered) + ")"
    ids = sql.name_hits(conn, expression, MAX_VARIANT_HITS)
    if not ids:
        return None
    counts: dict[str, int] = {}
    texts = [
        " ".join(filter(None, (r["stem"], r["frontmatter_title"], r["first_h1"])))
        for r in read.notes_by_ids(conn, ids)
    ]
    for names in (read.aliases_by_note(conn, ids), read.tags_by_note(conn, ids)):
        texts += [" ".join(values) for values in names.values()]
    for text in texts:
        for word in {w.lower() for w in alnum_runs(text)} & variants:
            counts[word] = counts.get(word, 0) + 1
    if not counts:
        return None
    best = min(counts, key=lambda w: (-counts[w], w))
    # a generic word is no near miss (`world` is not `word`, which many names hold)
    return best if sql.name_frequency(conn, f'"{best}"') < _generic_floor(conn) else None


def near_misses(
    conn: "sqlite3.Connection", question: str, terms: list[str]
) -> "tuple[list[str], list[dict[str, str]]]":
    """Terms rewritten to what the names hold, each rewrite disclosed (issue 30): a compound
    written apart joined (``set up`` -> ``setup``); and for a Latin term that matches nothing
    (no name, tag, alias, link text, nor inside a title), the compound split (``darkmode`` ->
    ``dark-mode``, a phrase) or else a one-edit variant of the names (``smyth`` -> ``smith``)."""
    rewritten: list[dict[str, str]] = []
    if any(word.lower() in PARTICLES for word in split_words(question[:MAX_QUERY_CHARS])):
        terms = _joined(conn, question, terms, rewritten)
    out: list[str] = []
    for term in terms:
        expression = fts_phrase(term)
        if (
            expression is None
            or len(term) < MIN_EDIT_CHARS
            or not term.isascii()
            or not term.isalpha()
            or sql.occurs(conn, expression)
            or sql.title_substring_hits(conn, term.lower(), 1)
        ):
            out.append(term)
            continue
        split = next(
            (
                f"{term[:i]}-{term[i:]}"
                for i in range(3, len(term) - 2)
                if sql.in_names(conn, f'"{term[:i]} {term[i:]}"')
            ),
            None,
        )
        if split is not None:
            rewritten.append({"term": term, "as": split, "how": "split"})
            out.append(split)
            continue
        variant = _variant(conn, term)
        if variant is not None:
            rewritten.append({"term": term, "as": variant, "how": "one edit"})
            out.append(variant)
        else:
            out.append(term)
    return list(dict.fromkeys(out)), rewritten


def refine_terms(conn: "sqlite3.Connection", terms: list[str]) -> list[str]:
    """Split CJK runs that occur nowhere into the longest sub-runs that do.

    Chinese is written without spaces, so ``收件匣整理流程`` arrives as one run; when the whole
    run matches no title, tag, alias or link text, keep its longest pieces (two characters or
    more, greedy from the left) that do, never splitting a katakana word (SEMANTICS 11.4). A run
    none of whose pieces occur is dropped, so a question about something the vault never mentions
    still finds nothing.
    """
    refined: list[str] = []
    for term in terms:
        # Terms come from split_words, so a CJK term is a pure CJK run.
        if not is_cjk(term) or len(term) < 3 or _occurs(conn, term):
            refined.append(term)
            continue
        run = term[:MAX_DECOMPOSE_CHARS]
        start = 0
        while start < len(run) - 1:
            if not _may_cut(run, start):
                start += 1
                continue
            for end in range(len(run), start + 1, -1):
                piece = run[start:end]
                if _may_cut(run, end) and _occurs(conn, piece):
                    refined.append(piece)
                    start = end
                    break
            else:
                start += 1
    return list(dict.fromkeys(refined))


GENERIC_SHARE = 0.005
"""A term in this share of the notes' names or more (and in ``GENERIC_MIN`` or more) is a
generic word: alone it never makes an answer to a question whose subject occurs nowhere."""
GENERIC_MIN = 5
"""Fewer names than this never make a word generic: in a small vault one name is a large share,
and a word four notes hold (`Cobra` of the demo vault) points at them."""


def _generic_floor(conn: "sqlite3.Connection") -> float:
    return max(float(GENERIC_MIN), GENERIC_SHARE * sql.note_count(conn))


def _is_korean(term: str) -> bool:
    return any("\uac00" <= ch <= "\ud7af" for ch in term)


def _missing(conn: "sqlite3.Connection", terms: list[str]) -> tuple[list[str], bool]:
    """The terms no note mentions (no name, tag, alias, link text or body holds them), and
    whether the question's subject is absent: some term is missing and every other term that a
    name holds is generic (``GENERIC_SHARE``, ``GENERIC_MIN``); a term that only a body or a
    link text holds cannot make a stage-1 answer. Then lookup answers nothing (ARCHITECTURE
    "Two-stage lookup", honest empty answers). Asked for two terms or more only: a lone term
    keeps stage 2's loose matches (`itgc`)."""
    if len(terms) < 2:
        return [], False
    missing: list[str] = []
    present: list[str] = []
    for term in terms:
        expression = fts_phrase(term)
        if expression is None:
            continue
        if _is_korean(term):
            return [], False  # a stem once its ending is cut (만드 of 만드는), not a written word
        if sql.occurs(conn, expression) or sql.mentioned_in_bodies(conn, expression):
            present.append(term)
        else:
            missing.append(term)
    if not missing:
        return missing, False
    floor = _generic_floor(conn)
    named = [sql.name_frequency(conn, fts_phrase(term) or "") for term in present]
    return missing, all(count >= floor for count in named if count)


STEM_SLACK = 5
"""Stage 1 ranks this many candidates beyond the page, so that the page stays full when the
typed-word check (``_typed_words``) drops a stem collision or two."""


_ENDINGS = ("ies", "ing", "es", "ed", "ly", "s", "e", "y")


def _core(word: str) -> str:
    """A word less one inflectional ending (`linked` -> `link`, `policies` -> `polic`)."""
    for ending in _ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            return word[: -len(ending)]
    return word


def _same_word(typed: str, word: str) -> bool:
    """Whether a name's word is the typed word, inflected: less one ending each, the shorter
    begins the longer (`links` and `linked`, `run` and `running`, `policy` and `policies`).
    Porter gives `generator` and `general` one stem, `gener`; a person never means one by the
    other."""
    short, long = sorted((_core(typed), _core(word)), key=len)
    return long.startswith(short)


def _typed_words(
    conn: "sqlite3.Connection", shown: list[Candidate], terms: list[str]
) -> tuple[list[Candidate], int]:
    """Stage 1's candidates less the hits where only the Porter stem met: a Latin term hits a
    field when one of its words is the typed word inflected (``_same_word``); a candidate left
    with no hit (and no exact name) is dropped, and counted, so ``total`` drops with it. Only
    the page and ``STEM_SLACK`` more are checked (ARCHITECTURE "Two-stage lookup")."""
    checked = [t for t in terms if t.isascii() and t.isalnum() and not t.isdigit()]
    if not shown or not checked:
        return shown, 0
    ids = [c.file_id for c in shown]
    words: dict[int, dict[str, set[str]]] = {i: {} for i in ids}
    for row in read.notes_by_ids(conn, ids):
        text = " ".join(filter(None, (row["stem"], row["frontmatter_title"], row["first_h1"])))
        words[row["file_id"]]["title"] = {w.lower() for w in alnum_runs(text)}
    for field, values in (
        ("alias", read.aliases_by_note(conn, ids)),
        ("tags", read.tags_by_note(conn, ids)),
    ):
        for file_id, names in values.items():
            words[file_id][field] = {w.lower() for w in alnum_runs(" ".join(names))}
    kept: list[Candidate] = []
    for cand in shown:
        for term in checked:
            fields = cand.hits.get(term)
            if not fields:
                continue
            low = term.lower()
            fields[:] = [
                f for f in fields if any(_same_word(low, w) for w in words[cand.file_id].get(f, ()))
            ]
            if not fields:
                del cand.hits[term]
        if cand.hits or "matched" in cand.via:
            kept.append(cand)
    return kept, len(shown) - len(kept)


def lookup(
    conn: "sqlite3.Connection",
    question: str,
    *,
    limit: int = 10,
    tag: str | None = None,
    note_type: str | None = None,
) -> "dict[str, Any]":
    checked_query(question, "question")
    terms = extract_terms(question)
    names = [word for word, _ in keywords(question)][:MAX_TERMS]
    stage = "none"
    with read_transaction(conn):
        terms = refine_terms(conn, terms)
        terms, rewritten = near_misses(conn, question, terms)
        total = 0
        shown: list[Candidate] = []
        missing, absent = _missing(conn, terms)
        partial: list[int] = []
        if absent:  # the subject occurs nowhere: the generic words' notes are no answer
            every = " OR ".join(e for e in map(fts_phrase, terms) if e is not None)
            partial = sql.name_hits(conn, "title : (" + every + ")", limit)  # unranked
        elif terms:
            forms = name_forms(question)
            total, shown, weights = _stage1(
                conn, terms, names, forms, tag, note_type, limit + STEM_SLACK
            )
            shown, dropped = _typed_words(conn, shown, terms)
            shown = _folders(conn, shown, weights)
            total, shown = total - dropped, shown[:limit]
            stage = "title_tags" if total else "none"
            if not total:
                found = _filter(conn, _stage2(conn, terms), tag, note_type)
                ordered = sorted(found.values(), key=lambda c: (-c.score, c.rank, c.file_id))
                total, shown = len(ordered), ordered[:limit]
                stage = "graph_expansion" if total else "none"
        ids = [c.file_id for c in shown]
        rows = {r["file_id"]: r for r in read.notes_by_ids(conn, ids)} if ids else {}
        seed_ids = sorted({s for c in shown for s, _ in c.seeds})
        seed_paths = (
            {r["file_id"]: r["path"] for r in read.notes_by_ids(conn, seed_ids)} if seed_ids else {}
        )
        partial_rows = {r["file_id"]: r["path"] for r in read.notes_by_ids(conn, partial)}
        partial_paths = [partial_rows[i] for i in partial if i in partial_rows]
        tags = read.tags_by_note(conn, ids)  # nothing to read for no id (a miss)
        aliases = read.aliases_by_note(conn, ids)
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
    tag: str | None = None,
    note_type: str | None = None,
) -> "dict[str, Any]":
    """``lookup``'s candidates ``offset`` to ``offset + limit``, with ``offset``, ``limit`` and
    ``hasMore``: one page rule for ``lookup --offset`` and the MCP tool."""
    data = lookup(conn, question, limit=offset + limit, tag=tag, note_type=note_type)
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
    if total > shown:
        return (
            f"narrowed to {shown} of {total} candidates (ranked by matched terms, then relevance)"
        )
    where = (
        "titles and tags" if stage == "title_tags" else "aliases, link texts and their neighbours"
    )
    return f"{total} candidate{'s' if total != 1 else ''} from {where}"
