"""store/connect.py: the read side opens the index read-only, with a busy timeout."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from notedex.store.connect import BUSY_TIMEOUT_MS, connect_readonly
from tests.indexcheck import fts_sound_after, make_vault
from tests.unit.store import build

__all__ = ["fts_sound_after"]  # autouse: FTS integrity-check after every test


def test_reader_is_read_only_with_busy_timeout(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", {"a.md": ""})
    db = tmp_path / "i.db"
    build(vault, db)
    conn = connect_readonly(db)
    try:
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == BUSY_TIMEOUT_MS
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            conn.execute("DELETE FROM notes")
    finally:
        conn.close()


def test_a_deleted_lock_file_is_noticed_and_locked_again(tmp_path: Path) -> None:
    from notedex.store.connect import WriterLock, lock_holder

    path = tmp_path / "i.db.lock"
    held = WriterLock(path)
    assert held.acquire("daemon")
    try:
        assert held.still_held()
        path.unlink()
        assert not held.still_held()
        # Without renewing, a second writer could take a new lock file at the path.
        assert held.renew("daemon") and held.still_held()
        other = WriterLock(path)
        assert not other.acquire("daemon")
        holder = lock_holder(path)
        assert holder is not None and holder.role == "daemon"
    finally:
        held.release()


def test_renew_fails_when_another_process_locked_the_new_file(tmp_path: Path) -> None:
    from notedex.store.connect import WriterLock

    path = tmp_path / "i.db.lock"
    first = WriterLock(path)
    assert first.acquire("daemon")
    path.unlink()
    second = WriterLock(path)
    assert second.acquire("daemon")  # the file at the path is a new one
    try:
        assert not first.still_held()
        assert not first.renew("daemon")
    finally:
        second.release()
        first.release()
