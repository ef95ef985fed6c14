"""A query's process ends without the interpreter's shutdown (cli ``_exit_now``), and loses
nothing by it: every byte of a piped answer, the exit code of findings (1), an error (2).

The shutdown is observed with an ``atexit`` hook installed before the CLI runs: it runs when the
process ends the ordinary way and never after ``os._exit``. ``main(argv)`` with the arguments
given is an in-process call (tests, scripts), which always returns: the reference.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import run_cli

SHUTDOWN = "<shutdown ran>"


def _run(*args: str | Path, in_process: bool = False) -> subprocess.CompletedProcess[str]:
    argv = [str(a) for a in args]
    call = f"main({argv!r})" if in_process else "main()"
    script = (
        "import atexit, sys\n"
        f"atexit.register(lambda: sys.stderr.write({SHUTDOWN!r}))\n"
        "from notedex.cli import main\n"
        f"raise SystemExit({call})\n"
    )
    return subprocess.run(
        [sys.executable, "-c", script, *argv], capture_output=True, text=True, timeout=120
    )


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("fastexit")
    vault = root / "vault"
    vault.mkdir()
    for i in range(300):  # long answers: a lost buffer would show as a cut document
        (vault / f"Python note {i}.md").write_text(f"# Python note {i}\n\n[[Missing {i}]]\n")
    db = root / "index.db"
    assert run_cli("index", "--vault", vault, "--db", db).code == 0
    return vault, db


@pytest.mark.parametrize(
    ("command", "code"),
    [(("lookup", "python", "--limit", "300"), 0), (("scan",), 0), (("health",), 1)],
)
def test_a_query_skips_the_shutdown_and_answers_in_full(
    indexed: tuple[Path, Path], command: tuple[str, ...], code: int
) -> None:
    vault, db = indexed
    args = (*command, "--vault", vault, "--db", db, "--no-refresh", "--json")
    fast, ordinary = _run(*args), _run(*args, in_process=True)
    assert (fast.returncode, ordinary.returncode) == (code, code), fast.stderr
    assert SHUTDOWN not in fast.stderr and ordinary.stderr == SHUTDOWN
    assert fast.stdout == ordinary.stdout and len(fast.stdout) > 300 * 20
    json.loads(fast.stdout)


def test_an_error_keeps_its_code_and_message(indexed: tuple[Path, Path]) -> None:
    vault, db = indexed
    missing = _run(
        "lookup", "python", "--vault", vault, "--db", db.parent / "none.db", "--no-refresh"
    )
    assert missing.returncode == 2 and "no index at" in missing.stderr
    assert SHUTDOWN not in missing.stderr


@pytest.mark.slow
def test_a_command_that_ran_a_writer_ends_the_ordinary_way(
    indexed: tuple[Path, Path], tmp_path: Path
) -> None:
    vault, _db = indexed
    index = _run("index", "--vault", vault, "--db", tmp_path / "other.db")
    assert index.returncode == 0 and index.stderr.endswith(SHUTDOWN), index.stderr
    refreshed = _run("lookup", "python", "--vault", vault, "--db", tmp_path / "third.db")
    assert refreshed.returncode == 0 and refreshed.stderr.endswith(SHUTDOWN), refreshed.stderr
