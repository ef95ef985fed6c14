"""`notedex daemon` pairs the two ends of a move that land in different batches (issue 17): a
`git checkout` removes files and writes them anew under other paths (new inodes), and the
batcher's cap cuts that stream anywhere. The writer holds the unpaired ends for the next batch:
nothing is parsed again, a held delete that nothing pairs is still a delete, and the index ends
equal to a fresh full index."""

from __future__ import annotations

import os
import shutil
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest

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


@pytest.mark.slow
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


@pytest.mark.slow
def test_a_checkout_storm_is_applied_as_moves_each_seen_whole(
    daemons: Daemons, vault: Path, db_path: Path, tmp_path: Path
) -> None:
    """Notes and attachments rewritten under a new folder as fast as a script can, the old
    unlinked after each: however the batcher cuts the stream, each file moves in one update (a
    reader never sees one at both paths or at neither), nothing is parsed again, and the index
    ends equal to a fresh full index."""
    populate(vault, 300, folder="old", per_folder=30)
    for i in range(12):
        (vault / "old" / f"f{i % 10}" / f"pic{i}.png").write_bytes(bytes([i]) * (50 + i))
    files = sorted(p for p in (vault / "old").rglob("*") if p.is_file())
    run = daemons.start()
    seen: list[int] = []
    stop = threading.Event()

    def poll() -> None:
        conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=30)
        # One statement, one snapshot: the files under either folder.
        sql = (
            "SELECT (SELECT count(*) FROM files WHERE path >= 'old/' AND path < 'old0') "
            "+ (SELECT count(*) FROM files WHERE path >= 'new/' AND path < 'new0')"
        )
        try:
            while not stop.is_set():
                seen.append(conn.execute(sql).fetchone()[0])
                stop.wait(0.002)
        finally:
            conn.close()

    reader = threading.Thread(target=poll)
    reader.start()
    try:
        for f in files:
            dst = vault / "new" / f.relative_to(vault / "old")
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(f.read_bytes())
            f.unlink()
            time.sleep(0.008)  # a storm of 2.5 s or more, the batcher's cap 1 s: cut into batches
        shutil.rmtree(vault / "old")
        assert_converges(vault, db_path, tmp_path, run=run)
    finally:
        stop.set()
        reader.join()
    assert seen and set(seen) == {len(files)}, sorted(set(seen))
    wait_until(
        lambda: sum(b["moved"] for b in run.find("batch")) >= len(files),
        timeout=10,
        message="the batch lines of the moves",
    )
    batches = run.find("batch")
    assert len([b for b in batches if b["moved"]]) >= 2, run.log_text()[-3000:]
    assert sum(b["moved"] for b in batches) == len(files), run.log_text()[-3000:]
    assert sum(b["added"] + b["removed"] for b in batches) == 0, run.log_text()[-3000:]


NFD = "E\u0301te\u0301"  # "Été" as macOS writes it: its NFC path is another string


@pytest.mark.slow
def test_held_deletes_of_names_written_nfd_are_deleted(
    daemons: Daemons, vault: Path, db_path: Path, tmp_path: Path
) -> None:
    """A held end goes back to the batcher by its on-disk name: a row whose NFC path is not its
    disk name (SEMANTICS 1.3) is still deleted one batch later, not kept for ever."""
    for i in range(NOTES // 2):
        write(vault / "old" / f"{NFD} {i}.md", f"# N{i}\nbody {i}\n")
    write(vault / "keep.md", "# Keep\n")
    run = daemons.start()
    for f in sorted((vault / "old").rglob("*.md")):
        f.unlink()
    assert_converges(vault, db_path, tmp_path, timeout=30, run=run)
    assert any(b.get("held") == NOTES // 2 for b in run.find("batch")), run.log_text()[-3000:]


def test_held_new_notes_of_names_written_nfd_pair_with_their_deletes(
    daemons: Daemons, vault: Path, db_path: Path, tmp_path: Path
) -> None:
    """Every new path written, half the old ones unlinked, the rest a batch later (as a
    checkout may land): the new notes held for their old paths, NFD on disk, are looked at
    again by their disk names and moved, not lost."""
    for i in range(NOTES // 2):
        write(vault / "old" / f"{NFD} {i}.md", f"# N{i}\nbody {i}\n")
    write(vault / "keep.md", "# Keep\n")
    run = daemons.start()
    files = sorted((vault / "old").rglob("*.md"))
    for f in files:
        write(vault / "new" / f.name, f.read_text())
    for f in files[: len(files) // 2]:
        f.unlink()
    wait_until(
        lambda: any(b.get("held") for b in run.find("batch")),
        timeout=30,
        interval=0.01,
        message="a batch that held the new notes",
    )
    for f in files[len(files) // 2 :]:
        f.unlink()
    assert_converges(vault, db_path, tmp_path, timeout=30, run=run)
    wait_until(
        lambda: sum(b["moved"] for b in run.find("batch")) >= NOTES // 2,
        timeout=10,
        message="the batch lines of the moves",
    )
    assert sum(b["added"] for b in run.find("batch")) == 0, run.log_text()[-3000:]
