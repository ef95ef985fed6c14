"""`quote`: whether a quoted passage is really in a note, where, and if not, what comes closest.

The read side of the quote check: find the note in the index, read its text from disk as
``show`` does, and compare on the normalisation of ``notedex.vault.quote``. Only the note's
body is searched; lines and columns are those of the file (frontmatter included, 1-based, the
column in characters of the line). A check over several notes at once reads a JSON list of
``{"path", "text"}`` items (``load_quotes``).
"""

from __future__ import annotations

import json
import sqlite3
import sys
import unicodedata
from pathlib import Path
from typing import Any

from notedex.errors import NotedexError, UsageError
from notedex.query.find import find_note, read_note_text
from notedex.query.listing import iso_from_ns
from notedex.store.connect import read_transaction
from notedex.vault.files import DEFAULT_MAX_BYTES, frontmatter_bounds
from notedex.vault.quote import (
    MAX_QUOTE_CHARS,
    Passage,
    closest_passage,
    find_quote,
    normalise,
    normalise_quote,
)
from notedex.vault.reading import VaultReader


def checked_quote(text: str, where: str = "the quote") -> str:
    """The quote as compared, or a usage error for an empty or an overlong one."""
    if len(text) > MAX_QUOTE_CHARS:
        raise UsageError(f"{where} is too long: at most {MAX_QUOTE_CHARS} characters")
    wanted = normalise_quote(text)
    if not wanted:
        raise UsageError(f"{where} is empty: give the passage to look for")
    return wanted


def quote(
    conn: sqlite3.Connection,
    vault: Path,
    note: str,
    text: str,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    follow_symlinks: bool = False,
) -> dict[str, Any]:
    """The quote document of one passage in one note (docs/cli.md, ``quote``);
    ``follow_symlinks``: the setting, for the read (``vault.reading``)."""
    wanted = checked_quote(text)
    with read_transaction(conn):
        row = find_note(conn, note)
    files = VaultReader(vault, follow_outside=follow_symlinks)
    source = unicodedata.normalize(
        "NFC", read_note_text(files, row["path"], row["disk_rel"], max_bytes)
    )
    bounds = frontmatter_bounds(source)
    body = normalise(source, 0 if bounds is None else bounds[2])
    found = find_quote(body, wanted)
    closest = None if found is not None else closest_passage(body, wanted)
    return {
        "path": row["path"],
        "quote": text,
        "found": found is not None,
        "match": _passage(source, row["path"], found),
        "closest": _passage(source, row["path"], closest),
        "modified": iso_from_ns(row["mtime_ns"]),
    }


def quote_check(
    conn: sqlite3.Connection,
    vault: Path,
    items: list[dict[str, str]],
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    follow_symlinks: bool = False,
) -> dict[str, Any]:
    """Every item's quote document, plus ``error`` when its note cannot be found or read."""
    results: list[dict[str, Any]] = []
    for item in items:
        try:
            result = quote(
                conn,
                vault,
                item["path"],
                item["text"],
                max_bytes=max_bytes,
                follow_symlinks=follow_symlinks,
            )
            result["error"] = None
        except NotedexError as exc:
            result = {
                "path": item["path"],
                "quote": item["text"],
                "found": False,
                "match": None,
                "closest": None,
                "modified": None,
                "error": str(exc),
            }
        results.append(result)
    found = sum(1 for r in results if r["found"])
    return {
        "total": len(results),
        "found": found,
        "notFound": len(results) - found,
        "results": results,
    }


def load_quotes(path: str) -> list[dict[str, str]]:
    """The items of a check file: a JSON list of ``{"path", "text"}`` (or ``{"quotes": [...]}``);
    ``-`` reads standard input. A malformed file is a usage error."""
    try:
        if path == "-":
            raw = sys.stdin.buffer.read().decode("utf-8", "replace")
        else:
            raw = Path(path).read_text(encoding="utf-8", errors="replace")
        data = json.loads(raw)
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise UsageError(f"{path} is not JSON: {exc}") from None
    if isinstance(data, dict) and isinstance(data.get("quotes"), list):
        data = data["quotes"]
    if not isinstance(data, list) or not data:
        raise UsageError(f'{path}: expected a non-empty list of {{"path", "text"}} items')
    items: list[dict[str, str]] = []
    for number, item in enumerate(data, 1):
        if not (
            isinstance(item, dict)
            and isinstance(item.get("path"), str)
            and isinstance(item.get("text"), str)
        ):
            raise UsageError(f'{path}: item {number} is not {{"path": str, "text": str}}')
        checked_quote(item["text"], f"{path}: item {number}'s text")
        items.append({"path": item["path"], "text": item["text"]})
    return items


def _passage(source: str, path: str, passage: Passage | None) -> dict[str, Any] | None:
    if passage is None:
        return None
    line, column = _line_column(source, passage.start)
    last, _ = _line_column(source, max(passage.start, passage.end - 1))
    return {
        "line": line,
        "column": column,
        "firstLine": line,
        "lastLine": last,
        "cite": f"{path}:{line}" if last == line else f"{path}:{line}-{last}",
        "text": source[passage.start : passage.end],
        "similarity": passage.similarity,
    }


def _line_column(source: str, offset: int) -> tuple[int, int]:
    line_start = source.rfind("\n", 0, offset) + 1
    return source.count("\n", 0, offset) + 1, offset - line_start + 1
