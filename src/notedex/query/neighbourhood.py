"""The link graph around one note: the nodes within ``depth`` hops and the edges between them.

A bounded piece of ``graph`` (same nodes, labels and edges; cli.md "graph"), grown breadth-first
from one note through the links in both directions. Only notes are walked through: an
attachment or a broken key is a node at the edge of the piece, never a bridge to every note that
shares it. ``max_nodes`` caps the piece; when the cap leaves nodes out, ``truncated`` is true.
The nearest nodes are kept first, and among equally near ones the first by path.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from notedex.query.find import find_note
from notedex.query.listing import linked_file_node, unresolved_node_id
from notedex.store import graph_rows, read
from notedex.store.connect import read_transaction
from notedex.vault.resolve import broken_key

MAX_DEPTH = 5
MAX_NODES = 2000


def neighbourhood(
    conn: sqlite3.Connection, note: str, *, depth: int = 1, max_nodes: int = 100
) -> dict[str, Any]:
    """The piece of the link graph within ``depth`` hops of ``note`` (a path or a title)."""
    if not 1 <= depth <= MAX_DEPTH or not 1 <= max_nodes <= MAX_NODES:
        raise ValueError(f"depth must be 1-{MAX_DEPTH} and max_nodes 1-{MAX_NODES}")
    with read_transaction(conn):
        center = find_note(conn, note)
        piece = _Piece(center, max_nodes)
        frontier = [center["file_id"]]
        for distance in range(1, depth + 1):
            frontier = piece.grow(graph_rows.graph_edges_touching(conn, frontier), distance)
            if not frontier:
                break
        # The edges among the outermost nodes, so the piece is the graph restricted to them.
        piece.close(graph_rows.graph_edges_touching(conn, frontier) if frontier else [])
        piece.name_unresolved(graph_rows.graph_node_paths_among(conn, piece.unresolved_keys()))
        labels = read.notes_by_ids(conn, piece.note_ids())
    return piece.document(labels, depth)


class _Piece:
    """The nodes found so far (by key: a file id, or a broken key) and the edges between them."""

    def __init__(self, center: sqlite3.Row, max_nodes: int) -> None:
        self.center: str = center["path"]
        self.max_nodes = max_nodes
        self.truncated = False
        # key -> (distance, path or broken key, kind); a file's key is its id.
        self.nodes: dict[int | str, tuple[int, str, str]] = {
            center["file_id"]: (0, center["path"], "note")
        }
        # (source id, target id or linkpath) -> (source key, target key, count)
        self.edges: dict[tuple[int, int | str], tuple[int | str, int | str, int]] = {}
        self.unresolved_ids: dict[str, str] = {}

    def grow(self, rows: list[sqlite3.Row], distance: int) -> list[int]:
        """Add the nodes one hop further out, nearest first; the notes among them walk on."""
        found: dict[int | str, tuple[str, str]] = {}
        for row in rows:
            for key, path, kind in _ends(row):
                if key not in self.nodes and key not in found:
                    found[key] = (path, kind)
        room = self.max_nodes - len(self.nodes)
        ordered = sorted(found.items(), key=lambda item: (item[1][0], str(item[0])))
        if len(ordered) > room:
            self.truncated = True
            ordered = ordered[: max(room, 0)]
        for key, (path, kind) in ordered:
            self.nodes[key] = (distance, path, kind)
        self._keep_edges(rows)
        return [key for key, (_, kind) in ordered if isinstance(key, int) and kind == "note"]

    def close(self, rows: list[sqlite3.Row]) -> None:
        self._keep_edges(rows)

    def _keep_edges(self, rows: list[sqlite3.Row]) -> None:
        for row in rows:
            (source, _, _), (target, _, _) = _ends(row)
            if source in self.nodes and target in self.nodes:
                # Keyed by the row itself: a row fetched again (from its other end, or in the
                # next round) replaces its twin instead of counting twice.
                resolved = row["target_id"] is not None
                identity = (row["source_id"], row["target_id"] if resolved else row["linkpath"])
                self.edges[identity] = (source, target, row["count"])

    def unresolved_keys(self) -> list[str]:
        return [path for _, path, kind in self.nodes.values() if kind == "unresolved"]

    def name_unresolved(self, taken: set[str]) -> None:
        self.unresolved_ids = {key: unresolved_node_id(key, taken) for key in taken}

    def note_ids(self) -> list[int]:
        return [key for key in self.nodes if isinstance(key, int)]

    def document(self, labels: list[sqlite3.Row], depth: int) -> dict[str, Any]:
        listed = {row["file_id"]: row["title"] for row in labels if not row["excluded"]}
        node_ids: dict[int | str, str] = {}
        nodes = []
        for key, (distance, path, kind) in self.nodes.items():
            if kind == "unresolved":
                node = {"id": self.unresolved_ids.get(path, path), "label": path, "kind": kind}
            elif key in listed:
                node = {"id": path, "label": listed[key], "kind": "note"}
            else:
                node = linked_file_node(path, kind == "note")
            node_ids[key] = node["id"]
            nodes.append({**node, "distance": distance})
        nodes.sort(key=lambda n: (n["distance"], n["id"]))
        counts: dict[tuple[str, str], int] = {}
        for source, target, count in self.edges.values():
            pair = (node_ids[source], node_ids[target])
            counts[pair] = counts.get(pair, 0) + count
        edges = [
            {"source": source, "target": target, "count": count}
            for (source, target), count in counts.items()
        ]
        edges.sort(key=lambda e: (e["source"], e["target"]))
        return {
            "center": self.center,
            "depth": depth,
            "maxNodes": self.max_nodes,
            "truncated": self.truncated,
            "nodes": nodes,
            "edges": edges,
        }


def _ends(row: sqlite3.Row) -> tuple[tuple[int | str, str, str], tuple[int | str, str, str]]:
    """(key, path, kind) of an edge row's source and target; a broken target is keyed by its key."""
    source = (row["source_id"], row["source"], "note")
    if row["target_id"] is None:
        key = broken_key(row["linkpath"])
        return source, (key, key, "unresolved")
    kind = "note" if row["target_is_note"] else "attachment"
    return source, (row["target_id"], row["target"], kind)
