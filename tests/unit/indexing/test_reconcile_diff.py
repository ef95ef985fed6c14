"""indexing/reconcile.py diff_against_index: the merge-join of the walk against the files rows, in path order, independent of the walk order (issue 6)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from notedex.indexing.reconcile import diff_against_index, reconcile
from notedex.store.writer import IndexWriter
from notedex.vault.model import VaultFile
from notedex.vault.walk import VaultStream
from tests.helpers import dump_index, fresh_full_index, write
from tests.indexcheck import age, fts_sound_after, make_vault
from tests.unit.vault.test_walk_stream import TRICKY

__all__ = ["fts_sound_after"]  # autouse: FTS integrity-check after every test


@pytest.fixture
def writer(tmp_path: Path) -> Iterator[IndexWriter]:
    vault = make_vault(tmp_path / "v", {name: "x\n" for name in TRICKY})
    with IndexWriter(tmp_path / "i.db", vault, workers=1) as w:
        yield w


def paths_of(files: list[VaultFile]) -> set[str]:
    return {vf.path for vf in files}


def test_diff_sees_additions_deletions_changes_and_case_only_renames(writer: IndexWriter) -> None:
    vault = writer.vault
    age(vault)
    reconcile(writer)
    diff = diff_against_index(writer, VaultStream(vault).files)
    assert (diff.upserts, diff.stale, diff.walked) == ([], {}, len(TRICKY))

    write(vault / "A b2.md", "new\n")  # between "A b.md" and "A/x.md"
    (vault / "A0.md").unlink()
    write(vault / "A" / "B" / "y.md", "changed, and longer\n")
    (vault / "Z.md").rename(vault / "z.md")  # case only
    diff = diff_against_index(writer, VaultStream(vault).files)
    assert paths_of(diff.upserts) == {"A b2.md", "A/B/y.md", "z.md"}
    assert set(diff.stale) == {"A0.md", "Z.md"}
    assert diff.walked == len(TRICKY)


def test_diff_does_not_depend_on_the_walk_order(writer: IndexWriter) -> None:
    vault = writer.vault
    age(vault)
    reconcile(writer)
    write(vault / "new.md", "new\n")
    (vault / "f.md").unlink()
    write(vault / "A.md", "changed content\n")
    files = list(VaultStream(vault).files)
    expected = diff_against_index(writer, files)
    for seed in range(5):
        shuffled = files[:]
        random.Random(seed).shuffle(shuffled)
        diff = diff_against_index(writer, shuffled)
        assert paths_of(diff.upserts) == paths_of(expected.upserts) == {"new.md", "A.md"}
        assert set(diff.stale) == set(expected.stale) == {"f.md"}


def test_reconcile_after_a_case_only_rename_re_resolves_links(tmp_path: Path) -> None:
    vault = make_vault(
        tmp_path / "v", {"Note.md": "x\n", "src.md": "[[Note]] [[note]] [[Gone]]\n", "Gone.md": ""}
    )
    db = tmp_path / "i.db"
    with IndexWriter(db, vault, workers=1) as writer:
        reconcile(writer)
        (vault / "Note.md").rename(vault / "note.md")
        (vault / "Gone.md").unlink()
        report = reconcile(writer)
        # Note.md -> note.md is a move, paired by its content hash (just indexed: racy).
        assert (report.added, report.changed, report.removed, report.moved) == (0, 0, 1, 1)
    assert dump_index(db) == fresh_full_index(vault, tmp_path)
