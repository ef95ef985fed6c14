"""The operator's mistakes while the daemon runs are noticed (issue 13.13): the index's -wal and
-shm deleted, the whole state folder deleted, the lock file deleted.

Each scenario ends with the index equal to a fresh full index of the vault and a sound FTS.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.helpers import run_cli, write
from tests.system.daemons import Daemons, assert_converges, note, populate


@pytest.mark.slow
def test_wal_and_shm_deleted_while_the_daemon_runs_are_noticed(
    daemons: Daemons, vault: Path, db_path: Path, tmp_path: Path
) -> None:
    populate(vault, 100)
    run = daemons.start()
    write(vault / "after.md", note("After", links="[[n1]]"))
    run.wait_for("batch")

    Path(f"{db_path}-wal").unlink()
    Path(f"{db_path}-shm").unlink()
    # A query meanwhile gets a clear answer, never "no such table: meta".
    query = run_cli("scan", "--json", "--vault", vault, "--db", db_path)
    assert "no such table" not in query.stderr and "internal error" not in query.stderr
    assert query.code in (0, 75), query.stderr

    line = run.wait_for("index files replaced")
    assert "-wal" in line["cause"]
    write(vault / "later.md", note("Later"))
    assert_converges(vault, db_path, tmp_path, run=run)
    assert run_cli("scan", "--json", "--vault", vault, "--db", db_path).code == 0


@pytest.mark.slow
def test_the_index_folder_deleted_while_the_daemon_runs_is_recreated(
    daemons: Daemons, vault: Path, db_path: Path, tmp_path: Path
) -> None:
    populate(vault, 100)
    run = daemons.start()

    shutil.rmtree(db_path.parent)

    line = run.wait_for("index files replaced")
    assert "the index" in line["cause"]
    assert_converges(vault, db_path, tmp_path, run=run)
    write(vault / "later.md", note("Later"))
    assert_converges(vault, db_path, tmp_path, run=run)
    # The lock went with the folder: it is held again, and a second daemon is refused.
    second = daemons.start(ready=False)
    assert second.proc.wait(timeout=60) == 75


@pytest.mark.slow
def test_a_second_daemon_does_not_start_after_the_lock_file_is_deleted(
    daemons: Daemons, vault: Path, db_path: Path, tmp_path: Path
) -> None:
    populate(vault, 20)
    first = daemons.start()
    lock = Path(f"{db_path}.lock")

    lock.unlink()

    first.wait_for("lock file deleted or replaced")
    assert lock.exists()
    second = daemons.start(ready=False)
    assert second.proc.wait(timeout=60) == 75
    assert "already running" in second.log_text()
    write(vault / "still.md", note("Still watched"))
    assert_converges(vault, db_path, tmp_path, run=first)
    assert first.proc.poll() is None
