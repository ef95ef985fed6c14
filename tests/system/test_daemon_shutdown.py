"""Shutdown (issue 13.15): a note saved just before SIGTERM is indexed before the daemon exits,
a clean stop logs no ERROR, and the parse pool's worker processes exit with the daemon."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

from tests.helpers import dump_index, fresh_full_index, fts_integrity_ok, wait_until, write
from tests.system.daemons import Daemons, note, populate


@pytest.mark.slow
def test_a_note_saved_just_before_sigterm_is_indexed_before_exit(
    daemons: Daemons, small_vault: Path, db_path: Path, tmp_path: Path
) -> None:
    for round in range(3):
        run = daemons.start()
        write(small_vault / f"last-{round}.md", note(f"Last {round}", links="[[a]]"))
        os.rename(small_vault / "b.md", small_vault / f"b{round}.md")  # a move's two halves too
        write(small_vault / "b.md", note("Beta again"))
        # A move out of the vault: watchdog holds its lone half 0.5 s, waiting for a pair.
        os.rename(small_vault / "sub" / "c.md", tmp_path / f"gone-{round}.md")
        write(small_vault / "sub" / "c.md", note("Gamma again", links="[[a]]"))
        os.rename(small_vault / "sub" / "deep", tmp_path / f"deep-{round}")
        write(small_vault / "sub" / "deep" / "d.md", note("Delta again"))
        run.signal(signal.SIGTERM)  # at once: the events are still in the kernel's queue
        assert run.proc.wait(timeout=60) == 0, run.log_text()
        assert dump_index(db_path) == fresh_full_index(small_vault, tmp_path), run.log_text()
        assert fts_integrity_ok(db_path)


@pytest.mark.slow
def test_with_polling_a_note_saved_just_before_sigterm_is_indexed_before_exit(
    daemons: Daemons, small_vault: Path, db_path: Path, tmp_path: Path
) -> None:
    """--poll: the stop takes one last snapshot, so a save less than one poll interval before
    SIGTERM is not left to the next start."""
    for round in range(3):
        run = daemons.start("--poll")
        write(small_vault / f"last-{round}.md", note(f"Last {round}", links="[[a]]"))
        os.rename(small_vault / "b.md", small_vault / f"b{round}.md")
        write(small_vault / "b.md", note("Beta again"))
        run.signal(signal.SIGTERM)  # well within the 1 s poll interval
        assert run.proc.wait(timeout=60) == 0, run.log_text()
        assert dump_index(db_path) == fresh_full_index(small_vault, tmp_path), run.log_text()
        assert fts_integrity_ok(db_path)


@pytest.mark.slow
def test_a_clean_stop_logs_no_error(daemons: Daemons, small_vault: Path) -> None:
    for round in range(4):
        run = daemons.start()
        write(small_vault / f"n{round}.md", note(f"N {round}"))
        run.wait_for("batch")
        assert run.stop() == 0
        errors = [e for e in run.events() if e.get("level") in ("error", "critical")]
        assert not errors, run.log_text()
        assert "Traceback" not in run.log_text() and "inactive" not in run.log_text()


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def _group(pgid: int) -> list[int]:
    """Live (not zombie) processes of the process group ``pgid``."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(entry))
    return members


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and PR_SET_PDEATHSIG")
def test_the_parse_pools_workers_exit_with_the_daemon(
    daemons: Daemons, vault: Path, db_path: Path
) -> None:
    populate(vault, 3000)  # over the pool's threshold: the first index parses in workers
    run = daemons.start(ready=False)
    # The daemon, its resource tracker, the forkserver and workers: killed while they parse.
    wait_until(lambda: len(_group(run.pid)) >= 5, timeout=60, message="the parse pool")
    os.kill(run.pid, signal.SIGKILL)  # the daemon alone, as the OOM killer would
    run.proc.wait(timeout=10)
    wait_until(lambda: not _group(run.pid), timeout=20, message="no process of it left")
