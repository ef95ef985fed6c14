"""Bulk mode (large applies): same index as a normal apply, settings restored afterwards;
a visible apply's chunks are each consistent, and a stop between them loses nothing."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from notedex.indexing import apply as apply_module
from notedex.indexing.reconcile import reconcile
from notedex.store.maintenance import FTS_AUTOMERGE
from notedex.store.writer import IndexWriter
from notedex.vault.walk import walk_vault
from tests.helpers import dump_index, fresh_full_index, fts_integrity_ok
from tests.indexcheck import linked_subset, make_vault


def linked_vault(root: Path, notes: int) -> Path:
    """``notes`` notes in seven folders, linking each other and some missing notes, plus a png."""
    files: dict[str, str | bytes] = {
        f"f{i % 7}/Note {i}.md": f"---\ntags: [t{i % 5}]\n---\n# Note {i}\n"
        f"links [[Note {(i * 3) % notes}]] [[Missing {i % 4}]] 框架{i}\n"
        for i in range(notes)
    }
    files["img/pic.png"] = "png"
    return make_vault(root, files)


def automerge(db: Path) -> list[int]:
    conn = sqlite3.connect(db)
    try:
        return [
            row[0]
            for table in ("note_fts", "body_fts")
            for row in conn.execute(f"SELECT v FROM {table}_config WHERE k = 'automerge'")
        ]
    finally:
        conn.close()


@pytest.mark.parametrize("private", [False, True], ids=["visible", "private"])
def test_bulk_apply_equals_a_normal_apply(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, private: bool
) -> None:
    """Both ways of a large apply: chunks readers see, and a private build (deferred rows)."""
    vault = tmp_path / "vault"
    linked_vault(vault, 600)
    normal_db, bulk_db = tmp_path / "normal.db", tmp_path / "bulk.db"
    with IndexWriter(normal_db, vault, workers=1) as writer:
        reconcile(writer)
    # Force bulk mode with small batches and the worker pool, so every branch runs.
    monkeypatch.setattr(apply_module, "BULK_NOTES", 100)
    monkeypatch.setattr(apply_module, "BULK_BATCH_SIZE", 128)
    monkeypatch.setattr(apply_module, "BATCH_SIZE", 128)
    with IndexWriter(bulk_db, vault, workers=2) as writer:
        writer.private = private
        writer.refresh_filters()
        # apply itself: reconcile would take a first index the private way either way.
        report = apply_module.apply(writer, walk_vault(vault).files, [])
        assert writer.conn.execute("PRAGMA cache_size").fetchone()[0] == -2000
        assert writer.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 1000
    assert report.added == 601
    assert dump_index(bulk_db) == dump_index(normal_db)
    assert automerge(bulk_db) == [FTS_AUTOMERGE, FTS_AUTOMERGE]
    assert fts_integrity_ok(bulk_db)


def test_a_writer_undoes_the_settings_of_a_killed_bulk_load(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    linked_vault(vault, 20)
    db = tmp_path / "index.db"
    with IndexWriter(db, vault, workers=1) as writer:
        reconcile(writer)
        writer._set_automerge(0)  # what a bulk load leaves behind when it is killed
    assert automerge(db) == [0, 0]
    IndexWriter(db, vault, workers=1).close()
    assert automerge(db) == [FTS_AUTOMERGE, FTS_AUTOMERGE]
    assert fts_integrity_ok(db)


def test_a_new_index_gives_free_pages_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A new file is created with auto_vacuum = INCREMENTAL; the pages that the final FTS merge
    of a bulk load frees (and those a later optimize frees) leave the file."""
    vault = tmp_path / "vault"
    linked_vault(vault, 400)
    monkeypatch.setattr(apply_module, "BULK_NOTES", 100)
    monkeypatch.setattr(apply_module, "BULK_BATCH_SIZE", 64)
    db = tmp_path / "index.db"
    with IndexWriter(db, vault, workers=1) as writer:
        reconcile(writer)
        assert writer.conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 2
        assert writer.conn.execute("PRAGMA freelist_count").fetchone()[0] == 0
        for i in range(0, 400, 3):
            (vault / f"f{i % 7}" / f"Note {i}.md").unlink()
        reconcile(writer)
        writer.optimize()
        assert writer.conn.execute("PRAGMA freelist_count").fetchone()[0] == 0
    assert fts_integrity_ok(db)


class Stop(Exception):
    pass


def test_a_visible_apply_commits_consistent_chunks_and_stops_between_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every committed chunk is the index of a vault where the later chunks' files are not there
    yet (findings and FTS rows valid); a stop between chunks leaves such a state, and the next
    reconcile finishes (issue 17)."""
    monkeypatch.setattr(apply_module, "BATCH_SIZE", 40)
    vault = linked_vault(tmp_path / "v", 50)
    db = tmp_path / "i.db"
    with IndexWriter(db, vault, workers=1) as writer:
        reconcile(writer)
        for i in range(50, 200):
            (vault / f"g{i % 3}").mkdir(exist_ok=True)
            (vault / f"g{i % 3}" / f"New {i}.md").write_text(
                f"# New {i}\n[[Note {i % 50}]] [[New {(i + 7) % 200}]] [[Missing {i % 4}]]\n"
            )
        (vault / "f1" / "Note 1.md").unlink()
        seen: list[tuple[int, int]] = []

        def progress(done: int, total: int) -> None:
            assert fts_integrity_ok(db)
            seen.append((done, total))
            if len(seen) == 3:
                raise Stop

        with pytest.raises(Stop):
            reconcile(writer, progress=progress)
        assert [done for done, _ in seen] == [41, 81, 121]  # the delete, then 40 notes a chunk
        subset = linked_subset(vault, db, tmp_path / "subset")
        assert dump_index(db) == fresh_full_index(subset, tmp_path)
        report = reconcile(writer)
        assert (report.added, report.removed) == (30, 0)
    assert dump_index(db) == fresh_full_index(vault, tmp_path)
