"""What readers are told while the index is repaired (issue 31.9, ARCHITECTURE "Repair
messages"): while a daemon rebuilds the index in place, exit 75 and "the daemon is rebuilding the
index; try again in a moment", never "run `notedex index`", which would compete with it; and the
cause of an index without tables is named from the disk (a truncated file is not a deleted -wal).
Through the real daemon and the CLI as a subprocess.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from notedex.store.connect import lock_holder
from notedex.store.writer_lock import WriterLock
from tests.helpers import Result, run_cli, wait_until
from tests.system.daemons import Daemons

REBUILDING = "the daemon is rebuilding the index; try again in a moment"


def _lookup(vault: Path, db: Path) -> Result:
    return run_cli("lookup", "the", "--vault", vault, "--db", db, "--no-refresh", "--json")


def _total(result: Result) -> int:
    assert result.code == 0, result.stderr
    return int(result.json()["total"])


def _read_until_answered(vault: Path, db: Path, whole: int) -> list[Result]:
    """Readers one after another until one answers (exit 0): what each was told. The answer
    is the whole index's (``whole`` candidates), never a half-built one's."""
    seen: list[Result] = []

    def answered() -> bool:
        seen.append(_lookup(vault, db))
        return seen[-1].code == 0

    wait_until(answered, timeout=120, interval=0.05, message="a reader to get an answer")
    assert _total(seen[-1]) == whole, "a reader was answered from a half-built index"
    return seen


def _assert_told_to_wait(seen: list[Result]) -> None:
    waits = [r for r in seen if r.code != 0]
    assert waits, "no reader came while the daemon rebuilt"
    for result in waits:
        assert result.code == 75, result.stderr
        assert REBUILDING in result.stderr, result.stderr
        assert "notedex index" not in result.stderr, result.stderr


@pytest.mark.slow  # builds the 3,000-note vault two or three times: 3-5 s of CPU
def test_readers_wait_while_the_daemon_rebuilds_a_removed_state_folder(
    big_vault: Path, tmp_path: Path
) -> None:
    db = tmp_path / "state" / "index.db"
    daemons = Daemons(big_vault, db, tmp_path)
    try:
        run = daemons.start()
        whole = _total(_lookup(big_vault, db))
        shutil.rmtree(db.parent)
        # Within a second the daemon locks a new lock file (a reader before that finds
        # neither index nor daemon: the one window left, ARCHITECTURE "Repair messages").
        run.wait_for("lock file deleted or replaced", timeout=60)
        seen = _read_until_answered(big_vault, db, whole)
        _assert_told_to_wait(seen)
        assert run.find("index files replaced")
        assert run.stop() == 0
    finally:
        daemons.kill_all()


@pytest.mark.slow  # builds the 3,000-note vault two or three times: 3-5 s of CPU
def test_readers_wait_while_the_daemon_rebuilds_a_damaged_index(
    big_vault: Path, tmp_path: Path
) -> None:
    db = tmp_path / "state" / "index.db"
    assert run_cli("index", "--vault", big_vault, "--db", db).code == 0
    whole = _total(_lookup(big_vault, db))
    with open(db, "r+b") as f:  # damaged pages past the schema: the start-up check finds them
        f.seek(4096 * 8)
        f.write(b"\xa5" * 4096 * 64)
    daemons = Daemons(big_vault, db, tmp_path)
    try:
        run = daemons.start(ready=False)
        run.wait_for("corrupt index set aside", timeout=60)
        seen = _read_until_answered(big_vault, db, whole)
        _assert_told_to_wait(seen)
        assert run.stop() == 0
    finally:
        daemons.kill_all()


def test_a_truncated_index_is_not_blamed_on_a_deleted_wal(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "a.md").write_text("# A\n", encoding="utf-8")
    db = tmp_path / "state" / "index.db"
    assert run_cli("index", "--vault", vault, "--db", db).code == 0
    for side in ("-wal", "-shm"):
        Path(f"{db}{side}").unlink(missing_ok=True)
    db.write_bytes(b"")  # truncated to nothing (a sync tool, a full disk, an operator)

    result = _lookup(vault, db)

    assert result.code == 2, result.stderr
    assert "the file is empty" in result.stderr, result.stderr
    assert "-wal" not in result.stderr, result.stderr


def test_the_daemon_waits_out_a_writer_that_took_a_new_lock_file(
    vault: Path, db_path: Path, tmp_path: Path
) -> None:
    """The lock file deleted and a new one taken by an `index` before the daemon's next check
    (each second): the daemon used to exit 75 ("another process took the writer lock"), leaving
    the vault unwatched. It takes the lock back when that writer ends; only a daemon makes it
    stop."""
    (vault / "a.md").write_text("# A\n", encoding="utf-8")
    daemons = Daemons(vault, db_path, tmp_path)
    try:
        run = daemons.start()
        lock_path = Path(f"{db_path}.lock")
        lock_path.unlink()
        other = WriterLock(lock_path)
        assert other.acquire("index")
        try:
            run.wait_for("another writer holds the lock for now", timeout=30)
        finally:
            other.release()
        run.wait_for("lock file deleted or replaced", timeout=30)
        holder = lock_holder(lock_path)
        assert holder is not None and (holder.role, holder.pid) == ("daemon", run.pid)
        assert run.proc.poll() is None
        assert run.stop() == 0
    finally:
        daemons.kill_all()
