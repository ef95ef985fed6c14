"""Reconcile and apply_paths apply the vault-wide walk rules (SEMANTICS 1.5, 1.6): a path that
still ``lstat``s but is no longer a vault file loses its row (issue 13, cases 2-4).

Each case ends with the index equal to a fresh full index of the vault.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from notedex.indexing.reconcile import apply_paths, reconcile
from notedex.store.writer import IndexWriter
from tests.helpers import dump_index, fresh_full_index, write
from tests.indexcheck import fts_sound_after, make_vault

__all__ = ["fts_sound_after"]

Refresh = Callable[[IndexWriter, list[str]], None]


def _by_reconcile(writer: IndexWriter, hints: list[str]) -> None:
    reconcile(writer)  # what `notedex index` and the daemon's startup do


def _by_hints(writer: IndexWriter, hints: list[str]) -> None:
    apply_paths(writer, hints)  # what the daemon does with the events


REFRESHES = [pytest.param(_by_reconcile, id="reconcile"), pytest.param(_by_hints, id="hints")]


def _indexed(tmp_path: Path, files: dict[str, str]) -> tuple[Path, Path]:
    vault = make_vault(tmp_path / "v", files)
    db = tmp_path / "i.db"
    with IndexWriter(db, vault, workers=1) as writer:
        reconcile(writer, full=True)
    return vault, db


def _refresh(db: Path, vault: Path, refresh: Refresh, hints: list[str]) -> None:
    with IndexWriter(db, vault, workers=1) as writer:
        refresh(writer, hints)


def _assert_fresh(db: Path, vault: Path, tmp_path: Path) -> None:
    assert dump_index(db) == fresh_full_index(vault, tmp_path / "fresh")


ALPHA = {
    "10_Projects/alpha/a0.md": "# A0\n[[a1]]\n",
    "10_Projects/alpha/a1.md": "# A1\n",
    "20_Areas/area.md": "# Area\n[[a0]]\n",
}


@pytest.mark.slow
@pytest.mark.parametrize("refresh", REFRESHES)
def test_a_copy_replaced_by_a_symlink_to_the_original_leaves_no_phantoms(
    tmp_path: Path, refresh: Refresh
) -> None:
    # An index made before the link: `alpha-link/` was a real copy, now it links to the original.
    files = {**ALPHA, "alpha-link/a0.md": "# A0\n[[a1]]\n", "alpha-link/a1.md": "# A1\n"}
    vault, db = _indexed(tmp_path, files)
    shutil.rmtree(vault / "alpha-link")
    (vault / "alpha-link").symlink_to("10_Projects/alpha", target_is_directory=True)
    _refresh(db, vault, refresh, ["alpha-link"])
    _assert_fresh(db, vault, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("refresh", REFRESHES)
def test_a_loop_below_a_hinted_folder_is_walked_with_the_vault_wide_rules(
    tmp_path: Path, refresh: Refresh
) -> None:
    vault, db = _indexed(tmp_path, ALPHA)
    (vault / "20_Areas" / "loop").symlink_to("..", target_is_directory=True)
    _refresh(db, vault, refresh, ["20_Areas"])
    _assert_fresh(db, vault, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("refresh", REFRESHES)
@pytest.mark.parametrize("becomes", ["fifo", "folder", "dangling symlink"])
def test_a_note_that_becomes_something_else_is_no_longer_a_note(
    tmp_path: Path, refresh: Refresh, becomes: str
) -> None:
    vault, db = _indexed(tmp_path, {**ALPHA, "X.md": "# X\n"})
    (vault / "X.md").unlink()
    if becomes == "fifo":
        os.mkfifo(vault / "X.md")
    elif becomes == "folder":
        write(vault / "X.md" / "inside.md", "# Inside\n")
    else:
        (vault / "X.md").symlink_to("nowhere.md")
    _refresh(db, vault, refresh, ["X.md"])
    _assert_fresh(db, vault, tmp_path)


@pytest.mark.parametrize("refresh", REFRESHES)
@pytest.mark.parametrize("hints", [["F"], ["F/a.md", "F/sub/b.md"]])
def test_a_folder_replaced_by_a_file_of_the_same_name_leaves_no_phantoms(
    tmp_path: Path, refresh: Refresh, hints: list[str]
) -> None:
    vault, db = _indexed(tmp_path, {**ALPHA, "F/a.md": "# A\n", "F/sub/b.md": "# B\n"})
    shutil.rmtree(vault / "F")
    write(vault / "F", "a file now\n")
    _refresh(db, vault, refresh, hints)
    if "F" in hints or refresh is _by_reconcile:
        _assert_fresh(db, vault, tmp_path)
    else:  # the hints for what was under F alone: ENOTDIR is "gone", not "unreadable for now"
        assert [row[0] for row in dump_index(db)["files"]] == sorted(ALPHA)
