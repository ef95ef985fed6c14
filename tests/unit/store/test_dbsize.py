"""Issue 35, size: a cold index of a generated vault takes at most twice the vault's bytes, with
each stored thing kept once (the bodies share a dictionary; health renders the file findings'
objects from their path and title, and the broken links' from their rows, as it reads them;
schema 31 keeps no index that only repeats a path or a key for the writer, and no tag keys the
tag ids give).

The issue's target is at 100k and 1M notes, with a margin asked for: at most 1.9x. This holds
it at 10k, the bench's smallest large size (1.99x there with schema 30, 1.87x with 31). A
smaller generated vault has a larger share of broken anchors, whose stored objects keep health
fast (issue 12)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.helpers import load_genvault, run_inprocess


@pytest.mark.slow  # a cold index of 10,000 notes: about 10 s
def test_a_cold_index_is_at_most_1_9_times_the_vault(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    load_genvault().generate(vault, 10_000, 1)
    db = tmp_path / "index.db"
    result = run_inprocess("index", "--full", "--vault", vault, "--db", db, timeout=300)
    assert result.code == 0, result.stderr
    vault_bytes = sum(p.stat().st_size for p in vault.rglob("*") if p.is_file())
    conn = sqlite3.connect(db)
    try:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
        (db_bytes,) = conn.execute("SELECT sum(pgsize) FROM dbstat").fetchone()
    finally:
        conn.close()
    assert "lonely_docs" not in tables and "file_findings" in tables
    gone = {"broken_link_docs", "broken_anchor_docs_link", "file_findings_file", "exact_names_file"}
    assert not gone & tables
    assert db_bytes <= 1.9 * vault_bytes, db_bytes / vault_bytes
