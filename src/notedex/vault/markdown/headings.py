"""Headings of a Markdown body: ATX (``# x``) and setext (``x`` over ``===``) outside code.

Today only the first level-1 heading is needed (the title fallback of SEMANTICS 3); the ATX
and setext readers are kept apart so that listing every heading with its level, text, line and
column (SEMANTICS 10) can grow here.
"""

from __future__ import annotations

import re

__all__ = ["first_h1"]

_H1_MARK = re.compile(r"#(?=[ \t]|\r?$)", re.MULTILINE)
_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+$")


_SETEXT_H1 = re.compile(r"^ {0,3}=+[ \t]*\r?$", re.MULTILINE)
_LIST_ITEM = re.compile(r"(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")


def _first_atx_h1(body: str, masked: str) -> tuple[int, str] | None:
    for match in _H1_MARK.finditer(masked):
        position = match.start()
        line_start = masked.rfind("\n", 0, position) + 1
        if position - line_start > 3 or masked[line_start:position].strip(" "):
            continue  # `## x`, `a # b`, or indented into a code block
        line_end = body.find("\n", position)
        text = body[match.end() : line_end if line_end >= 0 else len(body)].strip()
        text = _CLOSING_HASHES.sub("", text).strip()
        if text:
            return line_start, text
    return None


def _first_setext_h1(body: str, masked: str) -> tuple[int, str] | None:
    """``Title`` over a line of ``=``: the line above must be paragraph text, not blank, not
    a heading, not indented into code (the underline itself is outside code: masked)."""
    for match in _SETEXT_H1.finditer(masked):
        line_start = match.start()
        if line_start == 0:
            continue
        text_start = masked.rfind("\n", 0, line_start - 1) + 1
        above = masked[text_start : line_start - 1]
        stripped = above.strip()
        indent = len(above) - len(above.lstrip(" "))
        if not stripped or indent > 3 or stripped.startswith(("#", ">", "|")):
            continue
        if _LIST_ITEM.match(stripped):
            continue  # `- item` over `===` is a lazy continuation, not a heading
        text = body[text_start : line_start - 1].strip()
        if text:
            return text_start, text
    return None


def first_h1(body: str, masked: str) -> str | None:
    """SEMANTICS 3: the first level-1 heading outside code (ATX `# x` or setext `x` / `===`),
    trimmed, closing #s removed."""
    found = [h for h in (_first_atx_h1(body, masked), _first_setext_h1(body, masked)) if h]
    return min(found)[1] if found else None
