"""A deferred start (issue 35): the vault folder alone is watched at the start, and each folder
under it when the start-up reconcile's walk reaches it, before the walk lists it. The tree is
listed once; nothing made or edited meanwhile is missed."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from notedex.daemon import watcher
from notedex.daemon.batcher import Batcher
from notedex.daemon.service import Supervisor
from notedex.indexing.reconcile import reconcile
from notedex.store.writer import IndexWriter
from notedex.vault.walk import FolderHook
from tests.helpers import wait_until, write

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux")


def _tree(vault: Path, outside: Path) -> None:
    for rel in ("a/one.md", "a/deep/two.md", "b/three.md", "c/four.md", ".obsidian/app.json"):
        write(vault / rel, "x\n")
    write(vault / ".trash" / "old" / "gone.md", "x\n")  # a hidden tree: watched, not walked
    write(outside / "linked.md", "x\n")
    os.symlink(outside, vault / "link")  # a symlinked folder: walked, not watched (as watchdog)


def _watches() -> int:
    count = watcher.count_inotify_watches()
    assert count is not None
    return count


@contextmanager
def _started(vault: Path, outside: Path) -> Iterator[tuple[Batcher, Supervisor, int]]:
    """The tree above, and a supervisor started deferred on it: its queue, itself, and the
    process's inotify watches before it started."""
    _tree(vault, outside)
    queue = Batcher()
    supervisor = Supervisor(vault, queue)
    before = watcher.count_inotify_watches() or 0  # None: no inotify instance open yet
    assert supervisor.start(deferred=True)
    try:
        yield queue, supervisor, before
    finally:
        supervisor.stop()


def _hook(supervisor: Supervisor) -> FolderHook:
    hook = supervisor.folder_hook()
    assert hook is not None
    return hook


def test_a_deferred_start_watches_every_folder_as_the_walk_reaches_it(
    vault: Path, db_path: Path, tmp_path: Path
) -> None:
    with _started(vault, tmp_path / "outside") as (queue, supervisor, before):
        assert _watches() - before == 1  # the vault folder alone
        with IndexWriter(db_path, vault, workers=1, follow_symlinks=True) as writer:
            report = reconcile(writer, on_folder=_hook(supervisor))
        assert report.added == 5  # four notes and the linked one
        # Every folder a full start watches: hidden ones too, symlinked ones not.
        assert _watches() - before == watcher.count_folders(vault) == 8
        write(vault / "a" / "deep" / "after.md", "x\n")
        wait_until(lambda: "a/deep/after.md" in queue.pending_paths(), message="heard")


def test_what_changes_while_the_deferred_watches_are_added_is_indexed_or_heard(
    vault: Path, db_path: Path, tmp_path: Path
) -> None:
    # A folder is watched before it is listed: a note made in a folder the walk has passed is
    # heard, one made in a folder not reached yet is found by the walk; none is missed.
    with _started(vault, tmp_path / "outside") as (queue, supervisor, _before):
        hook = _hook(supervisor)

        def meanwhile(rel: str, recursive: bool) -> None:
            if rel == "b":
                write(vault / "a" / "late.md", "made after a was walked\n")
                write(vault / "b" / "early.md", "made before b was watched\n")
                write(vault / "c" / "four.md", "edited before c was watched\n")
            hook(rel, recursive)

        with IndexWriter(db_path, vault, workers=1) as writer:
            reconcile(writer, on_folder=meanwhile)
            rows = writer.file_rows(["a/late.md", "b/early.md", "c/four.md"])
        assert "b/early.md" in rows and "a/late.md" not in rows
        assert rows["c/four.md"].size == len("edited before c was watched\n")
        wait_until(lambda: "a/late.md" in queue.pending_paths(), message="a/late.md heard")


def test_a_deferred_start_whose_walk_did_not_finish_watches_the_rest(vault: Path) -> None:
    with _started(vault, vault.parent / "outside") as (queue, supervisor, before):
        supervisor.watch_the_rest()
        assert _watches() - before == watcher.count_folders(vault)
        # Nothing made there before was heard: the folders and their files are looked at.
        assert {"a", "b", "c", "a/one.md", "a/deep/two.md", "c/four.md"} <= queue.pending_paths()
