"""Search positions on a generated vault, pinned against the file text (issue 15).

Every hit of a word, a prefix, a phrase and CJK terms must carry a line and column that hold
exactly the reported match in the file as it is on disk, and the match must be the query's
word (porter stems, case and diacritics folded). The vault comes from ``bench/genvault.py``,
so the notes have frontmatter, CJK runs, accents and long lines. ``paths_only`` lists the
same notes in the same order without reading a single file.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from notedex.query.search import search
from tests.helpers import counted_forks, load_genvault, run_inprocess

# (query, what every match must start with once folded)
QUERIES = [
    ("book", "book"),
    ("meeting", "meet"),
    ("data*", "data"),
    ('"and then"', "and"),
    ("数据", "数据"),
    ("笔记", "笔记"),
    ("cafe", "cafe"),
    ("itgc", "itgc"),
]


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFD", text.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    module = load_genvault()
    base = tmp_path_factory.mktemp("search-positions")
    vault = base / "vault"
    module.generate(vault, 600, 15)
    db = base / "index.db"
    result = run_inprocess("index", "--vault", vault, "--db", db)
    assert result.code in (0, 1), result.stderr  # 1: the planted invalid frontmatter
    return vault, db


def _disk_paths(vault: Path) -> dict[str, Path]:
    """NFC vault path -> the file (genvault writes some names in NFD, as macOS does)."""
    out = {}
    for folder, _dirs, files in os.walk(vault):
        for name in files:
            disk = Path(folder, name)
            out[unicodedata.normalize("NFC", disk.relative_to(vault).as_posix())] = disk
    return out


def _every_hit(vault: Path, db: Path, query: str) -> dict[str, Any]:
    result = run_inprocess(
        "search", query, "--vault", vault, "--db", db, "--json", "--no-refresh", "--limit", "100000"
    )
    assert result.code == 0, result.stderr
    data: dict[str, Any] = result.json()
    return data


@pytest.mark.parametrize(("query", "stem"), QUERIES, ids=[q for q, _ in QUERIES])
def test_every_hit_points_at_its_match_in_the_file(
    generated: tuple[Path, Path], query: str, stem: str
) -> None:
    vault, db = generated
    data = _every_hit(vault, db, query)
    assert data["total"] == data["shown"] > 0, data["message"]
    disk = _disk_paths(vault)
    for hit in data["hits"]:
        assert hit["line"] is not None, hit  # nothing changed on disk: every hit has a place
        text = disk[hit["path"]].read_bytes().decode("utf-8").removeprefix("\ufeff")
        line = text.split("\n")[hit["line"] - 1].rstrip("\r")
        start = hit["column"] - 1
        assert line[start : start + len(hit["match"])] == hit["match"], (hit, line)
        assert _fold(hit["match"]).startswith(stem), hit
        assert hit["snippet"][hit["matchStart"] : hit["matchEnd"]] == hit["match"]


@pytest.mark.parametrize("query", ["book", "数据", '"and then"'])
def test_paths_only_lists_the_same_notes_and_reads_no_file(
    generated: tuple[Path, Path], tmp_path: Path, query: str
) -> None:
    vault, db = generated
    full = _every_hit(vault, db, query)
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        # A vault path where nothing exists: any file read would fail and show as a null.
        listed = search(conn, tmp_path / "nowhere", query, limit=100000, paths_only=True)
        page = search(conn, tmp_path / "nowhere", query, limit=3, offset=1, paths_only=True)
    finally:
        conn.close()
    assert [h["path"] for h in listed["hits"]] == [h["path"] for h in full["hits"]]
    assert [h["score"] for h in listed["hits"]] == [h["score"] for h in full["hits"]]
    assert listed["total"] == full["total"] and listed["message"] == full["message"]
    assert all(h["line"] is None and h["snippet"] is None for h in listed["hits"])
    assert page["total"] == full["total"]
    assert [h["path"] for h in page["hits"]] == [h["path"] for h in full["hits"][1:4]]


# -- first matches from the index's position lists (issue 35) -----------------------------------


def _search_all(db: Path, vault: Path, query: str) -> dict[str, Any]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        return search(conn, vault, query, limit=100000)
    finally:
        conn.close()


@pytest.mark.parametrize(
    "query", ["book", "meeting", "数据", "笔记", "cafe", "itgc", "and", "Book", "data"]
)
def test_positions_from_the_index_are_the_positions_matched_again(
    generated: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, query: str
) -> None:
    """Every hit's line, column, match and snippet are the same whether they come from the
    index's position lists or from matching the file's text again (highlight), and the index
    answers most hits (the rest: text whose tokens it cannot count surely, e.g. accents)."""
    from notedex.query import positions
    from notedex.query import search as search_module

    vault, db = generated
    monkeypatch.setattr(search_module, "INDEXED_FROM", 10**9)  # every hit matched again
    matched = _search_all(db, vault, query)
    again: list[int] = []
    locate = positions.locate_hits

    def counting(files: Any, rels: list[str], *args: Any) -> list[dict[str, Any]]:
        again.append(len(rels))
        return locate(files, rels, *args)

    monkeypatch.setattr(positions, "locate_hits", counting)
    monkeypatch.setattr(search_module, "INDEXED_FROM", 0)
    indexed = _search_all(db, vault, query)
    assert indexed == matched
    assert matched["shown"] > 0
    # Every match of cafe is a word with an accent, a letter the index counts (issue 35).
    assert sum(again) < matched["shown"] / 2, (sum(again), matched["shown"])


def test_a_file_changed_since_it_was_indexed_is_matched_as_it_is_now(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index's offsets are for the content it read: a note edited since (its sha256 is
    not the stored one) is located in its text on disk, or gets no position."""
    from notedex.query import search as search_module

    vault, db = tmp_path / "v", tmp_path / "index.db"
    (vault / "a").mkdir(parents=True)
    (vault / "a" / "one.md").write_text("# One\nfirst line\nthe kafka word\n")
    (vault / "two.md").write_text("kafka at the start\n")
    (vault / "three.md").write_text("no match\n\nkafka\n")
    result = run_inprocess("index", "--vault", vault, "--db", db)
    assert result.code == 0, result.stderr
    (vault / "a" / "one.md").write_text("# One\nkafka moved up\nthe word\n")  # same size too
    (vault / "three.md").write_text("gone\n")
    monkeypatch.setattr(search_module, "INDEXED_FROM", 0)
    data = _search_all(db, vault, "kafka")
    where = {h["path"]: (h["line"], h["column"], h["match"]) for h in data["hits"]}
    assert where == {
        "a/one.md": (2, 1, "kafka"),
        "two.md": (1, 1, "kafka"),
        "three.md": (None, None, None),
    }


def test_the_token_classes_are_unicode61s() -> None:
    """``positions._CLASSES`` says which characters unicode61 keeps: every character it calls
    a separator is one for FTS5, and every CJK character it counts is a token of its own."""
    from notedex.query.positions import _CLASSES
    from notedex.store.schema import TOKENIZER

    separators, cjk, letters = [], [], []
    for code in range(sys.maxunicode + 1):
        if 0xD800 <= code < 0xE000:
            continue
        kind = _CLASSES[code]
        if kind == " ":
            separators.append(chr(code))
        elif kind == "c":
            cjk.append(chr(code))
        elif kind == "a" and code >= 0x80:
            letters.append(chr(code))
    assert len(separators) > 3000 and len(cjk) > 90000 and len(letters) > 7000
    mem = sqlite3.connect(":memory:")
    try:
        mem.execute(f"CREATE VIRTUAL TABLE one USING fts5(body, tokenize = '{TOKENIZER}')")
        mem.execute("CREATE VIRTUAL TABLE v USING fts5vocab(one, 'instance')")
        mem.execute(
            "INSERT INTO one(rowid, body) VALUES (1, ?)", ("x" + "x".join(separators) + "x",)
        )
        mem.execute("INSERT INTO one(rowid, body) VALUES (2, ?)", (" ".join(cjk),))
        # A letter outside ASCII is a token character: "qéq" one token, never "q" and "q".
        mem.execute(
            "INSERT INTO one(rowid, body) VALUES (3, ?)", ("q" + "q q".join(letters) + "q",)
        )
        terms = mem.execute("SELECT DISTINCT term FROM v WHERE doc = 1").fetchall()
        tokens = mem.execute("SELECT count(*) FROM v WHERE doc = 2").fetchone()[0]
        words = mem.execute("SELECT count(*), sum(term = 'q') FROM v WHERE doc = 3").fetchone()
    finally:
        mem.close()
    assert terms == [("x",)]
    assert tokens == len(cjk)
    assert words == (len(letters), 0)
    assert _CLASSES[ord("₺")] == "x"  # a symbol since Unicode 6.2: a token character for FTS5


def test_the_byte_classes_are_the_token_classes() -> None:
    """``positions._classes`` (UTF-8 through one ``bytes.translate``, issue 35) gives exactly
    ``text.translate(_CLASSES)`` for every character, alone and among ASCII text, CJK runs
    and the characters it looks up one by one (few or many); U+5000-U+9FFF, classed by their
    UTF-8 lead byte, are all CJK letters."""
    import random

    from notedex.query.positions import _CLASSES, _classes

    assert {_CLASSES[code] for code in range(0x5000, 0xA000)} == {"c"}
    every = [chr(code) for code in range(sys.maxunicode + 1)]
    for start in range(0, len(every), 997):
        chunk = "".join(every[start : start + 997])
        assert _classes(chunk) == chunk.translate(_CLASSES).encode("ascii"), hex(start)
    rng = random.Random(35)
    pools = ["abc Z9 ,.-\n", "数据笔记読書", "éüñ—“”カナ", "\ud800\U0001f600₺"]
    for _ in range(3000):
        text = "".join(
            rng.choice(rng.choice(pools[: rng.randrange(1, 5)]))
            for _ in range(rng.randrange(0, 40))
        )
        assert _classes(text) == text.translate(_CLASSES).encode("ascii"), repr(text)


def test_tokens_are_counted_as_the_split_counts_them() -> None:
    """``positions._count_tokens`` (bit operations on one integer) agrees with the split of
    the classes it replaced: each ``c`` a token, each run of ``a`` and ``x`` one."""
    import itertools

    from notedex.query.positions import _count_tokens

    for size in range(9):
        for letters in itertools.product("a cx", repeat=size):
            classes = "".join(letters)
            expected = len(classes.replace("c", " c ").split())
            assert _count_tokens(classes.encode("ascii")) == expected, classes


@pytest.mark.parametrize("child", ["works", "fails"])
def test_positions_in_two_processes_are_the_positions_in_one(
    generated: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, child: str
) -> None:
    """From ``PARALLEL_FROM`` hits the second half is located by a forked child (issue 35):
    the answer is the one process's, and a child that fails leaves its half to the parent."""
    from notedex.query import positions
    from notedex.query import search as search_module

    if not hasattr(os, "fork") or positions._cores() < 2:
        pytest.skip("one core or no fork: always one process")
    vault, db = generated
    monkeypatch.setattr(search_module, "INDEXED_FROM", 0)
    monkeypatch.setattr(search_module, "PARALLEL_FROM", 10**9)
    alone = _search_all(db, vault, "book")
    parent = os.getpid()
    calls: list[tuple[int, int]] = []
    locate = positions.locate_indexed

    def spying(files: Any, hits: list[tuple[str, str]], *args: Any) -> Any:
        calls.append((os.getpid(), len(hits)))  # the child's entry stays in the child
        if child == "fails" and os.getpid() != parent:
            raise RuntimeError("a child that fails")
        return locate(files, hits, *args)

    monkeypatch.setattr(positions, "locate_indexed", spying)
    monkeypatch.setattr(search_module, "PARALLEL_FROM", 2)
    both = _search_all(db, vault, "book")
    assert both == alone and alone["shown"] > 20
    half = alone["shown"] // 2
    expected = [(parent, half)] + ([(parent, alone["shown"] - half)] if child == "fails" else [])
    assert calls == expected


def test_no_fork_beside_another_thread(
    generated: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process with a second thread (the MCP server's) locates every hit itself: a fork
    would copy whatever lock that thread holds."""
    import threading

    from notedex.query import search as search_module

    vault, db = generated
    monkeypatch.setattr(search_module, "INDEXED_FROM", 0)
    monkeypatch.setattr(search_module, "PARALLEL_FROM", 2)
    forks = counted_forks(monkeypatch)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        beside = _search_all(db, vault, "book")
    finally:
        stop.set()
        other.join()
    assert forks == []
    alone = _search_all(db, vault, "book")
    assert forks == [1] and alone == beside
