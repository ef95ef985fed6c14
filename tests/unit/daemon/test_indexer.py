"""daemon/indexer.py: the writer thread applies batches, re-reads files changed mid-read, waits for git, survives failures, keeps the index sound."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from notedex.daemon import indexer as indexer_module
from notedex.daemon.batcher import Batch, Batcher
from notedex.daemon.indexer import Indexer, find_git_dir
from notedex.store.writer import IndexWriter
from tests.helpers import dump_index, fresh_full_index, fts_integrity_ok, wait_until, write


@pytest.fixture
def indexer(vault: Path, db_path: Path) -> Iterator[Indexer]:
    write(vault / "a.md", "# A\n[[b]]\n")
    write(vault / "b.md", "# B\n")
    idx = Indexer(lambda: IndexWriter(db_path, vault, workers=1), Batcher(), git_wait_cap=5)
    idx.rescan("test")
    try:
        yield idx
    finally:
        idx.close()


def test_indexer_applies_hints_and_writes_last_batch(
    indexer: Indexer, vault: Path, db_path: Path, tmp_path: Path
) -> None:
    write(vault / "c.md", "# C [[a]]\n")
    (vault / "b.md").unlink()
    before = time.time()
    indexer.apply(["c.md", "b.md", "a.md"])
    row = indexer.writer.conn.execute("SELECT value FROM meta WHERE key = 'last_batch'").fetchone()
    assert float(row[0]) >= before
    assert dump_index(db_path) == fresh_full_index(vault, tmp_path)


def test_indexer_requeues_a_file_that_changed_while_it_was_read(
    indexer: Indexer, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_apply_paths = indexer_module.apply_paths

    def apply_then_write(writer: IndexWriter, hints: Any, **options: Any) -> Any:
        report = real_apply_paths(writer, hints, **options)
        (vault / "a.md").write_text(
            "# A, longer: written while we were reading\n", encoding="utf-8"
        )
        return report

    monkeypatch.setattr(indexer_module, "apply_paths", apply_then_write)
    (vault / "a.md").write_text("# A2\n", encoding="utf-8")
    queue = indexer._batcher
    indexer.apply(["a.md"])
    assert queue.take_now() == ["a.md"]


def test_paths_the_next_batch_looks_at_anyway_are_not_checked_again(
    indexer: Indexer, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder renamed back while its rename's batch ends: its files are under the folders'
    own hints, so they are not queued again one by one (issue 17)."""
    for i in range(5):
        write(vault / "f" / f"n{i}.md", f"# N{i}\n")
    indexer.apply(["f"])
    real_apply_paths = indexer_module.apply_paths
    stats: list[str] = []
    real_stat = os.stat

    def counting_stat(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        stats.append(os.fspath(path))
        return real_stat(path, *args, **kwargs)

    def apply_then_move_back(writer: IndexWriter, hints: Any, **options: Any) -> Any:
        report = real_apply_paths(writer, hints, **options)
        os.rename(vault / "g", vault / "f")
        indexer._batcher.add(["g", "f"])  # what the watcher hands on for the move back
        monkeypatch.setattr(indexer_module.os, "stat", counting_stat)
        return report

    monkeypatch.setattr(indexer_module, "apply_paths", apply_then_move_back)
    os.rename(vault / "f", vault / "g")
    report = indexer.apply(["f", "g"])
    assert report.moved == 5
    assert indexer._batcher.take_now() == ["g", "f"]
    assert not [p for p in stats if "/g/" in p or "/f/" in p]


def test_a_moved_file_changed_since_its_batch_is_queued_again(
    indexer: Indexer, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The re-check reads moved rows by their new paths only (issue 17): a swap's paths are
    both new paths, and a file changed right after the batch is queued again."""
    real_apply_paths = indexer_module.apply_paths

    def apply_then_write(writer: IndexWriter, hints: Any, **options: Any) -> Any:
        report = real_apply_paths(writer, hints, **options)
        write(vault / "a.md", "# A, written after the batch looked\n")  # no event yet
        return report

    os.rename(vault / "a.md", vault / "tmp.md")
    os.rename(vault / "b.md", vault / "a.md")
    os.rename(vault / "tmp.md", vault / "b.md")
    monkeypatch.setattr(indexer_module, "apply_paths", apply_then_write)
    report = indexer.apply(["a.md", "b.md"])
    assert report.moved == 2 and report.paths == ["a.md", "b.md"]
    assert indexer._batcher.take_now() == ["a.md"]


def test_a_path_gone_since_it_was_read_is_queued_again(
    indexer: Indexer, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_apply_paths = indexer_module.apply_paths

    def apply_then_delete(writer: IndexWriter, hints: Any, **options: Any) -> Any:
        report = real_apply_paths(writer, hints, **options)
        (vault / "c.md").unlink()  # its event is not in the batcher yet
        return report

    write(vault / "c.md", "# C\n")
    monkeypatch.setattr(indexer_module, "apply_paths", apply_then_delete)
    indexer.apply(["c.md"])
    assert indexer._batcher.take_now() == ["c.md"]


def test_indexer_waits_for_git(indexer: Indexer, vault: Path) -> None:
    git = vault / ".git"
    git.mkdir()
    (git / "index.lock").write_text("")
    indexer._git_lock = git / "index.lock"
    write(vault / "c.md", "# C\n")
    remover = threading.Timer(0.4, lambda: (git / "index.lock").unlink())  # git finishes
    started = time.monotonic()
    remover.start()
    try:
        indexer.apply(["c.md"])
    finally:
        remover.join()
    assert 0.3 <= time.monotonic() - started < 4
    assert "c.md" in indexer.writer.file_rows(["c.md"])


def test_indexer_gives_up_on_a_stale_git_lock(
    indexer: Indexer, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    git = vault / ".git"
    git.mkdir()
    (git / "index.lock").write_text("")
    indexer._git_lock = git / "index.lock"
    indexer._git_wait_cap = 0.3
    waits: list[float | None] = []
    real_wait = indexer._stop.wait

    def counting_wait(timeout: float | None = None) -> bool:
        waits.append(timeout)
        return real_wait(timeout)

    monkeypatch.setattr(indexer._stop, "wait", counting_wait)
    started = time.monotonic()
    indexer.apply([])
    assert time.monotonic() - started >= 0.3  # the cap is honoured
    assert waits, "the first apply waited for git"
    waits.clear()
    indexer.apply([])  # the same lock again: no second wait (counted, not timed)
    assert waits == []


def test_find_git_dir(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "vault").mkdir()
    assert find_git_dir(repo / "vault") == repo / ".git"
    worktree = tmp_path / "wt"
    worktree.mkdir()
    (worktree / ".git").write_text(f"gitdir: {repo / '.git' / 'worktrees' / 'wt'}\n")
    assert find_git_dir(worktree) == repo / ".git" / "worktrees" / "wt"


def test_indexer_survives_a_failed_batch(
    indexer: Indexer, vault: Path, db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(writer: IndexWriter, hints: Any) -> Any:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(indexer_module, "apply_paths", broken)
    first_writer = indexer.writer
    indexer.process(Batch(paths=["a.md"]))
    assert indexer._batcher.rescan_pending == ["recovering from a failed batch"]
    assert indexer.writer is not first_writer  # reopened: its in-memory view is reloaded
    monkeypatch.undo()
    write(vault / "d.md", "# D\n")
    indexer.process(Batch(rescan=["retry"]))
    assert dump_index(db_path) == fresh_full_index(vault, tmp_path)


def test_indexer_thread_drains_the_queue_on_close(
    vault: Path, db_path: Path, tmp_path: Path
) -> None:
    queue = Batcher(debounce=10, max_delay=10)  # nothing would be due for a long time...
    idx = Indexer(lambda: IndexWriter(db_path, vault, workers=1), queue)
    idx.rescan("startup")
    idx.start()
    write(vault / "late.md", "# Late\n")
    queue.add(["late.md"])
    queue.close()  # ...but stopping flushes at once
    idx.join(timeout=10)
    assert not idx.is_alive()
    idx.close()
    assert dump_index(db_path) == fresh_full_index(vault, tmp_path)


@pytest.mark.slow
def test_the_wal_is_checkpointed_when_idle_not_inside_a_batchs_commit(
    vault: Path, db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 17: a commit checkpoints only past ``BUSY_CHECKPOINT_PAGES``; the writer
    checkpoints once no batch has come for ``IDLE_CHECKPOINT``, once per quiet spell."""
    monkeypatch.setattr(indexer_module, "IDLE_CHECKPOINT", 0.05)
    queue = Batcher(debounce=0.01, max_delay=0.1)
    idx = Indexer(lambda: IndexWriter(db_path, vault, workers=1), queue)
    pages = idx.writer.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0]
    assert pages == indexer_module.BUSY_CHECKPOINT_PAGES
    checkpoints: list[float] = []
    real = IndexWriter.checkpoint_passive

    def counted(writer: IndexWriter) -> None:
        checkpoints.append(time.monotonic())
        real(writer)

    monkeypatch.setattr(IndexWriter, "checkpoint_passive", counted)
    idx.rescan("startup")
    idx.start()
    try:
        wait_until(lambda: len(checkpoints) == 1, timeout=10)  # what the start's rescan wrote
        time.sleep(0.3)  # idle with nothing new: no checkpoint again (a negative: no wait_until)
        assert len(checkpoints) == 1
        write(vault / "new.md", "# New\n")
        queue.add(["new.md"])
        wait_until(lambda: len(checkpoints) == 2, timeout=10)
        time.sleep(0.3)
        assert len(checkpoints) == 2
    finally:
        queue.close()
        idx.join(timeout=10)
        idx.close()
    assert dump_index(db_path) == fresh_full_index(vault, tmp_path)


def test_maintenance_keeps_a_sound_index(indexer: Indexer, db_path: Path) -> None:
    indexer.maintain()
    assert fts_integrity_ok(db_path)


def test_maintenance_repairs_a_corrupted_fts_index(tmp_path: Path) -> None:
    vault = tmp_path / "fts-vault"
    for i in (1, 2, 3):
        write(vault / f"n{i}.md", f"# N{i} [[N1]]\n")
    idx = Indexer(lambda: IndexWriter(tmp_path / "fts.db", vault, workers=1), Batcher())
    try:
        idx.rescan("test")
        # the FTS content and its index disagree (what integrity-check is there to catch):
        # a row changed behind the writer's back, so note_fts_text and title_grams read it
        idx.writer.conn.execute(
            "UPDATE notes SET stem = 'zzz corrupted' WHERE file_id = (SELECT min(file_id) FROM notes)"
        )
        assert not idx.writer.integrity_check()
        idx.maintain()
        assert idx.writer.integrity_check()
    finally:
        idx.close()
    assert fts_integrity_ok(tmp_path / "fts.db")


def test_writer_view_after_a_rolled_back_transaction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from notedex.indexing.reconcile import reconcile

    vault = tmp_path / "rb-vault"
    write(vault / "a.md", "# A\n")
    os.utime(vault / "a.md", (1_000_000_000, 1_000_000_000))  # not racy: only the etag is compared
    with IndexWriter(tmp_path / "rb.db", vault, workers=1) as writer:

        def fail(dirty: set[int]) -> None:
            raise RuntimeError("injected failure inside the transaction")

        monkeypatch.setattr(writer, "refresh_fts", fail)
        with pytest.raises(RuntimeError):
            reconcile(writer)
        monkeypatch.undo()
        reconcile(writer)
        assert writer.conn.execute("SELECT count(*) FROM files").fetchone()[0] == 1


@pytest.mark.slow
def test_a_path_unreadable_for_a_moment_is_looked_at_again(
    indexer: Indexer, vault: Path, db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 13.5: a folder unreadable for half a second (EACCES) sends no event when it is
    # readable again: the hint must not be dropped. Injected, so it bites as root too.
    write(vault / "F" / "new.md", "# New [[a]]\n")
    real_stat = os.stat
    locked = str(vault / "F")

    def denied(path: Any, *args: Any, **kwargs: Any) -> Any:
        if os.fspath(path).startswith(locked):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", denied)
    report = indexer.apply(["F/new.md"])
    assert report.unreadable == ["F/new.md"]
    monkeypatch.setattr(os, "stat", real_stat)  # readable again
    batch = indexer._batcher.take()
    assert batch is not None and batch.rescan  # the retry, due half a second later
    indexer.process(batch)
    assert dump_index(db_path) == fresh_full_index(vault, tmp_path)
    # Readable everywhere: the series of retries ends.
    assert indexer._unreadable_retries == 0


@pytest.mark.slow
def test_work_that_meets_no_vault_is_retried_not_dropped(
    indexer: Indexer, vault: Path, tmp_path: Path, db_path: Path
) -> None:
    write(vault / "a.md", "# A edited\n")
    away = tmp_path / "away"
    os.rename(vault, away)
    try:
        indexer.apply(["a.md"])
        assert indexer._batcher.rescan_pending == ["the vault was missing"]
        indexer.process(Batch(rescan=["the vault was missing"]))  # still away: again, later
        assert indexer._batcher.rescan_pending == ["the vault was missing"]
    finally:
        os.rename(away, vault)
    indexer.process(Batch(rescan=["the vault was missing"]))
    assert dump_index(db_path) == fresh_full_index(vault, tmp_path)
    assert indexer._vault_retries == 0


@pytest.mark.slow
def test_a_note_that_could_not_be_read_is_read_again(
    indexer: Indexer, vault: Path, db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # With --poll a chmod back sends no event: the read error must not stay until a touch.
    write(vault / "blip.md", "# Blip [[a]]\n")
    real_open = os.open
    locked = str(vault / "blip.md")

    def denied(path: Any, *args: Any, **kwargs: Any) -> Any:
        if os.fspath(path) == locked:
            raise PermissionError(13, "Permission denied", locked)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", denied)
    indexer.apply(["blip.md"])
    assert indexer.writer.unreadable_paths() == {"blip.md"}
    monkeypatch.setattr(os, "open", real_open)
    batch = indexer._batcher.take()
    assert batch is not None and batch.rescan
    indexer.process(batch)
    assert dump_index(db_path) == fresh_full_index(vault, tmp_path)
    assert indexer._unreadable_retries == 0


def test_a_rescan_re_adds_every_missing_watch_and_the_index_counts_the_unwatched(
    vault: Path, db_path: Path
) -> None:
    # Issue 31.1: SIGHUP, the hourly reconcile and the retries re-add the watches that are
    # missing (known or not) before their walk; meta unwatched_folders is what status shows.
    import json

    from notedex.daemon.service import Supervisor
    from tests.indexcheck import age

    write(vault / "F" / "sub" / "a.md", "# A\n#alpha\n")
    age(vault)  # settled: only the content can tell the edit below
    queue = Batcher()
    supervisor = Supervisor(vault, queue)
    assert supervisor.start()
    idx = Indexer(lambda: IndexWriter(db_path, vault, workers=1), queue, watches=supervisor)
    try:
        running = supervisor.running
        assert running is not None and running.kind == "inotify"
        (group,) = running._groups()
        sub = os.fsencode(vault / "F" / "sub")
        idx.rescan("startup", rewatch=False)
        with group._lock:  # the watch is gone without a trace
            group._remove_callbacks([group._find_node_by_path(sub).wd])
        note = vault / "F" / "sub" / "a.md"
        before = note.stat()
        note.write_text("# B\n#omega\n")  # unheard, same size, the mtime put back
        os.utime(note, ns=(before.st_atime_ns, before.st_mtime_ns))
        assert not group._watched(sub)
        idx.rescan("periodic reconcile", rewatch=False)
        heading = "SELECT first_h1 FROM notes"
        # The change time moved (issue 31.7): the rescan's walk sees the edit, watch or not.
        assert [r[0] for r in idx.writer.conn.execute(heading)] == ["B"]
        assert not group._watched(sub)  # a rescan told not to rewatch leaves the watch missing
        idx.rescan("SIGHUP")
        assert group._watched(sub)
        assert [r[0] for r in idx.writer.conn.execute(heading)] == ["B"]
        meta = idx.writer.conn.execute(
            "SELECT value FROM meta WHERE key = 'unwatched_folders'"
        ).fetchone()
        assert json.loads(meta[0]) == {"count": 0, "sample": []}
    finally:
        idx.close()
        supervisor.stop()
