"""Quotes as a reader writes them: the normalisation a quote check compares on, and the search.

Pure text functions, no database and no I/O. A note's body and a quoted passage go through the
same ``normalise``: NFC, every run of whitespace and line breaks one space (none next to a CJK
character or CJK punctuation: CJK text has no spaces between words, so a line break there is
none), Markdown emphasis and code marks (``*``, ``_``,
backticks, ``~~``, ``==``) dropped, a wikilink read as its display text (``[[Target|shown]]`` ->
``shown``, ``[[Target]]`` -> ``Target``), a Markdown link or image as its text, and curly quotes
as straight ones. The normalised text keeps a map back to the source, so a match has a line and
a column in the file.

The closest passage of a quote that is not found is bounded work on any note: the quote is cut
into short anchors (at most ``MAX_ANCHORS``), each anchor's occurrences (at most
``MAX_OCCURRENCES``) vote for where the quote would start, and ``difflib`` aligns the quote only
with the windows around the best ``MAX_WINDOWS`` votes, never with the whole note.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from bisect import bisect_right
from collections import defaultdict
from dataclasses import dataclass

from notedex.vault.text import is_cjk_char

MAX_QUOTE_CHARS = 5000
"""A longer quote is an input error: a citation quotes a passage, not a chapter."""
MAX_ANCHORS = 64
MAX_OCCURRENCES = 64
MAX_WINDOWS = 8
ANCHOR_CHARS = 5

_QUOTES = str.maketrans({"“": '"', "”": '"', "„": '"', "‟": '"', "‘": "'", "’": "'", "‚": "'"})
# One token at a time: a wikilink, a Markdown link, an emphasis mark, whitespace, plain text.
_TOKEN = re.compile(
    r"(?P<wiki>!?\[\[(?P<target>[^\[\]\n|]*)(?:\|(?P<shown>[^\[\]\n]*))?\]\])"
    r"|(?P<link>!?\[(?P<text>[^\[\]\n]*)\]\([^()\n]*\))"
    r"|(?P<mark>[*_`]+|~~|==)"
    r"|(?P<space>\s+)"
    r"|(?P<plain>[^\s\[\]!*_`~=]+(?: [^\s\[\]!*_`~=]+)*|.)",
    re.DOTALL,
)


@dataclass(frozen=True)
class Normalised:
    """Normalised text and, per piece, where it starts here and in the source."""

    text: str
    starts: tuple[int, ...]
    """Where each piece starts in ``text``."""
    sources: tuple[int, ...]
    """Where the same piece starts in the source; a piece is contiguous there."""
    ends: tuple[int, ...]
    """Where each piece ends in the source (a collapsed space: the end of its run)."""

    def source_start(self, index: int) -> int:
        """The source offset of the normalised character at ``index``."""
        piece = bisect_right(self.starts, index) - 1
        if self.ends[piece] - self.sources[piece] == len(self._piece(piece)):
            return self.sources[piece] + (index - self.starts[piece])
        return self.sources[piece]  # a collapsed space: the start of its run

    def source_end(self, index: int) -> int:
        """The source offset just after the normalised character at ``index - 1``."""
        piece = bisect_right(self.starts, index - 1) - 1
        if self.ends[piece] - self.sources[piece] == len(self._piece(piece)):
            return self.sources[piece] + (index - self.starts[piece])
        return self.ends[piece]

    def _piece(self, piece: int) -> str:
        end = self.starts[piece + 1] if piece + 1 < len(self.starts) else len(self.text)
        return self.text[self.starts[piece] : end]


def _spaceless(ch: str) -> bool:
    """CJK characters, CJK punctuation (、。「」) and full-width forms (，：) take no spaces."""
    code = ord(ch)
    return is_cjk_char(ch) or 0x3000 <= code <= 0x303F or 0xFF00 <= code <= 0xFFEF


class _Builder:
    def __init__(self, source: str) -> None:
        self.source = source
        self.pieces: list[str] = []
        self.starts: list[int] = []
        self.sources: list[int] = []
        self.ends: list[int] = []
        self.size = 0
        self.pending_space: tuple[int, int] | None = None

    def text(self, start: int, end: int) -> None:
        if self.pending_space is not None:
            space_start, space_end = self.pending_space
            self.pending_space = None
            last = self.pieces[-1][-1] if self.pieces else ""
            if self.pieces and not (_spaceless(last) or _spaceless(self.source[start])):
                self._add(" ", space_start, space_end)
        self._add(self.source[start:end], start, end)

    def _add(self, piece: str, start: int, end: int) -> None:
        self.pieces.append(piece)
        self.starts.append(self.size)
        self.sources.append(start)
        self.ends.append(end)
        self.size += len(piece)

    def plain(self, start: int, end: int) -> None:
        """Words joined by single spaces: one piece, cut only where a space sits next to a CJK
        character (that space is dropped, as ``text`` drops a line break there)."""
        run = self.source[start:end]
        piece = 0
        space = -1 if run.isascii() else run.find(" ")
        while space >= 0:
            if _spaceless(run[space - 1]) or _spaceless(run[space + 1]):
                self.text(start + piece, start + space)
                self.pending_space = (start + space, start + space + 1)
                piece = space + 1
            space = run.find(" ", space + 1)
        self.text(start + piece, end)

    def scan(self, start: int, end: int) -> None:
        for match in _TOKEN.finditer(self.source, start, end):
            kind = match.lastgroup
            if kind == "plain":
                self.plain(match.start(), match.end())
            elif kind == "space":
                if self.pending_space is None:
                    self.pending_space = (match.start(), match.end())
            elif kind == "wiki":
                group = "shown" if match.group("shown") is not None else "target"
                self.scan(match.start(group), match.end(group))
            elif kind == "link":
                self.scan(match.start("text"), match.end("text"))
            # "mark": emphasis and code marks are not part of what a reader quotes


def normalise(text: str, start: int = 0) -> Normalised:
    """``text[start:]`` as a reader would quote it, with the map back to offsets of ``text``
    (module docstring). ``text`` should already be NFC; a quote goes through ``normalise_quote``.
    """
    builder = _Builder(text)
    builder.scan(start, len(text))
    return Normalised(
        "".join(builder.pieces).translate(_QUOTES),
        tuple(builder.starts),
        tuple(builder.sources),
        tuple(builder.ends),
    )


def normalise_quote(quote: str) -> str:
    """The quote as compared: the same normalisation as a note's body."""
    return normalise(unicodedata.normalize("NFC", quote)).text


@dataclass(frozen=True)
class Passage:
    """Where a quote (or its closest passage) is: offsets in the source, and its similarity."""

    start: int
    end: int
    similarity: float


def find_quote(body: Normalised, quote: str) -> Passage | None:
    """The first occurrence of the normalised ``quote`` in ``body``, or None."""
    at = body.text.find(quote) if quote else -1
    if at < 0:
        return None
    return Passage(body.source_start(at), body.source_end(at + len(quote)), 1.0)


def closest_passage(body: Normalised, quote: str) -> Passage | None:
    """The passage of ``body`` most like ``quote`` (bounded work: module docstring), or None
    when no piece of the quote occurs anywhere in the body."""
    text = body.text
    best: tuple[float, int, int] | None = None
    for start in _likely_starts(text, quote):
        low = max(0, start - len(quote) // 2 - ANCHOR_CHARS)
        window = text[low : start + len(quote) + len(quote) // 2 + ANCHOR_CHARS]
        matcher = difflib.SequenceMatcher(None, quote, window, autojunk=False)
        blocks = [b for b in matcher.get_matching_blocks() if b.size]
        if not blocks:
            continue
        span = window[blocks[0].b : blocks[-1].b + blocks[-1].size]
        score = difflib.SequenceMatcher(None, quote, span, autojunk=False).ratio()
        if best is None or score > best[0]:
            best = (score, low + blocks[0].b, low + blocks[-1].b + blocks[-1].size)
    if best is None:
        return None
    score, start, end = best
    return Passage(body.source_start(start), body.source_end(end), round(score, 4))


def _anchors(quote: str) -> list[tuple[int, str]]:
    """Short pieces of the quote, evenly spread, with their offsets in it."""
    size = max(1, min(ANCHOR_CHARS, len(quote) // 3 or 1))
    offsets = range(0, max(1, len(quote) - size + 1), max(1, size // 2 + 1))
    step = max(1, len(offsets) // MAX_ANCHORS + (len(offsets) % MAX_ANCHORS > 0))
    return [(at, quote[at : at + size]) for at in offsets[::step]]


def _likely_starts(text: str, quote: str) -> list[int]:
    """Where the quote most likely starts: each anchor's occurrences vote (rare ones count more).

    An anchor found more than ``MAX_OCCURRENCES`` times is lengthened until it is rarer, so a
    common word does not crowd out the place the quote comes from.
    """
    bucket = max(8, len(quote) // 4)
    votes: defaultdict[int, float] = defaultdict(float)
    first: dict[int, int] = {}
    for offset, anchor in _anchors(quote):
        found = _occurrences(text, anchor)
        while len(found) > MAX_OCCURRENCES and offset + len(anchor) < len(quote):
            anchor = quote[offset : offset + 2 * len(anchor)]
            found = _occurrences(text, anchor)
        for at in found[:MAX_OCCURRENCES]:
            start = max(0, at - offset)
            votes[start // bucket] += 1 / len(found)
            first.setdefault(start // bucket, start)
    ranked = sorted(votes, key=lambda key: (-votes[key], key))[:MAX_WINDOWS]
    return [first[key] for key in ranked]


def _occurrences(text: str, anchor: str) -> list[int]:
    """Where ``anchor`` occurs, up to one more than ``MAX_OCCURRENCES``."""
    found: list[int] = []
    at = text.find(anchor)
    while at >= 0 and len(found) <= MAX_OCCURRENCES:
        found.append(at)
        at = text.find(anchor, at + 1)
    return found
