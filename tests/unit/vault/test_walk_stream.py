"""vault/walk.py VaultStream: the streaming walk yields the real tree in SQLite path order, symlinked folders last (the daemon low-memory path, issue 6)."""

from __future__ import annotations

import os
import sqlite3
import tracemalloc
import unicodedata
from pathlib import Path

import pytest

from notedex.vault.walk import VaultStream, walk_vault
from tests.indexcheck import fts_sound_after, make_vault

__all__ = ["fts_sound_after"]  # autouse: FTS integrity-check after every test


needs_symlinks = pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks")


TRICKY = [
    "A b.md",
    "A/x.md",
    "A/B/y.md",
    "A-c.md",
    "A.md",
    "A0.md",
    "a/lower.md",
    "Z.md",
    "f.md",
    unicodedata.normalize("NFD", "é.md"),
    "日本/語.md",
    "img/pic.png",
    "A/B c.png",
]


def sqlite_order(paths: list[str]) -> list[str]:
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("CREATE TABLE t(path TEXT PRIMARY KEY)")
        conn.executemany("INSERT INTO t VALUES (?)", [(p,) for p in paths])
        return [row[0] for row in conn.execute("SELECT path FROM t ORDER BY path")]
    finally:
        conn.close()


def test_stream_yields_the_real_tree_in_sqlite_path_order(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", {name: "x\n" for name in TRICKY})
    streamed = [f.path for f in VaultStream(vault).files]
    assert streamed == sqlite_order(streamed)
    assert streamed == [f.path for f in walk_vault(vault).files]
    assert unicodedata.normalize("NFC", "é.md") in streamed


@needs_symlinks
def test_stream_leaves_symlinked_folders_for_last_and_reports_after_exhaustion(
    tmp_path: Path,
) -> None:
    outside = make_vault(tmp_path / "outside", {"shared.md": "x\n"})
    vault = make_vault(tmp_path / "v", {"A.md": "x\n", "Z.md": "x\n", "sub/.hidden.md": "x\n"})
    os.symlink(outside, vault / "B-link")
    os.symlink(tmp_path / "missing.md", vault / "dangling.md")
    stream = VaultStream(vault, follow_outside=True)
    files = [f.path for f in stream.files]
    assert files == ["A.md", "Z.md", "B-link/shared.md"]
    whole = walk_vault(vault, follow_outside=True)
    assert [p.path for p in stream.problems] == ["dangling.md"]
    assert stream.problems == whole.problems
    assert stream.unreadable_dirs == whole.unreadable_dirs == ()


def _held_per_entry(folder: Path, count: int) -> float:
    """Bytes the stream holds, per entry of a folder of ``count`` notes, once it has yielded
    the folder's first file."""
    folder.mkdir()
    for i in range(count):
        (folder / f"note {i:05d} with a name of some length.md").write_text("x", encoding="utf-8")
    tracemalloc.start()
    try:
        files = VaultStream(folder).files
        first = next(files)
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert first.path == "note 00000 with a name of some length.md"
    return held / count


def test_stream_holds_a_name_per_listed_entry_not_its_stat(tmp_path: Path) -> None:
    # Issue 35: the top folder of a generated 1M vault holds 150k notes; a listing that built
    # every entry's VaultFile (or kept its os.DirEntry) before the first was yielded held about
    # 1 KB an entry, 150 MB of the daemon's start. A name and its place in the order cost less
    # than 200 bytes.
    per_entry = _held_per_entry(tmp_path / "big", 3000)
    assert per_entry < 200, f"{per_entry:.0f} bytes held per listed entry"


def test_stream_stats_an_entry_when_it_reaches_it(tmp_path: Path) -> None:
    # A file changed or deleted after its folder was listed is seen as it is when yielded.
    for name in ("a.md", "b.md", "c.md"):
        (tmp_path / name).write_text("x", encoding="utf-8")
    files = VaultStream(tmp_path).files
    assert next(files).path == "a.md"
    (tmp_path / "b.md").write_text("longer now", encoding="utf-8")
    (tmp_path / "c.md").unlink()
    rest = list(files)
    assert [(f.path, f.size) for f in rest] == [("b.md", len("longer now"))]
