"""Whole-vault answers written while their rows are read (issue 35, ARCHITECTURE "Streaming
answers").

``graph --json`` and ``scan --json`` on a pipe write the same bytes as ``compact_json`` of
``query.listing.graph``/``scan``, but hold one row (and, for ``graph``, one source note's edges)
at a time instead of the whole answer: the dicts those builders keep become ordered cursors
merged by path, and a TEMP table of unresolved keys (``store.graph_rows``). Output goes out in chunks
of about ``CHUNK`` characters. A failure before the first chunk is written leaves stdout empty
(the command can still recover and answer); after it, ``StreamCut``: the document is cut, has
no final newline, and the exit code is not 0.

Over 500 lines for now: one module holds every streamed form of scan, graph and health because
they share ``Document`` and its chunking; the next step splits it by command (issue 35).
"""

from __future__ import annotations

import sys
from itertools import chain

from notedex.errors import StreamCut
from notedex.query.output import compact_encoder
from notedex.query.reports import HEALTH_LISTS, counts_tail
from notedex.store import read
from notedex.store.connect import read_transaction

# `health` is on the hot path (tests/system/test_imports.py): no `typing`, and what `graph` and
# `scan` need (query.listing, vault.resolve: json and re) is imported where they run.
TYPE_CHECKING = False  # mypy honours the name
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Iterable
    from typing import Any

    from notedex.codes import Selection
    from notedex.query.filters import NoteFilter

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
        raise StreamCut(
            f"the answer stopped after {doc.written} characters, stdout holds a cut document: {exc}"
        ) from exc


def graph_json(
    conn: sqlite3.Connection,
    doc: Document,
    nf: NoteFilter | None = None,
    page: tuple[int, int | None] | None = None,
) -> None:
    """``query.listing.graph`` as compact JSON, node after node, edge after edge; with
    ``page`` (offset, limit or None), the page ``query.paging.paginate`` cuts (``Page``)."""
    encode = compact_encoder()
    cut = Page(page)
    read.unmapped(conn)
    with read_transaction(conn):
        kept = _graph_start(conn, nf)
        doc.add('{"nodes":[')
        doc.items(encode(node) for node in cut.of("nodes", _graph_nodes(conn, nf, kept)))
        doc.add('],"edges":[')
        doc.items(encode(edge) for edge in cut.of("edges", _edges(conn, kept)))
        doc.add("]")
    doc.add(cut.tail(encode) + "}")


def graph_text(
    conn: sqlite3.Connection,
    doc: Document,
    nf: NoteFilter | None = None,
    page: tuple[int, int | None] | None = None,
) -> None:
    """``render.render_graph``'s text: an edge a line, then the counts (the nodes are counted,
    not written); of the page ``page`` cuts, if any."""
    from notedex.query.output import escaped, plural

    cut = Page(page)
    read.unmapped(conn)
    kinds: dict[str, int] = {}
    with read_transaction(conn):
        kept = _graph_start(conn, nf)
        for node in cut.of("nodes", _graph_nodes(conn, nf, kept)):
            kinds[node["kind"]] = kinds.get(node["kind"], 0) + 1
        edges = 0
        for edge in cut.of("edges", _edges(conn, kept)):
            times = f" (x{edge['count']})" if edge["count"] > 1 else ""
            doc.add(f"{escaped(edge['source'])} -> {escaped(edge['target'])}{times}\n")
            edges += 1
    names = {"note": "notes", "attachment": "attachments", "unresolved": "unresolved"}
    summary = ", ".join(plural(v, k, names.get(k)) for k, v in sorted(kinds.items()))
    doc.add(f"\n{plural(sum(kinds.values()), 'node')} ({summary}), {plural(edges, 'edge')}")


def graph_dot(
    conn: sqlite3.Connection,
    doc: Document,
    nf: NoteFilter | None = None,
    page: tuple[int, int | None] | None = None,
) -> None:
    """``render.render_dot``'s DOT, node after node, edge after edge; of ``page``, if any."""
    from notedex.query.render import _dot_id

    shapes = {"note": "box", "attachment": "note", "unresolved": "box, style=dashed"}
    cut = Page(page)
    read.unmapped(conn)
    with read_transaction(conn):
        kept = _graph_start(conn, nf)
        doc.add("digraph notedex {\n  node [shape=box];\n")
        for node in cut.of("nodes", _graph_nodes(conn, nf, kept)):
            shape = "" if node["kind"] == "note" else f", shape={shapes[node['kind']]}"
            doc.add(f"  {_dot_id(node['id'])} [label={_dot_id(node['label'])}{shape}];\n")
        for edge in cut.of("edges", _edges(conn, kept)):
            label = f" [label={edge['count']}]" if edge["count"] > 1 else ""
            doc.add(f"  {_dot_id(edge['source'])} -> {_dot_id(edge['target'])}{label};\n")
        doc.add("}")


class Page:
    """``query.paging.paginate`` as the lists are read: ``of`` passes on a list's items on
    the page (offset, limit or None; None: every item) and counts them all, as a list must
    be read whole (a graph's unresolved nodes name what its edges point at); ``tail`` is
    the page's keys after the lists."""

    def __init__(self, page: tuple[int, int | None] | None) -> None:
        self.page = page
        self.offset, self.stop = _page_bounds(page)
        self.totals: dict[str, int] = {}

    def of(self, name: str, items: Iterable[Any]) -> Iterable[Any]:
        count = 0
        for item in items:
            if count >= self.offset and (self.stop is None or count < self.stop):
                yield item
            count += 1
        self.totals[name] = count

    def tail(self, encode: Callable[[Any], str]) -> str:
        """``,"totals":...,"hasMore":...`` of a paged answer whose first list is not notes
        (``total`` the longest list's length); nothing when not paged."""
        if self.page is None:
            return ""
        more = self.stop is not None and any(n > self.stop for n in self.totals.values())
        return (
            f',"totals":{encode(self.totals)},"total":{max(self.totals.values())},'
            f'"offset":{self.offset},"limit":{encode(self.page[1])},"hasMore":{encode(more)}'
        )


def _graph_start(conn: sqlite3.Connection, nf: NoteFilter | None) -> bool:
    """Whether the graph is filtered: then the kept notes' ids go to a TEMP table first
    (``graph_rows.graph_kept_start``), which every later query of the graph probes. Inside the
    caller's read transaction."""
    from notedex.store import graph_rows

    if nf is None or not nf.active:
        return False
    graph_rows.graph_kept_start(conn, nf)
    return True


def _graph_nodes(
    conn: sqlite3.Connection, nf: NoteFilter | None = None, kept: bool = False
) -> Iterable[dict[str, str]]:
    """The graph's nodes in three runs (listed notes; files linked but not listed; unresolved
    keys, whose ids go to the TEMP table ``_edges`` reads): the last probes what the first two
    hold, never their output. With ``kept``, the notes ``nf`` keeps and what they link to.
    Inside the caller's read transaction."""
    from notedex.query.listing import linked_file_node
    from notedex.store import graph_rows

    graph_rows.unresolved_ids_start(conn)
    return chain(
        (
            {"id": r["path"], "label": r["title"], "kind": "note"}
            for r in read.notes_in_path_order(conn, nf if kept else None)
        ),
        (
            linked_file_node(r["target"], bool(r["target_is_note"]))
            for r in graph_rows.graph_linked_files(conn, kept)
        ),
        _unresolved_nodes(conn, kept),
    )


def _unresolved_nodes(conn: sqlite3.Connection, kept: bool = False) -> Iterable[dict[str, str]]:
    """One node per broken key, in edge order; its id is the key, with " (unresolved)" until
    no file node and no earlier unresolved node has it (``listing.unresolved_node_id``)."""
    from notedex.store import graph_rows
    from notedex.vault.resolve import broken_key

    for _source, linkpath in graph_rows.graph_broken_links(conn, kept):
        key = broken_key(linkpath)
        if graph_rows.unresolved_id(conn, key) is not None:
            continue
        node_id = key
        while graph_rows.graph_file_node(conn, node_id, kept) or graph_rows.unresolved_id_taken(
            conn, node_id
        ):
            node_id += " (unresolved)"
        graph_rows.unresolved_id_add(conn, key, node_id)
        yield {"id": node_id, "label": key, "kind": "unresolved"}


def _edges(conn: sqlite3.Connection, kept: bool = False) -> Iterable[dict[str, Any]]:
    """One edge per (source, target node) pair; the rows of a source come together, so only
    that source's edges are held."""
    from notedex.store import graph_rows
    from notedex.vault.resolve import broken_key

    source: str | None = None
    edges: dict[str, dict[str, Any]] = {}
    for r in graph_rows.graph_edges_by_source(conn, kept):
        if r["source"] != source:
            yield from edges.values()
            source, edges = r["source"], {}
        target = r["target"]
        if target is None:
            target = graph_rows.unresolved_id(conn, broken_key(r["linkpath"]))
        edge = edges.get(target)
        if edge is None:
            edge = edges[target] = {"source": r["source"], "target": target, "count": 0}
        edge["count"] += r["count"]
    yield from edges.values()


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
    offset, stop = _page_bounds(page)
    with read_transaction(conn):
        entries = (scan_entry(*note) for note in islice(scan_notes(conn, nf), offset, stop))
        problems = islice(read.problems_in_path_order(conn, "error"), offset, stop)
        doc.add('{"notes":[')
        notes = doc.items(encode(entry) for entry in entries)
        doc.add('],"errors":[')
        errors = doc.items(encode(scan_error(r)) for r in problems)
        if page is not None:
            notes, errors = read.note_count(conn, nf), read.error_count(conn)
        doc.add(f'],"noteCount":{notes},"errorCount":{errors}')
        if page is not None:
            more = stop is not None and (notes > stop or errors > stop)
            doc.add(
                f',"totals":{{"notes":{notes},"errors":{errors}}},"total":{notes},'
                f'"offset":{offset},"limit":{encode(page[1])},"hasMore":{encode(more)}'
            )
        doc.add("}")


def _page_bounds(page: tuple[int, int | None] | None) -> tuple[int, int | None]:
    """A page (offset, limit) as islice's (start, stop); no page: every item."""
    if page is None:
        return 0, None
    offset, limit = page
    return offset, None if limit is None else offset + limit


def scan_notes(
    conn: sqlite3.Connection, nf: NoteFilter | None = None
) -> Iterable[tuple[sqlite3.Row, list[str], list[str]]]:
    """Each note ``nf`` keeps with its tags and aliases, one at a time, in ``nf``'s order: in
    path order, the tags and aliases cursors merged by path (``ByPath``); in another order
    (``nf.sort``, ``nf.reverse``), SQLite sorts the notes and gives each row its names as
    JSON arrays (``read.notes_with_names``, issue 35: no list of every note). Inside the
    caller's read transaction."""
    if nf is not None and (nf.sort not in (None, "path") or nf.reverse):
        import json

        for r in read.notes_with_names(conn, nf):
            yield r, json.loads(r["tags_json"]), json.loads(r["aliases_json"])
        return
    tags = ByPath(read.names_in_path_order(conn, "tags", nf))
    aliases = ByPath(read.names_in_path_order(conn, "aliases", nf))
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
    offset, stop = _page_bounds(page)

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
            notes, errors = read.note_count(conn, nf), read.error_count(conn)
        if shown:
            r.section("Errors", errors)
            for e in problems():
                r.line(f"  {r.path(e['path'])}: {e['message']}")
    doc.add("\n" + scan_summary(notes, errors))


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


def health_json(conn: sqlite3.Connection, doc: Document) -> None:
    """``query.reports.health_json``'s document, a batch of findings at a time: the JSON
    objects the writer stored (or SQLite builds) per row, as that function concatenates them,
    as UTF-8 from the index to ``doc`` (``Document.add_bytes``)."""
    from notedex.store import health_lists

    read.unmapped(conn)
    counts: dict[str, int] = {}
    with read_transaction(conn):
        doc.findings = health_lists.health_finding_count(conn)
        for i, name in enumerate(HEALTH_LISTS):
            doc.add(("{" if i == 0 else "],") + f'"{name}":[')
            count = 0
            for rows, data in health_lists.health_json_batches(conn, name):
                doc.add_bytes(b"," + data if count else data)
                count += rows
            counts[name] = count
        codes = health_lists.health_code_counts(conn)
    doc.add("]" + counts_tail(counts, codes))


def health_text(conn: sqlite3.Connection, doc: Document) -> None:
    """``render.render_health``'s text on a pipe: the counts by code, then each section's count
    (counted first) and its findings one at a time, from the JSON objects ``health --json``
    writes, so the text and the document cannot disagree."""
    import json  # the text of health, not its hot --json path

    from notedex.query.output import Renderer
    from notedex.query.render import HEALTH_SECTIONS, by_code_line, health_line, health_summary
    from notedex.query.reports import code_tally
    from notedex.store import health_lists

    r = Renderer("", doc)  # type: ignore[arg-type]  # a writer that is no terminal
    read.unmapped(conn)
    with read_transaction(conn):
        doc.findings = health_lists.health_finding_count(conn)
        counts = {name: health_lists.health_row_count(conn, name) for name, _ in HEALTH_SECTIONS}
        r.line(by_code_line(code_tally(counts, health_lists.health_code_counts(conn))))
        for name, title in HEALTH_SECTIONS:
            r.section(title, counts[name])
            for item in health_lists.health_json_rows(conn, name):
                r.line(health_line(name, json.loads(item), r.path))
    doc.add("\n" + health_summary(counts))


class HealthChoice:
    """The findings a filtered (``nf``: ``query.reports.kept_findings``) or selected
    (``choice``: ``--only``, ``--ignore``, the config's ``ignore``: ``reports.selected``)
    ``health`` keeps, decided one finding at a time: the kept notes' paths are a TEMP table
    probed per finding (``health_lists.kept_paths_start``), never a set in the process. Made inside
    the caller's read transaction."""

    def __init__(
        self, conn: sqlite3.Connection, nf: NoteFilter | None, choice: Selection | None
    ) -> None:
        from notedex.codes import FINDINGS
        from notedex.store import health_lists

        self._conn = conn
        self._nf = nf if nf is not None and nf.active else None
        self._choice = choice
        self._findings = {finding.list_key: finding for finding in FINDINGS}
        if self._nf is not None:
            health_lists.kept_paths_start(conn, self._nf)

    def _wants(self, name: str) -> bool:
        """Whether the list ``name`` can keep any finding."""
        nf, choice, finding = self._nf, self._choice, self._findings.get(name)
        notes_only = nf is not None and bool(nf.tags or nf.note_type or nf.where)
        if notes_only and name == "unusedAttachments":  # SEMANTICS 14.8: by --folder alone
            return False
        return choice is None or finding is None or choice.wants(finding.code, finding.commented)

    def _keeps(self, name: str, item: dict[str, Any]) -> bool:
        from notedex.store import health_lists

        nf, choice, finding = self._nf, self._choice, self._findings.get(name)
        if nf is not None:
            if name == "unusedAttachments":
                path = item["path"]
                if nf.folders and not any(
                    not folder or path.startswith(folder + "/") for folder in nf.folders
                ):
                    return False
            elif not health_lists.kept_path(self._conn, item.get("source") or item["path"]):
                return False
        if choice is None:
            return True
        if finding is None:  # warnings and errors
            return choice.keeps(item["code"], item["path"])
        return choice.keeps(
            finding.code, item[finding.path_key], bool(item.get("inComment", False))
        )

    def items(self, name: str) -> Iterable[tuple[str, dict[str, Any]]]:
        """The kept findings of the list ``name`` in report order: (its JSON as the index
        holds it, the object)."""
        import json

        from notedex.store import health_lists

        if not self._wants(name):
            return
        for raw in health_lists.health_json_rows(self._conn, name):
            item = json.loads(raw)
            if self._keeps(name, item):
                yield raw, item

    def tally(self, name: str, item: dict[str, Any], counts: dict[str, int]) -> None:
        """``reports.code_counts`` of one kept finding of ``name``, added to ``counts``."""
        from notedex.codes import IN_COMMENT

        finding = self._findings.get(name)
        if finding is None:
            counts[item["code"]] = counts.get(item["code"], 0) + 1
            return
        counts[finding.code] += 1
        if finding.commented and "inComment" in item:
            counts[IN_COMMENT] += 1


def health_chosen_json(
    conn: sqlite3.Connection,
    doc: Document,
    nf: NoteFilter | None = None,
    choice: Selection | None = None,
    page: tuple[int, int | None] | None = None,
) -> None:
    """``compact_json(reports.selected(reports.health(conn, nf), choice))``, finding after
    finding: the lists first, each kept finding's JSON as the index holds it, then the counts,
    tallied on the way. The broken links and anchors kept (the exit code) are counted in a
    first pass over those two lists, before the first byte. With ``page`` (offset, limit or
    None), the page ``query.paging.paginate`` cuts: each list's findings on the page written,
    all of them counted."""
    from notedex.codes import CODES, FINDINGS

    encode = compact_encoder()
    offset, stop = _page_bounds(page)
    read.unmapped(conn)
    with read_transaction(conn):
        keep = HealthChoice(conn, nf, choice)
        doc.findings = sum(1 for name in ("brokenLinks", "brokenAnchors") for _ in keep.items(name))
        lengths: dict[str, int] = {}
        tally = dict.fromkeys(CODES, 0)
        for i, name in enumerate(HEALTH_LISTS):
            doc.add(("{" if i == 0 else "],") + f'"{name}":[')
            count = written = 0
            for raw, item in keep.items(name):
                if count >= offset and (stop is None or count < stop):
                    doc.add("," + raw if written else raw)
                    written += 1
                keep.tally(name, item, tally)
                count += 1
            lengths[name] = count
    counted = "".join(
        f',"{f.count_key}":{lengths[f.list_key]}' for f in FINDINGS if f.count_key is not None
    )
    doc.add(f']{counted},"counts":{encode(tally)}')
    if page is not None:
        more = stop is not None and any(n > stop for n in lengths.values())
        doc.add(
            f',"totals":{encode(lengths)},"total":{max(lengths.values())},"offset":{offset},'
            f'"limit":{encode(page[1])},"hasMore":{encode(more)}'
        )
    doc.add("}")


def health_chosen_text(
    conn: sqlite3.Connection,
    doc: Document,
    nf: NoteFilter | None = None,
    choice: Selection | None = None,
    page: tuple[int, int | None] | None = None,
) -> None:
    """``render.render_health`` of a filtered, selected or paged (``page``: offset, limit or
    None) report on a pipe: a first pass counts the kept findings (the first line counts
    them by code, each section's heading says how many: of a paged list, the whole list's
    where the JSON has its count, else the page's), a second writes them, in one read
    transaction."""
    from itertools import islice

    from notedex.codes import CODES, FINDINGS
    from notedex.query.output import Renderer
    from notedex.query.render import HEALTH_SECTIONS, by_code_line, health_line, health_summary

    r = Renderer("", doc)  # type: ignore[arg-type]  # a writer that is no terminal
    offset, stop = _page_bounds(page)
    counted = {f.list_key for f in FINDINGS if f.count_key is not None}
    read.unmapped(conn)
    with read_transaction(conn):
        keep = HealthChoice(conn, nf, choice)
        counts = dict.fromkeys((name for name, _ in HEALTH_SECTIONS), 0)
        tally = dict.fromkeys(CODES, 0)
        for name in HEALTH_LISTS:
            for _raw, item in keep.items(name):
                counts[name] += 1
                keep.tally(name, item, tally)
        doc.findings = counts["brokenLinks"] + counts["brokenAnchors"]
        if page is not None:  # render_health counts a paged list by its page, or its count key
            for name in counts:
                if name not in counted:
                    whole = counts[name]
                    counts[name] = max(0, (whole if stop is None else min(whole, stop)) - offset)
        r.line(by_code_line(tally))
        for name, title in HEALTH_SECTIONS:
            r.section(title, counts[name])
            for _raw, item in islice(keep.items(name), offset, stop):
                r.line(health_line(name, item, r.path))
    doc.add("\n" + health_summary(counts))


def scan_paths(
    conn: sqlite3.Connection, doc: Document, nf: NoteFilter | None = None, *, end: str = "\n"
) -> None:
    """``scan --paths`` (``end`` "\\n") or ``-0`` (``end`` NUL): each note's path as the notes
    come, in ``nf``'s order (``render.emit_paths`` of the whole scan)."""
    read.unmapped(conn)
    with read_transaction(conn):
        for r in read.notes_in_path_order(conn, nf):
            doc.add(r["path"] + end)


HEALTH_PATHS = (
    ("brokenLinks", "source"),
    ("brokenAnchors", "source"),
    ("orphanNotes", "path"),
    ("unlinkedNotes", "path"),
    ("warnings", "path"),
    ("errors", "path"),
)
"""``reports.finding_paths``: the lists whose notes ``health --paths`` names, in its order."""


def health_paths(
    conn: sqlite3.Connection,
    doc: Document,
    nf: NoteFilter | None = None,
    choice: Selection | None = None,
    *,
    end: str = "\n",
) -> None:
    """``health --paths``/``-0``: ``reports.finding_paths`` of the (filtered, selected) report,
    each path once, as the findings come: the paths already written are a TEMP table probed
    per finding (``health_lists.seen_paths_start``), not a set in the process."""
    from notedex.store import health_lists

    read.unmapped(conn)
    with read_transaction(conn):
        keep = HealthChoice(conn, nf, choice)
        if nf is None and choice is None:
            doc.findings = health_lists.health_finding_count(conn)
        else:
            doc.findings = sum(
                1 for name in ("brokenLinks", "brokenAnchors") for _ in keep.items(name)
            )
        health_lists.seen_paths_start(conn)
        for name, key in HEALTH_PATHS:
            for _raw, item in keep.items(name):
                if health_lists.seen_path_add(conn, item[key]):
                    doc.add(item[key] + end)


class Indented:
    """A writer of compact JSON (``compact_json``'s, in pieces cut anywhere) that passes it
    on to ``write`` as ``json.dumps(..., ensure_ascii=False, indent=2)`` writes the same
    document: what ``query.output.emit_json`` shows on a terminal, written as it streams.
    It holds its place in the document (depth, inside a string, an open bracket whose first
    item has not come), never the document."""

    def __init__(self, write: Callable[[str], object]) -> None:
        import re  # a terminal's JSON only

        self._write = write
        self._depth = 0
        self._in_string = False
        self._escaped = False  # the last character of a string was a lone backslash
        self._opened = False  # an open bracket waits: "[]" stays as it is
        self._outside = re.compile(r'[{}\[\],:"]')
        self._inside = re.compile(r'["\\]')

    def __call__(self, text: str) -> None:
        out: list[str] = []
        i, size = 0, len(text)
        while i < size:
            if self._in_string:
                if self._escaped:  # the character after a backslash, whatever it is
                    out.append(text[i])
                    self._escaped = False
                    i += 1
                    continue
                found = self._inside.search(text, i)
                if found is None:
                    out.append(text[i:])
                    break
                j = found.start()
                out.append(text[i : j + 1])
                if text[j] == "\\":
                    self._escaped = True
                else:
                    self._in_string = False
                i = j + 1
                continue
            ch = text[i]
            if self._opened:
                self._opened = False
                if ch in "]}":  # an empty list or object
                    out.append(ch)
                    i += 1
                    continue
                self._depth += 1
                out.append("\n" + "  " * self._depth)
            found = self._outside.search(text, i)
            if found is None:
                out.append(text[i:])
                break
            j = found.start()
            out.append(text[i:j])
            ch = text[j]
            if ch == '"':
                out.append(ch)
                self._in_string = True
            elif ch in "{[":
                out.append(ch)
                self._opened = True
            elif ch in "}]":
                self._depth -= 1
                out.append("\n" + "  " * self._depth + ch)
            elif ch == ",":
                out.append(",\n" + "  " * self._depth)
            else:  # ":"
                out.append(": ")
            i = j + 1
        self._write("".join(out))
