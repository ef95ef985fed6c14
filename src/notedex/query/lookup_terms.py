"""The question's terms turned into what the vault holds, before the stages run: CJK runs cut
into the pieces that occur, compounds joined or split and one-edit variants (near misses,
disclosed), and the absent-subject rule (ARCHITECTURE "Two-stage lookup"). Split out of
``query.lookup`` by stage; the SQL is ``store.lookup_terms``'s.
"""

from notedex.query.lookup_stage1 import GENERIC_MIN, GENERIC_SHARE, _generic_floor
from notedex.query.terms import MAX_QUERY_CHARS, keywords
from notedex.store import lookup_terms as sql
from notedex.store import read
from notedex.vault.text import PARTICLES, alnum_runs, fts_phrase, is_cjk, split_words

__all__ = ["GENERIC_MIN", "GENERIC_SHARE"]

TYPE_CHECKING = False  # no `typing` import on the query path; mypy honours the name
if TYPE_CHECKING:
    import sqlite3


MAX_DECOMPOSE_CHARS = 12
MIN_LOOSE_CHARS = 4
"""The shortest Latin word a loose title match (stage 2's) is tried for: `gen` is inside too
many titles. Here, not in ``query.lookup_stage2``, which a lookup imports only when a stage
after the names runs (issue 30's speed budget)."""


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


SPLIT_PARTICLES = ("up", "out", "off", "down", "over")
"""The particles a compound written together is cut at when it occurs nowhere (`startup` ->
`start`, as `start up` is read): not `in` and `on`, which end too many words that are no
compounds (`begin`, `button`, `lesson`), nor `back`, whose compounds mean something else
than their head (`feedback`)."""
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
    expression = "(" + " OR ".join(f'"{v}"' for v in ordered) + ")"  # note_fts: every name
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
    floor = _generic_floor(conn)  # read up to the floor: whether generic needs no more
    return best if not sql.names_reach(conn, f'"{best}"', floor) else None


MIN_PLURAL_CHARS = 4
"""The shortest word whose plural or singular is tried: `bus` and `gas` are too short to say."""


def _plural(conn: "sqlite3.Connection", term: str) -> str | None:
    """The plural or singular of a Latin ``term`` that a name holds when ``term`` matches no
    name, tag, alias or link text: ``alias`` -> ``aliases``. The Porter stemmer that the
    index uses cuts ``alias`` to ``alia`` but ``aliases`` to ``alias`` (and ``canvas`` /
    ``canvases``, ``status`` / ``statuses`` alike), so a word and its plural can miss each
    other although one is written inside the other."""
    low = term.lower()
    if len(low) < MIN_PLURAL_CHARS or not low.isascii() or not low.isalpha():
        return None
    if sql.occurs(conn, f'"{low}"'):
        return None
    forms = [low + "es", low + "s"]
    forms += [low[:-2]] if low.endswith("es") else []
    forms += [low[:-1]] if low.endswith("s") else []
    return next((f for f in forms if len(f) >= 3 and sql.in_names(conn, f'"{f}"')), None)


ACRONYM_WORDS = (3, 4, 5)
"""How many words in a row an acronym of a name may spell out (`command line interface`)."""


def _acronyms(
    conn: "sqlite3.Connection", question: str, terms: list[str], rewritten: "list[dict[str, str]]"
) -> list[str]:
    """Words in a row that spell out an acronym a name writes in capitals, replaced by it:
    ``command line interface`` -> ``cli`` of "Obsidian CLI" (disclosed as ``acronym``). Only
    Latin words of the question's terms, three to five in a row, and only an acronym that a
    title, alias or tag holds as a whole word in capitals: `set up sync` is no `sus`."""
    words = [w for w in split_words(question[:MAX_QUERY_CHARS]) if w.isascii() and w.isalpha()]
    lowered = [term.lower() for term in terms]
    for size in sorted(ACRONYM_WORDS, reverse=True):
        for i in range(len(words) - size + 1):
            run = words[i : i + size]
            if any(w.lower() not in lowered for w in run):
                continue
            acronym = "".join(w[0] for w in run).lower()
            if not _capitals_in_names(conn, acronym):
                continue
            kept = [t for t in terms if t.lower() not in {w.lower() for w in run}]
            at = lowered.index(run[0].lower())
            rewritten.append({"term": " ".join(run), "as": acronym, "how": "acronym"})
            return [*kept[:at], acronym, *kept[at:]]
    return terms


def _capitals_in_names(conn: "sqlite3.Connection", acronym: str) -> bool:
    ids = sql.name_hits(conn, f'"{acronym}"', MAX_VARIANT_HITS)
    if not ids:
        return False
    upper = acronym.upper()
    texts = [
        " ".join(filter(None, (r["stem"], r["frontmatter_title"], r["first_h1"])))
        for r in read.notes_by_ids(conn, ids)
    ]
    for names in (read.aliases_by_note(conn, ids), read.tags_by_note(conn, ids)):
        texts += [" ".join(values) for values in names.values()]
    return any(upper in alnum_runs(text) for text in texts)


def _particle_head(conn: "sqlite3.Connection", term: str) -> str | None:
    """The word before a particle of ``SPLIT_PARTICLES`` that ends ``term``, when no body holds
    ``term`` either and some name or body holds that word: ``startup`` -> ``start``, the
    keyword ``start up`` gives (its particle is a stop word). None otherwise."""
    low = term.lower()
    for particle in SPLIT_PARTICLES:
        head = low[: -len(particle)]
        if not low.endswith(particle) or len(head) < 3 or not keywords(head):
            continue
        if sql.mentioned_in_bodies(conn, f'"{low}"'):
            return None
        expression = f'"{head}"'
        if sql.occurs(conn, expression) or sql.mentioned_in_bodies(conn, expression):
            return head
    return None


def near_misses(
    conn: "sqlite3.Connection", question: str, terms: list[str]
) -> "tuple[list[str], list[dict[str, str]]]":
    """Terms rewritten to what the names hold, each rewrite disclosed (issue 30): a compound
    written apart joined (``set up`` -> ``setup``); and for a Latin term that matches nothing
    (no name, tag, alias, link text, nor inside a title), the compound split (``darkmode`` ->
    ``dark-mode``, a phrase), or cut before its particle when no body holds it either
    (``startup`` -> ``start``, ``_particle_head``), or else a one-edit variant of the names
    (``smyth`` -> ``smith``)."""
    rewritten: list[dict[str, str]] = []
    if any(word.lower() in PARTICLES for word in split_words(question[:MAX_QUERY_CHARS])):
        terms = _joined(conn, question, terms, rewritten)
    terms = _acronyms(conn, question, terms, rewritten)
    out: list[str] = []
    for term in terms:
        expression = fts_phrase(term)
        plural = _plural(conn, term) if expression is not None else None
        if plural is not None:
            rewritten.append({"term": term, "as": plural, "how": "plural"})
            out.append(plural)
            continue
        if (
            expression is None
            or len(term) < MIN_EDIT_CHARS
            or not term.isascii()
            or not term.isalpha()
            or sql.occurs(conn, expression)
            or sql.in_titles(conn, term.lower())
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
        head = _particle_head(conn, term)
        if head is not None:
            rewritten.append({"term": term, "as": head, "how": "split"})
            out.append(head)
            continue
        # a word some note's text holds is the vault's own, no misspelling of a name (and
        # the guess costs an OR of every one-edit spelling: issue 30's speed budget)
        variant = None if sql.mentioned_in_bodies(conn, expression) else _variant(conn, term)
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


MOSTLY_ABSENT = 2
"""The fewest terms that no note mentions (a one-edit guess counted as missing) that make a
question's subject absent when they outnumber the terms that occur: `volcano eruption
history` asks nothing of "Version history", nor `photosynthesis in plants` of "Plans"."""


def _is_korean(term: str) -> bool:
    return any("\uac00" <= ch <= "\ud7af" for ch in term)


def _missing(
    conn: "sqlite3.Connection", terms: list[str], guessed: "dict[str, str] | None" = None
) -> tuple[list[str], bool, list[str], bool]:
    """The terms no note mentions (no name, tag, alias, link text or body holds them), whether
    the question's subject is absent, the terms in note text only, and whether every term a
    name holds is generic.

    Absent: some term is missing and every other term that a name holds is generic
    (``GENERIC_SHARE``, ``GENERIC_MIN``); a term that only a body or a link text holds cannot
    make a stage-1 answer. Then lookup answers nothing (ARCHITECTURE "Two-stage lookup", honest
    empty answers). In note text only: no term is missing and some term is held by bodies
    alone (no name, tag, alias, link text, nor inside a title), and, beside a distinctive name
    word, by fewer bodies than the generic floor: a stage-1 answer would leave it out, so
    lookup asks the bodies too (the body stage, ``lookup``). Asked for two terms or more only:
    a lone term keeps stage 2's loose matches (`itgc`), and reaches the body stage when both
    stages find nothing."""
    if len(terms) < 2:
        return [], False, [], False
    missing: list[str] = []
    present: list[str] = []
    in_text_only: list[str] = []
    guesses: list[str] = []  # typed words only a one-edit variant of the names brought in
    for term in terms:
        expression = fts_phrase(term)
        if expression is None:
            continue
        if _is_korean(term):
            return [], False, [], False  # a stem once its ending is cut (만드 of 만드는)
        if guessed and term in guessed:
            guesses.append(guessed[term])
        elif sql.occurs(conn, expression):
            present.append(term)
        elif sql.mentioned_in_bodies(conn, expression):
            present.append(term)
            loose = len(term) >= (3 if is_cjk(term) else MIN_LOOSE_CHARS)
            if not (loose and sql.in_titles(conn, term.lower())):
                in_text_only.append(term)
        else:
            missing.append(term)
    if (
        missing
        and len(missing) + len(guesses) >= MOSTLY_ABSENT
        and (len(missing) + len(guesses) > len(present))
    ):  # most of what the question names occurs nowhere: its subject is not in the vault
        return [*missing, *guesses], True, [], True
    if not missing and not in_text_only:
        return missing, False, [], False
    floor = _generic_floor(conn)
    cap = int(floor) + 1  # whether generic needs no count past the floor (issue 30's budget)
    named = [sql.name_frequency_capped(conn, fts_phrase(term) or "", cap) for term in present]
    generic = all(count >= floor for count in named if count)
    if missing:
        return missing, generic, [], generic
    if not generic:  # beside a distinctive name word, a word many bodies hold is no subject
        # (`made` of `who made the Nightfall theme`)
        in_text_only = [
            term
            for term in in_text_only
            if sql.body_frequency(conn, fts_phrase(term) or "", cap) < floor
        ]
    return missing, False, in_text_only, generic
