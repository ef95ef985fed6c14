"""MCP resources: every note ``scan`` lists, by vault path, read-only, listed a page at a time.

A note's URI is ``notedex:///`` and its vault path, percent-encoded (RFC 3986; ``/`` kept), e.g.
``notedex:///Projects/Cobra%20CLI%20%E6%A1%86%E6%9E%B6.md``. ``resources/list`` pages through
the notes by path with an opaque cursor (keyset: a page does not shift when notes are added
before it); ``resources/read`` returns the note's whole file text as ``text/markdown``, at most
``MAX_BODY_CHARS`` characters of it (``_meta.truncated`` says it was cut; the ``show`` tool
reads the rest). A URI that does not name a listed note, or leads outside the vault, is the
protocol's "resource not found"; a cursor this server did not hand out is "invalid params".
"""

from __future__ import annotations

import base64
import binascii
import sqlite3
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from notedex.error_kinds import NoteNotFound
from notedex.mcp_server.paths import refuse_outside_paths
from notedex.mcp_server.tools import MAX_BODY_CHARS, ToolError
from notedex.query.find import read_note_text
from notedex.store import listing_rows, one_note
from notedex.store.connect import read_transaction
from notedex.vault.reading import VaultReader

SCHEME = "notedex:///"
MIME_TYPE = "text/markdown"
PAGE_SIZE = 100
RESOURCE_NOT_FOUND = -32002
INVALID_PARAMS = -32602
_CURSOR_PREFIX = "after:"


class ResourceError(ToolError):
    """A failed resources/* request: a JSON-RPC error with ``code`` (and the URI as data)."""

    def __init__(self, code: int, message: str, uri: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.uri = uri


def note_uri(path: str) -> str:
    return SCHEME + quote(path, safe="/")


def path_of_uri(uri: str) -> str:
    """The vault path a ``notedex:///`` URI names; refused when it could lead out of the vault."""
    if not isinstance(uri, str) or not uri.startswith(SCHEME):
        raise ResourceError(RESOURCE_NOT_FOUND, f"not a notedex note URI: {uri!r}", uri)
    encoded = uri[len(SCHEME) :]
    if "?" in encoded or "#" in encoded or not encoded:
        raise ResourceError(RESOURCE_NOT_FOUND, f"not a notedex note URI: {uri!r}", uri)
    try:
        path = unquote(encoded, errors="strict")
    except UnicodeDecodeError:
        raise ResourceError(RESOURCE_NOT_FOUND, f"{uri!r} is not UTF-8", uri) from None
    try:
        refuse_outside_paths(path)
    except ToolError as exc:
        raise ResourceError(RESOURCE_NOT_FOUND, str(exc), uri) from None
    return path


def encode_cursor(path: str) -> str:
    text = _CURSOR_PREFIX + path
    return base64.urlsafe_b64encode(text.encode("utf-8", "surrogatepass")).decode("ascii")


def decode_cursor(cursor: str | None) -> str:
    """The path after which the next page starts ('' for the first page)."""
    if cursor is None or cursor == "":
        return ""
    try:
        text = base64.urlsafe_b64decode(cursor.encode("ascii")).decode("utf-8", "surrogatepass")
    except (ValueError, binascii.Error, UnicodeError):
        text = ""
    if not text.startswith(_CURSOR_PREFIX):
        raise ResourceError(INVALID_PARAMS, f"invalid cursor {cursor[:80]!r}: start without one")
    return text[len(_CURSOR_PREFIX) :]


def list_resources(conn: sqlite3.Connection, cursor: str | None) -> dict[str, Any]:
    """One page of ``resources/list`` (wire shape), with ``nextCursor`` while more remain."""
    after = decode_cursor(cursor)
    with read_transaction(conn):
        rows = listing_rows.notes_after(conn, after, PAGE_SIZE + 1)
    page = rows[:PAGE_SIZE]
    result: dict[str, Any] = {
        "resources": [
            {
                "uri": note_uri(row["path"]),
                "name": row["path"],
                "title": row["title"],
                "mimeType": MIME_TYPE,
                "size": row["size"],
            }
            for row in page
        ]
    }
    if len(rows) > PAGE_SIZE:
        result["nextCursor"] = encode_cursor(page[-1]["path"])
    return result


def read_resource(
    conn: sqlite3.Connection, vault: Path, uri: str, *, max_bytes: int, follow_symlinks: bool
) -> dict[str, Any]:
    """``resources/read`` (wire shape): the note's text, capped at ``MAX_BODY_CHARS``."""
    path = path_of_uri(uri)
    with read_transaction(conn):
        row = one_note.note_by_path(conn, path)
    if row is None or row["excluded"]:
        raise ResourceError(RESOURCE_NOT_FOUND, f"no note {path!r} in the index", uri)
    try:
        # Read through the file the policy allows now, whatever the index says (vault.reading).
        files = VaultReader(vault, follow_outside=follow_symlinks)
        text = read_note_text(files, row["path"], row["disk_rel"], max_bytes)
    except NoteNotFound as exc:
        raise ResourceError(RESOURCE_NOT_FOUND, str(exc), uri) from None
    content: dict[str, Any] = {"uri": uri, "mimeType": MIME_TYPE, "text": text[:MAX_BODY_CHARS]}
    if len(text) > MAX_BODY_CHARS:
        content["_meta"] = {
            "truncated": True,
            "chars": len(text),
            "shownChars": MAX_BODY_CHARS,
            "hint": "the show tool reads the body in pieces (bodyOffset, maxBodyChars)",
        }
    return {"contents": [content]}
