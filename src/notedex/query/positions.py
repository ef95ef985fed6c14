"""Where a search hit is in the file: line, column (1-based, in characters) and a snippet.

The index holds the *segmented* body (``vault.text.segment``), so a hit is located in that text
by asking FTS5 which tokens matched (``highlight()``) and is mapped back to the note's text on
disk. The mapping is a short list of blocks, one per piece ``segment`` keeps (a stretch of
non-CJK text, or a whole CJK run as bigrams), built from ``vault.text.cjk_run_spans`` (no
``re``) and looked up with ``bisect``: per character it costs only in the words holding CJK text,
which is what let a search that shows every hit stop spending its time here (issue 15). Many
hits of one word skip that: ``locate_indexed`` takes the first match from the index's position
lists and counts tokens in the file's text to find it there, matching again only what it cannot
be sure of (issue 35).

Over 600 lines on purpose: both ways of locating a hit (``highlight()`` over the segmented text,
and the first indexed position counted in the file's bytes, with the text path as its fallback)
end in the same mapping back to the file's text (``_original_offset``) and the same line,
column and snippet (``_position``, ``_in_line``), and the token classes decide both; a split
by way would put one of them behind an import of the other. The two-core split of a long
search (``in_two``, at the end) is here too: it replaced the per-batch fork that lived here,
and a module of its own would be one more import for every long search.
"""

from __future__ import annotations

import os
import unicodedata
from bisect import bisect_right
from itertools import islice

from notedex.query.search import NO_POSITION
from notedex.store import fulltext
from notedex.store.schema import content_key
from notedex.vault.files import frontmatter_bounds, note_text, strip_frontmatter
from notedex.vault.reading import VaultReader
from notedex.vault.text import cjk_run_spans, is_cjk_char, nfc

TYPE_CHECKING = False  # no `typing` import on the query path (a hot-path module); mypy honours it
if TYPE_CHECKING:
    import re
    from collections.abc import Callable, Iterable, Iterator, Sequence
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


def _position(text: str, start: int, end: int, lines_before: int = 0) -> dict[str, Any]:
    """The hit at ``start:end`` of ``text``, which starts ``lines_before`` lines into the file."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", start)
    return _in_line(
        text[line_start : line_end if line_end >= 0 else len(text)],
        start - line_start,
        end - line_start,
        lines_before + text.count("\n", 0, start),
    )


def _in_line(line: str, column0: int, end: int, lines_before: int) -> dict[str, Any]:
    """The hit at ``column0:end`` of ``line`` (its line break cut off, not a CR before it),
    the file's line ``lines_before + 1``: the position fields and the snippet."""
    line_text = line.rstrip("\r")
    match_end = min(end, len(line_text))
    window_start = 0
    if len(line_text) > SNIPPET_CHARS:
        window_start = max(0, min(column0 - _SNIPPET_LEAD, len(line_text) - SNIPPET_CHARS))
    window = line_text[window_start : window_start + SNIPPET_CHARS]
    lead = "…" if window_start > 0 else ""
    tail = "…" if window_start + SNIPPET_CHARS < len(line_text) else ""
    match_end = min(match_end, window_start + SNIPPET_CHARS)
    return {
        "line": lines_before + 1,
        "column": column0 + 1,
        "match": line_text[column0:match_end],
        "snippet": lead + window + tail,
        "matchStart": len(lead) + column0 - window_start,
        "matchEnd": len(lead) + match_end - window_start,
    }


# -- from the index's position lists (issue 35) -------------------------------------------------


def locate_indexed(
    files: VaultReader,
    hits: list[tuple[str, str]],
    firsts: dict[str, tuple[int, int, int]],
    word: str,
) -> list[dict[str, Any] | None]:
    """``locate_hits``' answer for each of ``hits`` ((path, path on disk)), taken from where
    the index says the note's first match is (``fulltext.first_offsets``: the content key it
    indexed and the token offset), without segmenting or matching the text again; None where
    that cannot be sure (``locate_hits`` answers then).

    Sure means: the file on disk is the content the index holds (read in one ``read`` of the
    size it had and one byte more, no ``fstat``: its length is that size and its sha256 gives
    the stored content key; a FIFO, a folder or a file changed since fails that), and every character up to the match is one whose tokens are counted here
    exactly as unicode61 counts them in ``segment(body)`` (``_token_span``). A single term with
    no exclusion only (``search``): its first instance is then the first match ``highlight()``
    would mark. ``word``: the word searched, as typed (``_token_span``'s hint).
    """
    import hashlib

    hint = word.lower()
    needles = _needles(hint)
    out: list[dict[str, Any] | None] = []
    for path, rel in hits:
        found = firsts.get(path)
        raw = None
        if found is not None and found[2] <= MAX_READ_BYTES:
            try:
                raw = files.read_sized(rel, found[2])
            except OSError:
                raw = None
        if found is None or raw is None or len(raw) != found[2]:
            out.append(None)  # gone, grown or shrunk: matched again as it is now
            continue
        if content_key(hashlib.sha256(raw).hexdigest()) != found[0]:
            out.append(None)  # changed since it was indexed: matched again as it is now
            continue
        out.append(_from_bytes(raw, found[1], needles) or _from_text(raw, found[1], hint))
    return out


def _from_text(raw: bytes, offset: int, hint: str) -> dict[str, Any] | None:
    """The position of token ``offset`` of ``segment(nfc(body))`` in the note whose bytes are
    ``raw``, found in its text (decoded, body, NFC: ``_token_span``); None when unsure."""
    text = note_text(raw)
    body = strip_frontmatter(text)
    nbody = nfc(body)
    span = _token_span(nbody, offset, hint)
    if span is None:
        return None
    body_start = len(text) - len(body)
    start = _original_offset(body, nbody, span[0])
    end = _original_offset(body, nbody, span[1], end=True)
    return _position(text, body_start + start, body_start + end)


def locate_unsure(
    files: VaultReader,
    hits: list[tuple[str, str]],
    firsts: dict[str, tuple[int, int, int]],
    word: str,
) -> list[dict[str, Any] | None]:
    """``locate_indexed`` again for hits it was not sure of, once the characters that stopped
    it are classed by FTS5 itself (``fulltext.token_characters``): a symbol, punctuation or
    space that Unicode 3.2 did not have (an emoji: 191 of 29,999 hits of a word at 100k
    notes) is a separator or a token character by the tables of the SQLite that reads the
    index, whatever this count's own tables say (issue 35). Only those categories: each
    such character is one or the other alone, whatever stands beside it. In this process
    (the classes are kept for its next hits); None where it still cannot be sure."""
    chars: set[str] = set()
    for path, rel in hits:
        found = firsts.get(path)
        if found is None or found[2] > MAX_READ_BYTES:
            continue
        try:
            raw = files.read_sized(rel, found[2])
        except OSError:
            continue
        nbody = nfc(strip_frontmatter(note_text(raw)))
        classes = _classes(nbody)
        at = classes.find(b"x")
        while at >= 0:
            chars.add(nbody[at])
            at = classes.find(b"x", at + 1)
    asked = "".join(
        sorted(ch for ch in chars if unicodedata.category(ch)[0] in "PSZ" and not is_cjk_char(ch))
    )
    if not asked:
        return [None] * len(hits)
    for ch, inside in fulltext.token_characters(asked).items():
        _CLASSES[ord(ch)] = "a" if inside else " "
    return locate_indexed(files, hits, firsts, word)


_BOM = b"\xef\xbb\xbf"


def _needles(hint: str) -> tuple[bytes, ...]:
    """The word as ``_token_span`` looks for it (lower case, capitalised, upper case), in
    UTF-8, each once."""
    return tuple(dict.fromkeys(v.encode("utf-8") for v in (hint, hint.capitalize(), hint.upper())))


def _from_bytes(raw: bytes, offset: int, needles: tuple[bytes, ...]) -> dict[str, Any] | None:
    """``locate_indexed``'s position of token ``offset`` from the file's bytes (issue 35), where
    the answer is the one from the decoded, normalised body's (``_token_span``) and cheaper to
    get: only the body's bytes up to the end of the line where the word first occurs are looked
    at, and only they are decoded (no copy of the whole text, its body or its NFC form). None
    when this cannot be sure, and the caller takes the text's path: the word not in the body as
    written, the match not in that prefix, bytes there that are not UTF-8 (the text's path reads
    them as U+FFFD) or not NFC, or a character whose tokens are not surely counted.

    The frontmatter's bounds are found in the bytes read as Latin-1, one character per byte:
    its markers are ASCII, and no byte of a UTF-8 sequence is, so they are the text's bounds
    counted in bytes. The BOM the text drops is skipped."""
    start = 3 if raw.startswith(_BOM) else 0
    body = _body_start(raw, start) if raw.startswith(b"---", start) else start
    at = -1
    for needle in needles:  # each looks before the last found, as ``_token_span``
        found = raw.find(needle, body, len(raw) if at < 0 else at)
        at = found if found >= 0 else at
    if at < 0:
        return None
    cut = raw.find(b"\n", at)
    if cut < 0:
        cut = len(raw)
    prefix = raw[body:cut]
    text = None
    if prefix.isascii():
        classes = prefix.translate(_BYTE_CLASSES)
        here = at - body
        sure = True  # no ``x`` in ASCII
    else:
        try:
            text = prefix.decode("utf-8")
        except UnicodeDecodeError:
            return None
        classed = _utf8_classes(prefix, text, at - body)
        if classed is None:
            return None
        classes, here, sure = classed
    kind = classes[here : here + 1]
    starts = kind == b"c" or (kind == b"a" and classes[here - 1 : here] != b"a")
    before = -1  # the tokens before it; in ASCII, a letter or digit first or after a separator
    if starts and text is None:
        before = classes.count(b" a", 0, here) + (here > 0 and classes[:1] == b"a")
    elif starts:
        before = _count_tokens(classes, here)
    if before == offset:  # the word found is the match (most hits): only its line is read
        span = _token_at(classes, here, sure)
        if span is None:
            return None
        if text is None:  # ASCII: a character is a byte
            line = raw.rfind(b"\n", body, at) + 1 or body
            column0 = at - line
            line_text = raw[line:cut].decode("ascii")
        else:
            line = text.rfind("\n", 0, here) + 1
            column0 = here - line
            line_text = text[line:]
        return _in_line(line_text, column0, column0 + span[1] - here, raw.count(b"\n", 0, at))
    first = _nth_token(classes, offset)
    span = None if first is None else _token_at(classes, first)
    if span is None:
        return None
    if text is None:
        text = prefix.decode("ascii")
    return _position(text, span[0], span[1], raw.count(b"\n", 0, body))


def _body_start(raw: bytes, start: int) -> int:
    """Where the body of ``raw`` (a note's bytes, ``---`` at ``start``, after any BOM) starts:
    ``frontmatter_bounds`` of the bytes read as Latin-1, one character per byte (its markers
    are ASCII, and no byte of a UTF-8 sequence is, so its bounds are the text's in bytes).
    First of the bytes up to the first line that may close the block: a block closed there
    is closed there in the whole file (the rest is not decoded); else of the whole."""
    close = raw.find(b"\n---", start + 3)
    if close >= 0:
        window = raw[start : close + 8].decode("latin-1")
        bounds = frontmatter_bounds(window)
        if bounds is not None and bounds[2] < len(window):
            return start + bounds[2]
    bounds = frontmatter_bounds(raw[start:].decode("latin-1"))
    return start if bounds is None else start + bounds[2]


def _utf8_classes(prefix: bytes, text: str, split: int) -> tuple[bytes, int, bool] | None:
    """``_from_bytes``' classes of ``text``, ``prefix`` decoded (not ASCII), from its UTF-8,
    the index of the character at byte ``split`` and whether no class is ``x``; None when
    ``text`` is not NFC."""
    table = _BYTE_CLASSES if _HEXAGRAMS in prefix else _BYTE_CLASSES_E4
    blanked = prefix
    if b"\xe3\x80" in prefix or b"\xef\xbc" in prefix:  # CJK punctuation, perhaps
        for sequence, blank in _BLANKED:
            blanked = blanked.replace(sequence, blank)
    head = blanked[:split].translate(table, _CONTINUATION)
    classes = head + blanked[split:].translate(table, _CONTINUATION)
    # All else is ASCII, U+4000-U+9FFF or that punctuation, which NFC leaves as it is.
    if b"x" in classes:
        if not unicodedata.is_normalized("NFC", text):
            return None
        classes = _resolved(text, classes)
        return classes, len(head), b"x" not in classes
    return classes, len(head), True


class _TokenClasses(dict[int, str]):
    """``str.translate``'s table: a character as its class for counting unicode61's tokens in
    ``segment(body)``: ``a`` a letter or digit (a run of them is one token; outside ASCII, one
    that was a letter or digit in Unicode 3.2 and still is: a test checks each), ``c`` a
    CJK letter or digit (one token each: its run's bigram from there, or the run's last
    character), a space for what unicode61 never keeps (ASCII punctuation and spaces, and the
    punctuation, spaces and symbols of Unicode 3.2: a test checks each against FTS5), ``x``
    for anything else, which this count cannot be sure of. Each character is classed once per
    process."""

    def __init__(self) -> None:
        super().__init__((code, "a" if chr(code).isalnum() else " ") for code in range(0x80))

    def __missing__(self, code: int) -> str:
        ch = chr(code)
        kind = unicodedata.category(ch)[0]
        if is_cjk_char(ch):
            value = "c" if kind in "LN" else "x"
        else:
            # unicode61's tables are Unicode 6.1's: a symbol added since is a token character
            # there, so only what was already punctuation, space or symbol in 3.2 is a separator.
            old = unicodedata.ucd_3_2_0.category(ch)[0]
            value = " " if kind in "PZS" and old in "PZS" else "x"
            if kind in "LN" and old in "LN":  # a letter or digit then and now: so in 6.1 too
                value = "a"  # a token character, as ASCII's: ``café`` is one token
        self[code] = value
        return value


_CLASSES = _TokenClasses()
_TOKENS: re.Pattern[bytes] | None = None


def _byte_classes() -> bytes:
    """``bytes.translate``'s table from a UTF-8 byte to ``_CLASSES``' class of its character,
    continuation bytes deleted (``_CONTINUATION``): an ASCII byte is its own character; a lead
    byte E5-E9 starts one of U+5000-U+9FFF, CJK letters all (``c``: a test checks each); any
    other lead byte is ``x``, resolved by ``_classes``."""
    table = bytearray(b"x" * 256)
    for code in range(0x80):
        table[code] = ord(_CLASSES[code])
    table[0xE5:0xEA] = b"c" * 5
    return bytes(table)


_BYTE_CLASSES = _byte_classes()
_CONTINUATION = bytes(range(0x80, 0xC0))
_HEXAGRAMS = b"\xe4\xb7"  # U+4DC0-U+4DFF, the only characters of lead byte E4 not CJK letters
_BYTE_CLASSES_E4 = _BYTE_CLASSES[:0xE4] + b"c" + _BYTE_CLASSES[0xE5:]
"""``_BYTE_CLASSES`` with lead byte E4 a CJK letter too (U+4000-U+4FFF: of them 了 也 上 以, among
the commonest Chinese characters), for UTF-8 that holds no hexagram (``_from_bytes``)."""
_BLANKED = tuple(
    (ch.encode("utf-8"), b" " + b"\x80" * (len(ch.encode("utf-8")) - 1))
    for ch in "、。，：；！？（）"
    if _CLASSES[ord(ch)] == " "
)
"""CJK punctuation (U+3001, U+3002, fullwidth forms), separators all, and the same number of
bytes that ``_BYTE_CLASSES`` reads as one separator: a space and continuation bytes."""
_RUN_BYTES = bytes.maketrans(b"axc ", b"\x01\x01\x00\x00")


def _classes(text: str) -> bytes:
    """``text.translate(_CLASSES)`` as ASCII bytes (one byte per character), in C for what
    notes mostly hold.

    ``str.translate`` looks a mapping up per character once the text is not ASCII (about 30 ns
    each: most of a search's time per hit, issue 35). The text's UTF-8 goes through one
    ``bytes.translate`` instead; only the characters it cannot class alone (``x``: accents,
    kana, symbols) are looked up, one by one, unless they are many."""
    if text.isascii():
        return text.encode("ascii").translate(_BYTE_CLASSES)
    classes = text.encode("utf-8", "surrogatepass").translate(_BYTE_CLASSES, _CONTINUATION)
    return _resolved(text, classes)


def _resolved(text: str, classes: bytes) -> bytes:
    """``classes``, the byte classes of ``text``'s UTF-8, with each ``x`` the byte table
    cannot class alone looked up in ``_CLASSES``."""
    unsure = classes.count(b"x")
    if not unsure:
        return classes
    if unsure * 8 > len(classes):
        return text.translate(_CLASSES).encode("ascii")
    out = bytearray(classes)
    at = out.find(b"x")
    while at >= 0:
        out[at] = ord(_CLASSES[ord(text[at])])
        at = out.find(b"x", at + 1)
    return bytes(out)


def _count_tokens(classes: bytes, end: int | None = None) -> int:
    """How many tokens ``classes[:end]`` holds, as ``len(classes.replace(b"c", b" c ").split())``
    counts them (each ``c``, and each run of ``a`` and ``x``), with no list and no scan in
    Python: with a byte 1 where the class is ``a`` or ``x`` and 0 elsewhere, a run starts at
    the first byte when it is 1 and wherever a 0 is followed by a 1 (two bytes that cannot
    overlap themselves, so ``bytes.count`` counts each once; issue 35: 2.2 µs for 850
    characters, where one big integer's shifts and ``bit_count`` took 5.6)."""
    runs = classes.translate(_RUN_BYTES)
    if end is None:
        end = len(classes)
    started = end > 0 and runs[:1] == b"\x01"
    return classes.count(b"c", 0, end) + runs.count(b"\x00\x01", 0, end) + started


def _token_span(nbody: str, offset: int, hint: str) -> tuple[int, int] | None:
    """Where token ``offset`` of ``segment(nbody)`` is in ``nbody``: (start, end); None when a
    character before its end might tokenize otherwise than counted here.

    The characters become their classes (``_classes``: C, one byte each), first only up to
    the end of the line where ``hint`` (the word, lower-cased) first occurs as written, where
    the match most often is (a line ends between tokens: that prefix's tokens are the body's
    first ones), and the tokens before it are counted by scans in C (``_count_tokens``); else
    the token is found by a scan of the classes. No step of Python per token."""
    # The word as written in lower case, capitalised or upper case (no lower() of the body: a
    # copy of it); an occurrence missed here only makes the prefix longer.
    at = -1
    for variant in (hint, hint.capitalize(), hint.upper()):  # each looks before the last found
        found = nbody.find(variant, 0, len(nbody) if at < 0 else at)
        at = found if found >= 0 else at
    cut = nbody.find("\n", at) if at >= 0 else -1
    if cut >= 0:
        classes = _classes(nbody[:cut])
        here = classes[at : at + 1]
        starts = here == b"c" or (here == b"a" and classes[at - 1 : at] != b"a")
        if starts and _count_tokens(classes[:at]) == offset:
            return _token_at(classes, at)
        start = _nth_token(classes, offset)
        if start is not None:
            return _token_at(classes, start)
    classes = _classes(nbody)
    start = _nth_token(classes, offset)
    return None if start is None else _token_at(classes, start)


def _nth_token(classes: bytes, offset: int) -> int | None:
    """Where token ``offset`` starts in ``classes`` (``_classes``' bytes), or None."""
    global _TOKENS
    if _TOKENS is None:
        import re

        _TOKENS = re.compile(b"a+|c")
    found = next(islice(_TOKENS.finditer(classes), offset, None), None)
    return None if found is None else found.start()


def _token_at(classes: bytes, start: int, sure: bool = False) -> tuple[int, int] | None:
    """The token that starts at ``start``: an ASCII run, a CJK bigram or a run's last
    character; None when its characters, or the one after it, are not surely counted
    (``sure``: no class of ``classes`` is ``x``, so they are)."""
    if classes[start : start + 1] == b"c":
        end = start + (2 if classes[start + 1 : start + 2] in (b"c", b"x") else 1)
    else:
        rest = classes[start:]
        end = start + len(rest) - len(rest.lstrip(b"a"))
    # The character after the token counts too: a letter may go on where ASCII stops (café).
    return None if not sure and b"x" in classes[: end + 1] else (start, end)


# -- a long search on two cores (issue 35) ---------------------------------------------------
#
# ``search WORD --limit 1000000`` is ``rg -i -n -m 1 WORD``'s job, which rg does on every core.
# One child is forked per search, not one per batch (a fork of a large process costs parent and
# child thousands of copy-on-write page faults), and it does the whole of its half of every
# batch: it reads the files, locates each hit and renders it (the JSON or text the answer
# writes), so the parent only puts its strings back in rank order. Each batch's half goes back
# through a pipe as one ``marshal`` frame; the child never touches the index's connection and
# ends with ``os._exit``. On one core, without ``fork``, beside another thread (``_threaded``),
# or once the child fails (a frame missing or not whole), this process does that half itself:
# the answer is the same either way.


_HEADER = 8  # a frame's length, little-endian, before its ``marshal`` bytes


def in_two(
    batches: Sequence[Any], part: Callable[[Any, bool], list[Any]]
) -> Iterator[tuple[list[Any], list[Any]]]:
    """For each of ``batches``: ``part(batch, False)`` (its first half) and ``part(batch,
    True)`` (its second), the second from one forked child. ``part`` must give, in either
    process, the same values (``marshal``-able) for a batch."""
    if not hasattr(os, "fork") or _cores() < 2 or _threaded():
        for batch in batches:
            yield part(batch, False), part(batch, True)
        return
    import marshal

    read_fd, write_fd = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_fd)
        os.close(write_fd)
        for batch in batches:
            yield part(batch, False), part(batch, True)
        return
    if pid == 0:  # the child: every second half, written to the pipe, gone without clean-up
        code = 1
        try:
            os.close(read_fd)
            for batch in batches:
                data = marshal.dumps(part(batch, True))
                _write(write_fd, len(data).to_bytes(_HEADER, "little"))
                _write(write_fd, data)
            code = 0
        finally:
            os._exit(code)
    os.close(write_fd)
    alive = True
    try:
        for batch in batches:
            first = part(batch, False)
            second = _frame(read_fd, marshal.loads) if alive else None
            if second is None:  # the child failed: its halves from here on are done here
                alive = False
                second = part(batch, True)
            yield first, second
    finally:
        os.close(read_fd)  # a child still writing (the reader stopped early) gets EPIPE
        os.waitpid(pid, 0)


def _write(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _frame(fd: int, loads: Callable[[bytes], Any]) -> list[Any] | None:
    """The next frame's list from the child; None when there is no whole one."""
    header = _read_fd(fd, _HEADER)
    if len(header) != _HEADER:
        return None
    size = int.from_bytes(header, "little")
    data = _read_fd(fd, size)
    if len(data) != size:
        return None
    try:
        value = loads(data)
    except (EOFError, ValueError, TypeError):
        return None
    return value if isinstance(value, list) else None


def _read_fd(fd: int, size: int) -> bytes:
    parts: list[bytes] = []
    while size > 0:
        part = os.read(fd, min(size, 1 << 20))
        if not part:
            break
        parts.append(part)
        size -= len(part)
    return b"".join(parts)


def _threaded() -> bool:
    """Whether another thread runs here (the MCP server's, a daemon's): a fork would copy the
    locks it may hold, so the hits are located in this process alone. The CLI's queries load no
    ``threading``."""
    import sys

    threading = sys.modules.get("threading")
    return threading is not None and threading.active_count() > 1


def _cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1
