"""Bulk mode (large applies): same index as a normal apply, settings restored afterwards;
a visible apply's chunks are each consistent, and a stop between them loses nothing."""

from __future__ import annotations

import collections
import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from notedex.indexing import apply as apply_module
from notedex.indexing.reconcile import reconcile
from notedex.store import findings, findings_slices
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


@pytest.mark.slow
@pytest.mark.parametrize("private", [False, True], ids=["visible", "private"])
def test_bulk_apply_equals_a_normal_apply(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, private: bool
) -> None:
    """Both ways of a large apply: chunks readers see, and a private build (deferred rows)."""
    vault = tmp_path / "vault"
    linked_vault(vault, 600)
    normal = fresh_full_index(vault, tmp_path)  # before the sizes below change
    bulk_db = tmp_path / "bulk.db"
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
    assert dump_index(bulk_db) == normal
    assert automerge(bulk_db) == [FTS_AUTOMERGE, FTS_AUTOMERGE]
    assert fts_integrity_ok(bulk_db)


def doctor_vault(root: Path, notes: int) -> Path:
    """``notes`` notes with headings (nested), block ids and nested tags, linking each other
    by valid and broken anchors (nested, block, self) and by broken names one edit from a
    note's (more than ``TYPO_BULK_KEYS``: the bulk `typo` search), and an embedded png."""
    files: dict[str, str | bytes] = {}
    for i in range(notes):
        j = (i * 7 + 3) % notes
        files[f"d{i % 5}/Topic {i}.md"] = (
            f"# Topic {i}\n## Setup\n### On Linux\nsteps ^blk{i}\n"
            f"#area/sub{i % 3} #solo\n"
            f"[[Topic {j}#Setup]] [[Topic {j}#Setpu]] [[Topic {j}#Setup#On Linux]]\n"
            f"[[Topic {j}#On Linux#Setup]] ![[Topic {j}#^blk{j}]] [[Topic {j}#^blk{j}x]]\n"
            f"[[#Setup]] [[#Nope]] [[Topic {j}x]] [x](Topic%20{j}.md#on-linux) ![[pic.png#frag]]\n"
        )
    files["img/pic.png"] = "png"
    return make_vault(root, files)


@pytest.mark.slow
def test_a_private_builds_findings_from_the_helper_process_equal_a_normal_apply(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large private apply hands the anchor verdicts, the `typo` search, the link texts and
    the tag counts to a helper process (``pool.findings_helper``) while it writes the search
    rows: the index is the one a normal apply writes, findings and their documents included."""
    vault = doctor_vault(tmp_path / "vault", 300)
    normal = fresh_full_index(vault, tmp_path)  # before the sizes below change
    built_db = tmp_path / "built.db"
    monkeypatch.setattr(apply_module, "BULK_NOTES", 100)
    monkeypatch.setattr(apply_module, "BULK_BATCH_SIZE", 64)
    monkeypatch.setattr(apply_module, "FINDINGS_HELPER_MIN", 100)
    helped: list[bool] = []
    helper = apply_module.findings_helper

    @contextlib.contextmanager
    def spy(workers: int) -> Iterator[findings.Offload]:
        with helper(workers) as offload:
            helped.append(offload is not findings.run_here)
            yield offload

    monkeypatch.setattr(apply_module, "findings_helper", spy)
    with IndexWriter(built_db, vault, workers=2) as writer:
        writer.private = True
        writer.refresh_filters()
        apply_module.apply(writer, walk_vault(vault).files, [])
    assert helped == [True]
    built = dump_index(built_db)
    assert built == normal
    # What was compared is there: per note, five broken anchors (`#Setpu`, `#On Linux#Setup`,
    # `#^blkNx`, the self link `#Nope` with no suggestion, and `#on-linux`: a fragment is not
    # a slug); one broken link with its `typo` fix; nested tags rolled up.
    reasons = collections.Counter(row[-1] for row in built["broken_anchors"])
    assert reasons == {"typo": 600, "prefix": 600, None: 300}
    assert [row[-1] for row in built["broken_links"]] == ["typo"] * 300
    assert ("area", 300) in built["tag_rollup"] and ("area/sub1", 100) in built["tag_rollup"]


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_a_builds_findings_in_slices_equal_a_normal_apply_and_hold_a_slice_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    """Issue 35: the pending notes at a large build's end are refreshed a slice at a time
    (``findings_slices``), the helper's `typo` search once for all. The index is the one a
    normal apply writes (links, anchors and tags cross the slices), and no step's inputs
    hold more notes than a slice: here 64 of 300 (one call of 300 before)."""
    vault = doctor_vault(tmp_path / "vault", 300)
    normal = fresh_full_index(vault, tmp_path)
    built_db = tmp_path / "built.db"
    monkeypatch.setattr(apply_module, "BULK_NOTES", 100)
    monkeypatch.setattr(apply_module, "BULK_BATCH_SIZE", 64)
    monkeypatch.setattr(apply_module, "FINDINGS_HELPER_MIN", 100)
    monkeypatch.setattr(findings_slices, "SLICE", 64)
    wanted: list[int] = []
    texts_of = findings.link_texts_of

    def counting(into: Any, unresolved: Any, rows: list[Any]) -> Any:
        wanted.append(len(rows))
        return texts_of(into, unresolved, rows)

    if workers == 1:  # in this process: the inputs of each call can be counted
        monkeypatch.setattr(findings, "link_texts_of", counting)
    # A build aside, as `index --full`: its batches stage every note's search rows.
    with IndexWriter(built_db, vault, workers=workers) as writer, writer.building():
        writer.refresh_filters()
        apply_module.apply(writer, walk_vault(vault).files, [])
    assert dump_index(built_db) == normal
    # Each note's search rows are in the FTS5 indexes once (a later slice inserted the staged
    # rows of the first again: the same text, twice the postings).
    assert fts_integrity_ok(built_db)
    if workers == 1:
        assert sum(wanted) >= 300 and max(wanted) <= 64, wanted


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


def _fts_settings(conn: sqlite3.Connection) -> dict[str, list[tuple[str, int]]]:
    return {
        table: conn.execute(
            f"SELECT k, v FROM {table}_config WHERE k <> 'version' ORDER BY k"
        ).fetchall()
        for table in ("note_fts", "name_fts", "link_fts", "body_fts")
    }


def test_a_bulk_load_merges_its_fts_segments_rarely_until_the_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 35 (build35b): while merging is paused, a level of an FTS index merges only
    from 200 segments (crisismerge, 16 by default) and the pending terms are flushed from
    16 MB (hashsize, 1 MB): a cold build's body index was merged level after level while it
    was inserted, then once more at the end. Afterwards no row of either setting is left
    (the file's config is what it was), nor after a killed bulk load once a writer opens."""
    vault = tmp_path / "vault"
    linked_vault(vault, 300)
    monkeypatch.setattr(apply_module, "BULK_NOTES", 100)
    monkeypatch.setattr(apply_module, "BULK_BATCH_SIZE", 128)
    seen: list[dict[str, list[tuple[str, int]]]] = []
    write_notes = IndexWriter.write_notes

    def spy(self: IndexWriter, *args: Any) -> set[int]:
        seen.append(_fts_settings(self.conn))
        return write_notes(self, *args)

    monkeypatch.setattr(IndexWriter, "write_notes", spy)
    db = tmp_path / "index.db"
    with IndexWriter(db, vault, workers=1) as writer:
        reconcile(writer)
        after = _fts_settings(writer.conn)
    bulk = [("automerge", 0), ("crisismerge", 200), ("hashsize", 16 * 1024 * 1024)]
    assert seen and all(settings == {key: bulk for key in after} for settings in seen)
    assert after == {key: [("automerge", FTS_AUTOMERGE)] for key in after}
    with IndexWriter(db, vault, workers=1) as writer:
        writer._set_automerge(0)  # what a bulk load leaves behind when it is killed
    with IndexWriter(db, vault, workers=1) as writer:
        assert _fts_settings(writer.conn) == after
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


@pytest.mark.slow
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
