"""Rewriting one link as written (SEMANTICS 8.11): a new target or anchor, everything else kept.

``fix`` and ``mv`` change where a link points, never how it looks: the embed ``!``, the kind
(wikilink or Markdown), the display text, a table's ``\\|`` escape, the path style (a bare name,
a vault path, ``/``-rooted, ``./`` or ``../`` relative), a ``.md`` written or left out, angle
brackets and the percent-encoding of a Markdown destination, and a Markdown link's title. Pure
functions over strings, no I/O (STYLE 9).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from notedex.vault.files import is_note_name
from notedex.vault.markdown.links import MARKDOWN_LINK

__all__ = ["WrittenLink", "path_in_style", "read_link", "rewrite"]

_WIKI = re.compile(r"(?P<bang>!?)\[\[(?P<inner>.*)\]\]", re.S)
# What a plain Markdown destination cannot hold as written (SEMANTICS 6.5: a raw space means no
# link; `#` starts the anchor; `%` starts an escape; `<`, `>` and parentheses end or nest it).
_PLAIN_UNSAFE = {" ": "%20", "%": "%25", "#": "%23", "<": "%3C", ">": "%3E", "(": "%28", ")": "%29"}
_FRAGMENT_UNSAFE = {k: v for k, v in _PLAIN_UNSAFE.items() if k != "#"}


@dataclass(frozen=True)
class WrittenLink:
    """A link's text split where a rewrite cuts it: ``head + linkpath + subpath + tail`` is the
    link as written (``subpath`` with its ``#``, or empty)."""

    markdown: bool
    head: str
    linkpath: str
    subpath: str
    tail: str
    display: str | None
    """A wikilink's display text, or None (a Markdown link's text is in ``head``)."""
    escaped: bool
    """A wikilink written with ``\\|`` (in a table) or ``\\]]``."""
    angled: bool
    """A Markdown destination in ``<...>``: written raw, never percent-encoded."""


def read_link(raw: str) -> WrittenLink | None:
    """``raw`` (a link as written: wikilink, embed, Markdown link or embed) split for a rewrite;
    None when it is none of them."""
    wiki = _WIKI.fullmatch(raw)
    if wiki is not None:
        inner = wiki["inner"]
        bar = inner.find("|")
        target, display = (inner[:bar], inner[bar + 1 :]) if bar > 0 else (inner, None)
        escaped = target.endswith("\\")
        target = target.removesuffix("\\")
        linkpath, hash_sign, subpath = target.partition("#")
        tail = ("\\" if escaped else "") + ("" if display is None else "|" + display) + "]]"
        return WrittenLink(
            False, wiki["bang"] + "[[", linkpath, hash_sign + subpath, tail, display, escaped, False
        )
    bang = "!" if raw.startswith("!") else ""
    markdown = MARKDOWN_LINK.fullmatch(raw, len(bang))
    if markdown is None:
        return None
    group = "plain" if markdown.start("angled") < 0 else "angled"
    start, end = markdown.span(group)
    linkpath, hash_sign, subpath = raw[start:end].partition("#")
    return WrittenLink(
        True, raw[:start], linkpath, hash_sign + subpath, raw[end:], None, False, group == "angled"
    )


def path_in_style(written: str, target: str, source: str, shortest: str) -> str:
    """The linkpath to write for the vault path ``target`` in the style of ``written`` (the
    linkpath as it was written, decoded), from the note ``source``: ``./``/``../`` relative,
    ``/``-rooted, a vault path when it had a folder, else ``shortest`` (the bare name when no
    other file shares it). A note keeps ``.md`` only when the written one had it."""
    if written.startswith(("./", "../")):
        folder = posixpath.dirname(source)
        path = posixpath.relpath(target, folder or ".")
        if written.startswith("./") and not path.startswith("../"):
            path = "./" + path
    elif written.startswith("/"):
        path = "/" + target
    elif "/" in written:
        path = target
    else:
        path = shortest
    name = target.rpartition("/")[2]
    if is_note_name(name):
        wants_md = is_note_name(written.rpartition("/")[2])
        has_md = is_note_name(path.rpartition("/")[2]) and len(path) >= len(name)
        if wants_md and not has_md:
            path += name[-3:]
        elif not wants_md and has_md and path.endswith(name):
            path = path[:-3]
    return path


def _encoded(text: str, unsafe: dict[str, str]) -> str:
    return "".join(unsafe.get(ch, ch) for ch in text)


def rewrite(
    link: WrittenLink,
    *,
    linkpath: str | None = None,
    subpath: str | None = None,
    in_table: bool = False,
) -> str:
    """The link with ``linkpath`` (decoded, as ``path_in_style`` gives it) and/or ``subpath``
    (with its ``#``, decoded) in place of its own; None keeps what was written. A wikilink
    (not an embed) without display text that gets a new linkpath shows its old target as
    display text, so the reader sees what was written; in a table (``in_table``) its ``|`` is written ``\\|``."""
    if link.markdown:
        new_path = link.linkpath
        if linkpath is not None:
            new_path = linkpath if link.angled else _encoded(linkpath, _PLAIN_UNSAFE)
        new_sub = link.subpath
        if subpath is not None:
            fragment = subpath[1:]
            new_sub = "#" + (fragment if link.angled else _encoded(fragment, _FRAGMENT_UNSAFE))
        return link.head + new_path + new_sub + link.tail
    new_path = link.linkpath if linkpath is None else linkpath
    new_sub = link.subpath if subpath is None else subpath
    tail = link.tail
    embed = link.head.startswith("!")  # an embed shows the file, not its link text
    if link.display is None and not embed and linkpath is not None and linkpath != link.linkpath:
        shown = (link.linkpath + link.subpath).strip()
        tail = ("\\|" if (in_table or link.escaped) else "|") + shown + "]]"
    return link.head + new_path + new_sub + tail
