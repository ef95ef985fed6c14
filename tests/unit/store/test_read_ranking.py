"""Lookup's bounded stage-1 ranking in store/lookup.py (issue 11's speed target).

``ranked_field_hits`` ranks only the first candidate pool that fills the page and counts the
total without BM25. These tests build a vault where the pools bite (more candidates than the
page, in every tier) and check that every page, with and without filters, is the page that
ranking every candidate gives, and that the total is the number of all candidates.
(A file of its own beside test_read.py, which other issues' read SQL tests share.)
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from notedex.query.filters import NoteFilter, parse_where
from notedex.query.lookup import _exact_names
from notedex.store import lookup as lookup_sql
from notedex.store import read
from notedex.store.connect import connect_readonly
from notedex.vault.text import fts_phrase
from tests.indexcheck import make_vault
from tests.unit.store import build


def _vault(root: Path) -> Path:
    files: dict[str, str] = {
        ".obsidian/app.json": '{"userIgnoreFilters": ["Hidden/"]}',
        "Alpha.md": "---\ntags: [alpha, beta]\n---\nx\n",
        "Other/Alpha.md": "x\n",
        "Named.md": "---\ntitle: Alpha Beta\n---\nx\n",
        "Aliased.md": "---\naliases: [alpha]\ntags: [gamma]\n---\nx\n",
        "Aliased beta.md": "---\naliases: [Alpha Beta, alpha]\n---\nx\n",
        "Hidden/Alpha beta.md": "x\n",
        "Hidden/Alpha tagged.md": "---\ntags: [alpha]\n---\nx\n",
    }
    words = ["one", "two", "three", "four", "five", "six", "seven"]
    for i in range(24):
        title = "Alpha " + " ".join(words[: 1 + i % 7]) + f" {i}"
        if i % 3 == 0:
            title += " beta"
        tags = ["alpha"] if i % 4 == 0 else []
        tags += ["gamma"] if i % 3 == 1 else []
        kind = "type: t\n" if i % 2 else ""
        aliases = "aliases: [alpha things]\n" if i % 6 == 0 else ""
        files[f"T/{title}.md"] = f"---\ntags: [{', '.join(tags)}]\n{kind}{aliases}---\nx\n"
    for i in range(30):
        tags = ["alpha"] + words[: i % 5] + (["beta"] if i % 4 == 0 else [])
        kind = "type: t\n" if i % 3 == 0 else ""
        aliases = "aliases: [beta alpha]\n" if i % 7 == 0 else ""
        name = f"G/Gamma beta {i}" if i % 9 == 0 else f"G/Tagged {i}"
        files[f"{name}.md"] = f"---\ntags: [{', '.join(tags)}]\n{kind}{aliases}---\nx\n"
    for i in range(14):  # every title or tag hit of "epsilon" is a title hit
        files[f"E/Epsilon {'x ' * (i % 4)}{i}.md"] = "x\n"
    files["Epsilon.md"] = "x\n"
    files["E/Aliased one.md"] = "---\naliases: [epsilon things, epsilon epsilon]\n---\n"
    for i in range(12):
        files[f"B/Beta {i}.md"] = f"---\ntags: [{'alpha' if i % 2 else 'delta'}]\n---\nx\n"
    return make_vault(root, files)


@pytest.fixture(scope="module")
def conn(tmp_path_factory: pytest.TempPathFactory) -> sqlite3.Connection:
    root = tmp_path_factory.mktemp("ranking")
    build(_vault(root / "vault"), root / "index.db")
    return connect_readonly(root / "index.db")


def _args(conn: sqlite3.Connection, question: str) -> tuple[list[tuple[int, str]], list[int]]:
    words = question.split()
    matches = [(i, e) for i, e in enumerate(fts_phrase(w) for w in words) if e is not None]
    return matches, list(_exact_names(conn, words)[0])


def _key(row: sqlite3.Row) -> tuple[object, ...]:
    return (
        row["file_id"],
        row["tier"],
        row["terms"],
        row["title_terms"],
        row["tag_terms"],
        row["alias_terms"],
        round(row["rank"], 9),
    )


QUESTIONS = [
    "alpha",
    "beta",
    "epsilon",
    "alpha beta",
    "beta alpha",
    "alpha beta gamma",
    "alpha delta",
]
FILTERS = [
    None,
    NoteFilter(tags=("alpha",)),
    NoteFilter(tags=("gamma",)),
    NoteFilter(note_type="t"),
    # the rest of the filter (issue 32): folders and properties as one set of notes
    NoteFilter(folders=("T", "B")),
    NoteFilter(tags=("alpha",), folders=("B",), where=(parse_where("!aliases"),)),
]


def _weights(matches: list[tuple[int, str]], rarer: str | None) -> list[int] | None:
    """Term weights (issue 30's weighted coverage): None (equal), the first or the last term
    rarer than the rest, so pool 4 takes either of its two forms."""
    if rarer is None:
        return None
    weights = [1] * len(matches)
    weights[0 if rarer == "first" else -1] = 3
    return weights


@pytest.mark.parametrize("question", QUESTIONS)
@pytest.mark.parametrize("filters", FILTERS)
@pytest.mark.parametrize("rarer", [None, "first", "last"])
def test_every_page_is_the_page_of_the_full_ranking(
    conn: sqlite3.Connection, question: str, filters: NoteFilter | None, rarer: str | None
) -> None:
    matches, exact = _args(conn, question)
    weights = _weights(matches, rarer)
    everything = lookup_sql._ranked(
        conn, matches, lookup_sql._json_ints(exact), filters, 10**6, None, weights=weights
    )
    # the filters keep the unfiltered order (an oracle that shares no filter SQL with lookup)
    unfiltered = lookup_sql._ranked(
        conn, matches, lookup_sql._json_ints(exact), None, 10**6, None, weights=weights
    )
    allowed = {n["file_id"] for n in read.notes(conn, filters)}
    assert [_key(r) for r in everything] == [_key(r) for r in unfiltered if r[0] in allowed]
    if not filters:
        assert len(everything) > 14  # the pages are narrowed: the pools have work to skip
    for limit in (1, 2, 3, 5, 8, 10, 15, 20, 30, len(everything) or 1, len(everything) + 5):
        total, rows = lookup_sql.ranked_field_hits(
            conn, matches, exact, nf=filters, limit=limit, weights=weights
        )
        assert total == len(everything), (question, filters, limit)
        assert [_key(r) for r in rows] == [_key(r) for r in everything[:limit]], (limit, filters)


def test_the_pools_bite(conn: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch) -> None:
    """The page of a one-term and a two-term question comes from a pool, not from ranking
    every candidate: the work is bounded by the pool."""
    used: list[str | None] = []
    ranked = lookup_sql._ranked

    def spy(*args: object, **kwargs: bool) -> list[sqlite3.Row]:
        used.append(args[-1])  # type: ignore[arg-type]
        return ranked(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(lookup_sql, "_ranked", spy)
    for question in ("alpha", "alpha beta", "epsilon"):
        used.clear()
        matches, exact = _args(conn, question)
        total, rows = lookup_sql.ranked_field_hits(conn, matches, exact, limit=5)
        assert total > 14 and len(rows) == 5
        assert used and used[-1] is not None, (question, used)
    # epsilon: its one pool, the title hits; the "" shortcut (no rowid test) is gone, since a
    # one-term title pool is now read from name_fts itself, with no rowid test at all
    assert used == ['title : ("epsilon")']


def test_the_tiers_come_first_exact_names_then_titles_then_tags(conn: sqlite3.Connection) -> None:
    matches, exact = _args(conn, "alpha")
    _total, rows = lookup_sql.ranked_field_hits(conn, matches, exact, limit=200)
    tiers = [r["tier"] for r in rows]
    assert tiers == sorted(tiers) and tiers[0] == 1 and tiers[-1] == 3
    paths = {r["file_id"]: r["path"] for r in read.notes_by_ids(conn, [r["file_id"] for r in rows])}
    shown = [paths[r["file_id"]] for r in rows]
    # the exact names, one of them an alias on a note whose title and tags lack the word
    assert set(shown[:4]) == {"Alpha.md", "Other/Alpha.md", "Aliased.md", "Aliased beta.md"}
    assert not any(p.startswith("Hidden/") for p in shown)  # excluded notes never count


def test_a_miss_counts_nothing_and_ranks_nothing(conn: sqlite3.Connection) -> None:
    matches, exact = _args(conn, "zyzzogeton")
    assert lookup_sql.ranked_field_hits(conn, matches, exact, limit=10) == (0, [])


@pytest.mark.parametrize("seek", [0, 1000])
def test_the_pages_are_the_same_whether_exact_names_are_sought_or_scanned(
    conn: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch, seek: int
) -> None:
    """A few exact names are ranked by rowid seeks, more by a scan (``_SEEK_EXACT``): both
    ways give every page of the full ranking."""
    monkeypatch.setattr(lookup_sql, "_SEEK_EXACT", seek)
    for question in QUESTIONS:
        for filters in FILTERS:
            test_every_page_is_the_page_of_the_full_ranking(conn, question, filters, None)
            test_every_page_is_the_page_of_the_full_ranking(conn, question, filters, "last")
