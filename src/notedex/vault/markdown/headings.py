"""Headings and block ids of a Markdown body, outside code (SEMANTICS 3, 10.1, 10.2).

Headings are ATX (``## x``) or setext (``x`` over ``===`` or ``---``); block ids are ``^id`` at
the end of a line. Both are found in the masked body (code, math and HTML blanked out, offsets
kept: ``inline.mask_excluded``), so line and column stay true. The first level-1 heading is
the title fallback of SEMANTICS 3. Pure functions, no I/O (STYLE 9).
"""

from __future__ import annotations

import re

from notedex.vault.model import BlockId, Heading

__all__ = ["find_block_ids", "find_headings", "first_h1"]

# SEMANTICS 10.1: one to six #s, then a space, a tab or the end of the line. Written `#` then
# up to five more, not `#{1,6}`: a pattern that opens with a literal is searched for it, one
# that opens with a repeat is tried at every position (6x slower over a first index's bodies).
_ATX_MARK = re.compile(r"##{0,5}(?=[ \t]|\r?$)", re.MULTILINE)
_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+$")
_SETEXT_UNDERLINE = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*\r?$", re.MULTILINE)
# The same underline found from the newline before it (a line 1 underline has no text above):
# a pattern that starts with `^` is tried at every position, one with a literal only at it.
_SETEXT_AFTER_NEWLINE = re.compile(r"\n {0,3}(?:=+|-+)[ \t]*\r?$", re.MULTILINE)
_LIST_ITEM = re.compile(r"(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")
# SEMANTICS 10.2: `^id` (ASCII letters, digits, `-`) ending a line.
_BLOCK_ID = re.compile(r"\^([A-Za-z0-9-]+)[ \t]*\r?$", re.MULTILINE)

# (offset of the heading line, level, text)
_Found = tuple[int, int, str]


def _atx_headings(body: str, masked: str) -> list[_Found]:
    found: list[_Found] = []
    for match in _ATX_MARK.finditer(masked):
        position = match.start()
        line_start = masked.rfind("\n", 0, position) + 1
        if position - line_start > 3 or masked[line_start:position].strip(" "):
            continue  # `a # b`, `###x` inside a run, or indented into a code block
        line_end = body.find("\n", position)
        text = body[match.end() : line_end if line_end >= 0 else len(body)].strip()
        if text.endswith("#"):
            text = _CLOSING_HASHES.sub("", text).strip()
        found.append((line_start, match.end() - position, text))
    return found


def _setext_headings(body: str, masked: str) -> list[_Found]:
    """``Title`` over a line of ``=`` (level 1) or ``-`` (level 2): the line above must be
    paragraph text, not blank, not a heading, list item, quote or table row, not indented
    into code (the underline itself is outside code: masked)."""
    found: list[_Found] = []
    for match in _SETEXT_AFTER_NEWLINE.finditer(masked):
        line_start = match.start() + 1
        text_start = masked.rfind("\n", 0, line_start - 1) + 1
        above = masked[text_start : line_start - 1]
        stripped = above.strip()
        indent = len(above) - len(above.lstrip(" "))
        if not stripped or indent > 3 or stripped.startswith(("#", ">", "|")):
            continue
        if _LIST_ITEM.match(stripped) or _SETEXT_UNDERLINE.fullmatch(above):
            continue  # `- item` over `===` is a lazy continuation; `---` over `---` a rule
        text = body[text_start : line_start - 1].strip()
        if text:
            level = 1 if match.group().lstrip("\n ").startswith("=") else 2
            found.append((text_start, level, text))
    return found


def find_headings(body: str, masked: str, first_line: int = 1) -> tuple[Heading, ...]:
    """SEMANTICS 10.1: every heading outside code, in document order, with its level, its raw
    text (trimmed, closing #s removed) and the 1-based line and column of its line's text."""
    if "#" not in masked and "=" not in masked and "-" not in masked:
        return ()
    found = sorted(_atx_headings(body, masked) + _setext_headings(body, masked))
    headings: list[Heading] = []
    line = first_line
    counted_to = 0
    for start, level, text in found:
        line += body.count("\n", counted_to, start)
        counted_to = start
        column = 1  # at the heading's first character: up to three spaces may come first
        while column <= 3 and body[start + column - 1 : start + column] == " ":
            column += 1
        headings.append(Heading(level, text, line, column))
    return tuple(headings)


def find_block_ids(body: str, masked: str, first_line: int = 1) -> tuple[BlockId, ...]:
    """SEMANTICS 10.2: ``^id`` ending a line after whitespace, right after ``]]``, or alone on
    its line; in document order, as written."""
    if "^" not in masked:
        return ()
    blocks: list[BlockId] = []
    line = first_line
    counted_to = 0
    for match in _BLOCK_ID.finditer(masked):
        start = match.start()
        before = masked[start - 1] if start else "\n"
        if before not in " \t\n" and masked[max(0, start - 2) : start] != "]]":
            continue  # `a^b` is text (a footnote `[^1]` ends in `]`, not `]]`)
        if body[match.end(1) : match.end()].strip(" \t\r"):
            continue  # only masked text (math, code) follows it: the id does not end the line
        line += body.count("\n", counted_to, start)
        counted_to = start
        blocks.append(BlockId(match.group(1), line, start - body.rfind("\n", 0, start)))
    return tuple(blocks)


def first_h1(headings: tuple[Heading, ...]) -> str | None:
    """SEMANTICS 3: the text of the first non-empty level-1 heading."""
    return next((h.text for h in headings if h.level == 1 and h.text), None)
