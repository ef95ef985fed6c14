"""Links in a Markdown body: wikilinks, embeds and Markdown links with their targets
normalised (SEMANTICS 6). Works on masked text, so nothing in code or math is a link.
"""

from __future__ import annotations

import re
import unicodedata

from notedex.vault.markdown.blocks import BLANK_LINE_AHEAD

TYPE_CHECKING = False  # no `typing` on the mentions path (ARCHITECTURE); mypy honours the name
if TYPE_CHECKING:
    from collections.abc import Iterator

    from notedex.vault.model import LinkKind

__all__ = ["MARKDOWN_LINK", "WIKILINK", "find_links", "percent_decoded", "wikilink_parts"]

# SEMANTICS 6: one line, non-greedy, inner non-empty and free of `[[`.
# The `!` of an embed is checked by hand: a leading optional char defeats the fast search.
WIKILINK = re.compile(r"\[\[((?:[^\[\]\n]|\[(?!\[)|\](?!\]))+)\]\]")
_MARKDOWN_LINK = re.compile(
    # Link text may hold balanced brackets (CommonMark), one level: `[a [b] c](x.md)` and
    # the linked image `[![alt](pic.png)](Note.md)`; it may wrap within its paragraph.
    rf"\[(?P<text>(?:[^\[\]\n]|{BLANK_LINE_AHEAD}|\[[^\[\]\n]*\])*)\]\([ \t]*"
    r"(?:<(?P<angled>[^<>\n]*)>|(?P<plain>[^\s<>()]*(?:\([^\s<>()]*\)[^\s<>()]*)*))"
    r"""(?:[ \t]+(?:"[^"\n]*"|'[^'\n]*'|\([^()\n]*\)))?[ \t]*\)"""
)
MARKDOWN_LINK = _MARKDOWN_LINK  # vault.relink splits a link as written with the same rule
_URL_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]{1,31}:")
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


def percent_decoded(text: str) -> str:
    """``urllib.parse.unquote(text, errors="strict")`` for a text in which every ``%`` starts a
    hex pair (``_BAD_PERCENT`` refused the others): each run of ``%XX`` is UTF-8, and a run that
    is not raises ``UnicodeDecodeError``. Here rather than ``urllib.parse``, which imports
    ``ipaddress`` and costs a ``mentions`` process more than 0.2x interpreter start-up
    (ARCHITECTURE, the mentions budget); a property test holds the two equal."""
    if "%" not in text:
        return text
    first, *rest = text.split("%")
    out = [first]
    run = bytearray()
    for piece in rest:
        run.append(int(piece[:2], 16))
        if len(piece) > 2:  # literal text ends the run (UTF-8 never continues into ASCII)
            out.append(run.decode())
            run = bytearray()
            out.append(piece[2:])
    if run:
        out.append(run.decode())
    return "".join(out)


def _markdown_target(dest: str) -> tuple[str, str | None] | None:
    """``dest`` of ``[t](dest)`` -> (linkpath, subpath), or None if it is not an internal link."""
    if not dest or dest.startswith("//") or _URL_SCHEME.match(dest):
        return None
    if _BAD_PERCENT.search(dest):
        return None
    path, hash_sign, fragment = dest.partition("#")
    try:
        # Split before decoding: an encoded %23 belongs to the name, a raw # starts the subpath.
        path = percent_decoded(path)
        fragment = percent_decoded(fragment)
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


if TYPE_CHECKING:
    # (start, end, kind, linkpath, subpath, display): offsets into the body. For mypy alone,
    # so the runtime needs no ``vault.model`` (its dataclasses and ``typing``).
    Occurrence = tuple[int, int, LinkKind, str, str | None, str | None]


def find_links(
    body: str, masked: str, table_rows: frozenset[int], external_ends: list[int]
) -> list[Occurrence]:
    """Internal link occurrences in file order; ``external_ends`` gets where each external
    Markdown link ends (a tag may start there, SEMANTICS 4)."""
    found: list[Occurrence] = []
    if "[[" in masked:
        line_index = counted_to = 0  # matches come in order: count newlines once overall
        for match in WIKILINK.finditer(masked):
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
