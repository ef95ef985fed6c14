"""`notedex daemon` applies a large batch in chunks (issue 17): SIGTERM between two chunks stops
it at once, the index it leaves is consistent, and the next start's reconcile finds the rest."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from tests.helpers import dump_index, fresh_full_index, fts_integrity_ok, wait_until
from tests.indexcheck import linked_subset
from tests.system.daemons import Daemons, assert_converges, indexed_count, populate


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
