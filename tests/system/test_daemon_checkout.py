"""`notedex daemon` pairs the two ends of a move that land in different batches (issue 17): a
`git checkout` removes files and writes them anew under other paths (new inodes), and the
batcher's cap cuts that stream anywhere. The writer holds the unpaired ends for the next batch:
nothing is parsed again, a held delete that nothing pairs is still a delete, and the index ends
equal to a fresh full index."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tests.helpers import wait_until, write
from tests.system.daemons import DaemonRun, Daemons, assert_converges, populate

NOTES = 40


def _batches(run: DaemonRun, after: int) -> list[dict[str, Any]]:
    return run.find("batch")[after:]


def test_a_checkout_whose_deletes_and_writes_land_in_two_batches_moves_the_notes(
    daemons: Daemons, vault: Path, db_path: Path, tmp_path: Path
) -> None:
    populate(vault, NOTES, folder="old", per_folder=NOTES)
    run = daemons.start()
    files = sorted((vault / "old").rglob("*.md"))
    contents = {f.relative_to(vault / "old"): f.read_bytes() for f in files}
    for f in files:
        f.unlink()  # git removes the old paths first...
    held = wait_until(
        lambda: next((b for b in run.find("batch") if b.get("held")), None),
        timeout=30,
        interval=0.01,
        message="a batch that held the deletes",
    )
    assert held["held"] == NOTES and held["removed"] == 0, run.log_text()[-3000:]
    before = len(run.find("batch"))
    for rel, data in contents.items():  # ...and writes the new ones: the next batch pairs them
        write(vault / "new" / rel, data.decode())
    assert_converges(vault, db_path, tmp_path, run=run)
    # The batch line is logged after its commit: the index can converge a moment before it.
    wait_until(
        lambda: sum(b["moved"] for b in _batches(run, before - 1)) >= NOTES,
        timeout=10,
        message="the batch lines of the paired moves",
    )
    after = _batches(run, before - 1)
    assert sum(b["moved"] for b in after) == NOTES, run.log_text()[-3000:]
    assert sum(b["added"] + b["removed"] for b in after) == 0, run.log_text()[-3000:]


def test_held_deletes_that_nothing_pairs_are_deleted(
    daemons: Daemons, vault: Path, db_path: Path, tmp_path: Path
) -> None:
    populate(vault, NOTES, folder="old", per_folder=NOTES)
    write(vault / "keep.md", "# Keep\n[[n1]]\n")
    run = daemons.start()
    for f in sorted((vault / "old").rglob("*.md")):
        os.unlink(f)
    assert_converges(vault, db_path, tmp_path, timeout=30, run=run)
    assert any(b.get("held") == NOTES for b in run.find("batch")), run.log_text()[-3000:]
    # The batch line is logged after its commit: the index can converge a moment before it.
    wait_until(
        lambda: sum(b["removed"] for b in run.find("batch")) >= NOTES,
        timeout=10,
        message="the batch line of the held deletes",
    )
    assert sum(b["removed"] for b in run.find("batch")) == NOTES, run.log_text()[-3000:]
