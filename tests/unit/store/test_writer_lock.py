"""The writer lock (store.writer_lock): one holder, its record, and the lock file refused when it is
anything but a regular file of this user."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def test_a_deleted_lock_file_is_noticed_and_locked_again(tmp_path: Path) -> None:
    from notedex.store.connect import lock_holder
    from notedex.store.writer_lock import WriterLock

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
    from notedex.store.writer_lock import WriterLock

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


def test_a_symlinked_lock_file_is_refused_and_its_target_kept(tmp_path: Path) -> None:
    """Issue 31: the lock file is opened with O_NOFOLLOW; a symlink there is refused before
    anything is written, so its target (here a file the user cares about) is never truncated."""
    from notedex.error_kinds import IndexUnavailable
    from notedex.store.connect import lock_holder
    from notedex.store.writer_lock import WriterLock

    precious = tmp_path / "precious.txt"
    precious.write_text("daemon 1 2.0\nkeep me\n", encoding="utf-8")
    path = tmp_path / "i.db.lock"
    path.symlink_to(precious)
    with pytest.raises(IndexUnavailable, match=r"refusing the lock file .*: it is a symlink"):
        WriterLock(path).acquire("index")
    assert precious.read_text(encoding="utf-8") == "daemon 1 2.0\nkeep me\n"
    assert lock_holder(path) is None  # never read through the link either


@pytest.mark.parametrize("kind", ["folder", "fifo"])
def test_a_lock_file_that_is_not_a_regular_file_is_refused(tmp_path: Path, kind: str) -> None:

    from notedex.error_kinds import IndexUnavailable
    from notedex.store.connect import lock_holder
    from notedex.store.writer_lock import WriterLock

    path = tmp_path / "i.db.lock"
    if kind == "folder":
        path.mkdir()
    else:
        os.mkfifo(path)
    with pytest.raises(IndexUnavailable, match=r"is not a regular file|Is a directory"):
        WriterLock(path).acquire("index")
    assert lock_holder(path) is None  # and the probe does not block on the FIFO


def test_a_lock_file_of_another_user_is_refused(tmp_path: Path) -> None:
    """As root (CI): a lock file of ``nobody`` is refused, not written through. As another user
    nobody's file cannot be made here, so the case needs root."""

    from notedex.error_kinds import IndexUnavailable
    from notedex.store.writer_lock import WriterLock
    from tests.privileges import NOBODY

    if os.geteuid() != 0:
        pytest.skip("making a file of another user needs root (CI runs as root)")
    path = tmp_path / "i.db.lock"
    path.write_text("", encoding="utf-8")
    os.chown(path, NOBODY, NOBODY)
    with pytest.raises(IndexUnavailable, match=f"belongs to user id {NOBODY}, not to you"):
        WriterLock(path).acquire("index")
    os.chown(path, 0, 0)
    lock = WriterLock(path)
    assert lock.acquire("index")
    lock.release()


def test_a_hard_linked_lock_file_is_refused_and_the_other_name_kept(tmp_path: Path) -> None:
    from notedex.error_kinds import IndexUnavailable
    from notedex.store.writer_lock import WriterLock

    precious = tmp_path / "precious.txt"
    precious.write_text("keep me\n", encoding="utf-8")
    path = tmp_path / "i.db.lock"
    path.hardlink_to(precious)
    with pytest.raises(IndexUnavailable, match="has 1 other hard link"):
        WriterLock(path).acquire("index")
    assert precious.read_text(encoding="utf-8") == "keep me\n"


def test_the_lock_record_says_what_the_holder_does(tmp_path: Path) -> None:
    """The daemon's state in its record (issue 31.9): readers see "rebuilding" while it is
    set, and the plain three-field record once it is cleared."""
    from notedex.store.connect import REBUILDING, lock_holder
    from notedex.store.writer_lock import WriterLock

    path = tmp_path / "index.db.lock"
    lock = WriterLock(path)
    assert lock.acquire("daemon")
    try:
        since = lock_holder(path)
        assert since is not None and since.state == ""
        lock.set_state(REBUILDING)
        holder = lock_holder(path)
        assert holder is not None and (holder.role, holder.state) == ("daemon", REBUILDING)
        assert holder.since == since.since  # the same holder, only its state changed
        lock.set_state("")
        assert len(path.read_text(encoding="utf-8").split()) == 3
    finally:
        lock.release()
