"""The graph around one note (query/neighbourhood.py): exactly `graph` restricted to the notes
within the depth, walked through notes only, and cut at the node cap with `truncated`."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest

from notedex.error_kinds import NoteNotFound
from notedex.query.listing import graph
from notedex.query.neighbourhood import neighbourhood
from notedex.store.connect import connect_readonly
from tests.helpers import run_inprocess
from tests.indexcheck import make_vault

FILES: dict[str, str | bytes] = {
    "A.md": "# A\n[[B]] [[B]] ![[img.png]] [[Missing]] [[Hub]]\n",
    "B.md": "# B\n[[C]] [[Secret]]\n",
    "C.md": "# C\n[[D]] [[Missing]] [[B]]\n",
    "D.md": "# D\nthe end of the chain\n",
    "E.md": "# E\n![[img.png]]\n",
    "Hub.md": "# Hub\n",
    "F.md": "[[Hub]]\n",
    "G.md": "[[Hub]]\n",
    "Lone.md": "# Lone\n",
    "Secret.md": "[[A]]\n",
    "Gone.md": "[[Gone.md.md]]\n",
    "img.png": b"\x89PNG\r\n\x1a\n",
    ".obsidian/app.json": json.dumps({"userIgnoreFilters": ["Secret.md"]}),
}


@pytest.fixture(scope="module")
def conn(tmp_path_factory: pytest.TempPathFactory) -> Iterator[sqlite3.Connection]:
    """One index for the module's 28 tests, read-only (a reader's connection)."""
    base = tmp_path_factory.mktemp("neighbourhood")
    vault = make_vault(base / "vault", FILES)
    db = base / "state" / "index.db"
    assert run_inprocess("index", "--vault", vault, "--db", db).code == 0
    connection = connect_readonly(db)
    yield connection
    connection.close()


def reference(conn: sqlite3.Connection, center: str, depth: int) -> tuple[set[str], list[Any]]:
    """A breadth-first walk over the whole `graph`, through note nodes only."""
    whole = graph(conn)
    kinds = {node["id"]: node["kind"] for node in whole["nodes"]}
    reached = {center: 0}
    frontier = [center]
    for distance in range(1, depth + 1):
        nxt = []
        for edge in whole["edges"]:
            for here, there in ((edge["source"], edge["target"]), (edge["target"], edge["source"])):
                if here in frontier and there not in reached:
                    reached[there] = distance
                    if kinds[there] == "note":
                        nxt.append(there)
        frontier = nxt
    edges = [e for e in whole["edges"] if e["source"] in reached and e["target"] in reached]
    return set(reached), edges


@pytest.mark.parametrize("center", ["A.md", "C.md", "Hub.md", "Lone.md", "E.md", "Gone.md"])
@pytest.mark.parametrize("depth", [1, 2, 3, 5])
def test_the_piece_is_the_graph_restricted_to_the_notes_within_the_depth(
    conn: sqlite3.Connection, center: str, depth: int
) -> None:
    piece = neighbourhood(conn, center, depth=depth, max_nodes=2000)
    nodes, edges = reference(conn, center, depth)
    assert {node["id"] for node in piece["nodes"]} == nodes
    assert piece["edges"] == edges
    assert piece["truncated"] is False and piece["center"] == center
    whole = {node["id"]: node for node in graph(conn)["nodes"]}
    for node in piece["nodes"]:
        assert {k: v for k, v in node.items() if k != "distance"} == whole[node["id"]]


def test_a_concrete_piece(conn: sqlite3.Connection) -> None:
    piece = neighbourhood(conn, "A", depth=1)
    by_id = {node["id"]: node for node in piece["nodes"]}
    # Out: B, img.png, the broken key Missing, Hub. Secret's link to A is no edge (an excluded
    # note's links are not in `graph`), but B links to Secret: it is two hops away.
    assert set(by_id) == {"A.md", "B.md", "img.png", "Missing", "Hub.md"}
    assert by_id["A.md"]["distance"] == 0 and by_id["B.md"]["distance"] == 1
    assert by_id["img.png"]["kind"] == "attachment"
    assert by_id["Missing"]["kind"] == "unresolved"
    assert {"source": "A.md", "target": "B.md", "count": 2} in piece["edges"]
    # E shares img.png with A, but an attachment is no bridge.
    assert "E.md" not in by_id
    deeper = {node["id"] for node in neighbourhood(conn, "A", depth=2)["nodes"]}
    assert {"C.md", "F.md", "G.md", "Secret.md"} <= deeper and "E.md" not in deeper


def test_a_broken_key_that_spells_a_file_gets_its_own_node(conn: sqlite3.Connection) -> None:
    piece = neighbourhood(conn, "Gone.md", depth=1)
    assert {node["id"] for node in piece["nodes"]} == {"Gone.md", "Gone.md (unresolved)"}


def test_the_node_cap_keeps_the_nearest_and_says_it_cut(conn: sqlite3.Connection) -> None:
    full = neighbourhood(conn, "A", depth=3)
    cut = neighbourhood(conn, "A", depth=3, max_nodes=3)
    assert len(full["nodes"]) > 3 and full["truncated"] is False
    assert len(cut["nodes"]) == 3 and cut["truncated"] is True
    assert [n["distance"] for n in cut["nodes"]] == [0, 1, 1]
    kept = {n["id"] for n in cut["nodes"]}
    assert all(e["source"] in kept and e["target"] in kept for e in cut["edges"])
    exact = neighbourhood(conn, "Lone", depth=1, max_nodes=1)
    assert exact["truncated"] is False and len(exact["nodes"]) == 1


def test_bad_bounds_and_unknown_notes_are_refused(conn: sqlite3.Connection) -> None:
    with pytest.raises(ValueError, match="depth"):
        neighbourhood(conn, "A", depth=0)
    with pytest.raises(ValueError, match="max_nodes"):
        neighbourhood(conn, "A", max_nodes=0)
    with pytest.raises(NoteNotFound):
        neighbourhood(conn, "Nowhere")
