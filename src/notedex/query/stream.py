"""Whole-vault answers written while their rows are read (issue 35, ARCHITECTURE "Streaming
answers"): what every streamed form shares.

``graph --json`` and ``scan --json`` on a pipe write the same bytes as ``compact_json`` of
``query.listing.graph``/``scan``, but hold one row (and, for ``graph``, one source note's edges)
at a time instead of the whole answer: the dicts those builders keep become ordered cursors
merged by path, and a TEMP table of unresolved keys (``store.graph_rows``). Output goes out in chunks
of about ``CHUNK`` characters. A failure before the first chunk is written leaves stdout empty
(the command can still recover and answer); after it, ``StreamCut``: the document is cut, has
no final newline, and the exit code is not 0.

Each command's forms are a module of their own, so that a command loads only its own:
``query.stream_scan``, ``query.stream_graph``, ``query.stream_health``, ``query.export`` and
``query.search.stream_search``; ``query.stream_indented`` indents JSON for a terminal. Here:
``Document`` and its chunking, ``streamed``, ``page_bounds`` and ``ByPath``.
"""

from __future__ import annotations

import sys

# `health` and `search` load this module and are on the hot path (tests/system/test_imports.py):
# no `typing`.
TYPE_CHECKING = False  # mypy honours the name
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Iterable
    from typing import Any


CHUNK = 1 << 16
"""Characters gathered before one write to stdout."""


class Document:
    """A document written to ``write`` in chunks of at most ``chunk`` characters; ``written``
    counts what has gone out.

    ``add_bytes`` takes text that is UTF-8 already (JSON the index holds). With ``raw``, the
    write of the binary stream beneath ``write``'s text stream (stdout's buffer), it goes
    there as it is, with what was ``add``ed around it encoded, and ``sync`` (the text
    stream's flush) first puts out what ``write`` was given; without ``raw`` it is decoded
    and ``add``ed. A chunk of bytes is at most ``chunk`` bytes."""

    def __init__(
        self,
        write: Callable[[str], object],
        chunk: int | None = None,
        *,
        raw: Callable[[memoryview], object] | None = None,
        sync: Callable[[], object] | None = None,
    ) -> None:
        self._write = write
        self._chunk = CHUNK if chunk is None else chunk  # read now: a test may set a small one
        self._raw = raw
        self._sync = sync
        self._synced = True  # nothing given to ``write`` since ``raw`` was last written
        self._parts: list[str] = []
        self._bytes: list[bytes] = []  # what add_bytes gathered, before the text in _parts
        self._size = 0
        self.written = 0
        self.findings = 0
        """What makes the command exit 1 (``health``'s broken links and anchors), set by the
        body before its first byte."""

    def add(self, text: str) -> None:
        self._parts.append(text)
        self._size += len(text)
        if self._size >= self._chunk:
            self.flush()

    def items(self, encoded: Iterable[str]) -> int:
        """A JSON array's elements, comma-separated, and how many there were."""
        count = 0
        for text in encoded:
            self.add("," + text if count else text)
            count += 1
        return count

    def add_bytes(self, data: bytes) -> None:
        """UTF-8 text, added without making a str of it when the document has ``raw``."""
        if self._raw is None:
            self.add(data.decode())
            return
        if self._parts:
            self._bytes.append("".join(self._parts).encode())
            self._parts = []
        self._bytes.append(data)
        self._size += len(data)
        if self._size >= self._chunk:
            self.flush()

    def write(self, text: str) -> None:
        """``add``, for a ``query.output.Renderer`` writing here (as to a pipe)."""
        self.add(text)

    def isatty(self) -> bool:
        return False

    def flush(self) -> None:
        chunk, raw = self._chunk, self._raw
        if self._bytes and raw is not None:  # only add_bytes with raw fills _bytes
            if self._parts:
                self._bytes.append("".join(self._parts).encode())
            data = memoryview(b"".join(self._bytes))
            self._parts, self._bytes, self._size = [], [], 0
            if not self._synced and self._sync is not None:
                self._sync()
            self._synced = True
            for start in range(0, len(data), chunk):
                piece = data[start : start + chunk]
                raw(piece)
                self.written += len(piece)
        elif self._parts:
            text = "".join(self._parts)
            self._parts, self._size = [], 0
            self._synced = False
            for start in range(0, len(text), chunk):
                piece_text = text[start : start + chunk]
                self._write(piece_text)
                self.written += len(piece_text)


def streamed(
    conn: sqlite3.Connection,
    body: Callable[[sqlite3.Connection, Document], None],
    write: Callable[[str], object] | None = None,
    *,
    doc: Document | None = None,
    end: str = "\n",
) -> Document:
    """Write ``body``'s document to ``doc`` (or a new one on ``write``, stdout by default),
    ``end`` last (a newline; nothing for a list of paths, each ended by its own); see the
    module doc for what a failure leaves."""
    if doc is None:
        doc = Document(write or sys.stdout.write)
    try:
        body(conn, doc)
        doc.add(end)
        doc.flush()
        return doc
    except BrokenPipeError:
        raise
    except Exception as exc:
        if not doc.written:
            raise
        from notedex.error_kinds import StreamCut  # a failure's path: not loaded by every query

        raise StreamCut(
            f"the answer stopped after {doc.written} characters, stdout holds a cut document: {exc}"
        ) from exc


def page_bounds(page: tuple[int, int | None] | None) -> tuple[int, int | None]:
    """A page (offset, limit) as islice's (start, stop); no page: every item."""
    if page is None:
        return 0, None
    offset, limit = page
    return offset, None if limit is None else offset + limit


class ByPath:
    """(path, name) rows in path order, taken note by note as the notes come in path order
    (rows of paths never asked for are skipped). With ``whole``, ``take`` gives the rows
    themselves, for rows of more than one value."""

    def __init__(self, rows: Iterable[tuple[Any, ...]], *, whole: bool = False) -> None:
        self._rows = iter(rows)
        self._next = next(self._rows, None)
        self._whole = whole

    def take(self, path: str) -> list[Any]:
        # Python orders str by code point, SQLite's BINARY by UTF-8 bytes: the same order.
        names: list[Any] = []
        while self._next is not None and self._next[0] < path:
            self._next = next(self._rows, None)
        while self._next is not None and self._next[0] == path:
            names.append(self._next if self._whole else self._next[1])
            self._next = next(self._rows, None)
        return names
