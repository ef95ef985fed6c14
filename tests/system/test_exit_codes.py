"""Exit codes and messages of a writer that cannot write (issue 13.12): a full disk, a read-only
index or state folder, Ctrl-C, the daemon's log line that names its exit code.

A full disk is SQLite's SQLITE_FULL for real: the test-only ``NOTEDEX_TEST_DISK_FULL`` flag file
caps the index at its current size (``PRAGMA max_page_count``), and a write past it fails inside
SQLite exactly as it does when ``write()`` returns ENOSPC. Read-only places are ``chmod``ed for
real, with the CLI run as ``nobody`` when the tests run as root (tests/privileges.py).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import run_cli, run_inprocess, wait_until, write
from tests.privileges import chown_tree, run_unprivileged, unprivileged_base
from tests.system.daemons import Daemons, assert_converges, note, populate
from tests.system.test_index_recovery import assert_sound_and_fresh

DISK_FULL = "NOTEDEX_TEST_DISK_FULL"


@pytest.mark.slow
def test_a_full_disk_during_the_first_index_exits_75_with_a_message(
    vault: Path, db_path: Path, tmp_path: Path
) -> None:
    populate(vault, 200)
    flag = write(tmp_path / "disk-full", "")

    result = run_cli("index", "--vault", vault, "--db", db_path, env={DISK_FULL: str(flag)})

    assert result.code == 75, result.stderr
    assert result.stdout == "" and "Traceback" not in result.stderr
    assert f"the disk holding the index {db_path} is full" in result.stderr
    flag.unlink()  # space freed: the next run indexes everything
    assert run_cli("index", "--vault", vault, "--db", db_path).code == 0
    assert_sound_and_fresh(vault, db_path, tmp_path)


@pytest.mark.slow
def test_a_full_disk_during_the_daemons_first_index_is_retried_with_backoff(
    daemons: Daemons, vault: Path, db_path: Path, tmp_path: Path
) -> None:
    populate(vault, 200)
    flag = write(tmp_path / "disk-full", "")

    run = daemons.start(env={DISK_FULL: str(flag)})

    full = run.wait_for("disk full")
    assert full["retry_in"] > 0 and str(db_path) in full["error"]
    assert run.proc.poll() is None, "the daemon waits for space, systemd sees no failure"
    assert "Traceback" not in run.log_text()
    flag.unlink()
    assert_converges(vault, db_path, tmp_path, timeout=60, run=run)
    assert run.stop() == 0


@pytest.fixture
def owned_vault() -> Iterator[tuple[Path, Path, Path]]:
    """(base, vault, db) in a folder the unprivileged child owns; indexed, then one note more."""
    base = unprivileged_base()
    vault = base / "vault"
    populate(vault, 20)
    db = base / "state" / "index.db"
    assert run_cli("index", "--vault", vault, "--db", db).code == 0
    write(vault / "new.md", note("New"))  # work for the next `index`
    chown_tree(base)
    yield base, vault, db
    for folder in (db.parent, base):
        folder.chmod(0o755)
    subprocess.run(["rm", "-rf", str(base)], check=False)


def test_a_read_only_index_exits_2_with_its_path_and_keeps_its_mode(
    owned_vault: tuple[Path, Path, Path],
) -> None:
    _base, vault, db = owned_vault
    db.chmod(0o444)

    result = run_unprivileged("index", "--vault", vault, "--db", db)

    assert result.code == 2, result.stderr
    assert f"the index {db} is read-only" in result.stderr and "Traceback" not in result.stderr
    assert stat.S_IMODE(db.stat().st_mode) == 0o444, "the user's file is never chmodded back"


def test_a_read_only_state_folder_exits_2_with_its_path(
    owned_vault: tuple[Path, Path, Path],
) -> None:
    _base, vault, db = owned_vault
    db.parent.chmod(0o555)

    result = run_unprivileged("index", "--vault", vault, "--db", db)

    assert result.code == 2, result.stderr
    assert f"the folder {db.parent} of the index is read-only" in result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert stat.S_IMODE(db.parent.stat().st_mode) == 0o555


def test_ctrl_c_inside_an_sql_function_during_index_exits_130(
    vault: Path, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite turns the KeyboardInterrupt raised in nx_segment into "user-defined function
    raised exception": the CLI must still say interrupted (130), not internal error (70).
    An update, not a first index: a build aside takes its search texts from the parse
    workers (store.noterows.note_fts_texts), and an update reads them through nx_segment."""
    import notedex.store.database as database

    populate(vault, 50)
    assert run_inprocess("index", "--vault", vault, "--db", db_path).code == 0
    for path in (vault / "notes").rglob("*.md"):
        path.write_text(path.read_text(encoding="utf-8") + "\nedited\n", encoding="utf-8")
    calls = 0
    real = database.segment_or_empty

    def pressed_ctrl_c(text: str | None) -> str:
        nonlocal calls
        calls += 1
        if calls == 20:
            raise KeyboardInterrupt
        return real(text)

    monkeypatch.setattr(database, "segment_or_empty", pressed_ctrl_c)

    result = run_inprocess("index", "--vault", vault, "--db", db_path)

    assert calls >= 20
    assert result.code == 130, result.stderr
    assert "internal error" not in result.stderr and "user-defined" not in result.stderr


@pytest.mark.slow
def test_sigint_during_index_exits_130(vault: Path, db_path: Path) -> None:
    populate(vault, 1500)
    proc = subprocess.Popen(
        [sys.executable, "-m", "notedex", "index", "--vault", str(vault), "--db", str(db_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # A first index is built aside (<db>.rebuild) and swapped in at the end (store.swap).
    building = db_path.with_name(db_path.name + ".rebuild")
    wait_until(
        lambda: building.exists() or db_path.exists(), timeout=60, message="the build to start"
    )
    proc.send_signal(2)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode in (130, 0), err  # 0: it had finished already
    assert "internal error" not in err and "Traceback" not in err
    assert not building.exists()  # Ctrl-C leaves no half-built file behind
    if proc.returncode == 130:
        assert not db_path.exists()  # and no index that is not whole


@pytest.mark.slow
def test_a_ctrl_c_after_the_work_is_done_keeps_the_exit_code(vault: Path, db_path: Path) -> None:
    """The signal lands while the interpreter joins the parse pool at exit: the command's own
    code stands, never a death by SIGINT (-2)."""
    populate(vault, 1500)
    proc = subprocess.Popen(
        [sys.executable, "-m", "notedex", "index", "--vault", str(vault), "--db", str(db_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_until(lambda: db_path.exists(), timeout=60, message="the index to be swapped in")
    proc.send_signal(2)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode in (0, 130), err


def _log_lines(text: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.mark.slow
def test_the_daemon_logs_the_exit_code_it_exits_with(
    daemons: Daemons, vault: Path, db_path: Path, tmp_path: Path
) -> None:
    populate(vault, 5)
    first = daemons.start()

    # A second daemon: refused (75), and its stderr is the JSON log, not a bare text line.
    second = daemons.start(ready=False)
    assert second.proc.wait(timeout=60) == 75
    lines = _log_lines(second.log_text())  # every line is JSON
    assert [line["exit_code"] for line in lines if "exit_code" in line] == [75]

    # A --db that cannot be an index (a folder): exit 2 with no traceback, logged as 2.
    folder_db = tmp_path / "a-folder.db"
    folder_db.mkdir()
    other = Daemons(vault, folder_db, tmp_path / "other")
    (tmp_path / "other").mkdir()
    bad = other.start(ready=False)
    daemons.runs.append(bad)
    assert bad.proc.wait(timeout=60) == 2
    lines = _log_lines(bad.log_text())
    assert {line["exit_code"] for line in lines if "exit_code" in line} == {2}
    assert [line for line in lines if line["event"] == "stopped"][-1]["exit_code"] == 2
    assert "Traceback" not in bad.log_text()
    assert first.stop() == 0
    assert first.find("stopped")[-1]["exit_code"] == 0
    assert os.path.exists(db_path)
