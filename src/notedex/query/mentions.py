"""`mentions`: unlinked mentions of a note (SEMANTICS 12): other notes whose body names its
title or one of its aliases as a phrase outside links, code, math and HTML. Candidates come
from the body index; each is confirmed in the note's text, read now."""

from __future__ import annotations

import os
import re

from notedex.errors import NotedexError
from notedex.query.find import find_note, read_note_text
from notedex.store import one_note
from notedex.store.connect import read_transaction
from notedex.vault.files import body_start_line, strip_frontmatter
from notedex.vault.markdown.inline import mask_excluded
from notedex.vault.markdown.links import find_links
from notedex.vault.reading import VaultReader
from notedex.vault.text import fold, is_cjk_char, nfc, segment

TYPE_CHECKING = False  # no `typing` on the mentions path (ARCHITECTURE); mypy honours the name
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterator
    from typing import Any

CANDIDATE_LIMIT = 2000
"""Notes read to confirm (SEMANTICS 12.3): a name common enough to pass it is reported."""

# Outside every link (SEMANTICS 12.2): external Markdown links (with the `!` of an image),
# inline HTML elements, autolinks and tags are blanked too; internal links come from the link
# scanner itself. Each pattern starts with a literal, so the regex engine skips ahead to it
# (a leading `!?` or lookbehind makes it try every position: 8-15x slower); a test holds them
# to the plain forms `!?\[...` and `(?<!\S)#...`.
_EXTERNAL_LINK = re.compile(r"\[[^\]\n]*\]\([^)\n]*\)")
_HTML_TAG = re.compile(r"<([A-Za-z][\w-]*)[^<>\n]*>[^\n]*?</\1\s*>|<[^<>\n]+>")
_TAG = re.compile(r"#(?<!\S#)[^\s#]+")
_NOT_NEWLINE = re.compile(r"[^\n]")


def mentions(
    conn: sqlite3.Connection,
    vault: str | os.PathLike[str],
    note: str,
    *,
    max_bytes: int,
    follow_symlinks: bool = False,
) -> dict[str, Any]:
    with read_transaction(conn):
        row = find_note(conn, note)
        names = _names(
            row["stem"], row["frontmatter_title"], one_note.aliases_of(conn, row["file_id"])
        )
        candidates: dict[int, tuple[str, str | None]] = {}
        for name in names:
            for file_id, path, disk_rel in one_note.body_matches(
                conn, _match_expression(name), CANDIDATE_LIMIT + 1
            ):
                if file_id != row["file_id"]:
                    candidates.setdefault(file_id, (path, disk_rel))
    complete = len(candidates) <= CANDIDATE_LIMIT
    found: list[dict[str, Any]] = []
    patterns = [(name, _phrase(name)) for name in names]
    files = VaultReader(vault, follow_outside=follow_symlinks)
    for path, disk_rel in sorted(candidates.values())[:CANDIDATE_LIMIT]:
        try:
            text = read_note_text(files, path, disk_rel, max_bytes)
        except NotedexError:  # NoteNotFound, its one error (its class is loaded when raised)
            continue  # gone or unreadable since it was indexed: nothing to confirm
        found.extend(_confirmed(path, text, patterns))
    found.sort(key=lambda m: (m["source"], m["line"], m["column"]))
    return {
        "note": row["path"],
        "title": row["title"],
        "names": names,
        "mentions": found,
        "mentionCount": len(found),
        "sourceCount": len({m["source"] for m in found}),
        "complete": complete,
    }


def _names(stem: str, title: str | None, aliases: list[str]) -> list[str]:
    """SEMANTICS 12.1: the stem, the frontmatter title and the aliases, once each (folded)."""
    seen: dict[str, str] = {}
    for name in (stem, title, *aliases):
        if name and name.strip():
            seen.setdefault(fold(" ".join(name.split())), " ".join(nfc(name).split()))
    return list(seen.values())


def _match_expression(name: str) -> str:
    """The notes that may hold the phrase, as the body index holds its text: the name as one
    FTS5 phrase; with CJK, every token (bigrams) instead, since a run's bigrams depend on the
    text around it. The text then confirms each."""
    tokens = segment(name).split()
    if not any(is_cjk_char(ch) for ch in name):
        return '"' + " ".join(tokens).replace('"', '""') + '"'
    longer = [t for t in tokens if len(t) > 1 or not is_cjk_char(t)]
    return " AND ".join('"' + t.replace('"', '""') + '"' for t in (longer or tokens))


def _phrase(name: str) -> re.Pattern[str]:
    """The name as a phrase: case ignored, any run of blanks between words, and not inside a
    longer word (no edge check beside a CJK character, which has no spaces around it)."""
    body = r"[ \t]+".join(re.escape(word) for word in name.split())
    tail = "" if is_cjk_char(name[-1]) else r"(?!\w)"
    if is_cjk_char(name[0]):
        return re.compile(body + tail, re.IGNORECASE)
    # `(?<!\w)` after the first character, not before it: the same test (`.` is that
    # character, never a newline), but the search can look for the character (3x faster).
    first = re.escape(name[0])
    return re.compile(first + r"(?<!\w.)" + body[len(first) :] + tail, re.IGNORECASE)


def _confirmed(
    path: str, text: str, patterns: list[tuple[str, re.Pattern[str]]]
) -> list[dict[str, Any]]:
    body = strip_frontmatter(text)
    if not any(pattern.search(body) for _, pattern in patterns):
        return []  # the index matched the words, not the phrase: nothing to mask
    first_line = body_start_line(text)
    masked = _unlinked_text(body)
    out: list[dict[str, Any]] = []
    taken: set[int] = set()
    for name, pattern in patterns:
        for start, end in _phrases(pattern, masked, body):
            if start in taken:
                continue  # two names at one place (a title and an alias): reported once
            taken.add(start)
            out.append(
                {
                    "source": path,
                    "line": first_line + body.count("\n", 0, start),
                    "column": start - body.rfind("\n", 0, start),
                    "text": body[start:end],
                    "name": name,
                }
            )
    return out


def _phrases(pattern: re.Pattern[str], masked: str, body: str) -> Iterator[tuple[int, int]]:
    """The spans of ``pattern`` in ``masked`` that blank nothing (SEMANTICS 12.2): the blanks
    between a phrase's words must be blanks of the text, so a link, code, math or HTML between
    two words breaks the phrase (`a [[x]] b` does not name `a b`). A match that spans blanked
    text is dropped and the search goes on from its next character, as a shorter phrase may
    start inside it."""
    position = 0
    while (match := pattern.search(masked, position)) is not None:
        start, end = match.span()
        if masked[start:end] == body[start:end]:
            yield start, end
            position = end
        else:
            position = start + 1


def _unlinked_text(body: str) -> str:
    """``body`` with code, math, HTML, links and their texts blanked, offsets kept."""
    masked, rows = mask_excluded(body)
    spans = [(start, end) for start, end, *_ in find_links(body, masked, rows, [])]
    if "](" in masked:
        spans += [_with_bang(masked, m.start(), m.end()) for m in _EXTERNAL_LINK.finditer(masked)]
    if "<" in masked:
        spans += [m.span() for m in _HTML_TAG.finditer(masked)]
    if "#" in masked:
        spans += [m.span() for m in _TAG.finditer(masked)]
    if not spans:
        return masked
    pieces: list[str] = []
    done = 0  # masked[:done] is in pieces; spans may overlap or nest
    for start, end in sorted(spans):
        if end <= done:
            continue
        start = max(start, done)
        pieces.append(masked[done:start])
        piece = masked[start:end]
        pieces.append(" " * len(piece) if "\n" not in piece else _NOT_NEWLINE.sub(" ", piece))
        done = end
    pieces.append(masked[done:])
    return "".join(pieces)


def _with_bang(masked: str, start: int, end: int) -> tuple[int, int]:
    r"""An external link's span with the `!` of an image before it, as `!?\[...` would match."""
    return (start - 1, end) if start and masked[start - 1] == "!" else (start, end)
