"""indexing/hints.py: the other names of a file an event named, and the hints only the vault walk can settle (issue 13.9)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from notedex.indexing.hints import needs_vault_walk, other_names
from notedex.indexing.reconcile import reconcile
from notedex.store.writer import IndexWriter
from tests.helpers import write


@pytest.fixture
def writer(vault: Path, db_path: Path) -> Iterator[IndexWriter]:
    write(vault / "a.md", "# A\n")
    os.link(vault / "a.md", vault / "hard.md")
    (vault / "sub").mkdir()
    (vault / "sub" / "soft.md").symlink_to("../a.md")
    write(vault / "b.md", "# B\n")
    (vault / "dangling.md").symlink_to("later.md")
    (vault / "F").mkdir()
    (vault / "F" / "loop").symlink_to("..", target_is_directory=True)
    w = IndexWriter(db_path, vault, workers=1)
    reconcile(w)
    try:
        yield w
    finally:
        w.close()


def test_other_names_are_the_hard_links_and_symlinks_of_a_file(writer: IndexWriter) -> None:
    assert other_names(writer, ["a.md"]) == ["a.md", "hard.md", "sub/soft.md"]
    assert sorted(other_names(writer, ["sub/soft.md"])) == ["a.md", "hard.md", "sub/soft.md"]
    assert other_names(writer, ["b.md", "new.md"]) == ["b.md", "new.md"]


def test_ordinary_hints_need_no_vault_walk(writer: IndexWriter, vault: Path) -> None:
    write(vault / "été.md", "# Été\n")
    assert needs_vault_walk(writer, ["b.md", "new.md", "sub", "été.md"]) is None


def test_walk_problems_and_bad_names_need_the_vault_walk(writer: IndexWriter, vault: Path) -> None:
    assert needs_vault_walk(writer, ["caf\udce9.md"]) == "a file name that is not valid UTF-8"
    assert needs_vault_walk(writer, ["F/loop"]) == "a path with a walk problem changed"
    assert needs_vault_walk(writer, ["F"]) == "a path with a walk problem changed"
    assert needs_vault_walk(writer, ["dangling.md"]) == "a path with a walk problem changed"
    write(vault / "later.md", "# Later\n")
    assert needs_vault_walk(writer, ["later.md"]) == "a dangling symlink's target appeared"
    write(vault / "caf\u00e9.md", "# NFC\n")
    write(vault / "cafe\u0301.md", "# NFD\n")
    assert needs_vault_walk(writer, ["cafe\u0301.md"]) == "two names with one NFC form"
