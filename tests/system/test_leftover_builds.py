"""Build files left by a killed `index --full` (issue 31.11, ARCHITECTURE "Leftover build
files"): ``<db>.rebuild`` and its journal are removed by the next `index` or daemon start,
which hold the writer lock, and said so; never by a process that does not hold it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import run_cli, wait_until
from tests.system.daemons import Daemons
from tests.system.groups import group_members, wait_for_workers

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def _killed_mid_build(vault: Path, db: Path) -> list[Path]:
    """`index --full` killed with SIGKILL while its parse workers run; the files it left."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "notedex",
            "index",
            "--full",
            "--vault",
            str(vault),
            "--db",
            str(db),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for_workers(proc, db)
        os.kill(proc.pid, signal.SIGKILL)  # the command only: its workers end with it
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    wait_until(lambda: not group_members(proc.pid), timeout=30, message="the workers to end")
    left = sorted(db.parent.glob(db.name + ".rebuild*"))
    assert db.with_name(db.name + ".rebuild") in left  # the fault is there to be healed
    return left


@pytest.mark.slow  # builds the 3,000-note vault two or three times: 3-5 s of CPU
def test_the_next_index_removes_a_killed_builds_files(big_vault: Path, tmp_path: Path) -> None:
    db = tmp_path / "state" / "index.db"
    assert run_cli("index", "--vault", big_vault, "--db", db).code == 0
    left = _killed_mid_build(big_vault, db)

    # Nothing in the vault changed: `index` still takes the lock and clears the leftovers.
    result = run_cli("index", "--vault", big_vault, "--db", db)

    assert result.code == 0, result.stderr
    assert not [path for path in left if path.exists()]
    assert f"removed {db.name}.rebuild, left by an `index --full`" in result.stderr
    assert run_cli("status", "--vault", big_vault, "--db", db, "--json").code == 0


@pytest.mark.slow  # builds the 3,000-note vault two or three times: 3-5 s of CPU
def test_a_daemon_start_removes_a_killed_builds_files(big_vault: Path, tmp_path: Path) -> None:
    db = tmp_path / "state" / "index.db"
    assert run_cli("index", "--vault", big_vault, "--db", db).code == 0
    left = _killed_mid_build(big_vault, db)
    daemons = Daemons(big_vault, db, tmp_path)
    try:
        run = daemons.start()
        assert not [path for path in left if path.exists()]
        removed = {event["path"] for event in run.find("leftover build file removed")}
        assert str(db.with_name(db.name + ".rebuild")) in removed
        status = run_cli("status", "--vault", big_vault, "--db", db, "--json")
        assert json.loads(status.stdout)["rebuilding"] is False
        assert run.stop() == 0
    finally:
        daemons.kill_all()
