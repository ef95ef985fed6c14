"""``scan``'s streamed forms (ARCHITECTURE "Streaming answers", ``query.stream``): its JSON and
text, whole or a page, and ``--paths``/``-0``, note after note in the filter's order; and the
JSON object of one note and of one error, which ``query.listing.scan`` builds with too.
"""

from __future__ import annotations

from itertools import chain

from notedex.query.output import compact_encoder
from notedex.query.stream import ByPath, page_bounds
from notedex.store import listing_rows, read
from notedex.store.connect import read_transaction

# On the listing budget (docs/design/imports.md: `recent` loads it through query.listing): no
# `typing`, and what a sort needs (json) is imported where it runs.
TYPE_CHECKING = False  # mypy honours the name
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterable
    from typing import Any

    from notedex.query.filters import NoteFilter
    from notedex.query.stream import Document


def scan_json(
    conn: sqlite3.Connection,
    doc: Document,
    nf: NoteFilter | None = None,
    page: tuple[int, int | None] | None = None,
) -> None:
    """``query.listing.scan`` as compact JSON, note after note (``scan_notes``); with ``page``
    (offset, limit or None), the page ``query.paging.paginate`` cuts of it: the lists skip and
    stop as their cursors are read, the totals are counted by SQLite."""
    from itertools import islice

    encode = compact_encoder()
    read.unmapped(conn)
    offset, stop = page_bounds(page)
    with read_transaction(conn):
        entries = (scan_entry(*note) for note in islice(scan_notes(conn, nf), offset, stop))
        problems = islice(read.problems_in_path_order(conn, "error"), offset, stop)
        doc.add('{"notes":[')
        notes = doc.items(encode(entry) for entry in entries)
        doc.add('],"errors":[')
        errors = doc.items(encode(scan_error(r)) for r in problems)
        if page is not None:
            notes, errors = listing_rows.note_count(conn, nf), read.error_count(conn)
        doc.add(f'],"noteCount":{notes},"errorCount":{errors}')
        if page is not None:
            more = stop is not None and (notes > stop or errors > stop)
            doc.add(
                f',"totals":{{"notes":{notes},"errors":{errors}}},"total":{notes},'
                f'"offset":{offset},"limit":{encode(page[1])},"hasMore":{encode(more)}'
            )
        doc.add("}")


def scan_notes(
    conn: sqlite3.Connection, nf: NoteFilter | None = None
) -> Iterable[tuple[sqlite3.Row, list[str], list[str]]]:
    """Each note ``nf`` keeps with its tags and aliases, one at a time, in ``nf``'s order: in
    path order, the tags and aliases cursors merged by path (``ByPath``); in another order
    (``nf.sort``, ``nf.reverse``), SQLite sorts the notes and gives each row its names as
    JSON arrays (``listing_rows.notes_with_names``, issue 35: no list of every note). Inside the
    caller's read transaction."""
    if nf is not None and (nf.sort not in (None, "path") or nf.reverse):
        import json

        for r in listing_rows.notes_with_names(conn, nf):
            yield r, json.loads(r["tags_json"]), json.loads(r["aliases_json"])
        return
    tags = ByPath(listing_rows.names_in_path_order(conn, "tags", nf))
    aliases = ByPath(listing_rows.names_in_path_order(conn, "aliases", nf))
    for r in read.notes_in_path_order(conn, nf):
        yield r, tags.take(r["path"]), aliases.take(r["path"])


def scan_entry(r: sqlite3.Row, tags: list[str], aliases: list[str]) -> dict[str, Any]:
    """One note of ``scan``, streamed here and whole in ``query.listing.scan`` (here so that a
    streamed scan loads no ``query.listing``, with its json, pathlib and dataclasses)."""
    return {
        "id": r["id"],
        "title": r["title"],
        "type": r["type"],
        "status": r["status"],
        "path": r["path"],
        "tags": tags,
        "aliases": aliases,
    }


def scan_error(r: sqlite3.Row) -> dict[str, Any]:
    return {"path": r["path"], "message": r["message"]}


def scan_text(
    conn: sqlite3.Connection,
    doc: Document,
    nf: NoteFilter | None = None,
    page: tuple[int, int | None] | None = None,
) -> None:
    """``render.render_scan``'s text on a pipe (no terminal: no cut columns, no hyperlinks).
    Its columns are as wide as their widest cell: a first pass over the notes measures them,
    a second writes the rows, in one read transaction. With ``page`` (offset, limit or None),
    of the page ``query.paging.paginate`` cuts, the counts those of every note and error."""
    from itertools import islice

    from notedex.query.output import Renderer, _clip, _width
    from notedex.query.render import SCAN_HEADERS, scan_cells, scan_summary

    r = Renderer("", doc)  # type: ignore[arg-type]  # a writer that is no terminal
    offset, stop = page_bounds(page)

    def rows() -> Iterable[tuple[str, ...]]:
        for n, tags, aliases in islice(scan_notes(conn, nf), offset, stop):
            yield scan_cells({**dict(n), "tags": tags, "aliases": aliases}, r)

    def problems() -> Iterable[sqlite3.Row]:
        return islice(read.problems_in_path_order(conn, "error"), offset, stop)

    read.unmapped(conn)
    with read_transaction(conn):
        widths = [len(h) for h in SCAN_HEADERS]
        listed = 0
        for cells in rows():
            widths = [max(w, _width(c)) for w, c in zip(widths, cells)]
            listed += 1
        if listed:
            for cells in chain([SCAN_HEADERS], rows()):
                r.line("  ".join(_clip(c, w) for c, w in zip(cells, widths)).rstrip())
        notes, errors = listed, sum(1 for _ in problems())
        shown = errors
        if page is not None:
            notes, errors = listing_rows.note_count(conn, nf), read.error_count(conn)
        if shown:
            r.section("Errors", errors)
            for e in problems():
                r.line(f"  {r.path(e['path'])}: {e['message']}")
    doc.add("\n" + scan_summary(notes, errors))


def scan_paths(
    conn: sqlite3.Connection, doc: Document, nf: NoteFilter | None = None, *, end: str = "\n"
) -> None:
    """``scan --paths`` (``end`` "\\n") or ``-0`` (``end`` NUL): each note's path as the notes
    come, in ``nf``'s order (``render.emit_paths`` of the whole scan)."""
    read.unmapped(conn)
    with read_transaction(conn):
        for r in read.notes_in_path_order(conn, nf):
            doc.add(r["path"] + end)
