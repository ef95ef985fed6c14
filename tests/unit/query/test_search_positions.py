"""Search positions on a generated vault, pinned against the file text (issue 15).

Every hit of a word, a prefix, a phrase and CJK terms must carry a line and column that hold
exactly the reported match in the file as it is on disk, and the match must be the query's
word (porter stems, case and diacritics folded). The vault comes from ``bench/genvault.py``,
so the notes have frontmatter, CJK runs, accents and long lines. ``paths_only`` lists the
same notes in the same order without reading a single file.
"""

from __future__ import annotations

import importlib.util
import os
import sqlite3
import sys
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from notedex.query.search import search
from tests.helpers import run_inprocess

_GENVAULT = Path(__file__).resolve().parents[3] / "bench" / "genvault.py"

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
    spec = importlib.util.spec_from_file_location("genvault", _GENVAULT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["genvault"] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
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
