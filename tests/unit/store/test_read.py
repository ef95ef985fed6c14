"""store/read.py: the JSON lists SQLite concatenates keep their rows' order."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from notedex.store import read
from tests.indexcheck import fts_sound_after

__all__ = ["fts_sound_after"]  # autouse: FTS integrity-check after every test


def test_json_lists_keep_the_order_of_their_rows(tmp_path: Path) -> None:
    """group_concat over an ordered subquery concatenates in that order (here against the
    table's own key order, so a planner that dropped the ORDER BY would fail this)."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)")
    conn.executemany(
        "INSERT INTO t VALUES (?, ?)", [(i, f"v{(i * 7919) % 1000}") for i in range(1000)]
    )
    count, text = read._json_list(conn, "SELECT json_quote(v) AS j FROM t ORDER BY v DESC")
    values = [f"v{(i * 7919) % 1000}" for i in range(1000)]
    assert count == 1000
    assert text == ",".join(f'"{v}"' for v in sorted(values, reverse=True)).encode()
    assert read._json_list(conn, "SELECT v AS j FROM t WHERE k < 0") == (0, b"")
