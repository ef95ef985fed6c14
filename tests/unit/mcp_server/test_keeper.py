"""The keeper's view of its index child: the progress the child reports on stderr (issue 31)."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

from notedex.cli.handlers import PROGRESS_ENV, PROGRESS_PREFIX
from notedex.config import Config
from notedex.mcp_server.handlers import building_error
from notedex.mcp_server.keeper import IndexKeeper
from tests.helpers import run_inprocess, wait_until, write


def test_the_index_command_reports_progress_lines_when_asked(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    for i in range(1500):
        write(vault / f"Note {i}.md", f"# {i}\n")
    db = tmp_path / "index.db"
    quiet = run_inprocess("index", "--vault", vault, "--db", tmp_path / "quiet.db")
    assert quiet.code == 0 and PROGRESS_PREFIX not in quiet.stderr  # not asked: not said
    result = run_inprocess("index", "--vault", vault, "--db", db, env={PROGRESS_ENV: "lines"})
    assert result.code == 0, result.stderr
    counts = [
        tuple(int(n) for n in line.removeprefix(PROGRESS_PREFIX).split())
        for line in result.stderr.splitlines()
        if line.startswith(PROGRESS_PREFIX)
    ]
    assert counts and counts[-1] == (1500, 1500)
    assert all(total == 1500 for _, total in counts)
    assert [done for done, _ in counts] == sorted({done for done, _ in counts})


def test_the_keeper_knows_the_progress_while_the_child_runs(tmp_path: Path) -> None:
    """A real child that reports, then waits for the test: the keeper's ``progress`` is the
    child's last report, the other lines are kept for the failure message."""
    go = tmp_path / "go"
    code = (
        "import sys, time, os\n"
        f"print({PROGRESS_PREFIX + '3 9'!r}, file=sys.stderr, flush=True)\n"
        "print('notedex: progress nonsense', file=sys.stderr, flush=True)\n"
        f"while not os.path.exists({str(go)!r}):\n    time.sleep(0.01)\n"
        "print('notedex: error: the last words', file=sys.stderr)\n"
    )
    keeper = IndexKeeper(Config(tmp_path, tmp_path / "i.db"))
    child = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE)
    said: list[list[str]] = []
    reader = threading.Thread(target=lambda: said.append(keeper._follow(child)))
    reader.start()
    try:
        wait_until(lambda: keeper.progress == (3, 9), message="the child's progress")
        error = building_error(keeper.progress)
        assert "(3 of 9 files)" in str(error)
        assert error.data is not None and (error.data["done"], error.data["total"]) == (3, 9)
    finally:
        go.touch()
        reader.join(timeout=30)
    assert said == [["notedex: progress nonsense", "notedex: error: the last words"]]
    assert "listing the files" in str(building_error(None))
