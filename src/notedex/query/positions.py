"""Where a search hit is in the file: line, column (1-based, in characters) and a snippet.

The index holds the *segmented* body (``vault.text.segment``), so a hit is located in that text
by asking FTS5 which tokens matched (``highlight()``) and is mapped back to the note's text on
disk. The mapping is a short list of blocks, one per piece ``segment`` keeps (a stretch of
non-CJK text, or a whole CJK run as bigrams), built from ``vault.text.cjk_run_spans`` (no
``re``) and looked up with ``bisect``: per character it costs only in the words holding CJK text,
which is what let a search that shows every hit stop spending its time here (issue 15).
"""

from __future__ import annotations

import unicodedata
from bisect import bisect_right

from notedex.query.search import NO_POSITION
from notedex.store import fulltext
from notedex.vault.files import note_text, strip_frontmatter
from notedex.vault.reading import VaultReader
from notedex.vault.text import cjk_run_spans, nfc

TYPE_CHECKING = False  # no `typing` import on the query path (a hot-path module); mypy honours it
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

MAX_READ_BYTES = 50_000_000  # a note that grew past this since it was indexed gets no position
SNIPPET_CHARS = 160
_SNIPPET_LEAD = 60
_MARK_CANDIDATES = [chr(c) for c in range(0xE000, 0xE100)]  # private use: rare in notes, checked


class SegmentMap:
    """``segment(text)`` of an NFC text and the way back from its offsets to ``text``'s.

    ``blocks[i] = (seg_start, text_start, cjk)``. A non-CJK block is a stretch copied as is; a
    CJK block is a run of L characters written as L-1 bigrams and its last character, each
    followed by a space: offset ``3g + r`` in it is character ``g + r`` of the run (r < 2).
    """

    __slots__ = ("blocks", "ends", "starts", "text")

    def __init__(self, text: str) -> None:
        parts: list[str] = []
        blocks: list[tuple[int, int, bool]] = []
        ends: list[int] = []
        at = 0

        def add(piece: str, start: int, cjk: bool) -> None:
            nonlocal at
            if parts:
                parts.append(" ")
                at += 1
            blocks.append((at, start, cjk))
            parts.append(piece)
            at += len(piece)
            ends.append(at)

        pos = 0
        for start, end in [*cjk_run_spans(text), (len(text), len(text))]:
            if start > pos:
                piece = text[pos:start]
                stripped = piece.strip()
                if stripped:
                    add(stripped, pos + len(piece) - len(piece.lstrip()), False)
            if end > start:
                run = text[start:end]
                grams = [run[i : i + 2] for i in range(len(run) - 1)]
                add(" ".join([*grams, run[-1]]), start, True)
            pos = end
        self.text = "".join(parts)
        self.blocks = blocks
        self.starts = [b[0] for b in blocks]
        self.ends = ends

    def offset(self, at: int) -> int:
        """The offset in the original text of segmented character ``at``; -1 for a separator."""
        i = bisect_right(self.starts, at) - 1
        if i < 0 or at >= self.ends[i]:
            return -1
        seg_start, start, cjk = self.blocks[i]
        if not cjk:
            return start + at - seg_start
        gram, rest = divmod(at - seg_start, 3)
        return -1 if rest == 2 else start + gram + rest


def segment_with_offsets(text: str) -> tuple[str, list[int]]:
    """``vault.text.segment`` of an NFC text, plus for every output character its offset in
    ``text`` (-1 for the separators segment inserts): ``SegmentMap`` spelled out, for tests.
    """
    mapping = SegmentMap(text)
    return mapping.text, [mapping.offset(i) for i in range(len(mapping.text))]


class _Note:
    """One hit's file as it is now: its text, its body and the body's segmented map."""

    __slots__ = ("body", "body_start", "mapping", "nbody", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.body = strip_frontmatter(text)
        self.body_start = len(text) - len(self.body)
        self.nbody = nfc(self.body)
        self.mapping = SegmentMap(self.nbody)


def _read(files: VaultReader, rel: str) -> _Note | None:
    try:
        raw, _info = files.read(rel, MAX_READ_BYTES)
    except OSError:  # a folder or FIFO now (NotARegularFile), gone, or outside (OutsideVault)
        return None
    if len(raw) > MAX_READ_BYTES:
        return None
    # As the parser reads it. ``SegmentMap(nfc(body)).text`` is ``segment(body)`` by
    # construction (tests/unit/query/test_positions.py pins it), so no second ``segment`` pass
    # (and its ``re``) checks it here.
    return _Note(note_text(raw))


def locate_hits(
    files: VaultReader, rels: list[str], expression: str, shown: str
) -> list[dict[str, Any]]:
    """Line, column (1-based, in characters of the file) and snippet of each note's first hit,
    ``rels`` the notes' paths on disk, read through ``files`` (none for a note the symlink
    policy refuses now: no text from outside the vault).

    The files are matched as they are on disk now (one private FTS5 table for all of them,
    ``fulltext.highlight_texts``), so a position is never taken from a stale index: a note that
    no longer matches ``expression`` gets none. The hit shown is the first token of ``shown``
    (highlight_expression: keywords, never stop words).
    """
    notes = [_read(files, rel) for rel in rels]
    texts = {i: note.mapping.text for i, note in enumerate(notes) if note is not None}
    marks = _free_marks(texts.values())
    highlighted = fulltext.highlight_texts(expression, shown, texts, marks)
    out = []
    for i, note in enumerate(notes):
        marked = highlighted.get(i)
        out.append(
            dict(NO_POSITION) if note is None or marked is None else _at(note, marked, marks)
        )
    return out


def _at(note: _Note, highlighted: str, marks: tuple[str, str]) -> dict[str, Any]:
    seg_start = highlighted.find(marks[0])
    close = highlighted.find(marks[1], seg_start + 1)
    if seg_start < 0 or close < 0:
        return dict(NO_POSITION)
    seg_end = close - len(marks[0])  # no other marks before the first pair
    first, last = note.mapping.offset(seg_start), note.mapping.offset(seg_end - 1)
    if seg_end <= seg_start or first < 0 or last < 0:
        return dict(NO_POSITION)
    start = _original_offset(note.body, note.nbody, first)
    end = _original_offset(note.body, note.nbody, last + 1, end=True)
    return _position(note.text, note.body_start + start, note.body_start + end)


def _free_marks(texts: Iterable[str]) -> tuple[str, str]:
    """Two private-use characters that occur in none of the texts."""
    candidates = list(_MARK_CANDIDATES)
    for text in texts:
        if not any(c in text for c in candidates[:2]):
            continue
        candidates = [c for c in candidates if c not in text]
    return candidates[0], candidates[1]


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
