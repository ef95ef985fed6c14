"""store.fulltext.body_matches: the page ranked in FTS5 alone is the page of the full order.

``body_matches`` scores every match with bm25 inside FTS5, joins only the best ``offset +
limit`` (plus slack) to their paths, and widens the fetch when notes tie with the page's last
score. These tests hold every page, over many queries, limits and offsets, to the reference:
one statement that joins every match and sorts by (bm25, path). The vault has large groups of
identical notes (ties at every cut) and Obsidian-excluded notes among the best matches.
"""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path

import pytest

from notedex.store import fulltext
from notedex.store.connect import connect_readonly
from tests.helpers import write
from tests.unit.store import build

WORDS = ["alpha", "beta", "gamma", "delta", "book", "river", "stone", "light"]
QUERIES = [
    '"alpha"',
    '"book"',
    '"alpha" AND "beta"',
    '"book" NOT ("river")',
    '"gam" *',
    '"alpha beta"',
    '("stone" AND "light" AND "delta")',
    '"zyzzogeton"',
]
LIMITS = [1, 2, 3, 5, 16, 17, 20, 33, 100, 1000]
OFFSETS = [0, 1, 4, 19, 20, 21, 64, 150, 399, 5000]


def _vault(root: Path) -> Path:
    rng = random.Random(15)
    vault = root / "vault"
    write(vault / ".obsidian/app.json", json.dumps({"userIgnoreFilters": ["X/"]}))
    for i in range(260):  # bodies of random words: scores spread out, some equal by chance
        body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 40)))
        write(vault / f"R/n{i:03}.md", body + "\n")
    for group, body in enumerate(["alpha beta book", "book", "alpha gamma stone light delta"]):
        for i in range(45):  # identical notes: one score for 45 paths, wider than the slack
            write(vault / f"T{group}/same {i:02}.md", body + "\n")
    for i in range(12):  # excluded notes that would rank first
        write(vault / f"X/ex {i}.md", "alpha book gamma\n")
    return vault


def _later(vault: Path) -> None:
    """Notes indexed after the rest whose paths sort first: FTS5 meets them last (rowid order),
    so a tie kept by whichever row came first would drop them from a page."""
    for group, body in enumerate(["alpha beta book", "book", "alpha gamma stone light delta"]):
        for i in range(10):
            write(vault / f"T{group}/a {i:02}.md", body + "\n")


@pytest.fixture(scope="module")
def conn(tmp_path_factory: pytest.TempPathFactory) -> sqlite3.Connection:
    root = tmp_path_factory.mktemp("fulltext_ranking")
    vault = _vault(root)
    build(vault, root / "index.db")
    _later(vault)
    build(vault, root / "index.db")
    return connect_readonly(root / "index.db")


def _reference(
    conn: sqlite3.Connection, expression: str, limit: int, offset: int
) -> list[tuple[float, str, str | None, str]]:
    return [tuple(r) for r in conn.execute(fulltext._RANKED_JOINED, (expression, limit, offset))]


def _pages(conn: sqlite3.Connection) -> None:
    for expression in QUERIES:
        for limit in LIMITS:
            for offset in OFFSETS:
                got = fulltext.body_matches(conn, expression, limit=limit, offset=offset)
                assert got == _reference(conn, expression, limit, offset), (
                    expression,
                    limit,
                    offset,
                )


def test_the_vault_has_ties_and_excluded_matches(conn: sqlite3.Connection) -> None:
    everything = _reference(conn, '"book"', 10_000, 0)
    scores = [row[0] for row in everything]
    assert max(scores.count(s) for s in set(scores)) > fulltext.TIE_SLACK
    ids = dict(conn.execute("SELECT path, id FROM files"))
    assert ids["T1/a 00.md"] > ids["T1/same 44.md"]  # indexed later, sorted first
    assert not any(row[1].startswith("X/") for row in everything)
    count = conn.execute("SELECT count(*) FROM body_fts WHERE body_fts MATCH 'book'").fetchone()
    assert count[0] == len(everything) + 12  # the excluded notes match and are left out


@pytest.mark.slow
def test_every_page_is_the_page_of_the_full_order(conn: sqlite3.Connection) -> None:
    _pages(conn)


@pytest.mark.slow
def test_without_slack_every_tie_widens_the_fetch(
    conn: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fulltext, "TIE_SLACK", 0)
    _pages(conn)


@pytest.mark.slow
def test_a_tie_past_the_largest_fetch_sorts_the_whole_match(
    conn: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fulltext, "TIE_SLACK", 0)
    monkeypatch.setattr(fulltext, "MAX_FETCH", 64)
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    try:
        _pages(conn)
    finally:
        conn.set_trace_callback(None)
    # Both ways ran: pages cut in FTS5 (widened or not), and pages SQLite sorted whole.
    assert any("bm25_score" in s for s in statements)
    assert any("AS score" in s for s in statements)


def test_only_the_page_is_joined(conn: sqlite3.Connection) -> None:
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    try:
        rows = fulltext.body_matches(conn, '"alpha"', limit=3)
    finally:
        conn.set_trace_callback(None)
    assert len(rows) == 3
    statements = [s for s in statements if not s.startswith("--")]  # FTS5's own look-ups
    # the excluded notes counted, the ranking in FTS5, then the page's paths and titles
    assert len(statements) == 3
    assert "excluded = 1" in statements[0]
    assert "bm25" in statements[1] and "JOIN" not in statements[1]
    assert "json_each" in statements[2]
