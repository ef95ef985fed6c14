"""`notedex search TEXT`: full-text search over note bodies (the ``body_fts`` table).

The query syntax is deliberately small: words, ``"exact phrases"``, ``prefix*`` and ``-excluded``
terms. It is translated, never passed through: every term becomes a quoted FTS5 string, so
``AND``, ``OR``, ``NOT``, ``NEAR(``, ``:``, ``^``, parentheses and stray quotes are plain words
or punctuation. CJK runs are cut into the same bigrams as the index (``vault.text.segment``).

Positions are exact or absent: the index holds the *segmented* body, so each shown hit is
located by asking FTS5 itself which tokens matched (``highlight()``) and mapping those tokens
back to the note's text on disk, character by character. When the file changed after it was
indexed, the same expression is matched against the text on disk now; when it no longer
matches, the hit is listed without a position rather than with a wrong one.
"""

from __future__ import annotations

import os
import re
import unicodedata
from typing import TYPE_CHECKING, Any

from notedex.errors import UsageError
from notedex.query.terms import MAX_QUERY_CHARS, checked_query, keywords  # noqa: F401 (re-exported)
from notedex.store import fulltext
from notedex.store.connect import read_transaction
from notedex.vault.files import note_text, read_capped, strip_frontmatter
from notedex.vault.text import is_cjk_char, nfc, segment

if TYPE_CHECKING:
    import sqlite3

    from notedex.query.render import Renderer

MAX_TERMS = 32
DEFAULT_LIMIT = 20
SNIPPET_CHARS = 160
MAX_READ_BYTES = 50_000_000  # a note that grew past this since it was indexed gets no position
_SNIPPET_LEAD = 60

_TOKEN = re.compile(r"[^\W_]+")  # what unicode61 keeps of non-CJK text: letters and digits
_MARK_CANDIDATES = [chr(c) for c in range(0xE000, 0xE100)]  # private use: rare in notes, checked


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


def segment_with_offsets(text: str) -> tuple[str, list[int]]:
    """``vault.text.segment`` of an NFC text, plus for every output character its offset in
    ``text`` (-1 for the separators segment inserts). The caller checks the string against
    ``segment`` itself, so a change there can never turn into a wrong position here.
    """
    parts: list[tuple[str, list[int]]] = []
    for start, end, cjk in _runs(text):
        piece = text[start:end]
        if cjk:
            chars = list(range(start, end))
            if len(piece) == 1:
                grams = [(piece, chars)]
            else:
                grams = [(piece[i : i + 2], chars[i : i + 2]) for i in range(len(piece) - 1)]
                grams.append((piece[-1], [end - 1]))
            parts.append(_spaced(grams))
        else:
            stripped = piece.strip()
            if stripped:
                lead = len(piece) - len(piece.lstrip())
                first = start + lead
                parts.append((stripped, list(range(first, first + len(stripped)))))
    return _spaced(parts)


def _spaced(pieces: list[tuple[str, list[int]]]) -> tuple[str, list[int]]:
    """The pieces joined by one space, as segment joins them; a separator's offset is -1."""
    text: list[str] = []
    offsets: list[int] = []
    for piece, piece_offsets in pieces:
        if text:
            text.append(" ")
            offsets.append(-1)
        text.append(piece)
        offsets.extend(piece_offsets)
    return "".join(text), offsets


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
            words = _TOKEN.findall(piece)
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


POSITION_FIELDS = ("line", "column", "match", "snippet", "matchStart", "matchEnd")


def search(
    conn: sqlite3.Connection,
    vault: str | os.PathLike[str],
    query: str,
    *,
    limit: int = DEFAULT_LIMIT,
    offset: int = 0,
    paths_only: bool = False,
) -> dict[str, Any]:
    """``paths_only`` (``--paths``, ``-0``): the hits' position fields are left ``None``; no
    highlight and no file is read."""
    terms = parse_query(query)
    expression = match_expression(terms)
    shown = highlight_expression(terms)
    marks = ("\ue000", "\ue001")
    with read_transaction(conn):
        total = fulltext.body_match_count(conn, expression)
        rows = fulltext.body_matches(conn, expression, limit=limit, offset=offset)
        highlights = (
            {}
            if paths_only
            else fulltext.body_highlights(conn, shown, [r["file_id"] for r in rows], marks)
        )
        indexed_bodies = fulltext.body_index_rows(conn) if total == 0 else None
    hits = []
    for row in rows:
        stored = highlights.get(row["file_id"])
        hit: dict[str, Any] = {"path": row["path"], "title": row["title"]}
        if paths_only:
            hit.update(dict.fromkeys(POSITION_FIELDS))
        else:
            disk = os.path.join(vault, row["disk_rel"] or row["path"])
            hit.update(locate_hit(disk, expression, stored, marks, shown))
        hit["score"] = round(-float(row["bm25_score"]), 3) + 0.0
        hits.append(hit)
    if total == 0:
        message = "no matching notes"
        if indexed_bodies == 0:
            message += " (the body index is empty: is body_index switched off in the config?)"
    elif offset or len(hits) < total:
        message = f"notes {offset + 1}-{offset + len(hits)} of {total} (best match first)"
        if not hits:
            message = f"no notes past {offset}; {total} match"
    else:
        message = f"{total} matching note{'s' if total != 1 else ''} (best match first)"
    return {
        "query": query,
        "terms": [t.as_dict() for t in terms],
        "total": total,
        "shown": len(hits),
        "offset": offset,
        "limit": limit,
        "message": message,
        "hits": hits,
    }


_NO_POSITION: dict[str, Any] = {
    "line": None,
    "column": None,
    "match": None,
    "snippet": None,
    "matchStart": None,
    "matchEnd": None,
}


def locate_hit(
    disk: str,
    expression: str,
    stored: tuple[str, str] | None,
    marks: tuple[str, str],
    shown: str | None = None,
) -> dict[str, Any]:
    """Line, column (1-based, in characters of the file) and snippet of a note's first hit.

    ``stored`` was highlighted with ``shown`` (highlight_expression: keywords, never stop
    words); a note that changed on disk must still match ``expression`` to get a position.
    """
    try:
        raw, _info = read_capped(disk, MAX_READ_BYTES)
    except OSError:  # a folder or FIFO now (NotARegularFile), or gone
        return dict(_NO_POSITION)
    if len(raw) > MAX_READ_BYTES:
        return dict(_NO_POSITION)
    text = note_text(raw)  # as the parser reads it
    body = strip_frontmatter(text)
    body_start = len(text) - len(body)
    nbody = nfc(body)
    seg, offsets = segment_with_offsets(nbody)
    if seg != segment(body):
        return dict(_NO_POSITION)  # our mapping disagrees with the index's segmentation
    highlighted: str | None = None
    if stored is not None and stored[0] == seg and not any(m in seg for m in marks):
        highlighted = stored[1]
    else:
        # The file changed since it was indexed (or the marks occur in it): match it as it is.
        marks = _free_marks(seg)
        highlighted = fulltext.highlight_text(expression, seg, marks)
        if highlighted is not None and shown is not None and shown != expression:
            highlighted = fulltext.highlight_text(shown, seg, marks)
    if highlighted is None:
        return dict(_NO_POSITION)
    seg_start = highlighted.find(marks[0])
    close = highlighted.find(marks[1], seg_start + 1)
    if seg_start < 0 or close < 0:
        return dict(_NO_POSITION)
    seg_end = close - len(marks[0])  # no other marks before the first pair
    if seg_end <= seg_start or offsets[seg_start] < 0 or offsets[seg_end - 1] < 0:
        return dict(_NO_POSITION)
    start = _original_offset(body, nbody, offsets[seg_start])
    end = _original_offset(body, nbody, offsets[seg_end - 1] + 1, end=True)
    return _position(text, body_start + start, body_start + end)


def _free_marks(text: str) -> tuple[str, str]:
    free = [c for c in _MARK_CANDIDATES if c not in text]
    return free[0], free[1]


def _original_offset(body: str, nbody: str, offset: int, *, end: bool = False) -> int:
    """An offset in nfc(body) as an offset in body (they differ only for NFD text).

    An ``end`` offset takes the combining marks that belong to the character before it.
    """
    if body == nbody:
        return offset
    line = nbody.count("\n", 0, offset)
    column = offset - (nbody.rfind("\n", 0, offset) + 1)
    line_start = 0
    for _ in range(line):
        line_start = body.index("\n", line_start) + 1
    line_end = body.find("\n", line_start)
    original_line = body[line_start : line_end if line_end >= 0 else len(body)]
    k = 0
    while k < len(original_line) and len(unicodedata.normalize("NFC", original_line[:k])) < column:
        k += 1
    while end and k < len(original_line) and unicodedata.combining(original_line[k]):
        k += 1
    return line_start + k


def _position(text: str, start: int, end: int) -> dict[str, Any]:
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", start)
    if line_end < 0:
        line_end = len(text)
    line_text = text[line_start:line_end].rstrip("\r")
    column0 = start - line_start
    match_end = min(end, line_start + len(line_text)) - line_start
    window_start = 0
    if len(line_text) > SNIPPET_CHARS:
        window_start = max(0, min(column0 - _SNIPPET_LEAD, len(line_text) - SNIPPET_CHARS))
    window = line_text[window_start : window_start + SNIPPET_CHARS]
    lead = "…" if window_start > 0 else ""
    tail = "…" if window_start + SNIPPET_CHARS < len(line_text) else ""
    match_end = min(match_end, window_start + SNIPPET_CHARS)
    return {
        "line": text.count("\n", 0, start) + 1,
        "column": column0 + 1,
        "match": line_text[column0:match_end],
        "snippet": lead + window + tail,
        "matchStart": len(lead) + column0 - window_start,
        "matchEnd": len(lead) + match_end - window_start,
    }


# -- text output --------------------------------------------------------------------------------


def render_search(r: Renderer, data: dict[str, Any]) -> None:
    """Text output: ``path:line:column  title`` and the snippet with the hit marked."""
    bold = ("\x1b[1m", "\x1b[0m") if r.links else ("«", "»")
    for hit in data["hits"]:
        where = (
            r.path(hit["path"], hit["line"], hit["column"]) if hit["line"] else r.path(hit["path"])
        )
        r.line(f"{where}  {hit['title']}")
        if hit["snippet"] is not None:
            s, a, b = hit["snippet"], hit["matchStart"], hit["matchEnd"]
            r.line("    " + s[:a] + bold[0] + s[a:b] + bold[1] + s[b:])
        else:
            r.line(
                "    (no position: the file changed or cannot be read; `notedex index` updates it)"
            )
    if data["hits"]:
        r.line()
    r.line(data["message"])
