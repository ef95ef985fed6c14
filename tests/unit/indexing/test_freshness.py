"""indexing/freshness.py: the one freshness policy, ``ensure_fresh``, for queries, ``index``
and the MCP server's check (ARCHITECTURE "Freshness"). Real vault, real index, real lock."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from notedex.config import Config
from notedex.error_kinds import DaemonAlreadyRunning
from notedex.indexing.etagcheck import current_file_count
from notedex.indexing.freshness import (
    APPLIED,
    BUSY,
    CURRENT,
    DAEMON,
    STALE,
    daemon_keeps_fresh,
    ensure_fresh,
)
from notedex.store.writer_lock import WriterLock
from tests.helpers import write
from tests.indexcheck import age, fts_sound_after, make_vault

__all__ = ["fts_sound_after"]  # autouse: FTS integrity-check after every test


@pytest.fixture
def cfg(tmp_path: Path) -> Config:
    vault = make_vault(tmp_path / "v", {"a.md": "[[b]]\n", "b.md": "# B\n", "img.png": b"x"})
    age(vault)  # out of the racy window: only the etags speak
    return Config(vault, tmp_path / "state" / "i.db")


def test_a_first_query_builds_the_index_then_finds_it_current(cfg: Config) -> None:
    first = ensure_fresh(cfg)
    assert first.state == APPLIED and first.current
    assert first.report is not None and first.report["added"] == 3
    assert current_file_count(cfg.vault_dir, cfg.db_file) == 3
    again = ensure_fresh(cfg)
    assert (again.state, again.report) == (CURRENT, None)


def test_index_with_nothing_to_do_reports_zeros_without_the_writer(cfg: Config) -> None:
    ensure_fresh(cfg)
    report = ensure_fresh(cfg, index=True).report
    assert report is not None
    assert {k: v for k, v in report.items() if k != "seconds"} == {
        "added": 0,
        "changed": 0,
        "removed": 0,
        "moved": 0,
        "unchanged": 3,
        "rehashed": 0,
        "errors": 0,  # the errors the index holds (store.read.error_count): none here
        "kept": [],
    }
    assert ensure_fresh(cfg, index=True, full=True).state == APPLIED  # --full always rebuilds


def test_a_check_only_call_never_writes(cfg: Config) -> None:
    ensure_fresh(cfg)
    write(Path(cfg.vault_dir) / "c.md", "new\n")
    assert ensure_fresh(cfg, apply=False).state == STALE
    assert current_file_count(cfg.vault_dir, cfg.db_file) is None  # still stale: nothing ran
    assert ensure_fresh(cfg).report is not None


def test_a_running_daemon_is_left_to_keep_the_index_fresh(cfg: Config) -> None:
    with WriterLock(cfg.lock_file) as lock:
        assert lock.acquire("daemon")
        assert daemon_keeps_fresh(cfg)
        assert ensure_fresh(cfg).state == DAEMON
        assert not os.path.exists(cfg.db_file)  # no index was built behind the daemon's back
        with pytest.raises(DaemonAlreadyRunning, match=r"daemon \(pid \d+\) keeps this index"):
            ensure_fresh(cfg, index=True, full=True)  # no rebuild under a daemon
        # `index` signals the daemon to rescan (tests/system/test_cli_conventions.py), but
        # never the process that holds the lock itself.
        with pytest.raises(DaemonAlreadyRunning, match=r"this process \(pid \d+\) holds"):
            ensure_fresh(cfg, index=True)
    assert not daemon_keeps_fresh(cfg)


def test_another_writer_is_not_waited_for_when_an_index_exists(cfg: Config) -> None:
    ensure_fresh(cfg)
    write(Path(cfg.vault_dir) / "c.md", "new\n")
    with WriterLock(cfg.lock_file) as lock:
        assert lock.acquire("index")
        assert ensure_fresh(cfg).state == BUSY
    assert ensure_fresh(cfg).state == APPLIED


def test_every_clean_close_of_a_writer_records_the_index_files_for_the_daemon(
    cfg: Config,
) -> None:
    """Issue 35: a reconcile that committed and closed (a query's refresh, `index`, `index
    --full`) records the index files as a daemon's clean stop does, so the daemon started next
    skips its quick_check; the record matches only the files as that close left them."""
    from notedex.store.cleanstop import CLEAN_STOP_SUFFIX, unchanged_since_clean_close

    marker = Path(f"{cfg.db}{CLEAN_STOP_SUFFIX}")
    assert ensure_fresh(cfg).state == APPLIED  # a query's first refresh builds the index
    assert marker.exists()
    assert unchanged_since_clean_close(cfg.db)  # exactly the files it left
    assert not marker.exists()  # used once

    write(Path(cfg.vault_dir) / "c.md", "# C\n")
    assert ensure_fresh(cfg, index=True).state == APPLIED  # `index`: a reconcile that writes
    assert unchanged_since_clean_close(cfg.db)

    assert ensure_fresh(cfg, index=True, full=True).state == APPLIED  # built aside, swapped
    with open(cfg.db, "r+b") as handle:  # any write since: the record no longer matches
        handle.seek(0, os.SEEK_END)
        handle.write(b"\0" * 4096)
    assert not unchanged_since_clean_close(cfg.db)


def test_an_index_that_applies_reports_the_whole_command_time(
    cfg: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``seconds`` of an `index` that wrote covers the check and the walk, not the apply alone
    (at 1M notes, an `index` that rewrote one note said 0.00s after 16 s of walking)."""
    from notedex.indexing import etagcheck

    ensure_fresh(cfg)
    write(Path(cfg.vault_dir) / "c.md", "new\n")
    checked = etagcheck.current_file_count

    def slow_check(*args: object, **kwargs: object) -> int | None:
        time.sleep(0.3)  # a check as long as a large vault's, before the apply starts
        return checked(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(etagcheck, "current_file_count", slow_check)
    fresh = ensure_fresh(cfg, index=True)
    assert fresh.state == APPLIED and fresh.report is not None
    assert fresh.report["added"] == 1
    assert fresh.report["seconds"] >= 0.3
