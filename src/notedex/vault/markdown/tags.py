"""Inline tags of a Markdown body (SEMANTICS 4): ``#tag`` where an inline chunk starts, after
a link, in a quote or a table cell; never inside a link, code or math (the text is masked).
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from notedex.vault.markdown.links import Occurrence

__all__ = ["find_tag_positions"]

# SEMANTICS 4: the characters a tag body may not contain.
_TAG_BODY = (
    r"[^\s\u2000-\u206f\u2e00-\u2e7f"
    r"""!"#$%&'()*+,.:;<=>?@^`{|}~\[\]\\]+"""
)
# A tag starts a line or an inline chunk: after whitespace or emphasis (`**`, `_`). Masked
# code and math are spaces here, so "after a code span" is covered; "after a link" is
# handled separately because link text is masked for tags.
_TAG = re.compile(r"#(?<![^\s*_]#)(" + _TAG_BODY + ")")
_TAG_AT = re.compile("#(" + _TAG_BODY + ")")
# The line start inside a blockquote or callout (`>#tag`) and a table cell start (`|#tag`)
# also begin an inline chunk; `find_tag_positions` checks which of the two it is.
# The `#` first and the mark behind it: a pattern that opens with a lookbehind is tried at
# every position, one that opens with a literal only where it is (10x faster on the bodies).
_TAG_AFTER_MARK = re.compile(r"#(?<=[>|]#)(" + _TAG_BODY + ")")
# A CommonMark URI autolink, `<https://x.y/>`: not an internal link, but a link a tag may follow.
_AUTOLINK = re.compile(r"<[A-Za-z][A-Za-z0-9+.\-]{1,31}:[^\s<>]*>")
_QUOTE_MARKS = re.compile(r"[ \t>]*")
_ALL_DIGITS = re.compile(r"[0-9]+")


def find_tag_positions(
    masked: str,
    links: list[Occurrence],
    external_ends: list[int],
    table_rows: frozenset[int] = frozenset(),
) -> list[tuple[int, str]]:
    """The body's inline tags in document order, each with its offset (its ``#``) in the body:
    a task's tags are those on its line (SEMANTICS 13.5)."""
    if "#" not in masked:
        return []
    if "<" in masked:
        external_ends = external_ends + [m.end() for m in _AUTOLINK.finditer(masked)]
    starts = [link[0] for link in links]
    # reach[i]: the furthest end among links[0..i] (a linked image nests one link in another)
    reach: list[int] = []
    for link in links:
        reach.append(max(link[1], reach[-1]) if reach else link[1])

    def inside_a_link(position: int) -> bool:
        index = bisect_right(starts, position) - 1
        return index >= 0 and position < reach[index]

    found: list[tuple[int, str]] = []
    for match in _TAG.finditer(masked):
        position = match.start()
        if inside_a_link(position):
            continue  # inside a link's text or target
        found.append((position, match.group(1)))
    if ">#" in masked or "|#" in masked:
        line_index = counted_to = 0  # matches come in order: count newlines once overall
        for match in _TAG_AFTER_MARK.finditer(masked):
            position = match.start()
            if masked[position - 1] == ">":
                line_start = masked.rfind("\n", 0, position) + 1
                chunk_start = _QUOTE_MARKS.fullmatch(masked, line_start, position) is not None
            else:
                line_index += masked.count("\n", counted_to, position)
                counted_to = position
                chunk_start = line_index in table_rows
            if chunk_start and not inside_a_link(position):
                found.append((position, match.group(1)))
    # SEMANTICS 4: a tag may start right after a link, internal or not (`[t](https://x)#tag`).
    for end in (*(link[1] for link in links), *external_ends):
        after = _TAG_AT.match(masked, end)
        if after and not inside_a_link(end):
            found.append((end, after.group(1)))
    found.sort()
    return [
        (position, unicodedata.normalize("NFC", name))
        for position, name in found
        if not _ALL_DIGITS.fullmatch(name)
    ]
