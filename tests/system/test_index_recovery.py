"""A corrupt index is set aside and rebuilt (issue 13.11): by `index`, by a query without a
daemon, by the daemon at start and when its writer meets the damage.

Each scenario ends with the index equal to a fresh full index of the vault, ``PRAGMA
integrity_check`` ok and the FTS integrity check passing.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
from pathlib import Path

import pytest

from notedex.store.database import add_sql_functions
from tests.helpers import dump_index, fresh_full_index, fts_integrity_ok, run_cli
from tests.system.daemons import Daemons, assert_converges, populate

PAGE = 4096


def _index(vault: Path, db: Path, *extra: str) -> None:
    result = run_cli("index", "--vault", vault, "--db", db, *extra)
    assert result.code == 0, result.stderr


def overwrite_pages(db: Path, count: int, seed: int = 13) -> None:
    """Random bytes over ``count`` random pages (never page 1, the header): a damaged disk."""
    rng = random.Random(seed)
    pages = db.stat().st_size // PAGE
    with open(db, "r+b") as handle:
        for page in rng.sample(range(1, pages), min(count, pages - 1)):
            handle.seek(page * PAGE)
            handle.write(rng.randbytes(PAGE))


def set_aside_files(db: Path) -> list[Path]:
    return sorted(db.parent.glob(f"{db.name}.corrupt-*"))


def assert_sound_and_fresh(vault: Path, db: Path, tmp_path: Path) -> None:
    assert dump_index(db) == fresh_full_index(vault, tmp_path)
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        # The writer's functions: integrity_check computes links_unresolved_reversed's keys.
        add_sql_functions(conn)
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    finally:
        conn.close()
    assert fts_integrity_ok(db)


def _indexed(vault: Path, db: Path, notes: int = 300) -> None:
    populate(vault, notes)
    _index(vault, db)
    # Everything in the index file itself: no -wal holding the pages we are about to damage.
    assert not Path(f"{db}-wal").exists() or Path(f"{db}-wal").stat().st_size == 0


@pytest.mark.slow
def test_index_full_rebuilds_a_truncated_index(vault: Path, db_path: Path, tmp_path: Path) -> None:
    _indexed(vault, db_path)
    os.truncate(db_path, db_path.stat().st_size // 3)

    result = run_cli("index", "--full", "--vault", vault, "--db", db_path)

    assert result.code == 0, result.stderr
    [moved] = set_aside_files(db_path)
    assert str(moved) in result.stderr and "Traceback" not in result.stderr
    assert moved.stat().st_size > 0  # kept, not deleted
    assert_sound_and_fresh(vault, db_path, tmp_path)


@pytest.mark.slow
def test_index_rebuilds_an_index_with_a_bad_header_and_a_query_says_so(
    vault: Path, db_path: Path, tmp_path: Path
) -> None:
    _indexed(vault, db_path)
    with open(db_path, "r+b") as handle:
        handle.write(b"not the SQLite header, no")
    before = db_path.read_bytes()

    # A query never moves a file that is no SQLite database (its --db may be someone's file).
    query = run_cli("scan", "--json", "--vault", vault, "--db", db_path)
    assert query.code == 2 and query.stdout == ""
    assert "`notedex index` sets it aside" in query.stderr
    assert db_path.read_bytes() == before

    result = run_cli("index", "--vault", vault, "--db", db_path)
    assert result.code == 0, result.stderr
    [moved] = set_aside_files(db_path)
    assert moved.read_bytes() == before
    assert_sound_and_fresh(vault, db_path, tmp_path)


@pytest.mark.slow
def test_a_query_on_an_index_with_overwritten_pages_rebuilds_it_and_answers(
    vault: Path, db_path: Path, tmp_path: Path
) -> None:
    _indexed(vault, db_path)
    overwrite_pages(db_path, 40)

    result = run_cli("scan", "--json", "--vault", vault, "--db", db_path)

    assert result.code == 0, result.stderr
    assert len(result.json()["notes"]) == 300
    [moved] = set_aside_files(db_path)
    assert f"set aside as {moved}" in result.stderr
    assert_sound_and_fresh(vault, db_path, tmp_path)


def test_a_query_with_no_refresh_on_a_corrupt_index_says_what_to_do(
    vault: Path, db_path: Path
) -> None:
    _indexed(vault, db_path)
    overwrite_pages(db_path, 40)
    result = run_cli("scan", "--json", "--no-refresh", "--vault", vault, "--db", db_path)
    assert result.code == 2 and result.stdout == ""
    assert "corrupt" in result.stderr and "`notedex index`" in result.stderr
    assert "internal error" not in result.stderr
    assert not set_aside_files(db_path)
    # The damaged file is left where it was (only `index` sets it aside), and it is no index
    # that notedex wrote: it stays out of the autouse FTS check, which passed only while the
    # random pages happened to break sqlite_master too (its list of FTS tables came back empty).
    for path in db_path.parent.glob(f"{db_path.name}*"):
        path.unlink()


@pytest.mark.slow
def test_the_daemon_sets_aside_an_index_with_overwritten_pages_at_start(
    daemons: Daemons, vault: Path, db_path: Path, tmp_path: Path
) -> None:
    _indexed(vault, db_path)
    overwrite_pages(db_path, 40)

    run = daemons.start()

    [moved] = set_aside_files(db_path)
    line = run.wait_for("corrupt index set aside")
    assert line["moved_to"] == str(moved) and line["db"] == str(db_path)
    assert_converges(vault, db_path, tmp_path, run=run)
    assert_sound_and_fresh(vault, db_path, tmp_path)


@pytest.mark.slow
def test_the_daemon_recovers_when_its_writer_meets_a_corrupt_page(
    vault: Path, db_path: Path, tmp_path: Path
) -> None:
    """Damage the quick check at start cannot see (it came later): the first rescan meets it."""
    from notedex.daemon.batcher import Batcher
    from notedex.daemon.indexer import Indexer
    from notedex.store.writer import IndexWriter

    _indexed(vault, db_path)
    batcher = Batcher()
    indexer = Indexer(lambda: IndexWriter(db_path, vault, workers=1), batcher)
    overwrite_pages(db_path, 60)  # pages the open writer has not read yet
    try:
        try:
            indexer.rescan("test")
        except Exception as exc:  # what the daemon's startup hands to the writer thread
            indexer.failed(exc, "startup rescan failed")
        assert set_aside_files(db_path), "the corrupt index was set aside"
        indexer.rescan("after recovery")
    finally:
        indexer.close()
        batcher.close()
    assert_sound_and_fresh(vault, db_path, tmp_path)


@pytest.mark.slow
def test_a_query_on_a_corrupt_index_while_the_daemon_runs_says_to_restart_it(
    daemons: Daemons, vault: Path, db_path: Path, tmp_path: Path
) -> None:
    """The query cannot write while the daemon holds the lock: exit 2 and what to do; the
    daemon's start-up check then sets the index aside and rebuilds it."""
    _indexed(vault, db_path)
    first = daemons.start()
    pages = db_path.stat().st_size // PAGE
    overwrite_pages(db_path, pages // 2)

    result = run_cli("scan", "--json", "--vault", vault, "--db", db_path)

    assert result.code == 2 and result.stdout == "", result.stderr
    assert "corrupt" in result.stderr and "restart the daemon" in result.stderr
    assert "internal error" not in result.stderr
    assert first.stop() == 0
    second = daemons.start()
    second.wait_for("corrupt index set aside")
    assert_converges(vault, db_path, tmp_path, run=second)
    assert_sound_and_fresh(vault, db_path, tmp_path)


def test_a_clean_stop_spares_the_next_start_its_check_only_while_the_index_is_unchanged(
    daemons: Daemons, vault: Path, db_path: Path, tmp_path: Path
) -> None:
    """Issue 35: the start's quick_check reads every page (seconds at 1M notes). After a clean
    stop it is skipped while the index files are exactly as that stop left them; damage done
    after the stop is still found at the next start, and a crash leaves no record."""
    from notedex.store.cleanstop import CLEAN_STOP_SUFFIX

    marker = Path(f"{db_path}{CLEAN_STOP_SUFFIX}")
    _indexed(vault, db_path, notes=120)

    first = daemons.start()
    assert first.find("index check skipped")  # `index` closed cleanly and recorded it
    assert first.stop() == 0
    assert marker.exists()

    second = daemons.start()
    assert second.find("index check skipped")
    assert not marker.exists()  # used once
    assert second.stop() == 0
    assert marker.exists()

    overwrite_pages(db_path, 20)  # damage after the clean stop: the files changed
    third = daemons.start()
    assert not third.find("index check skipped")
    [moved] = set_aside_files(db_path)
    assert third.wait_for("corrupt index set aside")["moved_to"] == str(moved)
    assert_converges(vault, db_path, tmp_path, run=third)

    third.signal(signal.SIGKILL)  # a crash records nothing
    third.proc.wait(timeout=30)
    assert not marker.exists()
    fourth = daemons.start()
    assert not fourth.find("index check skipped")
    assert fourth.stop() == 0


def test_a_start_after_index_skips_the_check_only_while_the_index_is_as_index_left_it(
    daemons: Daemons, vault: Path, db_path: Path, tmp_path: Path
) -> None:
    """Issue 35: `notedex index` that committed and closed records the index files as a clean
    stop does, so the daemon started next skips its quick_check (5-8 s at 1M notes); damage
    done after the index is still found, and a crashed daemon's writes leave no record."""
    from notedex.store.cleanstop import CLEAN_STOP_SUFFIX

    marker = Path(f"{db_path}{CLEAN_STOP_SUFFIX}")
    populate(vault, 120)
    _index(vault, db_path)
    assert marker.exists()

    (vault / "added after the first index.md").write_text("# Added\n\nsee [[n1]]\n")
    _index(vault, db_path)  # a reconcile that writes: the record follows its writes
    started = daemons.start()
    assert started.find("index check skipped")
    assert not marker.exists()  # used once
    assert_converges(vault, db_path, tmp_path, run=started)
    started.signal(signal.SIGKILL)  # a crash: no record, and the next start checks
    started.proc.wait(timeout=30)
    assert not marker.exists()

    (vault / "added after the crash.md").write_text("# Added again\n")
    _index(vault, db_path)
    assert marker.exists()
    overwrite_pages(db_path, 20)  # damage after the index: the files changed
    damaged = daemons.start()
    assert not damaged.find("index check skipped")
    [moved] = set_aside_files(db_path)
    assert damaged.wait_for("corrupt index set aside")["moved_to"] == str(moved)
    assert_converges(vault, db_path, tmp_path, run=damaged)
    assert_sound_and_fresh(vault, db_path, tmp_path)
