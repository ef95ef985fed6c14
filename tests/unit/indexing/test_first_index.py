"""Issue 35: a first ``--full`` index streams its walk through a temp table
(``store.walked``) instead of holding every file; its index is the one the apply of every
walked file made, row ids included."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from notedex.indexing.reconcile import reconcile
from notedex.store.writer import IndexWriter
from tests.helpers import DEMO_VAULT, REPO, dump_index, nfd, write


def _vault(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    shutil.copytree(DEMO_VAULT, vault)
    shutil.copytree(REPO / "examples" / "bases" / "vault", vault / "bases")
    for i in range(450):  # past the parse pool's threshold
        write(
            vault / "gen" / f"g{i:03}.md",
            f"# G {i}\n\n[[g{(i + 7) % 500:03}]] [[Missing {i % 5}]]\n",
        )
    write(vault / "outside" / "Linked.md", "# Linked\n\n[[Welcome]]\n")
    os.symlink(vault / "outside", vault / "a-link")  # walked after the real tree
    write(vault / nfd("Café.md"), "# Café\n")
    write(vault / "img" / "pic.png", "png")
    return vault


def _ids(db: Path) -> list[tuple[int, str, int]]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT id, path, is_note FROM files ORDER BY id").fetchall()


@pytest.mark.parametrize("workers", [1, 2])
def test_a_streamed_first_index_is_the_apply_of_every_file(tmp_path: Path, workers: int) -> None:
    vault = _vault(tmp_path)
    old, new = tmp_path / "old.db", tmp_path / "new.db"
    with IndexWriter(old, vault, workers=1) as writer:
        applied = reconcile(writer)  # a first index that is not --full: every file applied
    with IndexWriter(new, vault, workers=workers) as writer, writer.building():
        streamed = reconcile(writer, full=True)
    assert (streamed.added, streamed.changed, streamed.unchanged) == (applied.added, 0, 0)
    assert streamed.unreadable == applied.unreadable
    assert _ids(new) == _ids(old)
    assert dump_index(new) == dump_index(old)
