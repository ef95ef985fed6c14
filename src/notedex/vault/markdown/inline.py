"""Inline spans and masking: escapes, code spans and math are found left to right, and every
excluded span, block or inline, is blanked out with its offsets kept (SEMANTICS 6).

The scanners never see excluded text: code, math, raw HTML blocks and backslash escapes are
replaced by spaces (newlines kept), so a match offset in the masked text is also its offset in
the real text and line/column stay true. Pure functions, no I/O (STYLE 9).
"""

from __future__ import annotations

import re
from bisect import bisect_right

from notedex.vault.markdown.blocks import BLANK_LINE_AHEAD, may_hold_blocks, scan_blocks
from notedex.vault.markdown.links import WIKILINK

__all__ = ["mask_excluded"]

# Inline exclusions, leftmost first as in a Markdown inline parser. Each pattern starts with a
# literal so the regex engine can skip ahead with a fast search (an alternation or a leading
# lookbehind would make it test every position, 10-30x slower on typical notes).
_ESCAPE = re.compile(r"\\[\\`$\[\]#!]")
# $$display$$ (may span lines of one paragraph) or $inline$ (no space inside the dollars).
_MATH = re.compile(
    rf"\$(?:\$(?:[^$\n]|{BLANK_LINE_AHEAD}|\$(?!\$))*?\$\$|(?=[^\s$])[^$\n]*?(?<=[^\s\\])\$)"
)
_BACKTICK_RUN = re.compile(r"``*")  # not "`+": a leading repeat is tried at every position
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\r?(?=\n|\Z)")
_NOT_NEWLINE = re.compile(r"[^\n]")

# (start, end, excluded): a construct found by one of the inline scanners.
_Span = tuple[int, int, bool]


class _CodeSpans:
    """Code spans: a backtick run closed by the next run of exactly the same length in the
    same paragraph. Runs are indexed once, so unmatched runs cost a bisect, not a rescan
    (a regex would make a paragraph of many unmatched runs quadratic)."""

    def __init__(self, text: str) -> None:
        self._runs = [match.span() for match in _BACKTICK_RUN.finditer(text)]
        self._run_starts = [start for start, _end in self._runs]
        self._by_length: dict[int, list[int]] = {}
        for start, end in self._runs:
            self._by_length.setdefault(end - start, []).append(start)
        self._breaks = [match.start() for match in _PARAGRAPH_BREAK.finditer(text)]

    def search(self, text: str, position: int) -> _Span | None:
        index = bisect_right(self._run_starts, position) - 1
        if index < 0 or self._runs[index][1] <= position:
            index += 1  # position is not inside a run: take the next one
        if index >= len(self._runs):
            return None
        start, end = self._runs[index]
        start = max(start, position)  # a run cut by an escaped backtick starts after it
        starts = self._by_length.get(end - start, [])
        closer = bisect_right(starts, end)
        if closer < len(starts):
            limit = bisect_right(self._breaks, start)
            close_start = starts[closer]
            if limit >= len(self._breaks) or close_start < self._breaks[limit]:
                return start, close_start + end - start, True
        return start, end, False  # literal backticks


class _RegexSpans:
    def __init__(self, pattern: re.Pattern[str], excluded: bool = True) -> None:
        self._pattern = pattern
        self._excluded = excluded

    def search(self, text: str, position: int) -> _Span | None:
        match = self._pattern.search(text, position)
        return None if match is None else (match.start(), match.end(), self._excluded)


def _blank(text: str) -> str:
    return _NOT_NEWLINE.sub(" ", text)


def _span_hides_a_wikilink_end(text: str, spans: list[tuple[int, int]]) -> bool:
    """Whether a span that starts inside a wikilink hides its closing ``]]`` (or runs past)."""
    starts = [start for start, _end in spans]
    for match in WIKILINK.finditer(text):
        link_start, link_end = match.span()
        index = bisect_right(starts, link_start)  # the first span starting inside the link
        while index < len(spans) and spans[index][0] < link_end:
            if spans[index][1] > link_end - 2:
                return True
            index += 1
    return False


def _inline_exclusions(text: str, *, wikilinks: bool = False) -> list[tuple[int, int]]:
    """Spans of escapes, code spans and math, scanning left to right (SEMANTICS 6); with
    ``wikilinks``, a wikilink that starts first also keeps its text from them."""
    scanners: list[_CodeSpans | _RegexSpans] = []
    if wikilinks:
        scanners.append(_RegexSpans(WIKILINK, excluded=False))
    if "\\" in text:
        scanners.append(_RegexSpans(_ESCAPE))
    if "`" in text:
        scanners.append(_CodeSpans(text))
    if "$" in text:
        scanners.append(_RegexSpans(_MATH))
    spans: list[tuple[int, int]] = []
    pending = [scanner.search(text, 0) for scanner in scanners]
    while True:
        live = [found for found in pending if found is not None]
        if not live:
            return spans
        start, end, excluded = min(live)
        if excluded:
            spans.append((start, end))
        # Whatever began inside the winner is not a construct: look again after it.
        pending = [
            scanner.search(text, end) if found is not None and found[0] < end else found
            for scanner, found in zip(scanners, pending)
        ]


def mask_excluded(body: str) -> tuple[str, frozenset[int]]:
    """Body with excluded text blanked out, plus the 0-based table-row lines (SEMANTICS 6)."""
    rows: frozenset[int] = frozenset()
    masked = body
    if may_hold_blocks(body):
        lines = body.split("\n")
        blocks = scan_blocks(lines)
        rows = blocks.table_rows
        if blocks.masked_lines:
            masked = "\n".join(
                " " * len(line) if index in blocks.masked_lines else line
                for index, line in enumerate(lines)
            )
    if "`" in masked or "$" in masked or "\\" in masked:
        spans = _inline_exclusions(masked)
        if spans:
            inline = _apply_spans(masked, spans)
            # A wikilink is an inline construct too: one that starts first keeps its text,
            # so a `$` or a backtick in a note name cannot open math or code that swallows
            # the next link (`[[A$]] and [[B$]]` is two links, not one with `[[` inside).
            # Only when a span hid a `]` can that have happened: then scan again with them.
            if (
                "[[" in masked
                and inline.count("]") != masked.count("]")
                and _span_hides_a_wikilink_end(masked, spans)
            ):
                inline = _apply_spans(masked, _inline_exclusions(masked, wikilinks=True))
            masked = inline
    return masked, rows


def _apply_spans(text: str, spans: list[tuple[int, int]]) -> str:
    pieces: list[str] = []
    position = 0
    for start, end in spans:
        pieces.append(text[position:start])
        pieces.append(_blank(text[start:end]))
        position = end
    pieces.append(text[position:])
    return "".join(pieces)
