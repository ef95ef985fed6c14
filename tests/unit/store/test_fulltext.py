"""store.fulltext: the body search SQL, and the bounded ranking of a large match set (issue 15)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from notedex.store import fulltext
from notedex.store.connect import connect_readonly
from tests.helpers import run_inprocess, write

NOTES = 30
CAP = 10


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


def _ids(db: Path) -> dict[str, int]:
    conn = connect_readonly(db)
    try:
        return {str(p): int(i) for i, p in conn.execute("SELECT id, path FROM files")}
    finally:
        conn.close()


def _page(db: Path, limit: int, offset: int = 0) -> list[tuple[float, str, str | None, str]]:
    conn = connect_readonly(db)
    try:
        return fulltext.body_matches(conn, '"alpha"', limit=limit, offset=offset)
    finally:
        conn.close()


def test_every_match_is_ranked_when_few_match(index: tuple[Path, Path]) -> None:
    _, db = index
    rows = _page(db, 100)
    assert len(rows) == NOTES - 1  # n27 is excluded
    assert rows == sorted(rows, key=lambda r: (r[0], r[1]))
    conn = connect_readonly(db)
    try:
        assert fulltext.rank_cutoff(conn, '"alpha"') is None
    finally:
        conn.close()


def test_many_matches_rank_the_newest_candidates_then_the_rest_by_id(
    index: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, db = index
    monkeypatch.setattr(fulltext, "RANK_CANDIDATES", CAP)
    ids = _ids(db)
    matching = sorted((ids[f"n{i:02}.md"] for i in range(NOTES)), reverse=True)
    candidates = set(matching[:CAP])
    whole = _page(db, 100)
    assert len(whole) == NOTES - 1  # every match is still listed, the excluded note is not
    assert "n27.md" not in {r[1] for r in whole}
    ranked = [r for r in whole if ids[r[1]] in candidates]
    rest = whole[len(ranked) :]
    assert ranked == sorted(ranked, key=lambda r: (r[0], r[1]))  # best bm25 first, ties by path
    assert {ids[r[1]] for r in ranked} == candidates - {ids["n27.md"]}
    assert [ids[r[1]] for r in rest] == [i for i in matching[CAP:] if i != ids["n27.md"]]
    # The top of the page comes from the candidates only, and pages join up across the boundary.
    assert _page(db, 5) == whole[:5]
    pages = [row for offset in range(0, 40, 4) for row in _page(db, 4, offset)]
    assert pages == whole


def test_the_total_stays_exact_when_the_ranking_is_bounded(
    index: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    vault, db = index
    monkeypatch.setattr(fulltext, "RANK_CANDIDATES", CAP)
    result = run_inprocess(
        "search", "alpha", "--vault", vault, "--db", db, "--json", "--no-refresh", "--limit", "3"
    )
    data = result.json()
    assert (data["total"], data["shown"]) == (NOTES - 1, 3)
    assert [h["path"] for h in data["hits"]] == [r[1] for r in _page(db, 3)]
