"""store/connect.py: the read side opens the index read-only, with a busy timeout."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from notedex.store.connect import BUSY_TIMEOUT_MS, connect_readonly
from tests.indexcheck import fts_sound_after, make_vault
from tests.unit.store import build

__all__ = ["fts_sound_after"]  # autouse: FTS integrity-check after every test


def test_reader_is_read_only_with_busy_timeout(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", {"a.md": ""})
    db = tmp_path / "i.db"
    build(vault, db)
    conn = connect_readonly(db)
    try:
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == BUSY_TIMEOUT_MS
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            conn.execute("DELETE FROM notes")
    finally:
        conn.close()
