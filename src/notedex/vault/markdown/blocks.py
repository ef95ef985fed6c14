"""The block scanner: which body lines are inside code, math or raw HTML blocks, and which are
table rows (SEMANTICS 6).

One pass over the lines with a small state object: a block that is open (fence, math, HTML)
has a handler that takes lines until it closes; otherwise each line is checked for indented code (top level,
in a quote, in a list item), then for a block opener, then tracked for what later lines need
(paragraph, list, table). Pure functions, no I/O (STYLE 9).
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # no `typing` on the mentions path (ARCHITECTURE); mypy honours the name
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["BLANK_LINE_AHEAD", "Blocks", "may_hold_blocks", "scan_blocks"]

# A newline that does not start a blank line: inline constructs may wrap there, not past it.
BLANK_LINE_AHEAD = r"\n(?![ \t]*\r?(?:\n|$))"

# A line that may open a block construct or be a table row; when no line matches, the whole
# line-by-line pass is skipped (most prose notes).
_CONTAINER_PREFIX = r"(?:[ \t]*(?:>|[-+*][ \t]|\d{1,9}[.)][ \t]))*[ \t]*"  # callouts, list items
_BLOCK_HINT_LINE = (
    r"(?:"
    rf"{_CONTAINER_PREFIX}(?:```|~~~|\$\$|\|)"  # fence, math, pipe row
    r"| {0,3}<[!/a-zA-Z]"  # raw HTML block
    r"|(?: {4}| {0,3}\t)"  # indented code
    r"|(?: {0,3}> ?)+(?: {4}| {0,3}\t)"  # indented code inside a quote or callout
    r"|[ \t>]*:?-+:?[ \t]*\|"  # table delimiter row without a leading pipe
    r")"
)
# Such a line after a newline: searched in the body behind one more newline, it finds what
# `^` in multi-line mode found, but the engine looks only at newlines, where `^` made it try
# every position of every body.
_BLOCK_HINT = re.compile(r"\n" + _BLOCK_HINT_LINE)
# SEMANTICS 6: fences count after `>` (callouts) and after list markers or list indentation.
_FENCE_OPEN = re.compile(rf"(?P<prefix>{_CONTAINER_PREFIX})(?P<fence>`{{3,}}|~{{3,}})(?P<info>.*)")
_FENCE_CLOSE = re.compile(r"(?:[ \t]*>)*[ \t]*(?P<fence>`{3,}|~{3,})[ \t]*\r?$")
_QUOTED = re.compile(r"[ \t]*>")
_MATH_OPEN = re.compile(r"(?:[ \t]*>)*[ \t]*\$\$")
_INDENTED = re.compile(r"(?: {4}| {0,3}\t)")
_QUOTE_PREFIX = re.compile(r"(?: {0,3}> ?)+")
# A list marker is followed by a space or tab, or ends the line: `-foo` and `1.5` are text.
_LIST_ITEM_CONTENT = re.compile(
    r"(?P<lead>[ \t]*)(?P<marker>[-+*]|\d{1,9}[.)])(?P<gap>[ \t]+|(?=\r?$))"
)
# `---`, `***`, `_ _ _`: a thematic break, not a list item; it ends a paragraph.
_THEMATIC_BREAK = re.compile(r" {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*\r?$")
_SETEXT_UNDERLINE = re.compile(r" {0,3}(?:=+|-+)[ \t]*\r?$")
_ATX_HEADING = re.compile(r" {0,3}#{1,6}(?:[ \t]|\r?$)")
_PIPE_ROW = re.compile(r"(?:[ \t]*>)*[ \t]*\|")
_TABLE_DELIMITER = re.compile(
    r"(?:[ \t]*>)*[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*\r?$"
)
# CommonMark HTML blocks: 1 (until the closing tag), 2 (until -->), 6 (until a blank line).
_HTML_RAW_OPEN = re.compile(r" {0,3}<(?:script|pre|style|textarea)(?:[ \t>]|\r?$)", re.IGNORECASE)
_HTML_RAW_CLOSE = re.compile(r"</(?:script|pre|style|textarea)>", re.IGNORECASE)
_HTML_COMMENT_OPEN = re.compile(r" {0,3}<!--")
_HTML_COMMENT_CLOSE = re.compile(r"-->")
_HTML_BLOCK_OPEN = re.compile(
    r" {0,3}</?(?:address|article|aside|base|basefont|blockquote|body|caption|center|col"
    r"|colgroup|dd|details|dialog|dir|div|dl|dt|fieldset|figcaption|figure|footer|form|frame"
    r"|frameset|h[1-6]|head|header|hr|html|iframe|legend|li|link|main|menu|menuitem|nav"
    r"|noframes|ol|optgroup|option|p|param|search|section|summary|table|tbody|td|tfoot|th"
    r"|thead|title|tr|track|ul)(?:[ \t>]|/>|\r?$)",
    re.IGNORECASE,
)

# Every block construct, list item, heading, table row or blank line starts with one of these.
_BLOCK_FIRST_CHARS = frozenset(" \t\r>`~$<|-+*:#0123456789_=") | {""}


def may_hold_blocks(body: str) -> bool:
    """False when no line can open a block or be a table row: the scan can be skipped."""
    return _BLOCK_HINT.search("\n" + body) is not None


def _indent_width(line: str) -> int:
    width = 0
    for ch in line:
        if ch == " ":
            width += 1
        elif ch == "\t":
            width += 4 - width % 4
        else:
            break
    return width


def _list_content_indent(item: re.Match[str]) -> int:
    """Where a list item's content starts: after the marker and 1-4 spaces (CommonMark)."""
    start = _indent_width(item["lead"]) + len(item["marker"])
    gap = _indent_width(item["gap"])
    return start + (gap if 1 <= gap <= 4 else 1)


class Blocks:
    """What ``scan_blocks`` found. A plain class, not a dataclass: ``dataclasses`` (with
    ``inspect``) would cost ``mentions`` more than its whole answer (ARCHITECTURE)."""

    __slots__ = ("masked_lines", "table_rows")

    def __init__(self, masked_lines: frozenset[int], table_rows: frozenset[int]) -> None:
        self.masked_lines = masked_lines
        """0-based body lines inside code, math or HTML blocks."""
        self.table_rows = table_rows


class _Scan:
    """The state of one pass: what is open, and what the lines so far allow next."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.masked: set[int] = set()
        self.rows: set[int] = set()
        # The handler of the open fence, math or HTML block: it takes each line until the
        # block closes, and says whether the line was the block's (None: no block is open).
        self.open_block: Callable[[int, str], bool] | None = None
        self.fence_char = ""
        self.fence_len = 0
        self.fence_quoted = False
        self.html_close: re.Pattern[str] = _HTML_RAW_CLOSE
        # An indented code block cannot interrupt a paragraph: it needs a blank line (or the
        # body start, a heading, the end of another block) before it, and no enclosing list.
        self.can_indent = True
        self.in_indented_code = False
        self.in_list = False
        self.in_table = False
        # The same rule inside containers (CommonMark): after `>` and its one optional space,
        # and inside a list item at its content indent + 4 columns, once a blank line came.
        self.quote_can_indent = True
        self.quote_code = False
        self.list_indent = 0
        self.list_blank = False
        self.list_code = False

    def run(self) -> Blocks:
        for index, line in enumerate(self.lines):
            if self.open_block is not None and self.open_block(index, line):
                continue
            if line[:1] not in _BLOCK_FIRST_CHARS:
                # A plain paragraph line (the common case): no block construct can start here.
                self.can_indent = self.in_indented_code = self.in_list = False
                if self.in_table:
                    self.rows.add(index)
            elif not line.strip():
                self.can_indent = True
                self.in_table = False
                self.list_blank = True
            elif not self._indented_code(index, line):
                self.can_indent = False
                if not self._opens_block(index, line):
                    self._track(index, line)
        return Blocks(frozenset(self.masked), frozenset(self.rows))

    # --- open blocks -------------------------------------------------------------------------

    def _fence_line(self, index: int, line: str) -> bool:
        if self.fence_quoted and not _QUOTED.match(line):
            self.open_block = None  # the callout ended, and the fence with it: read it anew
            return False
        self.masked.add(index)
        close = _FENCE_CLOSE.match(line)
        if close and close["fence"][0] == self.fence_char and len(close["fence"]) >= self.fence_len:
            self.open_block = None
            self.can_indent = True
        return True

    def _math_line(self, index: int, line: str) -> bool:
        self.masked.add(index)
        if "$$" in line:
            self.open_block = None
        return True

    def _html_until_blank_line(self, index: int, line: str) -> bool:
        if not line.strip():
            self.open_block = None  # the blank line itself is read as usual
            return False
        self.masked.add(index)
        return True

    def _html_until_close_line(self, index: int, line: str) -> bool:
        self.masked.add(index)
        if self.html_close.search(line):
            self.open_block = None
            self.can_indent = True
        return True

    # --- indented code -----------------------------------------------------------------------

    def _indented_code(self, index: int, line: str) -> bool:
        """Indented code in a quote, in a list item, or at the top level: mask ``line``."""
        if self._quoted_code(line) or self._list_code(line):
            self.masked.add(index)
            return True
        if self.in_indented_code or (self.can_indent and not self.in_list):
            if _INDENTED.match(line):
                self.in_indented_code = True
                self.masked.add(index)
                return True
            self.in_indented_code = False
        return False

    def _quoted_code(self, line: str) -> bool:
        quote = _QUOTE_PREFIX.match(line)
        if not quote:
            self.quote_can_indent, self.quote_code = True, False
            return False
        inner = line[quote.end() :]
        if not inner.strip():
            self.quote_can_indent = True
        elif (self.quote_can_indent or self.quote_code) and _INDENTED.match(inner):
            self.quote_code = True
            return True
        else:
            self.quote_can_indent = self.quote_code = False
        return False

    def _list_code(self, line: str) -> bool:
        if (
            self.in_list
            and (self.list_blank or self.list_code)
            and _indent_width(line) >= self.list_indent + 4
        ):
            self.list_code = True
            return True
        self.list_blank = self.list_code = False
        return False

    # --- block openers -----------------------------------------------------------------------

    def _opens_block(self, index: int, line: str) -> bool:
        """A fence, math or HTML block that starts at ``line``: mask it and keep it open."""
        fence = _FENCE_OPEN.match(line)
        if fence and not (fence["fence"][0] == "`" and "`" in fence["info"]):
            self.fence_char = fence["fence"][0]
            self.fence_len = len(fence["fence"])
            self.fence_quoted = ">" in fence["prefix"]
            self.open_block = self._fence_line
            self.in_table = False
        elif (math := _MATH_OPEN.match(line)) and "$$" not in line[math.end() :]:
            self.open_block = self._math_line
        elif _HTML_BLOCK_OPEN.match(line):
            self.open_block = self._html_until_blank_line
        elif raw_open := _HTML_RAW_OPEN.match(line) or _HTML_COMMENT_OPEN.match(line):
            close = _HTML_COMMENT_CLOSE if raw_open.re is _HTML_COMMENT_OPEN else _HTML_RAW_CLOSE
            if not close.search(line, raw_open.end()):
                self.html_close = close
                self.open_block = self._html_until_close_line
        else:
            return False
        self.masked.add(index)
        return True

    # --- lines that shape what follows -------------------------------------------------------

    def _track(self, index: int, line: str) -> None:
        """Headings, thematic breaks, setext underlines, list items and table rows."""
        if _ATX_HEADING.match(line):
            self.can_indent = True
        item = None
        if _THEMATIC_BREAK.match(line) or (
            _SETEXT_UNDERLINE.match(line) and self._paragraph_above(index)
        ):
            self.can_indent = True  # the paragraph (if any) ended: indented code may follow
        else:
            item = _LIST_ITEM_CONTENT.match(line)
        if item:
            self.in_list = True
            self.list_indent = _list_content_indent(item)
        elif line[0] not in " \t":
            self.in_list = False
        if self.in_table or _PIPE_ROW.match(line):
            self.rows.add(index)
        elif "|" in line and self._paragraph_above(index, "|") and _TABLE_DELIMITER.match(line):
            self.rows.update((index - 1, index))
            self.in_table = True

    def _paragraph_above(self, index: int, holding: str = "") -> bool:
        """Whether the line above is text outside any block (and holds ``holding``)."""
        if index == 0 or index - 1 in self.masked:
            return False
        above = self.lines[index - 1]
        return holding in above if holding else bool(above.strip())


def scan_blocks(lines: list[str]) -> Blocks:
    """One pass over the lines: which are excluded blocks, which are table rows."""
    return _Scan(lines).run()
