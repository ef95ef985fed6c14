"""Lookup's stage 1: the names (titles, H1s, aliases, tags, folders), ranked in tiers
(ARCHITECTURE "Two-stage lookup", the ranking model).

Split out of ``query.lookup`` by stage; the SQL is ``store.lookup``'s. Every user term reaches
FTS5 through ``vault.text.fts_phrase`` as a quoted string. Over 500 lines on purpose: the tiers,
the folder names and the absent-subject test (``_unsaid``) read the same candidates' rows
(``NameRows``), and every lookup runs all three, so a second module would be one more import on
the command people call most without separating code that changes apart.
"""

from notedex.query.terms import _words
from notedex.store import lookup as sql
from notedex.store import lookup_terms as probe
from notedex.store import read
from notedex.vault.text import (
    alnum_runs,
    exact_name_key,
    fts_phrase,
    fts_without_prefixes,
    is_cjk,
)

TYPE_CHECKING = False  # no `typing` import on the query path; mypy honours the name
if TYPE_CHECKING:
    import sqlite3
    from typing import Any

    from notedex.query.filters import NoteFilter


GENERIC_SHARE = 0.005
"""A term in this share of the notes' names or more (and in ``GENERIC_MIN`` or more) is a
generic word: alone it never makes an answer to a question whose subject occurs nowhere, and
in a name it says nothing the question left out (``_unsaid``)."""
GENERIC_MIN = 5
"""Fewer names than this never make a word generic: in a small vault one name is a large share,
and a word four notes hold (`Cobra` of the demo vault) points at them."""


def _generic_floor(conn: "sqlite3.Connection") -> float:
    return max(float(GENERIC_MIN), GENERIC_SHARE * probe.note_count(conn))


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


class NameRows:
    """The candidates' note rows, tags and aliases, each read once per lookup: the stages
    after the ranking (the typed words, the folders, the unsaid words, the answer) ask for
    the same few notes (issue 30's speed budget: four reads of the same rows were four
    statements). One object a lookup, never kept past it."""

    __slots__ = ("aliases", "conn", "rows", "tags")

    def __init__(self, conn: "sqlite3.Connection") -> None:
        self.conn = conn
        self.rows: dict[int, Any] = {}
        """file_id -> its notes row; None for an id read and not found."""
        self.tags: dict[int, list[str]] = {}
        self.aliases: dict[int, list[str]] = {}

    def notes(self, ids: "list[int]") -> "list[Any]":
        """``read.notes_by_ids``: the rows of ``ids`` that are notes."""
        wanted = [i for i in dict.fromkeys(ids) if i not in self.rows]
        if wanted:
            self.rows.update(dict.fromkeys(wanted))
            self.rows.update((r["file_id"], r) for r in read.notes_by_ids(self.conn, wanted))
        return [row for i in dict.fromkeys(ids) if (row := self.rows[i]) is not None]

    def tags_of(self, ids: "list[int]") -> dict[int, list[str]]:
        """``read.tags_by_note``: the tags of those of ``ids`` that have some."""
        return self._names(ids, self.tags, read.tags_by_note)

    def aliases_of(self, ids: "list[int]") -> dict[int, list[str]]:
        """``read.aliases_by_note``: the aliases of those of ``ids`` that have some."""
        return self._names(ids, self.aliases, read.aliases_by_note)

    def _names(
        self, ids: "list[int]", known: dict[int, list[str]], fetch: "Any"
    ) -> dict[int, list[str]]:
        wanted = [i for i in dict.fromkeys(ids) if i not in known]
        if wanted:
            known.update((i, []) for i in wanted)
            known.update(fetch(self.conn, wanted))
        return {i: known[i] for i in dict.fromkeys(ids) if known[i]}


def _exact_names(
    conn: "sqlite3.Connection",
    names: list[str],
    forms: "list[str] | None" = None,
    content: "list[str] | None" = None,
) -> tuple[dict[int, str], int, int]:
    """Tier 1: notes with a title or an alias equal to the keywords, to one of the question's
    ``forms`` (``terms.name_forms``), or to its ``content`` words (the keywords less the
    notes-tool words), all folded by ``match_key``.

    Maps each to the field that matched: ``title`` (preferred) or ``alias``, with how many of
    the first ones matched a form, and how many a form or the keywords (the rest: only the
    content words). One seek in the ``exact_names`` index per key, which the writer keys with
    the same fold and the same stop-word rule (``vault.text.name_keys``: every name also less
    its stop and notes-tool words, so ``rename note`` is the title "Rename a note" and
    ``list of all plugins`` the title "Plugins MOC"). The notes equal to a form of the question
    as written come first in the dict: they are the better match (``整理笔记`` is the title
    整理笔记 before 整理), then those equal to the keywords.
    """
    form_keys = [exact_name_key(form) for form in forms or ()]
    keys = [*form_keys]
    if any(fts_phrase(word) is not None for word in names):
        keys.append(exact_name_key(" ".join(names)))
    keyword_keys = set(keys)
    if content and any(fts_phrase(word) is not None for word in content):
        keys.append(exact_name_key(" ".join(content)))
    found: dict[int, str] = {}
    strong = keyed = 0
    # dict order: the forms first, then the keywords, then the content words (a dict keeps
    # its first insertion)
    for wanted in dict.fromkeys(key for key in keys if key):
        for file_id, alias in probe.exact_names(conn, wanted):
            field = "alias" if alias else "title"
            if found.get(file_id) != "title":
                found[file_id] = field
        if wanted in form_keys:
            strong = len(found)
        if wanted in keyword_keys:
            keyed = len(found)
    return found, strong, keyed


def _weighted(
    conn: "sqlite3.Connection",
    matches: "list[tuple[int, str]]",
    counts: "list[int] | None" = None,
) -> "tuple[list[tuple[int, str]], list[int]]":
    """The terms that some name holds, each with its weight: how rare it is among the names.

    BM25's IDF over the notes' names (title, tags, aliases), ln(1 + (N - n + 0.5) / (n + 0.5))
    for a term in n of N notes, rounded to a whole number: a
    term outweighs another when it is about e times rarer, not when one name more holds the
    other (integers also make a sum exact, so two notes hitting the same terms tie). A term no
    name holds is left out: it hits nothing in stage 1, and tier 2 asks every term that can
    hit to hit a name.
    ARCHITECTURE "Two-stage lookup", the ranking model. ``counts``, when given, receives each
    kept term's count of names (stage 1's total of two terms is worked out from them).
    """
    counts = [] if counts is None else counts

    notes = max(probe.note_count(conn), 1)
    kept: list[tuple[int, str]] = []
    weights: list[int] = []
    for index, expression in matches:
        named = probe.name_frequency(conn, expression)
        if named:
            kept.append((index, expression))
            weights.append(rounded_ln(1 + (notes - named + 0.5) / (named + 0.5)))
            counts.append(named)
    return kept, weights


_E = 2.718281828459045
_HALF_EDGES = tuple(_E ** (k + 0.5) for k in range(48))
"""e^0.5, e^1.5, ...: where ``int(log(y) + 0.5)`` steps to the next whole number."""
_NEAR = 1e-9


def rounded_ln(y: float) -> int:
    """``int(math.log(y) + 0.5)``, without ``math``: a shared library on some interpreters
    (about 0.25 ms of CPU to load, on every lookup of two terms; issue 30's speed budget).

    The count of the edges e^(k + 0.5) that ``y`` reaches. It is the same integer: the float
    log and its sum are within 1e-14 of the exact values, far inside the margin of 1e-9 that
    ``y`` keeps from every edge; a ``y`` inside that margin (or below 1, or past the last
    edge) is left to ``math.log`` itself (tests/unit/query/test_lookup_weights.py)."""
    if 1 <= y < _HALF_EDGES[-1] and all(abs(y - edge) > edge * _NEAR for edge in _HALF_EDGES):
        return sum(1 for edge in _HALF_EDGES if y >= edge)
    from math import log

    return int(log(y) + 0.5)


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
                for file_id in probe.field_hits_among(conn, expression, column, list(shown)):
                    shown[file_id].hit(terms[index], field_name, 0.0)


def _stage1(
    conn: "sqlite3.Connection",
    terms: list[str],
    names: list[str],
    forms: list[str],
    nf: "NoteFilter | None",
    limit: int,
    content: "list[str] | None" = None,
) -> tuple[int, list[Candidate], dict[str, int]]:
    """The names (titles, tags, aliases), ranked in tiers inside SQLite, the terms weighted by
    their rarity among the names (``_weighted``) when there are two or more.

    One match per term ranks everything; which field each term hit is then worked out for
    the shown candidates only.
    """
    expressions = [fts_phrase(term) for term in terms]
    matches = [(i, e) for i, e in enumerate(expressions) if e is not None]
    exact, strong_count, keyed_count = _exact_names(conn, names, forms, content)
    weights = None
    named: list[int] = []  # each kept term's count of names
    if len(matches) > 1:
        matches, weights = _weighted(conn, matches, named)
    total, rows = sql.ranked_field_hits(
        conn, matches, list(exact), nf=nf, limit=limit, weights=weights, named=named
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
    # equal to its keywords, and that before one equal to its content words only; the SQL
    # order stays within each.
    strong = set(list(exact)[:strong_count])
    keyed = set(list(exact)[:keyed_count])
    tier1 = [c for c in shown.values() if c.file_id in exact]
    rest = [c for c in shown.values() if c.file_id not in exact]
    tier1.sort(key=lambda c: (c.file_id not in strong, c.file_id not in keyed))
    weighed = dict(zip((terms[i] for i, _ in matches), weights or [1] * len(matches), strict=True))
    return total, tier1 + rest, weighed


_NAME_FIELDS = ("title", "alias", "tags", "folder")


def _folders(
    conn: "sqlite3.Connection",
    shown: list[Candidate],
    weights: dict[str, int],
    tools: "list[str] | None" = None,
    known: "NameRows | None" = None,
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
    known = known or NameRows(conn)
    rows = known.notes([c.file_id for c in shown])
    paths = {r["file_id"]: r["path"] for r in rows}
    tooled = _tool_words_in_titles(rows, tools or [])
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

    keys: list[tuple[Any, ...]] = []
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
        named_fields = len(fields) + tooled.get(cand.file_id, 0)
        keys.append((tier, -coverage, terms_hit, -named_fields, -titled, 0, position))
    # the words a name says beyond the question decide only between notes equal so far
    sizes: dict[tuple[Any, ...], int] = {}
    for key in keys:
        sizes[key[:5]] = sizes.get(key[:5], 0) + 1
    tied = [shown[k[6]] for k in keys if k[0] != 1 and sizes[k[:5]] > 1]
    in_text = _said_in_text(conn, tied, weights)
    # the unsaid words only order notes still tied with the text key too (issue 30's speed
    # budget: each word a probe of the names)
    texted = {
        k[6]: (*k[:5], in_text.get(shown[k[6]].file_id, 0))
        for k in keys
        if k[0] != 1 and sizes[k[:5]] > 1
    }
    still: dict[tuple[Any, ...], int] = {}
    for grouped in texted.values():
        still[grouped] = still.get(grouped, 0) + 1
    unsaid = _unsaid(conn, [shown[i] for i, g in texted.items() if still[g] > 1], weights, known)
    keys = [
        (*k[:5], -in_text.get(shown[k[6]].file_id, 0), k[6], unsaid.get(shown[k[6]].file_id, 0))
        for k in keys
    ]
    # notes hitting the same terms are one group, placed where its first member sorts by
    # stage 1's order; within it, more name fields first
    first: dict[tuple[int, int, frozenset[str]], int] = {}
    for key in sorted(keys, key=lambda k: (k[0], k[1], k[6])):
        first.setdefault(key[:3], key[6])
    order = sorted(
        range(len(shown)),
        key=lambda i: (
            keys[i][0],
            keys[i][1],
            first[keys[i][:3]],
            keys[i][3],
            keys[i][4],
            keys[i][5],
            keys[i][7],
            keys[i][6],
        ),
    )
    return [shown[i] for i in order]


def _said_in_text(
    conn: "sqlite3.Connection", tied: list[Candidate], weights: dict[str, int]
) -> dict[int, int]:
    """For candidates tied by every key before it, how many of the terms their names miss
    their note text holds: `동기화 문제 해결` (sync troubleshooting) is "Obsidian Sync 문제 해결",
    whose text says 동기화, before "Obsidian Publish 문제 해결", whose names hit the same two
    words (issue 30, Obsidian's help vault). One rowid-restricted match of the body index per
    term, for the tied notes only; a key before the unsaid words."""
    out: dict[int, int] = {}
    for term in weights:
        ids = [c.file_id for c in tied if not c.hits.get(term)]
        expression = fts_phrase(term)
        if not ids or expression is None:
            continue
        from notedex.store.lookup_stage2 import body_holds  # only when a body is asked

        for file_id in body_holds(conn, expression, ids):
            out[file_id] = out.get(file_id, 0) + 1
    return out


def _tool_words_in_titles(rows: "list[Any]", tools: list[str]) -> dict[int, int]:
    """How many of the question's notes-tool words (`file`, `vault`...: no term of their own
    when other words remain) a note's title holds, inflected (``_same_word``): `supported file
    formats` is "Accepted file formats" before "Advanced formatting syntax", whose folder
    "Editing and formatting" is its second name field (issue 30, Obsidian's help vault). Such
    a word in the title counts as one more name field, within the notes hitting the same
    terms."""
    if not tools:
        return {}
    lowered = [t.lower() for t in tools if not is_cjk(t)]
    out: dict[int, int] = {}
    for row in rows:
        text = " ".join(filter(None, (row["stem"], row["frontmatter_title"], row["first_h1"])))
        words = {w.lower() for w in alnum_runs(text)}
        out[row["file_id"]] = sum(1 for t in lowered if any(_same_word(t, w) for w in words))
    return out


def _unsaid(
    conn: "sqlite3.Connection",
    shown: list[Candidate],
    weights: dict[str, int],
    cache: "NameRows | None" = None,
) -> dict[int, int]:
    """For each candidate (below tier 1, and tied with another by every key before this one),
    how many distinctive words its closest name says that the question does not: the words of a title form (file name, frontmatter title, H1) or of
    an alias a term hit, less stop and notes-tool words, less the words a term hits
    (``_same_word``; CJK: a term inside the run), less generic words (``_generic_floor``, a
    count capped at the floor). The fewest over the note's names counts (issue 30, measured on
    Obsidian's help vault: `web clipper` is "Introduction to Obsidian Web Clipper", whose
    other words are common there, before "Troubleshoot Web Clipper"; `set up sync` is "Set up
    Obsidian Sync" before "Sync settings and selective syncing"). A key after the fields and
    the title hits, before BM25, which prefers the shortest name whatever its words say."""
    ranked = shown
    if not ranked or not weights:
        return {}
    ids = [c.file_id for c in ranked]
    forms: dict[int, list[str]] = {i: [] for i in ids}
    cache = cache or NameRows(conn)
    for row in cache.notes(ids):
        forms[row["file_id"]] += [
            t for t in (row["stem"], row["frontmatter_title"], row["first_h1"]) if t
        ]
    by_alias = [c.file_id for c in ranked if any("alias" in f for f in c.hits.values())]
    for file_id, aliases in (cache.aliases_of(by_alias) if by_alias else {}).items():
        forms[file_id] += aliases
    floor = _generic_floor(conn)
    generic: dict[str, bool] = {}
    terms = [t.lower() for t in weights]

    cjk_terms = [t for t in terms if is_cjk(t)]
    cores = [_core(t) for t in terms if not is_cjk(t)]
    known: dict[str, bool] = {}

    def said(word: str) -> bool:  # _same_word against every term, each word once
        if word not in known:
            if is_cjk(word):
                known[word] = any(t in word for t in cjk_terms)
            else:
                core = _core(word)
                known[word] = any(
                    (core.startswith(c) if len(c) <= len(core) else c.startswith(core))
                    for c in cores
                )
        return known[word]

    def is_generic(word: str) -> bool:
        if word not in generic:
            expression = fts_phrase(word)
            # a word with a lone CJK character (a prefix query) is counted without its prefixes
            # first: fewer names than the floor hold the rest, so fewer hold the whole word
            plain = fts_without_prefixes(word) if expression and "*" in expression else None
            generic[word] = (
                expression is not None
                and (plain is None or probe.names_reach(conn, plain, floor))
                and probe.names_reach(conn, expression, floor)
            )
        return generic[word]

    stop = _words("STOP_WORDS_EN") | _words("TOOL_WORDS_EN")
    out: dict[int, int] = {}
    for file_id, names in forms.items():
        # the fewest over the names: the names with the fewest unsaid words first, and none
        # probed once a name says nothing more (issue 30's speed budget: a probe a word)
        left = [
            [w for w in {w.lower() for w in alnum_runs(name)} - stop if not said(w)]
            for name in dict.fromkeys(names)
        ]
        fewest: int | None = None
        for words in sorted(left, key=len):
            if fewest == 0:
                break
            count = sum(1 for w in words if not is_generic(w))
            fewest = count if fewest is None else min(fewest, count)
        out[file_id] = fewest or 0
    return out


STEM_SLACK = 5
"""Stage 1 ranks this many candidates beyond the page, so that the page stays full when the
typed-word check (``_typed_words``) drops a stem collision or two."""


_ENDINGS = ("ies", "ing", "es", "ed", "ly", "s", "e", "y")


def _core(word: str) -> str:
    """A word less one inflectional ending (`linked` -> `link`, `policies` -> `polic`)."""
    if not word.endswith(_ENDINGS):  # most words: one test in C, not eight
        return word
    for ending in _ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            return word[: -len(ending)]
    return word


def _same_word(typed: str, word: str) -> bool:
    """Whether a name's word is the typed word, inflected: less one ending each, the shorter
    begins the longer (`links` and `linked`, `run` and `running`, `policy` and `policies`).
    Porter gives `generator` and `general` one stem, `gener`; a person never means one by the
    other."""
    typed, word = _core(typed), _core(word)
    return typed.startswith(word) if len(word) < len(typed) else word.startswith(typed)


def _typed_words(
    conn: "sqlite3.Connection",
    shown: list[Candidate],
    terms: list[str],
    known: "NameRows | None" = None,
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
    known = known or NameRows(conn)
    for row in known.notes(ids):
        text = " ".join(filter(None, (row["stem"], row["frontmatter_title"], row["first_h1"])))
        words[row["file_id"]]["title"] = {w.lower() for w in alnum_runs(text)}
    for field, values in (("alias", known.aliases_of(ids)), ("tags", known.tags_of(ids))):
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
