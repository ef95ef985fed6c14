"""``scan_body``: a body's links, tags, headings, block ids and tasks in one pass over the
masked text (SEMANTICS 3, 4, 6, 10, 13). No I/O (STYLE 9)."""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

from notedex.vault.markdown.headings import find_block_ids, find_headings, first_h1
from notedex.vault.markdown.inline import mask_excluded
from notedex.vault.markdown.links import find_links
from notedex.vault.markdown.tags import find_tag_positions
from notedex.vault.markdown.tasks import find_tasks
from notedex.vault.model import BlockId, Heading, Link, Task

__all__ = ["BodyScan", "scan_body"]


@dataclass(frozen=True, slots=True)
class BodyScan:
    links: tuple[Link, ...]
    tags: tuple[str, ...]
    """In document order, possibly repeated; the caller removes duplicates."""
    first_h1: str | None
    headings: tuple[Heading, ...] = ()
    block_ids: tuple[BlockId, ...] = ()
    tasks: tuple[Task, ...] = ()


_EMPTY_SCAN = BodyScan((), (), None)


def comment_spans(masked: str) -> list[tuple[int, int]]:
    """The ``%%comment%%`` and inline ``<!-- comment -->`` spans of the masked body (code and
    raw HTML blocks are blanked already), in order: a ``%%`` opens a comment that the next
    ``%%`` closes, or the end of the note; ``<!--`` runs to the next ``-->``, or the end."""
    if "%%" not in masked and "<!--" not in masked:
        return []
    spans: list[tuple[int, int]] = []
    position = 0
    while True:
        percent = masked.find("%%", position)
        html = masked.find("<!--", position)
        if percent < 0 and html < 0:
            return spans
        if html < 0 or 0 <= percent < html:
            close = masked.find("%%", percent + 2)
            end = len(masked) if close < 0 else close + 2
            spans.append((percent, end))
        else:
            close = masked.find("-->", html + 4)
            end = len(masked) if close < 0 else close + 3
            spans.append((html, end))
        position = end


_FAR = 1 << 62


def _inside(spans: list[tuple[int, int]], offset: int) -> bool:
    index = bisect_right(spans, (offset, _FAR)) - 1
    return index >= 0 and spans[index][0] <= offset < spans[index][1]


def scan_body(body: str, first_line: int = 1) -> BodyScan:
    """Links, tags, headings, block ids and tasks of ``body``, whose first line is file line
    ``first_line``."""
    # What a link, tag, heading or block id starts with (a task holds a `[` too).
    marks = ("[", "#", "=", "-", "^")
    if all(mark not in body for mark in marks):
        return _EMPTY_SCAN
    masked, table_rows = mask_excluded(body)
    external_ends: list[int] = []
    occurrences = find_links(body, masked, table_rows, external_ends) if "[" in masked else []
    links: list[Link] = []
    line = first_line
    counted_to = 0
    comments = comment_spans(masked) if occurrences else []
    for start, end, kind, linkpath, subpath, display in occurrences:
        line += body.count("\n", counted_to, start)  # occurrences are sorted: count once
        counted_to = start
        column = start - body.rfind("\n", 0, start)  # 1-based: rfind is -1 on line 1
        commented = bool(comments) and _inside(comments, start)
        links.append(
            Link(kind, body[start:end], linkpath, subpath, display, line, column, commented)
        )
    tag_positions = find_tag_positions(masked, occurrences, external_ends, table_rows)
    tags = tuple(name for _position, name in tag_positions)
    headings = find_headings(body, masked, first_line)
    block_ids = find_block_ids(body, masked, first_line)
    tasks = find_tasks(body, masked, tag_positions, first_line)
    return BodyScan(tuple(links), tags, first_h1(headings), headings, block_ids, tasks)
