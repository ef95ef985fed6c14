"""`search --paths`/`-0` (``query.search.search_paths``): the notes of search's page, no more.

Whether or not the page holds every match, the list is search's own page, best match first, so
``search X --paths | head -1`` is the best match (issue 34; docs/cli.md "search").
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from notedex.query.search import search, search_paths
from tests.helpers import run_inprocess

# The word's count in each note: bm25 order differs from path order.
NOTES = {
    "b/one.md": 1,
    "a/three.md": 3,
    "c/two.md": 2,
    "a/five.md": 5,
    "d/four.md": 4,
}


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Read-only, shared by the module's tests."""
    tmp_path = tmp_path_factory.mktemp("searchpaths")
    vault = tmp_path / "vault"
    for path, count in NOTES.items():
        note = vault / path
        note.parent.mkdir(parents=True, exist_ok=True)
        note.write_text("# Note\n\n" + "walrus " * count + "and other words\n", encoding="utf-8")
    (vault / "other.md").write_text("# Other\n\nnothing here\n", encoding="utf-8")
    db = tmp_path / "index.db"
    assert run_inprocess("index", "--vault", vault, "--db", db).code == 0
    return vault, db


def _connect(db: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    return conn


def test_every_match_is_listed_best_first(indexed: tuple[Path, Path]) -> None:
    _vault, db = indexed
    with _connect(db) as conn:
        ranked = [h["path"] for h in search(conn, "", "walrus", limit=100)["hits"]]
        listed = search_paths(conn, "walrus", limit=100)
        exact = search_paths(conn, "walrus", limit=len(NOTES))
    assert ranked != sorted(ranked)  # the ranking is not path order: the test can fail
    assert listed == ranked == exact
    assert sorted(listed) == sorted(NOTES)


def test_a_cut_page_is_the_best_matches_in_rank_order(indexed: tuple[Path, Path]) -> None:
    _vault, db = indexed
    with _connect(db) as conn:
        ranked = [h["path"] for h in search(conn, "", "walrus", limit=100)["hits"]]
        top = search_paths(conn, "walrus", limit=2)
        later = search_paths(conn, "walrus", limit=2, offset=2)
        past = search_paths(conn, "walrus", limit=2, offset=10)
        none = search_paths(conn, "zyzzogeton", limit=2)
    assert top == ranked[:2] and later == ranked[2:4]
    assert past == [] and none == []


def test_the_cli_prints_them(indexed: tuple[Path, Path]) -> None:
    vault, db = indexed
    where = ("--vault", vault, "--db", db, "--no-refresh")
    ranked = run_inprocess("search", "walrus", "--json", *where).json()["hits"]
    every = run_inprocess("search", "walrus", "--paths", *where)
    assert every.code == 0 and every.stdout == "".join(h["path"] + "\n" for h in ranked)
    assert every.stdout.split("\n")[0] == "a/five.md"  # the best match, not the first path
    nul = run_inprocess("search", "walrus", "-0", "--limit", "1", *where)
    assert nul.code == 0 and nul.stdout == "a/five.md\0"
    both = run_inprocess("search", "walrus", "--paths", "--json", *where)
    assert both.code == 2 and both.stdout == ""


def test_excluded_notes_are_neither_listed_nor_counted(indexed: tuple[Path, Path]) -> None:
    """The count of a cut page leaves Obsidian-excluded notes out, as the hits do."""
    vault, db = indexed
    (vault / ".obsidian").mkdir()
    (vault / ".obsidian" / "app.json").write_text('{"userIgnoreFilters": ["d/"]}', "utf-8")
    assert run_inprocess("index", "--vault", vault, "--db", db).code == 0
    with _connect(db) as conn:
        page = search(conn, "", "walrus", limit=2)
        every = search_paths(conn, "walrus", limit=100)
    assert page["total"] == len(NOTES) - 1 and page["shown"] == 2
    assert sorted(every) == sorted(p for p in NOTES if not p.startswith("d/"))
