"""store/findings.py: link_fts's content is stored as indexed (``link_texts``, schema 18), and a
refresh rewrites only the rows whose text changed (issue 17, speed). Every skip is checked
against a fresh full index, and the stored text against the one the tables give now."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from notedex.indexing.reconcile import apply_paths, reconcile
from notedex.store import findings
from notedex.store.writer import IndexWriter
from tests.helpers import dump_index, fresh_full_index, write
from tests.indexcheck import fts_problems, fts_sound_after, make_vault

__all__ = ["fts_sound_after"]  # autouse: FTS integrity-check after every test


@pytest.fixture
def writer(tmp_path: Path) -> Iterator[IndexWriter]:
    vault = make_vault(tmp_path / "v", {})
    write(vault / "T.md", "# T\n")
    write(vault / "a" / "same.md", "# Same in a\n")
    write(vault / "b" / "same.md", "# Same in b\n")
    write(vault / "src" / "S.md", "# S\n[[same]] [[gone]]\n")
    write(vault / "S1.md", "# S1\n[[T]]\n")
    write(vault / "S2.md", "# S2\n[[T]]\n")
    write(vault / "Other.md", "# Other\n[[S]]\n")
    with IndexWriter(tmp_path / "i.db", vault, workers=1) as w:
        reconcile(w)
        yield w


def _spy(monkeypatch: pytest.MonkeyPatch) -> tuple[set[int], list[tuple[int, int]]]:
    """The note ids marked by ``withdraw_links`` and the (deleted, inserted) counts of every
    ``refresh_link_texts`` from now on (a fresh index's too: read them before one)."""
    marked: set[int] = set()
    counts: list[tuple[int, int]] = []
    mark, refresh = findings.withdraw_links, findings.refresh_link_texts

    def spy_mark(conn: sqlite3.Connection, ids: Iterable[int], **options: int) -> None:
        ids = list(ids)
        marked.update(ids)
        mark(conn, ids, **options)

    def spy_refresh(conn: sqlite3.Connection, *texts: Any) -> tuple[int, int]:
        counts.append(refresh(conn, *texts))
        return counts[-1]

    monkeypatch.setattr(findings, "withdraw_links", spy_mark)
    monkeypatch.setattr(findings, "refresh_link_texts", spy_refresh)
    return marked, counts


def _id(writer: IndexWriter, path: str) -> int:
    return writer.file_rows([path])[path].id


def _stored_and_now(db: Path) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    from notedex.store.database import add_sql_functions

    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    add_sql_functions(conn)  # link_texts_now segments its text
    try:
        stored = conn.execute("SELECT * FROM link_texts ORDER BY file_id").fetchall()
        now = conn.execute("SELECT * FROM link_texts_now ORDER BY file_id").fetchall()
    finally:
        conn.close()
    return stored, now


def test_a_link_that_changes_target_leaves_its_sources_row_as_it_was(
    writer: IndexWriter, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = writer.vault
    source = _id(writer, "src/S.md")
    marked, counts = _spy(monkeypatch)
    # SEMANTICS 7.7: from b/, [[same]] goes to b/same.md. S's own texts (the anchor "S" of
    # Other's link, its broken key "gone") stay; both same.md rows change.
    os.rename(vault / "src" / "S.md", vault / "b" / "S.md")
    report = apply_paths(writer, ["src/S.md", "b/S.md"])
    assert report.moved == 1
    assert source in marked  # its link changed target: looked at...
    assert counts == [(2, 2)]  # ...but only a/same.md's and b/same.md's rows were rewritten
    assert dump_index(writer.db_path) == fresh_full_index(vault, tmp_path)


def test_a_target_keeps_its_row_while_another_link_holds_its_anchor(
    writer: IndexWriter, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = writer.vault
    _marked, counts = _spy(monkeypatch)
    (vault / "S1.md").unlink()
    apply_paths(writer, ["S1.md"])
    # S1's row goes; T's anchors are still "T" (S2's link): not rewritten.
    assert counts == [(1, 0)]
    assert dump_index(writer.db_path) == fresh_full_index(vault, tmp_path)
    (vault / "S2.md").unlink()
    apply_paths(writer, ["S2.md"])
    assert counts[-1] == (2, 1)  # S2's row goes, T's is rewritten with no anchor
    assert dump_index(writer.db_path) == fresh_full_index(vault, tmp_path)


def test_a_row_left_marked_at_a_commit_stays_consistent_and_is_refreshed_after_a_restart(
    writer: IndexWriter, tmp_path: Path
) -> None:
    # A transaction that marks link rows and changes links, then commits without a refresh
    # (as a crash right after would leave it): the marks go to the crash-safe fts_pending,
    # and link_fts still holds exactly its stored text.
    target, sources = _id(writer, "T.md"), {_id(writer, "S1.md"), _id(writer, "S2.md")}
    with writer.transaction():
        assert writer.links.unresolve_links_to(target, writer._withdraw_links) == sources
        writer._withdraw_links([target])  # its anchors go too (a delete withdraws it whole)
    assert findings.has_pending(writer.conn)  # (note_fts lacks their rows until a refresh)
    writer.conn.execute("INSERT INTO link_fts(link_fts, rank) VALUES ('integrity-check', 1)")
    stored, now = _stored_and_now(writer.db_path)
    assert stored != now  # S1's and S2's broken key "T" is not in link_fts yet
    db, vault = writer.db_path, writer.vault
    writer.close()
    with IndexWriter(db, vault, workers=1) as again:
        again.flush_pending_fts()
        assert not findings.has_pending(again.conn)
    stored, now = _stored_and_now(db)
    assert stored == now
    # A reconcile finds T.md still there and resolves the links again: as a fresh index.
    with IndexWriter(db, vault, workers=1) as again, again.transaction():
        again.reresolve_for({"T.md"}, set())
        again.refresh_fts(set())
    assert dump_index(db) == fresh_full_index(vault, tmp_path)


def test_a_rebuild_derives_the_stored_texts_again(writer: IndexWriter, tmp_path: Path) -> None:
    target = _id(writer, "T.md")
    with writer.transaction():  # link_texts changed behind link_fts's back
        writer.conn.execute("UPDATE link_texts SET anchors = 'wrong' WHERE file_id = ?", (target,))
    assert fts_problems(writer.db_path) != []
    writer.rebuild_fts()
    assert fts_problems(writer.db_path) == []
    assert dump_index(writer.db_path) == fresh_full_index(writer.vault, tmp_path)


def test_the_dirty_notes_texts_are_the_views(tmp_path: Path) -> None:
    """``findings.dirty_link_texts`` (a move's refresh) and the view ``link_texts_now`` (a first
    index, ``rebuild``) build the same texts: anchors sorted and distinct, with or without a
    display (an empty one too), CJK segmented, self-links and links into attachments, broken
    keys; a note with none gets empty texts, an attachment no row."""
    vault = make_vault(tmp_path / "v", {})
    write(vault / "T.md", "# T\n[[T]] [[#Self]] [[框架相關]] [[gone|Gone]] [[gone]]\n")
    write(vault / "框架相關.md", "# 框架\n[[T|重跑gen-itgc后]] [[T|]] [[T]] [[T]] [Md](T.md)\n")
    write(vault / "a" / "U.md", "# U\n![[pic.png]] [[T|Zeta]] [[T|alpha]] [[nowhere/x]] [[ ]]\n")
    write(vault / "Empty.md", "# Empty\n")
    write(vault / "pic.png", "png")
    with IndexWriter(tmp_path / "i.db", vault, workers=1) as writer:
        reconcile(writer)
        with writer.transaction() as conn:
            ids = [row[0] for row in conn.execute("SELECT id FROM files")]
            findings.set_dirty(conn, ids)
            texts = sorted(findings.dirty_link_texts(conn))
            view = conn.execute("SELECT * FROM link_texts_now ORDER BY file_id").fetchall()
    assert texts == view
    assert len(texts) == 4
    assert any("重跑" in anchors for _, anchors, _ in texts)
    assert any(unresolved for _, _, unresolved in texts)


@pytest.mark.parametrize(
    ("other", "expected"),
    [
        ("[[S]]", ["", "../T"]),  # T's anchors now none; S's broken key
        # Other's link into S breaks too: S's two sides change (marked one after the other),
        # and Other's unresolved key.
        ("[[src/S]]", ["", "", "../T", "src/S"]),
    ],
)
def test_a_re_resolution_derives_only_the_sides_it_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, other: str, expected: list[str]
) -> None:
    """A link that changes target marks its source's unresolved keys and its targets' anchors
    (``withdraw_links`` sides): the source's anchors and the targets' unresolved keys are the
    stored texts, not derived again. Here S's relative link breaks when S moves (SEMANTICS
    7.5): S's unresolved text and T's anchors change, S keeps Other's anchor and T its own
    broken key; a side taken from the store that did change would differ from a fresh index."""
    vault = make_vault(tmp_path / "v", {})
    write(vault / "T.md", "# T\n[[gone]]\n")
    write(vault / "src" / "S.md", "# S\n[[../T]]\n")
    write(vault / "Other.md", f"# Other\n{other}\n")
    for path in ("T.md", "src/S.md", "Other.md"):  # not racy: nothing is read again
        os.utime(vault / path, (1_600_000_000, 1_600_000_000))
    derived: list[str] = []
    joined = findings._joined

    def spy(texts: set[str] | None) -> str:
        derived.append(" ".join(sorted(texts or ())))
        return joined(texts)

    with IndexWriter(tmp_path / "i.db", vault, workers=1) as writer:
        reconcile(writer)
        monkeypatch.setattr(findings, "_joined", spy)
        os.makedirs(vault / "b" / "c")
        os.rename(vault / "src" / "S.md", vault / "b" / "c" / "S.md")
        report = apply_paths(writer, ["src/S.md", "b/c/S.md"])
        assert report.moved == 1
        monkeypatch.undo()  # the fresh index below derives its own
        assert dump_index(writer.db_path) == fresh_full_index(vault, tmp_path)
        assert sorted(derived) == expected
