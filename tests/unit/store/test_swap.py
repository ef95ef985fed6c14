"""store/swap.py: a built index is installed in one step; readers holding the old index keep
their snapshot and then see the new one whole; a new index is renamed into place."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from notedex.indexing import apply as apply_module
from notedex.indexing.reconcile import reconcile
from notedex.store import findings as findings_module
from notedex.store import swap
from notedex.store.schema import BUILD_DEFERRED_INDEXES
from notedex.store.writer import IndexWriter
from tests.helpers import dump_index, fts_integrity_ok, write
from tests.indexcheck import make_vault


def _index(vault: Path, db: Path) -> None:
    with IndexWriter(db, vault, workers=1) as writer:
        reconcile(writer)


def _notes(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM notes").fetchone()[0])


@pytest.mark.slow
def test_install_over_a_live_index_keeps_readers_working(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", {f"n{i}.md": f"# N{i}\n[[n{i + 1}]]\n" for i in range(30)})
    live = tmp_path / "i.db"
    _index(vault, live)
    for i in range(30, 50):
        write(vault / f"n{i}.md", f"# N{i}\n")
    built = swap.build_path(live)
    _index(vault, built)
    expected = dump_index(built)

    reader = sqlite3.connect(f"file:{live}?mode=ro", uri=True, isolation_level=None)
    reader.execute("BEGIN")
    assert _notes(reader) == 30  # a snapshot of the old index, held across the swap
    inode = live.stat().st_ino
    swap.install(built, live)
    assert _notes(reader) == 30
    reader.execute("COMMIT")
    assert _notes(reader) == 50  # the same connection, its next transaction: the new index
    reader.close()
    assert live.stat().st_ino == inode  # copied in, not renamed over: the WAL stays its own
    assert not built.exists()
    assert dump_index(live) == expected
    assert fts_integrity_ok(live)


def test_install_with_no_live_index_renames_and_drops_stale_side_files(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", {"a.md": "# A\n"})
    live = tmp_path / "i.db"
    (tmp_path / "i.db-wal").write_bytes(b"left by a deleted index")
    built = swap.build_path(live)
    _index(vault, built)
    expected = dump_index(built)
    swap.install(built, live)
    assert not built.exists() and not (tmp_path / "i.db-wal").exists()
    assert dump_index(live) == expected


def test_needs_build(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", {"a.md": "# A\n"})
    live = tmp_path / "i.db"
    assert swap.needs_build(live)  # missing
    live.touch()
    assert swap.needs_build(live)  # empty
    live.unlink()
    _index(vault, live)
    assert not swap.needs_build(live)
    conn = sqlite3.connect(live)
    conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    assert swap.needs_build(live)  # another version: readers are refused it anyway
    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE t(x)")
    conn.commit()
    conn.close()
    assert not swap.needs_build(other)  # not ours: left to the writer, which refuses it


def _journal(conn: sqlite3.Connection) -> str:
    return str(conn.execute("PRAGMA journal_mode").fetchone()[0])


def test_a_build_has_no_wal_until_it_ends_and_indexes_the_same(tmp_path: Path) -> None:
    """``IndexWriter.building``: the file being built has a rollback journal, no WAL, and is
    not synced (nobody reads it before the swap); rollbacks still work; it ends in WAL mode
    with the same rows as an index built the usual way."""
    vault = make_vault(
        tmp_path / "v",
        {f"n{i}.md": f"---\ntags: [t{i % 3}]\n---\n# N{i}\n[[n{i + 1}#Nope]]\n" for i in range(40)},
    )
    usual = tmp_path / "usual.db"
    _index(vault, usual)
    built = swap.build_path(tmp_path / "i.db")
    with IndexWriter(built, vault, workers=1) as writer:
        with writer.building():
            assert writer.private
            assert _journal(writer.conn) == "truncate"
            assert writer.conn.execute("PRAGMA synchronous").fetchone()[0] == 0  # OFF
            reconcile(writer, full=True)
            try:
                with writer.transaction() as conn:
                    conn.execute("DELETE FROM links")
                    raise RuntimeError("stop")
            except RuntimeError:
                pass
            assert not Path(f"{built}-wal").exists()
        assert _journal(writer.conn) == "wal"
        assert writer.conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
        writer.checkpoint()
    conn = sqlite3.connect(built)
    assert _journal(conn) == "wal"  # kept by the file itself: readers open it in WAL mode
    conn.close()
    assert dump_index(built) == dump_index(usual)
    assert fts_integrity_ok(built)


def _indexes(conn: sqlite3.Connection) -> dict[str, str]:
    return dict(conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'index'"))


def test_a_build_writes_its_batches_without_the_deferred_indexes_and_ends_with_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``IndexWriter.indexes_deferred``: while a build aside writes its batches, the indexes no
    batch reads are gone; they are back, as the schema writes them, before the findings. The
    batches stage their notes' search texts for the end (``findings.stage_fts_rows``)."""
    vault = make_vault(
        tmp_path / "v",
        {
            f"d{i % 3}/n{i}.md": f"---\naliases: [别名{i}]\ntags: [t/{i % 4}]\n---\n# N{i} 标题\n"
            f"[[n{(i * 7) % 200}]] [[d1/n{i}]] [[gone {i}]]\n"
            for i in range(200)
        },
    )
    usual = tmp_path / "usual.db"
    _index(vault, usual)
    conn = sqlite3.connect(usual)
    schema_indexes = _indexes(conn)
    conn.close()
    assert set(BUILD_DEFERRED_INDEXES) <= set(schema_indexes)
    monkeypatch.setattr(apply_module, "BULK_NOTES", 100)
    monkeypatch.setattr(apply_module, "BULK_BATCH_SIZE", 64)
    during: list[set[str]] = []
    write_notes = IndexWriter.write_notes

    names: list[int] = []

    def spy(writer: IndexWriter, *args: Any) -> set[int]:
        during.append(set(_indexes(writer.conn)))
        dirty = write_notes(writer, *args)
        names.append(writer.conn.execute("SELECT count(*) FROM exact_names").fetchone()[0])
        return dirty

    flush = IndexWriter.flush_pending_fts

    def spy_flush(writer: IndexWriter, *args: Any) -> None:
        during.append(set(_indexes(writer.conn)))
        flush(writer, *args)

    staged: list[int] = []
    stage = findings_module.stage_fts_rows

    def spy_stage(conn: sqlite3.Connection, rows: Any) -> None:
        staged.extend(row[0] for row in rows)
        stage(conn, rows)

    monkeypatch.setattr(IndexWriter, "write_notes", spy)
    monkeypatch.setattr(IndexWriter, "flush_pending_fts", spy_flush)
    monkeypatch.setattr(findings_module, "stage_fts_rows", spy_stage)
    built = swap.build_path(tmp_path / "i.db")
    with IndexWriter(built, vault, workers=1) as writer, writer.building():
        reconcile(writer, full=True)
    # Each note's search texts were staged by its batch (store.noterows.note_fts_texts), once.
    assert len(staged) == len(set(staged)) == 200
    *batches, findings = during
    assert len(batches) == 4
    assert all(indexes == set(schema_indexes) - set(BUILD_DEFERRED_INDEXES) for indexes in batches)
    # Issue 35 (build35b): the broken keys by their end and the properties too, and
    # exact_names is filled once, sorted, after the batches.
    assert {"links_unresolved_reversed", "properties_key"}.isdisjoint(batches[0])
    assert names == [0, 0, 0, 0]
    assert findings == set(schema_indexes)
    conn = sqlite3.connect(built)
    assert _indexes(conn) == schema_indexes
    conn.close()
    assert dump_index(built) == dump_index(usual)
    assert fts_integrity_ok(built)  # note_fts and name_fts indexed the view's texts
