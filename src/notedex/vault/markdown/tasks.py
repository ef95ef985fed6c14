"""Markdown tasks of a body (SEMANTICS 13): list items that open with a one-character
checkbox, with their status, text, tags and the dates the Tasks plugin and Dataview write.

It reads the body masked by ``inline.mask_excluded`` (code, math, HTML blocks and escapes
blanked, offsets kept), so a task in a code block is no task without a second block scanner;
it adds only what tasks exclude and links do not: ``%%comments%%`` and HTML comments that
run over lines (SEMANTICS 6.9 keeps links there). Pure functions, no I/O (STYLE 9).
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from datetime import date

from notedex.vault.model import Task

__all__ = ["find_tasks"]

# SEMANTICS 13.1: a list item (`-`, `*`, `+`, `1.`, `1)`), after any indentation and quote
# marks (a blockquote or callout), whose content opens with `[C]` followed by a space, a tab or
# the end of the line. Searched behind a newline: the engine looks only at newlines (as
# blocks._BLOCK_HINT does), where `^` in multi-line mode would try every position.
_TASK_LINE = re.compile(
    r"\n[ \t]*(?:>[ \t]*)*(?:[-*+]|\d{1,9}[.)])[ \t]+\[([^\n\r])\](?=[ \t\r\n]|\Z)"
)

# SEMANTICS 13.4: the Tasks plugin's date signifiers (with or without the emoji variation
# selector U+FE0F) and the fields they set.
_EMOJI_FIELDS = {
    "📅": "due",
    "📆": "due",
    "🗓": "due",
    "⏳": "scheduled",
    "⌛": "scheduled",
    "🛫": "start",
    "➕": "created",
    "✅": "done",
    "❌": "cancelled",
}
_EMOJI_DATE = re.compile(
    "([" + "".join(_EMOJI_FIELDS) + "])\ufe0f?[ \t]*(\\d{4}-\\d{2}-\\d{2})(?![\\d])"
)
# Dataview's inline fields on a task, `[due:: 2026-12-01]` or `(due:: 2026-12-01)`: the date
# may carry a time, which is dropped. `completion` is Dataview's (and Tasks') name of done.
_FIELD_NAMES = {
    "due": "due",
    "scheduled": "scheduled",
    "start": "start",
    "created": "created",
    "completion": "done",
    "cancelled": "cancelled",
}
_VALUE = r"[ \t]*::[ \t]*(\d{4}-\d{2}-\d{2})(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?[ \t]*"
_KEY = "(?i:" + "|".join(_FIELD_NAMES) + ")"
_DATAVIEW_DATE = re.compile(rf"\[[ \t]*({_KEY}){_VALUE}\]|\([ \t]*({_KEY}){_VALUE}\)")
_DATE_FIELDS = ("due", "scheduled", "start", "created", "done", "cancelled")

# SEMANTICS 13.2: comments hide tasks. `%%` pairs left to right (an unclosed one runs to the
# end of the note, as Obsidian hides it); an HTML comment that starts inside a line.
_COMMENT = re.compile(r"%%.*?(?:%%|\Z)|<!--.*?(?:-->|\Z)", re.DOTALL)


def find_tasks(
    body: str, masked: str, tag_positions: list[tuple[int, str]], first_line: int = 1
) -> tuple[Task, ...]:
    """The tasks of ``body`` (whose first line is file line ``first_line``), in document order.
    ``masked`` is ``mask_excluded(body)[0]``; ``tag_positions`` the body's inline tags with
    their offsets (``tags.find_tag_positions``)."""
    if "[" not in masked:
        return ()
    found = list(_TASK_LINE.finditer("\n" + masked))
    if not found:
        return ()
    comments = _comment_spans(masked)
    tag_starts = [position for position, _name in tag_positions]
    tasks: list[Task] = []
    line = first_line
    counted_to = 0
    for match in found:
        line_start = match.start()  # "\n" + masked: the newline's offset is the line's start
        if comments and _inside(comments, line_start):
            continue
        box = match.start(1) - 2  # the `[` in the body
        line += body.count("\n", counted_to, line_start)
        counted_to = line_start
        text_start = match.end() - 1
        line_end = body.find("\n", text_start)
        if line_end < 0:
            line_end = len(body)
        first_tag = bisect_right(tag_starts, text_start - 1)
        last_tag = bisect_right(tag_starts, line_end - 1)
        tags = tuple(name for _pos, name in tag_positions[first_tag:last_tag])
        dates = _dates(masked[text_start:line_end])
        text = body[text_start:line_end].strip()
        if not text.isascii():
            text = unicodedata.normalize("NFC", text)
        tasks.append(Task(line, box - line_start + 1, match.group(1), text, tags, *dates))
    return tuple(tasks)


def _dates(text: str) -> tuple[str | None, ...]:
    """The task's dates in ``_DATE_FIELDS`` order: the first valid one of each field, emoji
    signifiers and Dataview fields alike, in the order they are written (SEMANTICS 13.4)."""
    found: list[tuple[int, str, str]] = []
    if "::" in text:
        for match in _DATAVIEW_DATE.finditer(text):
            key = (match.group(1) or match.group(3)).lower()
            found.append((match.start(), _FIELD_NAMES[key], match.group(2) or match.group(4)))
    if not text.isascii():
        for match in _EMOJI_DATE.finditer(text):
            found.append((match.start(), _EMOJI_FIELDS[match.group(1)], match.group(2)))
    dates: dict[str, str] = {}
    for _position, field, value in sorted(found):
        if field not in dates and _is_date(value):
            dates[field] = value
    return tuple(dates.get(field) for field in _DATE_FIELDS)


def _is_date(value: str) -> bool:
    try:
        date.fromisoformat(value)
    except ValueError:
        return False  # 2026-02-30 is no date
    return True


def _comment_spans(masked: str) -> list[tuple[int, int]]:
    if "%%" not in masked and "<!--" not in masked:
        return []
    return [match.span() for match in _COMMENT.finditer(masked)]


def _inside(spans: list[tuple[int, int]], position: int) -> bool:
    index = bisect_right(spans, (position, 1 << 62)) - 1
    return index >= 0 and spans[index][0] < position < spans[index][1]
