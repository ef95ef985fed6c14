"""The count of a term's name hits read back from FTS5's ``bm25()`` (``store.lookup_terms.hits_from_ranks``):
exact on real indexes, or not given at all."""

from __future__ import annotations

import math
import random
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from notedex.store import lookup as stage1
from notedex.store import lookup_exact, lookup_terms
from notedex.store.connect import connect_readonly
from notedex.store.lookup_terms import _varints, bm25_score, exact_names, hits_from_ranks
from notedex.vault.text import exact_name_key
from tests.helpers import run_inprocess, traced_lookups


def averages_rows(averages: bytes) -> int:
    """The rows of an FTS5 table, the first varint of its averages record."""
    return _varints(averages)[0]


WORDS = (
    "python kafka rust map grammar notes setup sync data book 数据 筆記 問題 café naïve "
    "straße 東京 서울 데이터 k8s go-lang e-mail"
).split()


def _vault(base: Path, seed: int) -> Path:
    """Notes named from a small vocabulary (many share words), with aliases and tags, some
    repeating a word in the title, the H1 and the aliases: many rows per term, of many sizes."""
    rnd = random.Random(seed)
    vault, db = base / "v", base / "v.db"
    vault.mkdir()
    for i in range(400):
        title = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(1, 4)))
        aliases = [" ".join(rnd.choice(WORDS) for _ in range(rnd.randint(1, 3)))] * rnd.randint(
            0, 3
        )
        tags = sorted({rnd.choice(WORDS).replace("-", "") for _ in range(rnd.randint(0, 3))})
        front = f"---\naliases: {aliases!r}\ntags: {tags!r}\n---\n" if aliases or tags else ""
        h1 = f"# {title} {rnd.choice(WORDS)}\n" if rnd.random() < 0.5 else ""
        (vault / f"{title} {i}.md").write_text(f"{front}{h1}\nText {i}.\n", encoding="utf-8")
    result = run_inprocess("index", "--vault", vault, "--db", db)
    assert result.code == 0, result.stderr
    return db


@contextmanager
def reading_back(
    monkeypatch: pytest.MonkeyPatch, db: Path
) -> Iterator[tuple[sqlite3.Connection, bytes]]:
    """A read-only connection to ``db`` and its note_fts averages record, with counts read
    back in a vault of any size (``READ_BACK_ROWS``: the vaults here are small)."""
    monkeypatch.setattr(lookup_terms, "READ_BACK_ROWS", 0)
    conn = connect_readonly(db)
    try:
        yield conn, conn.execute("SELECT block FROM note_fts_data WHERE id = 1").fetchone()[0]
    finally:
        conn.close()


@pytest.mark.parametrize("seed", [1, 2])
def test_the_count_read_back_from_the_ranks_is_the_count(
    tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    checked = 0
    with reading_back(monkeypatch, _vault(tmp_path, seed)) as (conn, averages):
        for word in sorted(set(WORDS)):
            phrase = '"' + word + '"'
            count = conn.execute(
                "SELECT count(*) FROM note_fts WHERE note_fts MATCH ?", (phrase,)
            ).fetchone()[0]
            ranked = conn.execute(
                "SELECT bm25(note_fts, 1.0, 1.0, 1.0), "
                "(SELECT sz FROM note_fts_docsize WHERE id = note_fts.rowid) FROM note_fts "
                "WHERE note_fts MATCH ? ORDER BY rowid",
                (phrase,),
            ).fetchall()
            for at in range(0, len(ranked), 7):  # every row, seven at a time
                found = hits_from_ranks(conn, averages, ranked[at : at + 7])
                # exact, or nothing: the floor of the IDF (a word in half the rows) says nothing
                assert found is None or found[0] == count, (word, ranked[at : at + 7])
                if found is not None:  # and the IDF is the one FTS5 ranked with
                    idf = math.log((averages_rows(averages) - count + 0.5) / (count + 0.5))
                    assert found[1] == idf, (word, found, idf)
                checked += found is not None
    assert checked > 100


def test_the_score_is_bm25_bit_for_bit(tmp_path: Path) -> None:
    """``score`` on every row of a one-column view of the counts: a row whose term occurs once
    in a name of ``D`` tokens scores what FTS5 gives it (the body of the formula, not only the
    count it yields)."""
    db = _vault(tmp_path, 3)
    conn = connect_readonly(db)
    try:
        averages = _varints(
            conn.execute("SELECT block FROM note_fts_data WHERE id = 1").fetchone()[0]
        )
        rows, tokens = averages[0], sum(averages[1:])
        compared = 0
        for word in ("kafka", "python", "数据", "straße"):
            phrase = '"' + word + '"'
            hits = conn.execute(
                "SELECT count(*) FROM note_fts WHERE note_fts MATCH ?", (phrase,)
            ).fetchone()[0]
            idf = math.log((rows - hits + 0.5) / (hits + 0.5))  # FTS5's: the C library's log()
            for file_id, value, title in conn.execute(
                "SELECT note_fts.rowid, bm25(note_fts, 1.0, 0.0, 0.0), n.stem FROM note_fts "
                "JOIN notes n ON n.file_id = note_fts.rowid WHERE note_fts MATCH ?",
                (phrase,),
            ):
                if value == 0.0:  # not in the title: nothing to compare
                    continue
                size = sum(
                    _varints(
                        conn.execute(
                            "SELECT sz FROM note_fts_docsize WHERE id = ?", (file_id,)
                        ).fetchone()[0]
                    )
                )
                expected = [
                    bm25_score(idf, f, size, float(tokens) / float(rows)) for f in range(1, 9)
                ]
                assert value in expected, (word, title, value, expected)
                compared += 1
    finally:
        conn.close()
    assert compared > 50


def _kafka_vault(base: Path) -> tuple[Path, Path]:
    vault, db = base / "v", base / "v.db"
    (vault / "Filler").mkdir(parents=True)
    for i in range(900):  # in a third of the notes: the IDF is above its floor
        if i < 300:
            text = f"# Text {i}\n"
            (vault / "Filler" / f"Kafka filler {i}.md").write_text(text, encoding="utf-8")
        (vault / "Filler" / f"Other {i}.md").write_text(f"# Other {i}\n", encoding="utf-8")
    for i in range(3):  # three notes named "Kafka": ranked by bm25() in tier 1
        (vault / f"Named {i}").mkdir()
        (vault / f"Named {i}" / "Kafka.md").write_text("Brokers.\n", encoding="utf-8")
    return vault, db


def test_a_keyword_with_exact_names_is_not_counted_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`kafka`: three notes named so, 300 more with it in the title, and 900 without it. The
    total is read back from tier 1's ranks (in a vault of any size, for the test): no count of
    the term's name hits runs, and the total is that count."""
    monkeypatch.setattr(lookup_terms, "READ_BACK_ROWS", 0)  # read back in a small vault too
    vault, db = _kafka_vault(tmp_path)
    [(answer, asked)] = traced_lookups(vault, db, "kafka")
    conn = connect_readonly(db)
    try:
        count = conn.execute(
            "SELECT count(*) FROM note_fts WHERE note_fts MATCH '\"kafka\"'"
        ).fetchone()[0]
    finally:
        conn.close()
    assert answer["total"] == count == 303
    assert [c["path"] for c in answer["candidates"][:3]] == [
        f"Named {i}/Kafka.md" for i in range(3)
    ]
    counts = [sql for sql in asked if sql.startswith("SELECT count(*) FROM note_fts WHERE")]
    assert counts == []


def test_a_small_vault_counts(tmp_path: Path) -> None:
    """Below ``READ_BACK_ROWS`` notes the count costs less than reading it back: it runs."""
    [(answer, asked)] = traced_lookups(*_kafka_vault(tmp_path), "kafka")
    assert answer["total"] == 303
    assert [sql for sql in asked if sql.startswith("SELECT count(*) FROM note_fts WHERE")]
    assert not [sql for sql in asked if "ln(" in sql]


EXACT_WORDS = ("python", "kafka", "rust", "notes", "data", "k8s", "go")


def _exact_vault(base: Path, seed: int) -> Path:
    """Many notes named exactly by one word (file name, H1, alias), the word repeated in H1s,
    aliases and tags (``status/python``), CJK and accented words beside it, among notes with
    the word in a longer name."""
    rnd = random.Random(seed)
    vault, db = base / "v", base / "v.db"
    vault.mkdir()
    others = ["数据", "筆記", "café", "서울", "map", "grammar", "setup", "東京 data"]
    for i in range(600):
        word = rnd.choice(EXACT_WORDS)
        kind = rnd.random()
        name = word if kind < 0.3 else f"{word} {rnd.choice(others)} {i}"
        aliases = [rnd.choice([word, f"{word} {word}", rnd.choice(others)])] * rnd.randint(0, 2)
        tags = sorted(
            {rnd.choice([f"status/{word}", word, "工作", "x"]) for _ in range(rnd.randint(0, 3))}
        )
        front = f"---\naliases: {aliases!r}\ntags: {tags!r}\n---\n" if aliases or tags else ""
        h1 = rnd.choice(["", f"# {word}\n", f"# {word} {word} {rnd.choice(others)}\n", "# 数据\n"])
        folder = vault / f"F{i % 37}"
        folder.mkdir(exist_ok=True)
        (folder / f"{name}.md").write_text(f"{front}{h1}\nText {i}.\n", encoding="utf-8")
    result = run_inprocess("index", "--vault", vault, "--db", db)
    assert result.code == 0, result.stderr
    return db


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_tier_one_from_counted_hits_is_tier_one_from_bm25(
    tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The count and the IDF read back from one exact name (``read_back_first``), and the exact
    names ranked from their hits counted from highlight() (``exact_counted``): the term's
    count of hits, and ``_ranked_exact``'s rows bit for bit, in its order."""
    compared = 0
    with reading_back(monkeypatch, _exact_vault(tmp_path, seed)) as (conn, averages):
        for word in EXACT_WORDS:
            phrase = '"' + word + '"'
            ids = sorted(file_id for file_id, _ in exact_names(conn, exact_name_key(word)))
            if len(ids) < 2:
                continue
            exact = "[" + ",".join(map(str, ids)) + "]"
            count = conn.execute(
                "SELECT count(*) FROM note_fts WHERE note_fts MATCH ?", (phrase,)
            ).fetchone()[0]
            expected = [
                dict(row) for row in stage1._ranked_exact(conn, [(0, phrase)], exact, None, 1000)
            ]
            first = lookup_terms.read_back_first(conn, phrase, exact, averages)
            assert first is not None, word
            assert first[0] == count, word
            rows = lookup_exact.exact_counted(conn, phrase, exact, averages, 1000, first)
            assert rows is not None, word
            assert [dict(row) for row in rows] == expected, word
            compared += len(rows)
    assert compared > 100


def test_a_name_nx_segment_cannot_cut_leaves_tier_one_to_the_old_statement(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """highlight() reads the names through nx_segment: where it fails, the counted path says
    None (``_ranked_exact`` then ranks the names) instead of failing the lookup."""

    def cannot_cut(text: str | None) -> str:
        raise ValueError(f"cannot cut {text!r}")

    with reading_back(monkeypatch, _exact_vault(tmp_path, 1)) as (conn, averages):
        ids = sorted(file_id for file_id, _ in exact_names(conn, exact_name_key("python")))
        exact = "[" + ",".join(map(str, ids)) + "]"
        first = lookup_terms.read_back_first(conn, '"python"', exact, averages)
        assert first is not None and len(ids) >= 2
        assert lookup_exact.exact_counted(conn, '"python"', exact, averages, 1000, first)
        monkeypatch.setattr(lookup_exact, "segment_or_empty", cannot_cut)
        assert lookup_exact.exact_counted(conn, '"python"', exact, averages, 1000, first) is None
