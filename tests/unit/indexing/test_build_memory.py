"""Issue 35, the cold build's memory: what a build holds when its findings start (where its
memory peaks) does not include the notes of its last batch."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from notedex.indexing.reconcile import reconcile
from notedex.store.writer import IndexWriter
from notedex.vault.model import Note
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
