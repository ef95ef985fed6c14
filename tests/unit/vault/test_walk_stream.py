"""vault/walk.py VaultStream: the streaming walk yields the real tree in SQLite path order, symlinked folders last (the daemon low-memory path, issue 6)."""

from __future__ import annotations

import os
import sqlite3
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
