"""Links, tags and the first H1 of a Markdown body (SEMANTICS 3, 4, 6).

The scanners never see excluded text: code, math, raw HTML blocks and backslash escapes are
first replaced by spaces (newlines kept), so a match offset in the masked text is also its
offset in the real text and line/column stay true. Pure functions, no I/O (STYLE 9).
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import unquote

from notedex.vault.model import Link, LinkKind

# --- block level -----------------------------------------------------------------------------

# A line that may open a block construct or be a table row; when no line matches, the whole
# line-by-line pass is skipped (most prose notes).
_CONTAINER_PREFIX = r"(?:[ \t]*(?:>|[-+*][ \t]|\d{1,9}[.)][ \t]))*[ \t]*"  # callouts, list items
_BLOCK_HINT = re.compile(
    r"^(?:"
    rf"{_CONTAINER_PREFIX}(?:```|~~~|\$\$|\|)"  # fence, math, pipe row
    r"| {0,3}<[!/a-zA-Z]"  # raw HTML block
    r"|(?: {4}| {0,3}\t)"  # indented code
    r"|(?: {0,3}> ?)+(?: {4}| {0,3}\t)"  # indented code inside a quote or callout
    r"|[ \t>]*:?-+:?[ \t]*\|"  # table delimiter row without a leading pipe
    r")",
    re.MULTILINE,
)
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


@dataclass(frozen=True, slots=True)
class _Blocks:
    masked_lines: frozenset[int]
    """0-based body lines inside code, math or HTML blocks."""
    table_rows: frozenset[int]


def _scan_blocks(lines: list[str]) -> _Blocks:
    """One pass over the lines: which are excluded blocks, which are table rows."""
    masked: set[int] = set()
    rows: set[int] = set()
    fence_char = ""
    fence_len = 0
    fence_quoted = False
    html_close: re.Pattern[str] | None = None
    html_until_blank = False
    in_math = False
    in_indented_code = False
    # An indented code block cannot interrupt a paragraph: it needs a blank line (or the body
    # start, a heading, the end of another block) before it, and no enclosing list.
    can_indent = True
    in_list = False
    in_table = False
    # The same rule inside containers (CommonMark): after `>` and its one optional space, and
    # inside a list item at its content indent + 4 columns, once a blank line came before.
    quote_can_indent = True
    quote_code = False
    list_indent = 0
    list_blank = False
    list_code = False
    for index, line in enumerate(lines):
        if fence_len:
            if fence_quoted and not _QUOTED.match(line):
                fence_len = 0  # the callout ended, and the fence with it; read this line anew
            else:
                masked.add(index)
                close = _FENCE_CLOSE.match(line)
                if close and close["fence"][0] == fence_char and len(close["fence"]) >= fence_len:
                    fence_len = 0
                    can_indent = True
                continue
        if html_until_blank:
            if line.strip():
                masked.add(index)
                continue
            html_until_blank = False
        if html_close is not None:
            masked.add(index)
            if html_close.search(line):
                html_close = None
                can_indent = True
            continue
        if in_math:
            masked.add(index)
            if "$$" in line:
                in_math = False
            continue
        first = line[:1]
        if first not in _BLOCK_FIRST_CHARS:
            # A plain paragraph line (the common case): no block construct can start here.
            can_indent = in_indented_code = in_list = False
            if in_table:
                rows.add(index)
            continue
        if not line.strip():
            can_indent = True
            in_table = False
            list_blank = True
            continue
        quote = _QUOTE_PREFIX.match(line)
        if quote:
            inner = line[quote.end() :]
            if not inner.strip():
                quote_can_indent = True
            elif (quote_can_indent or quote_code) and _INDENTED.match(inner):
                quote_code = True
                masked.add(index)
                continue
            else:
                quote_can_indent = quote_code = False
        else:
            quote_can_indent, quote_code = True, False
        if in_list and (list_blank or list_code) and _indent_width(line) >= list_indent + 4:
            list_code = True
            masked.add(index)
            continue
        list_blank = list_code = False
        if in_indented_code or (can_indent and not in_list):
            if _INDENTED.match(line):
                in_indented_code = True
                masked.add(index)
                continue
            in_indented_code = False
        can_indent = False
        fence = _FENCE_OPEN.match(line)
        if fence and not (fence["fence"][0] == "`" and "`" in fence["info"]):
            fence_char = fence["fence"][0]
            fence_len = len(fence["fence"])
            fence_quoted = ">" in fence["prefix"]
            masked.add(index)
            in_table = False
            continue
        math = _MATH_OPEN.match(line)
        if math and "$$" not in line[math.end() :]:
            in_math = True
            masked.add(index)
            continue
        if _HTML_BLOCK_OPEN.match(line):
            html_until_blank = True
            masked.add(index)
            continue
        raw_open = _HTML_RAW_OPEN.match(line) or _HTML_COMMENT_OPEN.match(line)
        if raw_open:
            masked.add(index)
            close_pattern = (
                _HTML_COMMENT_CLOSE if raw_open.re is _HTML_COMMENT_OPEN else _HTML_RAW_CLOSE
            )
            if not close_pattern.search(line, raw_open.end()):
                html_close = close_pattern
            continue
        if _ATX_HEADING.match(line):
            can_indent = True
        item = None
        if _THEMATIC_BREAK.match(line) or (
            _SETEXT_UNDERLINE.match(line)
            and index > 0
            and lines[index - 1].strip()
            and index - 1 not in masked
        ):
            can_indent = True  # the paragraph (if any) ended: indented code may follow
        else:
            item = _LIST_ITEM_CONTENT.match(line)
        if item:
            in_list = True
            list_indent = _list_content_indent(item)
        elif line[0] not in " \t":
            in_list = False
        if in_table or _PIPE_ROW.match(line):
            rows.add(index)
        elif (
            "|" in line
            and index > 0
            and "|" in lines[index - 1]
            and index - 1 not in masked
            and _TABLE_DELIMITER.match(line)
        ):
            rows.update((index - 1, index))
            in_table = True
    return _Blocks(frozenset(masked), frozenset(rows))


# --- inline level ----------------------------------------------------------------------------

# Inline exclusions, leftmost first as in a Markdown inline parser. Each pattern starts with a
# literal so the regex engine can skip ahead with a fast search (an alternation or a leading
# lookbehind would make it test every position, 10-30x slower on typical notes).
_ESCAPE = re.compile(r"\\[\\`$\[\]#!]")
_BLANK_LINE_AHEAD = r"\n(?![ \t]*\r?(?:\n|$))"
# $$display$$ (may span lines of one paragraph) or $inline$ (no space inside the dollars).
_MATH = re.compile(
    rf"\$(?:\$(?:[^$\n]|{_BLANK_LINE_AHEAD}|\$(?!\$))*?\$\$|(?=[^\s$])[^$\n]*?(?<=[^\s\\])\$)"
)
_BACKTICK_RUN = re.compile(r"`+")
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
    for match in _WIKILINK.finditer(text):
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
        scanners.append(_RegexSpans(_WIKILINK, excluded=False))
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
    if _BLOCK_HINT.search(body):
        lines = body.split("\n")
        blocks = _scan_blocks(lines)
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


# --- links -----------------------------------------------------------------------------------

# SEMANTICS 6: one line, non-greedy, inner non-empty and free of `[[`.
# The `!` of an embed is checked by hand: a leading optional char defeats the fast search.
_WIKILINK = re.compile(r"\[\[((?:[^\[\]\n]|\[(?!\[)|\](?!\]))+)\]\]")
_MARKDOWN_LINK = re.compile(
    # Link text may hold balanced brackets (CommonMark), one level: `[a [b] c](x.md)` and
    # the linked image `[![alt](pic.png)](Note.md)`; it may wrap within its paragraph.
    rf"\[(?P<text>(?:[^\[\]\n]|{_BLANK_LINE_AHEAD}|\[[^\[\]\n]*\])*)\]\([ \t]*"
    r"(?:<(?P<angled>[^<>\n]*)>|(?P<plain>[^\s<>()]*(?:\([^\s<>()]*\)[^\s<>()]*)*))"
    r"""(?:[ \t]+(?:"[^"\n]*"|'[^'\n]*'|\([^()\n]*\)))?[ \t]*\)"""
)
_URL_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]{1,31}:")
# A CommonMark URI autolink, `<https://x.y/>`: not an internal link, but a link a tag may follow.
_AUTOLINK = re.compile(r"<[A-Za-z][A-Za-z0-9+.\-]{1,31}:[^\s<>]*>")
_BAD_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
_UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


def _normalise_target(target: str) -> tuple[str, str | None]:
    """NBSP -> space, trim, NFC, then split at the first ``#`` (SEMANTICS 6)."""
    target = unicodedata.normalize("NFC", target.replace("\xa0", " ").strip())
    linkpath, hash_sign, subpath = target.partition("#")
    return linkpath.strip(), (hash_sign + subpath) if hash_sign else None


def wikilink_parts(inner: str) -> tuple[str, str | None, str | None] | None:
    """``inner`` of ``[[inner]]`` -> (linkpath, subpath, display); None when it has no target."""
    bar = inner.find("|")
    if bar > 0:
        target, display = inner[:bar], inner[bar + 1 :]
    else:
        target, display = inner, None
    # SEMANTICS 6: `[[A\|B]]` is how a wikilink with a display text is written in a table.
    target = target.removesuffix("\\")
    linkpath, subpath = _normalise_target(target)
    if not linkpath and subpath is None:
        return None
    return linkpath, subpath, display


def _markdown_target(dest: str) -> tuple[str, str | None] | None:
    """``dest`` of ``[t](dest)`` -> (linkpath, subpath), or None if it is not an internal link."""
    if not dest or dest.startswith("//") or _URL_SCHEME.match(dest):
        return None
    if _BAD_PERCENT.search(dest):
        return None
    path, hash_sign, fragment = dest.partition("#")
    try:
        # Split before decoding: an encoded %23 belongs to the name, a raw # starts the subpath.
        path = unquote(path, errors="strict")
        fragment = unquote(fragment, errors="strict")
    except UnicodeDecodeError:
        return None
    linkpath = unicodedata.normalize("NFC", path.replace("\xa0", " ").strip())
    subpath = unicodedata.normalize("NFC", hash_sign + fragment) if hash_sign else None
    if not linkpath and subpath is None:
        return None
    return linkpath, subpath


def _markdown_links(masked: str) -> Iterator[re.Match[str]]:
    """Every ``[t](dest)`` match, and those nested in a match's text (a linked image)."""
    pending = [(0, len(masked))]
    while pending:
        position, end = pending.pop()
        for match in _MARKDOWN_LINK.finditer(masked, position, end):
            if masked.startswith("[[", match.start()):
                continue  # `[[a]](b.md)`: the brackets belong to the wikilink
            yield match
            if "](" in match["text"]:
                pending.append((match.start("text"), match.end("text")))


# (start, end, kind, linkpath, subpath, display): offsets into the body.
_Occurrence = tuple[int, int, LinkKind, str, str | None, str | None]


def _find_links(
    body: str, masked: str, table_rows: frozenset[int], external_ends: list[int]
) -> list[_Occurrence]:
    """Internal link occurrences in file order; ``external_ends`` gets where each external
    Markdown link ends (a tag may start there, SEMANTICS 4)."""
    found: list[_Occurrence] = []
    if "[[" in masked:
        line_index = counted_to = 0  # matches come in order: count newlines once overall
        for match in _WIKILINK.finditer(masked):
            start, end = match.span()
            inner = body[start + 2 : end - 2]
            if "[[" in inner or "]]" in inner:
                continue  # code or math hid brackets: the written text is no wikilink (6)
            # SEMANTICS 6: in a table row an unescaped `|` splits the cell, not the link.
            if table_rows and "|" in inner and _UNESCAPED_PIPE.search(inner):
                line_index += body.count("\n", counted_to, start)
                counted_to = start
                if line_index in table_rows:
                    continue
            parts = wikilink_parts(inner)
            if parts is None:
                continue
            if start and masked[start - 1] == "!":
                found.append((start - 1, end, "embed", *parts))
            else:
                found.append((start, end, "wikilink", *parts))
    if "](" in masked:
        for match in _markdown_links(masked):
            group = "plain" if match.start("angled") < 0 else "angled"
            target = _markdown_target(body[match.start(group) : match.end(group)])
            if target is None:
                external_ends.append(match.end())
                continue
            start, end = match.span()
            text = body[match.start("text") : match.end("text")]
            if start and masked[start - 1] == "!":
                found.append((start - 1, end, "markdown-embed", *target, text))
            else:
                found.append((start, end, "markdown", *target, text))
        found.sort(key=lambda occurrence: occurrence[0])
    return found


# --- tags ------------------------------------------------------------------------------------

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
# also begin an inline chunk; `_find_tags` checks which of the two it is.
_TAG_AFTER_MARK = re.compile(r"(?<=[>|])#(" + _TAG_BODY + ")")
_QUOTE_MARKS = re.compile(r"[ \t>]*")
_ALL_DIGITS = re.compile(r"[0-9]+")


def _find_tags(
    masked: str,
    links: list[_Occurrence],
    external_ends: list[int],
    table_rows: frozenset[int] = frozenset(),
) -> list[str]:
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
        unicodedata.normalize("NFC", name)
        for _pos, name in found
        if not _ALL_DIGITS.fullmatch(name)
    ]


# --- headings --------------------------------------------------------------------------------

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


def _first_h1(body: str, masked: str) -> str | None:
    """SEMANTICS 3: the first level-1 heading outside code (ATX `# x` or setext `x` / `===`),
    trimmed, closing #s removed."""
    found = [h for h in (_first_atx_h1(body, masked), _first_setext_h1(body, masked)) if h]
    return min(found)[1] if found else None


# --- the body as a whole ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BodyScan:
    links: tuple[Link, ...]
    tags: tuple[str, ...]
    """In document order, possibly repeated; the caller removes duplicates."""
    first_h1: str | None


_EMPTY_SCAN = BodyScan((), (), None)


def scan_body(body: str, first_line: int = 1) -> BodyScan:
    """Links, tags and first H1 of ``body``, whose first line is file line ``first_line``."""
    if "[" not in body and "#" not in body and "=" not in body:
        return _EMPTY_SCAN  # no link, tag or heading can exist
    masked, table_rows = mask_excluded(body)
    external_ends: list[int] = []
    occurrences = _find_links(body, masked, table_rows, external_ends) if "[" in masked else []
    links: list[Link] = []
    line = first_line
    counted_to = 0
    for start, end, kind, linkpath, subpath, display in occurrences:
        line += body.count("\n", counted_to, start)  # occurrences are sorted: count once
        counted_to = start
        column = start - body.rfind("\n", 0, start)  # 1-based: rfind is -1 on line 1
        links.append(Link(kind, body[start:end], linkpath, subpath, display, line, column))
    tags = _find_tags(masked, occurrences, external_ends, table_rows)
    first_h1 = _first_h1(body, masked) if "#" in masked or "=" in masked else None
    return BodyScan(tuple(links), tuple(tags), first_h1)
