"""Lookup's tier 2 ranked over the names alone (issue 11, ``name_fts``, schema 19).

Tier 2 (every keyword hits a title or an alias) ranks by BM25 over the note's titles and
aliases, so a note's tags no longer lengthen the row it is ranked by. These tests check that
order, that ``total`` is the count it was, and that the names table follows every write: after
each edit, the page of an index kept up to date equals the page of a fresh full index.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from notedex.query.lookup import _exact_names
from notedex.store import database, maintenance, read
from notedex.store import lookup as lookup_sql
from notedex.store.connect import connect_readonly
from notedex.store.schema import SCHEMA_VERSION
from notedex.vault.text import fts_phrase
from tests.helpers import run_inprocess, write


def lookup(vault: Path, db: Path, question: str, *extra: str) -> dict:
    result = run_inprocess("lookup", question, "--vault", vault, "--db", db, "--json", *extra)
    assert result.code == 0, result.stderr
    return result.json()


def order(data: dict) -> list[str]:
    return [c["path"] for c in data["candidates"]]


def _python_vault(vault: Path) -> None:
    write(vault / "Python alpha.md", "---\ntags: [code, lang, tools]\n---\nx\n")
    write(vault / "Python omega.md", "x\n")
    for i in range(12):  # longer untagged titles: the pool is larger than the page
        write(vault / f"g/Python guide part {i}.md", "x\n")
    for i in range(3):  # "python" only in a tag: candidates in tier 3
        write(vault / f"t/Snake {i}.md", "---\ntags: [python]\n---\nx\n")
    write(vault / "Tips.md", "---\naliases: [python tips]\n---\nx\n")  # alias only: tier 2
    write(vault / "Serpent.md", "---\naliases: [Python]\n---\nx\n")  # exact alias: tier 1


def test_a_tagged_note_ranks_with_an_untagged_one_of_the_same_title_length(
    vault: Path, db_path: Path
) -> None:
    _python_vault(vault)
    for extra in ((), ("--limit", "3"), ("--limit", "50")):  # the pool's page and the full one
        data = lookup(vault, db_path, "python", *extra)
        assert data["stage"] == "title_tags"
        # tier 1, the exact alias; then the two-word titles, tagged or not, before the longer
        # ones (over title, tags and aliases, the tagged note's three tags put it last of 14)
        assert order(data)[0] == "Serpent.md"
        assert set(order(data)[1:3]) == {"Python alpha.md", "Python omega.md"}, extra
    conn = connect_readonly(db_path)
    try:
        words = ["python"]
        matches = [(0, fts_phrase("python") or "")]
        for limit in (4, 100):
            _total, rows = lookup_sql.ranked_field_hits(
                conn, matches, list(_exact_names(conn, words)[0]), limit=limit
            )
            ranks = [row["rank"] for row in rows if row["tier"] == 2]
            assert ranks[0] == ranks[1] < ranks[2]  # the same names, the same BM25
    finally:
        conn.close()


@pytest.mark.slow
def test_total_is_the_count_of_name_hits_and_exact_names(vault: Path, db_path: Path) -> None:
    _python_vault(vault)
    for extra in ((), ("--limit", "1"), ("--limit", "100")):
        data = lookup(vault, db_path, "python", *extra)
        # 14 titles, 3 tags, 1 exact alias and, aliases being names (issue 30), "python tips"
        assert data["total"] == 19, extra
        assert data["narrowed"] == (data["shown"] < 19)
    # a name hit of either word: the 14 titles, the 3 tags and the 2 aliases
    assert lookup(vault, db_path, "python guide")["total"] == 19


def _names_vault(vault: Path) -> None:
    write(vault / "Kappa.md", "---\ntags: [kappa, misc]\n---\nx\n")
    write(vault / "Kappa rules.md", "---\ntitle: Kappa rules of thumb\n---\nx\n")
    write(vault / "Kappa notes.md", "# Kappa notes and more\nx\n")
    write(vault / "Aliased.md", "---\naliases: [kappa rules]\ntags: [kappa]\n---\nx\n")
    for i in range(8):
        tags = "[kappa, one, two]" if i % 2 else "[]"
        write(vault / f"dir/Kappa item {i}.md", f"---\ntags: {tags}\n---\nx\n")
    for i in range(3):
        write(vault / f"dir/sub/Rules kappa {i}.md", "x\n")


QUESTIONS = ["kappa", "kappa rules", "rules", "kappa item", "thumb", "kappa kappa"]


def _ranking(db: Path) -> list[list[tuple[object, ...]]]:
    """Per question, every stage-1 candidate's key, by path. File ids (the last tie-break)
    differ between an index kept up to date and a fresh one; the keys must not."""
    conn = connect_readonly(db)
    try:
        pages = []
        for question in QUESTIONS:
            words = question.split()
            matches = [(i, fts_phrase(w) or "") for i, w in enumerate(words)]
            exact = list(_exact_names(conn, words)[0])
            total, rows = lookup_sql.ranked_field_hits(conn, matches, exact, limit=1000)
            ids = [row["file_id"] for row in rows]
            paths = {n["file_id"]: n["path"] for n in read.notes_by_ids(conn, ids)}
            keys = [
                (row["tier"], -row["terms"], -row["title_terms"], round(row["rank"], 9))
                for row in rows
            ]
            assert keys == sorted(keys)
            pages.append(
                [(total,), *sorted((paths[row["file_id"]], *k) for row, k in zip(rows, keys))]
            )
        return pages
    finally:
        conn.close()


def _pages(vault: Path, db: Path) -> list[dict]:
    pages = [lookup(vault, db, q, "--limit", "50") for q in QUESTIONS]
    for page in pages:
        page["candidates"].sort(key=lambda c: c["path"])
    return pages


def _assert_like_a_fresh_index(vault: Path, db: Path, tmp: Path) -> None:
    kept = _pages(vault, db)  # the lookup's refresh applies the edit first
    fresh = tmp / "fresh"
    shutil.rmtree(fresh, ignore_errors=True)
    assert kept == _pages(vault, fresh / "index.db")
    assert _ranking(db) == _ranking(fresh / "index.db")
    conn = database.open_writer_connection(db)
    try:
        assert maintenance.integrity_check(conn)  # name_fts agrees with its content
        names = conn.execute("SELECT count(*) FROM name_fts").fetchone()[0]
        assert names == conn.execute("SELECT count(*) FROM notes").fetchone()[0]
    finally:
        conn.close()


@pytest.mark.slow
def test_the_names_table_follows_every_write(vault: Path, db_path: Path, tmp_path: Path) -> None:
    _names_vault(vault)
    _assert_like_a_fresh_index(vault, db_path, tmp_path)
    edits = [
        # a frontmatter title edited
        lambda: write(vault / "Kappa rules.md", "---\ntitle: Kappa rules\n---\nx\n"),
        # an H1 edited
        lambda: write(vault / "Kappa notes.md", "# Kappa\nx\n"),
        # an alias added, then removed
        lambda: write(vault / "dir/Kappa item 3.md", "---\naliases: [kappa rules, thumb]\n---\n"),
        lambda: write(vault / "dir/Kappa item 3.md", "---\ntags: [kappa]\n---\nx\n"),
        # a file renamed (its stem is a title)
        lambda: (vault / "Kappa.md").rename(vault / "Kappa rules thumb.md"),
        # a folder moved
        lambda: (vault / "dir/sub").rename(vault / "Moved rules"),
        # a note deleted
        lambda: (vault / "Aliased.md").unlink(),
    ]
    for edit in edits:
        edit()
        _assert_like_a_fresh_index(vault, db_path, tmp_path)


@pytest.mark.slow
def test_an_index_of_an_older_schema_is_rebuilt_with_the_names(vault: Path, db_path: Path) -> None:
    """An index of the schema before has no name_fts: the writer rebuilds it, as for every
    schema bump."""
    _names_vault(vault)
    before = lookup(vault, db_path, "kappa rules")
    conn = sqlite3.connect(db_path)
    conn.execute("DROP TABLE name_fts")
    conn.execute(
        "UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION - 1),)
    )
    conn.commit()
    conn.close()
    run_inprocess("index", "--vault", vault, "--db", db_path)
    assert lookup(vault, db_path, "kappa rules") == before
