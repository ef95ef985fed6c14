"""``graph``'s streamed forms (ARCHITECTURE "Streaming answers", ``query.stream``): JSON, text
and DOT, whole or a page, node after node and edge after edge; the unresolved keys' node ids go
to a TEMP table (``store.graph_rows``), and one source note's edges are held at a time.
"""

from __future__ import annotations

from itertools import chain
from typing import TYPE_CHECKING  # graph loads typing anyway (store.graph_rows)

from notedex.query.output import compact_encoder
from notedex.query.stream import page_bounds
from notedex.store import read
from notedex.store.connect import read_transaction

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Iterable
    from typing import Any

    from notedex.query.filters import NoteFilter
    from notedex.query.stream import Document


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
        self.offset, self.stop = page_bounds(page)
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
