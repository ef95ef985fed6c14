"""`notedex daemon` applies a large batch in chunks (issue 17): SIGTERM between two chunks stops
it at once, the index it leaves is consistent, and the next start's reconcile finds the rest."""

from __future__ import annotations

import os
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from tests.helpers import dump_index, fresh_full_index, fts_integrity_ok, wait_until
from tests.system.daemons import Daemons, assert_converges, indexed_count, populate


def linked_subset(vault: Path, db: Path, root: Path) -> Path:
    """A vault of hard links to exactly the files the index holds (same etags): a consistent
    partial index equals a fresh full index of it."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        paths = [row[0] for row in conn.execute("SELECT path FROM files")]
    finally:
        conn.close()
    for path in paths:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        os.link(vault / path, root / path)
    return root


@pytest.mark.slow
def test_sigterm_in_the_middle_of_a_large_batch(
    daemons: Daemons, vault: Path, db_path: Path, tmp_path: Path
) -> None:
    populate(vault, 200)
    run = daemons.start()
    base = indexed_count(db_path)
    outside = tmp_path / "outside"
    populate(outside, 8000, folder="big", per_folder=500)
    os.rename(outside / "big", vault / "big")  # one event, one batch of 8,000 new notes
    wait_until(
        lambda: indexed_count(db_path) > base, timeout=60, interval=0.02, message="a first chunk"
    )
    started = time.monotonic()
    run.signal(signal.SIGTERM)
    code = run.proc.wait(timeout=30)
    seconds = time.monotonic() - started
    assert code == 0, run.log_text()[-3000:]
    assert seconds < 2.0, f"exited {seconds:.2f} s after SIGTERM\n{run.log_text()[-3000:]}"
    assert run.find("batch interrupted"), run.log_text()[-3000:]
    assert base < indexed_count(db_path) < base + 8000
    assert fts_integrity_ok(db_path)
    subset = linked_subset(vault, db_path, tmp_path / "subset")
    assert dump_index(db_path) == fresh_full_index(subset, tmp_path)

    again = daemons.start()
    assert_converges(vault, db_path, tmp_path, timeout=120, run=again)
