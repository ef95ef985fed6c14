"""store.fulltext: the body search SQL: every match ranked by bm25, pages that join up, an exact total."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from notedex.store import fulltext
from notedex.store.connect import connect_readonly
from tests.helpers import run_inprocess, write

NOTES = 30


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("fulltext")
    vault = base / "vault"
    write(vault / ".obsidian/app.json", json.dumps({"userIgnoreFilters": ["n27.md"]}))
    for i in range(NOTES):
        # bm25 differs from note to note: one to four "alpha" in bodies of different lengths.
        write(vault / f"n{i:02}.md", "alpha " * (i % 4 + 1) + "filler " * (i % 7) + "\n")
    write(vault / "other.md", "nothing to see\n")
    db = base / "index.db"
    assert run_inprocess("index", "--vault", vault, "--db", db).code == 0
    return vault, db


def _page(db: Path, limit: int, offset: int = 0) -> list[tuple[float, str, str | None, str]]:
    conn = connect_readonly(db)
    try:
        return fulltext.body_matches(conn, '"alpha"', limit=limit, offset=offset)
    finally:
        conn.close()


def test_every_match_is_ranked(index: tuple[Path, Path]) -> None:
    _, db = index
    rows = _page(db, 100)
    assert len(rows) == NOTES - 1  # n27 is excluded
    assert rows == sorted(rows, key=lambda r: (r[0], r[1]))  # best bm25 first, ties by path
    assert len({r[0] for r in rows}) > 1  # the scores differ, so the order is bm25's
    assert _page(db, 5) == rows[:5]
    pages = [row for offset in range(0, 40, 4) for row in _page(db, 4, offset)]
    assert pages == rows


def test_the_total_is_exact(index: tuple[Path, Path]) -> None:
    vault, db = index
    result = run_inprocess(
        "search", "alpha", "--vault", vault, "--db", db, "--json", "--no-refresh", "--limit", "3"
    )
    data = result.json()
    assert (data["total"], data["shown"]) == (NOTES - 1, 3)
    assert [h["path"] for h in data["hits"]] == [r[1] for r in _page(db, 3)]
