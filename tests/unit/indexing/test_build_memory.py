"""Issue 35, the cold build's memory: what a build holds when its findings start (where its
memory peaks) does not include the notes of its last batch."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from notedex.indexing.apply import BATCH_SIZE
from notedex.indexing.reconcile import reconcile
from notedex.store.writer import IndexWriter
from notedex.vault.model import Note, VaultFile
from tests.helpers import write


def test_no_parsed_note_is_held_through_the_findings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = tmp_path / "vault"
    for i in range(1200):  # two batches of a private apply (BATCH_SIZE 1,000)
        write(
            vault / f"n{i:04}.md", f"# Note {i}\n\nlinks to [[n{(i + 1) % 1200:04}]] #tag{i % 7}\n"
        )
    alive: list[int] = []
    flush = IndexWriter.flush_pending_fts

    def counting(self: IndexWriter, *args: object, **kwargs: object) -> None:
        gc.collect()
        alive.append(sum(1 for o in gc.get_objects() if type(o) is Note))
        flush(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(IndexWriter, "flush_pending_fts", counting)
    with IndexWriter(tmp_path / "index.db", vault, workers=1) as writer, writer.building():
        report = reconcile(writer, full=True)
    assert report.notes_with_errors == 0
    assert alive == [0]


def test_a_first_index_holds_no_file_of_the_whole_vault(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The walk's ``VaultFile`` of every file was held for the whole build (about 560 MB at
    1M files): now the walk waits in a temp table, and a batch holds its own files only."""
    vault = tmp_path / "vault"
    notes = 4000
    for i in range(notes):
        write(vault / f"d{i % 9}" / f"n{i:04}.md", f"# Note {i}\n\n[[n{(i + 1) % notes:04}]]\n")
    for i in range(300):
        write(vault / "files" / f"a{i:03}.txt", "attachment\n")
    during: list[int] = []
    at_findings: list[int] = []

    def files_alive() -> int:
        gc.collect()
        return sum(1 for o in gc.get_objects() if type(o) is VaultFile)

    write_notes, flush = IndexWriter.write_notes, IndexWriter.flush_pending_fts

    def counting_batches(self: IndexWriter, *args: object) -> set[int]:
        during.append(files_alive())
        return write_notes(self, *args)  # type: ignore[arg-type]

    def counting_findings(self: IndexWriter, *args: object) -> None:
        at_findings.append(files_alive())
        flush(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(IndexWriter, "write_notes", counting_batches)
    monkeypatch.setattr(IndexWriter, "flush_pending_fts", counting_findings)
    with IndexWriter(tmp_path / "index.db", vault, workers=1) as writer, writer.building():
        report = reconcile(writer, full=True)
    assert report.added == notes + 300
    assert len(during) == notes // BATCH_SIZE
    # A batch's files, the page read ahead and those handed to the parser: a few batches'
    # worth whatever the vault's size (every file of the vault before).
    assert max(during) <= 3 * BATCH_SIZE
    assert at_findings == [0]
