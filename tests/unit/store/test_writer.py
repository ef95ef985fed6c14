"""store/writer.py: writes go in BEGIN IMMEDIATE batches of upserts, and incremental writes leave the rows a fresh index has."""

from __future__ import annotations

from pathlib import Path

import pytest

from notedex.indexing.apply import BATCH_SIZE
from notedex.indexing.reconcile import reconcile
from notedex.store.writer import IndexWriter
from tests.helpers import dump_index, fresh_full_index, write
from tests.indexcheck import fts_sound_after, make_vault

__all__ = ["fts_sound_after"]  # autouse: FTS integrity-check after every test


@pytest.mark.slow
def test_writes_are_batched_begin_immediate_upserts(tmp_path: Path) -> None:
    count = BATCH_SIZE + 50
    vault = make_vault(
        tmp_path / "v", {f"n/{i:04}.md": f"[[{i + 1:04}]] #t{i % 7}\n" for i in range(count)}
    )
    statements: list[str] = []
    with IndexWriter(tmp_path / "i.db", vault, workers=1) as writer:
        writer.conn.set_trace_callback(statements.append)
        report = reconcile(writer)
        write(vault / "n/0001.md", "changed [[0002]]\n")
        (vault / "n/0002.md").unlink()
        reconcile(writer)
        writer.conn.set_trace_callback(None)
    assert report.added == count
    normalised = [" ".join(s.split()).upper() for s in statements]
    assert not any("INSERT OR REPLACE" in s or s.startswith("REPLACE") for s in normalised)
    begins = [i for i, s in enumerate(normalised) if s.startswith("BEGIN")]
    assert all(normalised[i] == "BEGIN IMMEDIATE" for i in begins)
    note_batches = sum(1 for s in normalised if s.startswith("INSERT INTO NOTES"))
    assert note_batches == count + 1
    assert len(begins) >= 3  # at least two batches of notes, plus the follow-up run
    inside = False
    for s in normalised:
        if s.startswith("BEGIN"):
            inside = True
        elif s in ("COMMIT", "ROLLBACK"):
            inside = False
        elif s.startswith(("INSERT", "UPDATE", "DELETE")) and "TEMP." not in s:
            assert inside, f"a write outside a transaction: {s[:80]}"


def test_incremental_writes_match_a_fresh_index(tmp_path: Path) -> None:
    """A smoke check of the writer's bookkeeping; test_incremental does this at length."""
    vault = make_vault(tmp_path / "v", {"a.md": "[[b]] [[c]]\n", "b.md": "[[a|A text]]\n"})
    db = tmp_path / "i.db"
    with IndexWriter(db, vault, workers=1) as writer:
        reconcile(writer)
        write(vault / "c.md", "[[b]]\n")
        reconcile(writer)
        (vault / "b.md").rename(vault / "B2.md")
        reconcile(writer)
    assert dump_index(db) == fresh_full_index(vault, tmp_path)
