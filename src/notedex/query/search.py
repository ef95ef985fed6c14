"""`notedex search TEXT`: full-text search over note bodies (the ``body_fts`` table).

The query syntax is deliberately small: words, ``"exact phrases"``, ``prefix*`` and ``-excluded``
terms. It is translated, never passed through: every term becomes a quoted FTS5 string, so
``AND``, ``OR``, ``NOT``, ``NEAR(``, ``:``, ``^``, parentheses and stray quotes are plain words
or punctuation. CJK runs are cut into the same bigrams as the index (``vault.text.segment``).

Positions are exact or absent: the index holds the *segmented* body, so each shown hit is
located by asking FTS5 itself which tokens matched (``highlight()``) and mapping those tokens
back to the note's text on disk (``query.positions``). When the file changed after it was
indexed, the same expression is matched against the text on disk now; when it no longer
matches, the hit is listed without a position rather than with a wrong one.

Positions cost a file read and a ``highlight()`` per hit, so only the hits shown get them, and
``paths_only`` (``search --paths``: every matching note, the job of ``rg -l``) gets none: it is
one FTS5 query ranked by bm25 and reads no file (issue 15), in the order of the other outputs.
"""

from __future__ import annotations

import os

from notedex.errors import UsageError
from notedex.query.terms import MAX_QUERY_CHARS, checked_query, keywords  # noqa: F401 (re-exported)
from notedex.store import fulltext
from notedex.store.connect import read_transaction
from notedex.vault.text import alnum_runs, is_cjk_char, nfc

TYPE_CHECKING = False  # no `typing` import on the query path (a hot-path module); mypy honours it
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Iterable, Iterator
    from typing import Any

    from notedex.query.filters import NoteFilter
    from notedex.query.render import Renderer
    from notedex.query.stream import Document

MAX_TERMS = 32
DEFAULT_LIMIT = 20


__all__ = [
    "match_expression",
    "parse_query",
    "phrase_expression",
    "render_search",
    "search",
    "search_paths",
    "segment_with_offsets",  # noqa: F822 (lazy, below)
]


def __getattr__(name: str) -> Any:
    """``segment_with_offsets`` lives in ``query.positions``, loaded only when positions are."""
    if name == "segment_with_offsets":
        from notedex.query.positions import segment_with_offsets

        return segment_with_offsets
    raise AttributeError(name)


class Term:
    """One term of a search, as typed, and the safe FTS5 expression it became."""

    __slots__ = ("exclude", "expression", "kind", "text")

    def __init__(self, text: str, kind: str, exclude: bool, expression: str) -> None:
        self.text = text
        self.kind = kind
        """``word``, ``phrase`` or ``prefix``."""
        self.exclude = exclude
        self.expression = expression

    def __repr__(self) -> str:
        return f"Term({self.text!r}, {self.kind!r}, exclude={self.exclude}, {self.expression!r})"

    def as_dict(self) -> dict[str, Any]:
        return {"text": self.text, "kind": self.kind, "exclude": self.exclude}


# -- CJK runs, shared by query and position mapping ----------------------------------------------


def _runs(text: str) -> list[tuple[int, int, bool]]:
    """Maximal runs of CJK / non-CJK characters: (start, end, is_cjk)."""
    runs: list[tuple[int, int, bool]] = []
    start = 0
    current: bool | None = None
    for i, ch in enumerate(text):
        kind = is_cjk_char(ch)
        if kind is not current:
            if current is not None:
                runs.append((start, i, current))
            start, current = i, kind
    if current is not None:
        runs.append((start, len(text), current))
    return runs


# -- the query language ---------------------------------------------------------------------------


def phrase_expression(text: str, *, prefix: bool = False) -> str | None:
    """A run of words as one quoted FTS5 phrase whose tokens line up with the index.

    A CJK run becomes its bigrams; its last single character (which segment() appends only
    where a run ends) is kept when more words follow, since the run must end there in the text
    too. A phrase that ends in a one-character CJK run is a prefix phrase, so the character also
    matches the bigram it starts in a longer run. None when there is nothing to search for.
    """
    text = nfc(text)
    pieces: list[tuple[list[str], bool]] = []
    for start, end, cjk in _runs(text):
        piece = text[start:end]
        if cjk:
            pieces.append(([piece], True))
        else:
            words = alnum_runs(piece)  # what unicode61 keeps of non-CJK text
            if words:
                pieces.append((words, False))
    if not pieces:
        return None
    tokens: list[str] = []
    for index, (words, cjk) in enumerate(pieces):
        if not cjk:
            tokens.extend(words)
            continue
        run = words[0]
        last = index == len(pieces) - 1
        if len(run) == 1:
            tokens.append(run)
            prefix = prefix or last
        else:
            tokens.extend(run[i : i + 2] for i in range(len(run) - 1))
            if not last:
                tokens.append(run[-1])
    # Tokens hold letters, digits and CJK only: nothing in them can end the quoted string.
    return '"' + " ".join(tokens) + '"' + (" *" if prefix else "")


def parse_query(query: str) -> list[Term]:
    """Split the search text into terms. Raises UsageError when there is nothing to search."""
    checked_query(query, "search text")
    terms: list[Term] = []
    i, n = 0, len(query)

    def add(text: str, kind: str, exclude: bool) -> None:
        expression = phrase_expression(text, prefix=kind == "prefix")
        if expression is not None:
            terms.append(Term(text, kind, exclude, expression))

    while i < n:
        ch = query[i]
        if ch.isspace():
            i += 1
            continue
        exclude = False
        if ch == "-" and i + 1 < n and not query[i + 1].isspace():
            exclude = True
            i += 1
            ch = query[i]
        if ch == '"':
            close = query.find('"', i + 1)
            if close != -1:
                prefix = close + 1 < n and query[close + 1] == "*"
                add(query[i + 1 : close], "prefix" if prefix else "phrase", exclude)
                i = close + (2 if prefix else 1)
                continue
            i += 1  # an unbalanced quote is just a character
        end = i
        while end < n and not query[end].isspace():
            end += 1
        word = query[i:end]
        i = end
        if word.endswith("*"):
            add(word.rstrip("*"), "prefix", exclude)
        else:
            add(word, "word", exclude)
    if not terms:
        raise UsageError("nothing to search for: give at least one word (letters or digits)")
    if len(terms) > MAX_TERMS:
        raise UsageError(f"too many search terms ({len(terms)}; at most {MAX_TERMS})")
    if all(t.exclude for t in terms):
        raise UsageError("give at least one word to look for; -word only excludes notes")
    return terms


def highlight_expression(terms: list[Term]) -> str:
    """What a hit is located and highlighted by: the included terms that are keywords.

    A word that lookup's term pipeline drops (a stop word: ``to``, ``a``, ``の``) still has to
    match, but is never the hit shown; a query of stop words only highlights them all.
    """
    include = [t for t in terms if not t.exclude]
    wanted = [t for t in include if t.kind != "word" or keywords(t.text)] or include
    expressions = [t.expression for t in wanted]
    return expressions[0] if len(expressions) == 1 else "(" + " OR ".join(expressions) + ")"


def match_expression(terms: list[Term]) -> str:
    include = [t.expression for t in terms if not t.exclude]
    exclude = [t.expression for t in terms if t.exclude]
    expression = include[0] if len(include) == 1 else "(" + " AND ".join(include) + ")"
    if exclude:
        expression += " NOT (" + " OR ".join(exclude) + ")"
    return expression


# -- search -------------------------------------------------------------------------------------


INDEXED_FROM = 64
"""From this many hits shown, a one-word search takes their first matches from the index's
position lists (``positions.locate_indexed``, issue 35): one read of the word's instances
instead of matching every hit's text again; a smaller page reads no more than its notes."""


def _single_token(terms: list[Term]) -> str | None:
    """The index term of a search for one token (a word, or a phrase of one word, no
    exclusion), whose first instance in a note is its first match; None for any other search."""
    if len(terms) != 1 or terms[0].exclude or terms[0].kind == "prefix":
        return None
    token = terms[0].expression[1:-1]  # '"token"': tokens hold no quote (phrase_expression)
    if not token or " " in token:
        return None
    return fulltext.index_term(token)


# A hit without a position: every position field null (docs/cli.md "search").
NO_POSITION: dict[str, Any] = dict.fromkeys(
    ("line", "column", "match", "snippet", "matchStart", "matchEnd")
)


def search(
    conn: sqlite3.Connection,
    vault: str | os.PathLike[str],
    query: str,
    *,
    limit: int = DEFAULT_LIMIT,
    offset: int = 0,
    paths_only: bool = False,
    follow_symlinks: bool = False,
    nf: NoteFilter | None = None,
) -> dict[str, Any]:
    """One page of hits, best first. ``paths_only``: no positions or snippets (they are null),
    so no file is read and no ``highlight()`` runs: the cost of listing every hit.
    ``follow_symlinks``: the setting, for the reads of the positions (``vault.reading``)."""
    head, hits = search_parts(
        conn,
        vault,
        query,
        limit=limit,
        offset=offset,
        paths_only=paths_only,
        follow_symlinks=follow_symlinks,
        nf=nf,
    )
    return {**head, "hits": list(hits)}


HITS_AT_ONCE = 8192
"""Hits located together (one batch of reads): what ``search_parts`` holds of them."""

PARALLEL_FROM = 1024
"""From this many hits, the second half of every batch is located in a forked child
(``positions.in_two``, issue 35)."""


def search_parts(
    conn: sqlite3.Connection,
    vault: str | os.PathLike[str],
    query: str,
    *,
    limit: int = DEFAULT_LIMIT,
    offset: int = 0,
    paths_only: bool = False,
    follow_symlinks: bool = False,
    nf: NoteFilter | None = None,
) -> tuple[dict[str, Any], Hits]:
    """``search``'s answer as its head (every key but ``hits``, in order) and its hits, located
    ``HITS_AT_ONCE`` at a time as the iterator is read: a piped answer writes them as they come
    (``stream_search``, issue 35) instead of holding every hit of a million."""
    terms = parse_query(query)
    expression = match_expression(terms)
    firsts: dict[str, tuple[int, int, int]] = {}
    with read_transaction(conn):
        rows = fulltext.body_matches(conn, expression, limit=limit, offset=offset, nf=nf)
        # A first page shorter than the limit is every match: no second pass to count them.
        complete = offset == 0 and len(rows) < limit
        total = len(rows) if complete else fulltext.body_match_count(conn, expression, nf)
        no_bodies = total == 0 and fulltext.body_index_empty(conn)
        term = _single_token(terms) if len(rows) >= INDEXED_FROM and not paths_only else None
        if term is not None:
            firsts = fulltext.first_offsets(conn, term)
    shown = len(rows)
    if total == 0:
        message = "no matching notes"
        if no_bodies:
            message += " (the body index is empty: is body_index switched off in the config?)"
    elif offset or shown < total:
        message = f"notes {offset + 1}-{offset + shown} of {total} (best match first)"
        if not shown:
            message = f"no notes past {offset}; {total} match"
    else:
        message = f"{total} matching note{'s' if total != 1 else ''} (best match first)"
    head = {
        "query": query,
        "terms": [t.as_dict() for t in terms],
        "total": total,
        "shown": shown,
        "offset": offset,
        "limit": limit,
        "message": message,
    }
    hits: Hits
    if paths_only or not rows:  # no file to read: not even the positions module or stop lists
        hits = Hits(lambda each: (_hit(row, NO_POSITION) for row in rows))
    else:
        hits = Hits(
            lambda each: _located(rows, vault, terms, expression, firsts, follow_symlinks, each)
        )
    return head, hits


def _hit(row: tuple[float, str, str | None, str], position: dict[str, Any]) -> dict[str, Any]:
    bm25, path, _, title = row
    return {"path": path, "title": title, **position, "score": round(-float(bm25), 3) + 0.0}


def _located(
    rows: list[tuple[float, str, str | None, str]],
    vault: str | os.PathLike[str],
    terms: list[Term],
    expression: str,
    firsts: dict[str, tuple[int, int, int]],
    follow_symlinks: bool,
    each: Callable[[dict[str, Any]], Any] | None,
) -> Iterator[Any]:
    """The hits of ``rows`` with their positions (``each`` of each, when given: its rendering),
    ``HITS_AT_ONCE`` rows at a time, the second half of each batch in a forked child from
    ``PARALLEL_FROM`` hits (``positions.in_two``)."""
    from notedex.query.positions import locate_hits, locate_indexed, locate_unsure
    from notedex.vault.reading import VaultReader

    shown = highlight_expression(terms)  # loads the stop lists: only for positions
    word = terms[0].expression.strip('"')

    orders: dict[int, list[int]] = {}  # the first half's, until its batch is put back in order

    def path_order(start: int) -> list[int]:
        """The batch at ``start``'s rows in the order of their paths on disk: folder by folder.
        The reader keeps a bounded number of folders open, and hits in rank order cross every
        folder of a large vault again and again (issue 35: 2.5 folder opens a hit at 100k)."""
        rels = [disk_rel or path for _, path, disk_rel, _ in rows[start : start + HITS_AT_ONCE]]
        return sorted(range(len(rels)), key=rels.__getitem__)

    def part(start: int, second: bool) -> list[Any]:
        """Half of the batch at ``start``: its hits (each's values), in path order."""
        batch = rows[start : start + HITS_AT_ONCE]
        rels = [disk_rel or path for _, path, disk_rel, _ in batch]
        if second:
            order = orders.get(start) or path_order(start)
            order = order[len(order) // 2 :]
        else:
            order = orders.setdefault(start, path_order(start))
            order = order[: len(order) // 2]
        notes = [(batch[i][1], rels[i]) for i in order]
        found = dict(zip(order, locate_indexed(files, notes, firsts, word)))
        unsure = [i for i in order if found[i] is None and batch[i][1] in firsts]
        if unsure:
            notes = [(batch[i][1], rels[i]) for i in unsure]
            found.update(zip(unsure, locate_unsure(files, notes, firsts, word)))
        rest = [i for i in order if found[i] is None]
        found.update(zip(rest, locate_hits(files, [rels[i] for i in rest], expression, shown)))
        hits = [_hit(batch[i], found[i] or NO_POSITION) for i in order]
        return hits if each is None else [each(hit) for hit in hits]

    with VaultReader(vault, follow_outside=follow_symlinks) as files:
        starts = range(0, len(rows), HITS_AT_ONCE)
        pairs: Iterable[tuple[list[Any], list[Any]]]
        if len(rows) >= PARALLEL_FROM:
            from notedex.query.positions import in_two

            pairs = in_two(starts, part)
        else:
            pairs = ((part(start, False), part(start, True)) for start in starts)
        for start, (first, second) in zip(starts, pairs):
            # Back in rank order, from the path order ``part`` read the batch in.
            order = orders.pop(start, None) or path_order(start)
            placed: list[Any] = [None] * len(order)
            for i, value in zip(order, first + second):
                placed[i] = value
            yield from placed


class Hits:
    """``search_parts``' hits, located as they are read: each hit's dict, or with ``each``,
    ``each`` of each hit, run where the hit was located (half of a long search's hits are
    located in a forked child, which renders them there too: ``positions.in_two``)."""

    def __init__(self, make: Callable[[Callable[[dict[str, Any]], Any] | None], Iterator[Any]]):
        self._make = make

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return self._make(None)

    def each(self, render: Callable[[dict[str, Any]], Any]) -> Iterator[Any]:
        return self._make(render)


def _each(hits: Iterable[dict[str, Any]], render: Callable[[dict[str, Any]], Any]) -> Iterator[Any]:
    """``render`` of each of ``hits``, where they were located when they are ``Hits``."""
    return hits.each(render) if isinstance(hits, Hits) else map(render, hits)


def search_paths(
    conn: sqlite3.Connection,
    query: str,
    *,
    limit: int = DEFAULT_LIMIT,
    offset: int = 0,
    nf: NoteFilter | None = None,
    path_order: bool = False,
) -> list[str]:
    """The paths ``search --paths``/``-0`` print: the notes of ``search``'s page, no more, in
    its order (best match first), whether or not the page holds every match, so that
    ``search X --paths | head -1`` is the best match (issue 34; docs/cli.md "search").
    ``path_order`` (``--sort path``, issue 32): the page of the matches in vault path order
    instead, from one query without bm25."""
    if path_order:
        expression = match_expression(parse_query(query))
        with read_transaction(conn):
            paths = fulltext.body_match_paths(conn, expression, limit=offset + limit, nf=nf)
        return paths[offset:]
    data = search(conn, "", query, limit=limit, offset=offset, paths_only=True, nf=nf)
    return [hit["path"] for hit in data["hits"]]


# -- text output --------------------------------------------------------------------------------


def render_search(r: Renderer, data: dict[str, Any]) -> None:
    """Text output: ``path:line:column  title`` and the snippet with the hit marked."""
    if render_hits(r, data["hits"]):
        r.line()
    r.line(data["message"])


def render_hits(r: Renderer, hits: Iterable[dict[str, Any]]) -> bool:
    """``render_search``'s lines of each hit; whether there was one."""
    bold = ("\x1b[1m", "\x1b[0m") if r.links else ("«", "»")

    def lines(hit: dict[str, Any]) -> str:
        where = (
            r.path(hit["path"], hit["line"], hit["column"]) if hit["line"] else r.path(hit["path"])
        )
        if hit["snippet"] is None:
            return f"{where}  {r.name(hit['title'])}\n    {_NO_POSITION_LINE}\n"
        s, a, b = hit["snippet"], hit["matchStart"], hit["matchEnd"]
        return f"{where}  {r.name(hit['title'])}\n    {s[:a]}{bold[0]}{s[a:b]}{bold[1]}{s[b:]}\n"

    any_hit = False
    for text in _each(hits, lines):
        any_hit = True
        r.out.write(text)
    return any_hit


_NO_POSITION_LINE = "(no position: the file changed or cannot be read; `notedex index` updates it)"


def stream_search(
    doc: Document,
    head: dict[str, Any],
    hits: Iterable[dict[str, Any]],
    *,
    as_json: bool,
    vault: str | os.PathLike[str] = "",
    color: str = "auto",
) -> None:
    """``search``'s piped answer written hit after hit (issue 35): the bytes of
    ``compact_json`` of the whole answer, or of ``render_search`` on a pipe, without the final
    newline (``stream.streamed`` adds it)."""
    if as_json:
        from notedex.query.output import compact_encoder

        encode = compact_encoder()
        opening = encode({**head, "hits": []})  # ... "hits":[]}
        doc.add(opening[:-2])
        doc.items(_each(hits, encode))
        doc.add("]}")
        return
    from notedex.query.output import Renderer

    r = Renderer(vault, doc, color)  # type: ignore[arg-type]  # a writer that is no terminal
    if render_hits(r, hits):
        r.line()
    doc.add(head["message"])
