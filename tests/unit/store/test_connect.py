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


def test_sqlite_without_functools_keeps_a_working_statement_cache(tmp_path: Path) -> None:
    """In a fresh interpreter (functools not loaded) the reader imports _sqlite3 through the
    lru_cache stand-in: the statement cache still caches, evicts and never leaks the stand-in."""
    import subprocess
    import sys

    vault = make_vault(tmp_path / "v", {"a.md": "# A\n", "b.md": "[[a]]\n"})
    db = tmp_path / "i.db"
    build(vault, db)
    probe = f"""
import sys
from notedex.store.connect import connect_readonly
assert "functools" not in sys.modules
conn = connect_readonly({str(db)!r})
for round in range(3):  # more distinct statements than the cache holds (128), three times
    for i in range(300):
        assert conn.execute(f"SELECT count(*) + {{i}} FROM notes").fetchone()[0] == 2 + i
import functools  # the real module, importable as ever
assert functools.lru_cache is not None and hasattr(functools, "partial")
print("ok")
"""
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]


def test_a_read_transaction_ends_with_its_block_even_when_the_block_raises(tmp_path: Path) -> None:
    from notedex.store.connect import read_transaction

    db = tmp_path / "i.db"
    build(make_vault(tmp_path / "v", {"a.md": "# A\n"}), db)
    conn = connect_readonly(db)
    with read_transaction(conn) as snapshot:
        assert snapshot is conn and conn.in_transaction
    assert not conn.in_transaction
    with pytest.raises(ZeroDivisionError), read_transaction(conn):
        assert conn.in_transaction
        _ = 1 / 0
    assert not conn.in_transaction
    conn.close()
