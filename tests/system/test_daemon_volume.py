"""`notedex daemon` under volume and races: a storm of new files, a git checkout, a queue overflow, kill -9 mid-batch, edits made while it was down, failures it must survive, readers next to the writer.

Every scenario ends with the index equal to a fresh full index of the vault and a sound FTS.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.helpers import run_cli, wait_until, write
from tests.system.daemons import Daemons, assert_converges, indexed_count, note, populate


@pytest.mark.slow
def test_storm_of_5000_new_files(
    daemons: Daemons, vault: Path, db_path: Path, tmp_path: Path
) -> None:
    run = daemons.start()
    started = time.monotonic()
    populate(vault, 5000, per_folder=100)
    assert_converges(vault, db_path, tmp_path, timeout=90, run=run)
    # (logged just after the commit: wait for the line) the cap itself is tested with a fake clock
    wait_until(lambda: run.find("batch"), timeout=10, message="a batch in the log")
    assert time.monotonic() - started < 90


def _git(vault: Path, *args: str) -> None:
    subprocess.run(
        [
            "git",
            "-c",
            "user.name=notedex",
            "-c",
            "user.email=t@example.org",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
            *args,
        ],
        cwd=vault,
        check=True,
        capture_output=True,
    )


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_checkout_between_branches(
    daemons: Daemons, vault: Path, db_path: Path, tmp_path: Path
) -> None:
    populate(vault, 400, per_folder=50)
    _git(vault, "init", "-q")
    _git(vault, "add", "-A")
    _git(vault, "commit", "-q", "-m", "base")
    _git(vault, "checkout", "-q", "-b", "other")
    for i in range(0, 200):
        path = vault / "notes" / f"f{i // 50}" / f"n{i}.md"
        path.write_text(
            note(f"Changed {i}", tags="changed", links=f"[[n{i + 300}]]"), encoding="utf-8"
        )
    for i in range(200, 300):
        (vault / "notes" / f"f{i // 50}" / f"n{i}.md").unlink()
    for i in range(150):
        write(vault / "added" / f"a{i}.md", note(f"Added {i}", links=f"[[n{i}]] [[Changed {i}]]"))
    _git(vault, "mv", "notes/f7", "moved-f7")
    _git(vault, "add", "-A")
    _git(vault, "commit", "-q", "-m", "other")
    _git(vault, "checkout", "-q", "main")
    run = daemons.start()
    assert_converges(vault, db_path, tmp_path, run=run)
    _git(vault, "checkout", "-q", "other")
    assert_converges(vault, db_path, tmp_path, timeout=60, run=run)
    _git(vault, "checkout", "-q", "main")
    assert_converges(vault, db_path, tmp_path, timeout=60, run=run)


def _max_queued_events() -> int | None:
    try:
        return int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    except (OSError, ValueError):
        return None


@pytest.mark.slow
def test_queue_overflow_while_stopped_converges(
    daemons: Daemons, vault: Path, db_path: Path, tmp_path: Path
) -> None:
    for folder in range(40):
        # Existing folders are watched from the start: their events queue in the kernel.
        (vault / "notes" / f"f{folder}").mkdir(parents=True)
    run = daemons.start()
    run.signal(signal.SIGSTOP)
    try:
        populate(vault, 8000, per_folder=200)
    finally:
        run.signal(signal.SIGCONT)
    assert_converges(vault, db_path, tmp_path, timeout=120, run=run)
    limit = _max_queued_events()
    if sys.platform.startswith("linux") and limit is not None and limit < 8000 * 3:
        # each new file is IN_CREATE + IN_MODIFY + IN_CLOSE_WRITE: the kernel queue overflowed
        run.wait_for("rescan", cause="inotify queue overflow")


@pytest.mark.slow
def test_kill_9_mid_batch_then_restart_converges(
    daemons: Daemons, vault: Path, db_path: Path, tmp_path: Path
) -> None:
    run = daemons.start()
    populate(vault, 4000, per_folder=200)
    wait_until(
        lambda: indexed_count(db_path) > 0,
        timeout=60,
        interval=0.01,
        message="the batch to start committing",
    )
    run.proc.kill()
    run.proc.wait(timeout=10)
    partial = indexed_count(db_path)
    second = daemons.start()
    assert_converges(vault, db_path, tmp_path, timeout=90, run=second)
    assert partial <= 4000


@pytest.mark.slow
def test_edits_made_while_down_are_picked_up_at_start(
    daemons: Daemons, small_vault: Path, db_path: Path, tmp_path: Path
) -> None:
    first = daemons.start()
    assert_converges(small_vault, db_path, tmp_path, run=first)
    assert first.stop() == 0
    (small_vault / "a.md").write_text(note("Alpha offline", links="[[d]]"), encoding="utf-8")
    (small_vault / "b.md").unlink()
    write(small_vault / "new" / "e.md", note("Epsilon", links="[[a]]"))
    aged = small_vault / "sub" / "c.md"
    aged.write_text(note("Gamma edited offline"), encoding="utf-8")
    os.utime(aged, ns=(1_000_000_000_000_000_000, 1_000_000_000_000_000_000))  # 2001
    second = daemons.start()
    assert_converges(small_vault, db_path, tmp_path, run=second)


def test_two_same_size_edits_within_one_second_are_both_indexed(
    daemons: Daemons, small_vault: Path, db_path: Path, tmp_path: Path
) -> None:
    run = daemons.start()
    target = small_vault / "a.md"
    target.write_text(note("First version AAAA"), encoding="utf-8")
    assert_converges(small_vault, db_path, tmp_path, run=run)
    first = target.stat()
    target.write_text(note("Other version BBBB"), encoding="utf-8")
    # same size, same inode and even the same mtime: only the content tells them apart
    os.utime(target, ns=(first.st_atime_ns, first.st_mtime_ns))
    assert target.stat().st_size == first.st_size
    assert_converges(small_vault, db_path, tmp_path, run=run)


def test_exception_in_event_handling_is_survived(
    daemons: Daemons, small_vault: Path, db_path: Path, tmp_path: Path
) -> None:
    run = daemons.start(env={"NOTEDEX_TEST_FAULT": "handler"})
    write(small_vault / "fault.md", note("Faulty event", links="[[a]]"))
    run.wait_for("event handler failed")
    assert_converges(small_vault, db_path, tmp_path, run=run)
    write(small_vault / "later.md", note("Later", links="[[fault]]"))
    (small_vault / "b.md").write_text(note("Beta after the fault"), encoding="utf-8")
    assert_converges(small_vault, db_path, tmp_path, run=run)
    assert run.proc.poll() is None


@pytest.mark.slow
def test_exception_in_a_batch_is_survived(
    daemons: Daemons, small_vault: Path, db_path: Path, tmp_path: Path
) -> None:
    run = daemons.start(env={"NOTEDEX_TEST_FAULT": "writer"})
    write(small_vault / "first.md", note("First after start"))
    run.wait_for("batch failed")
    assert_converges(small_vault, db_path, tmp_path, run=run)
    write(small_vault / "later.md", note("Later", links="[[first]]"))
    assert_converges(small_vault, db_path, tmp_path, run=run)
    assert run.find("rescan", cause="recovering from a failed batch")


@pytest.mark.slow
def test_concurrent_readers_never_see_database_is_locked(
    daemons: Daemons, vault: Path, db_path: Path, tmp_path: Path
) -> None:
    populate(vault, 200)
    run = daemons.start()
    done = threading.Event()

    def keep_writing() -> None:
        for chunk in range(20):
            if done.is_set():
                return
            for i in range(150):
                n = 1000 + chunk * 150 + i
                write(
                    vault / "bulk" / f"c{chunk}" / f"b{n}.md",
                    note(f"Bulk {n}", links=f"[[n{n % 200}]]"),
                )

    def read_once(_: int) -> tuple[int, str, str]:
        result = run_cli(
            "scan", "--json", "--no-refresh", "--vault", vault, "--db", db_path, timeout=60
        )
        return result.code, result.stdout, result.stderr

    writer = threading.Thread(target=keep_writing)
    writer.start()
    try:
        with ThreadPoolExecutor(max_workers=20) as pool:
            results = list(pool.map(read_once, range(20)))
    finally:
        done.set()
        writer.join()
    for code, stdout, stderr in results:
        assert "database is locked" not in stderr
        assert code == 0, stderr
        assert "notes" in json.loads(stdout)
    assert_converges(vault, db_path, tmp_path, timeout=60, run=run)
