"""Readers never see a half-built index (issue 13, case 10): `index --full` is built aside and
swapped in whole, a large re-apply commits consistent chunks, Ctrl-C leaves the old index, and
`status` says when a rebuild runs. Readers are real CLI processes sampled throughout."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from notedex.store.schema import SCHEMA_VERSION
from tests.helpers import dump_index, fresh_full_index, fts_integrity_ok, run_cli, wait_until
from tests.system.daemons import Daemons, assert_converges, populate

NOTES = 6000  # above the bulk-mode threshold (5,000 notes)
OTHER = SCHEMA_VERSION - 1


def sample(vault: Path, db: Path) -> tuple[Any, ...]:
    """What a reader sees: status counts, the lookup total and health's broken-link count."""
    common = ("--vault", str(vault), "--db", str(db), "--no-refresh", "--json")
    status = run_cli("status", *common).json()
    total = run_cli("lookup", "Note", "--limit", "1", *common).json()["total"]
    broken = run_cli("health", *common).json()["brokenLinkCount"]
    return (tuple(sorted(status["counts"].items())), total, broken, status["rebuilding"])


@contextmanager
def sampling(vault: Path, db: Path) -> Iterator[list[tuple[Any, ...]]]:
    samples: list[tuple[Any, ...]] = []
    done = threading.Event()

    def loop() -> None:
        while not done.is_set():
            samples.append(sample(vault, db))

    thread = threading.Thread(target=loop)
    thread.start()
    try:
        yield samples
    finally:
        done.set()
        thread.join()


def index(vault: Path, db: Path, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "notedex", "index", "--vault", str(vault), "--db", str(db), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


@pytest.fixture
def indexed(vault: Path, db_path: Path) -> tuple[Path, Path, tuple[Any, ...]]:
    populate(vault, NOTES, per_folder=500)
    assert run_cli("index", "--vault", str(vault), "--db", str(db_path)).code == 0
    return vault, db_path, sample(vault, db_path)[:3]


@pytest.mark.slow
def test_readers_during_index_full_see_the_whole_index(
    indexed: tuple[Path, Path, tuple[Any, ...]],
) -> None:
    vault, db, before = indexed
    with sampling(vault, db) as samples:
        wait_until(lambda: len(samples) >= 1, timeout=60, message="a first sample")
        proc = index(vault, db, "--full")
        assert proc.wait(timeout=300) == 0, proc.stderr.read() if proc.stderr else ""
    seen = {s[:3] for s in samples}
    assert seen == {before}, seen  # the vault did not change: old and new state are equal
    assert any(s[3] for s in samples), "no sample ran while the rebuild did"
    assert sample(vault, db)[3] is False
    assert fts_integrity_ok(db)


@pytest.mark.slow
def test_readers_during_a_large_re_apply_see_old_or_new_counts(
    indexed: tuple[Path, Path, tuple[Any, ...]], tmp_path: Path
) -> None:
    """Every note's bytes change (a trailing line), not its meaning: each is parsed again, and
    the counts of the old and the new state are the same, so every sample must equal them."""
    vault, db, before = indexed
    for path in sorted(vault.rglob("*.md")):
        with open(path, "a", encoding="utf-8") as handle:
            handle.write("\n")
    with sampling(vault, db) as samples:
        wait_until(lambda: len(samples) >= 1, timeout=60, message="a first sample")
        proc = index(vault, db)
        assert proc.wait(timeout=300) == 0, proc.stderr.read() if proc.stderr else ""
    assert {s[:3] for s in samples} == {before}
    assert len(samples) >= 3
    assert dump_index(db) == fresh_full_index(vault, tmp_path)


@pytest.mark.slow
def test_ctrl_c_during_index_full_leaves_the_old_index(
    indexed: tuple[Path, Path, tuple[Any, ...]],
) -> None:
    vault, db, before = indexed
    old = dump_index(db)
    build = db.with_name(db.name + ".rebuild")
    proc = index(vault, db, "--full")
    wait_until(lambda: build.exists(), timeout=60, interval=0.01, message="the build file")
    proc.send_signal(signal.SIGINT)
    # 0 only when the build had just been swapped in (a loaded machine can be that late): the
    # command is then done, and a late Ctrl-C leaves its exit code alone.
    assert proc.wait(timeout=60) in (130, 0)
    assert not build.exists()
    assert dump_index(db) == old  # the vault did not change: the old index, or its equal
    assert sample(vault, db)[:3] == before


@pytest.mark.slow
def test_the_daemon_rebuilds_an_index_of_another_version_aside(
    daemons: Daemons, small_vault: Path, db_path: Path, tmp_path: Path
) -> None:
    assert run_cli("index", "--vault", str(small_vault), "--db", str(db_path)).code == 0
    conn = sqlite3.connect(db_path)
    conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(OTHER),))
    conn.commit()
    conn.close()
    run = daemons.start()
    assert run.find("rebuild done"), run.log_text()
    assert not db_path.with_name(db_path.name + ".rebuild").exists()
    assert_converges(small_vault, db_path, tmp_path, run=run)
