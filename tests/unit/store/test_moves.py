"""store/moves.py: a move rewrites the structure-search rows only of the notes whose texts change
(issue 17). The backlink texts (``anchors``) of a target are its links' own display and linkpath:
a source that is renamed or moves keeps them as they were, unless the move re-resolves the link."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from notedex.indexing.reconcile import apply_paths, reconcile
from notedex.store import findings
from notedex.store.writer import IndexWriter
from tests.helpers import dump_index, fresh_full_index, write
from tests.indexcheck import fts_sound_after, make_vault

__all__ = ["fts_sound_after"]  # autouse: FTS integrity-check after every test


@pytest.fixture
def writer(tmp_path: Path) -> Iterator[IndexWriter]:
    vault = make_vault(tmp_path / "v", {})
    write(vault / "T.md", "# T\n")
    write(vault / "a" / "same.md", "# Same in a\n")
    write(vault / "b" / "same.md", "# Same in b\n")
    write(vault / "src" / "S.md", "# S\n[[T]] [[same]] [[gone]]\n")
    write(vault / "Other.md", "# Other\n[[S]]\n")
    with IndexWriter(tmp_path / "i.db", vault, workers=1) as w:
        reconcile(w)
        yield w


def _withdrawn(monkeypatch: pytest.MonkeyPatch) -> set[int]:
    """Every note id handed to a withdrawal (whole or link_fts only) from now on."""
    seen: set[int] = set()
    whole, links_only = findings.withdraw, findings.withdraw_links

    def record_whole(conn: object, ids: Iterable[int], **options: bool) -> None:
        ids = list(ids)
        seen.update(ids)
        whole(conn, ids, **options)  # type: ignore[arg-type]

    def record_links(conn: object, ids: Iterable[int], **options: int) -> None:
        ids = list(ids)
        seen.update(ids)
        links_only(conn, ids, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(findings, "withdraw", record_whole)
    monkeypatch.setattr(findings, "withdraw_links", record_links)
    return seen


def _id(writer: IndexWriter, path: str) -> int:
    return writer.file_rows([path])[path].id


def test_a_renamed_source_leaves_its_targets_rows_unless_a_link_resolves_anew(
    writer: IndexWriter, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = writer.vault
    ids = {p: _id(writer, p) for p in ("T.md", "a/same.md", "b/same.md", "src/S.md", "Other.md")}
    withdrawn = _withdrawn(monkeypatch)
    # S gets a new name and folder: [[same]] now prefers b/same.md (SEMANTICS 7.7), [[T]] and
    # its text stay; [[S]] in Other breaks.
    os.rename(vault / "src" / "S.md", vault / "b" / "S2.md")
    report = apply_paths(writer, ["src/S.md", "b/S2.md"])
    moved = set(withdrawn)  # before the fresh index below, whose ids are its own
    assert report.moved == 1
    assert ids["T.md"] not in moved  # its backlink text did not change
    assert {ids["a/same.md"], ids["b/same.md"], ids["src/S.md"], ids["Other.md"]} <= moved
    assert dump_index(writer.db_path) == fresh_full_index(vault, tmp_path)


def test_a_source_moved_into_excluded_files_updates_its_targets_findings(
    writer: IndexWriter, tmp_path: Path
) -> None:
    vault = writer.vault
    write(vault / ".obsidian" / "app.json", '{"userIgnoreFilters": ["hidden/"]}')
    writer.refresh_filters()
    os.makedirs(vault / "hidden")
    os.rename(vault / "src" / "S.md", vault / "hidden" / "S.md")
    apply_paths(writer, ["src/S.md", "hidden/S.md"])
    # T's one incoming link is now from an excluded note: T is an orphan (SEMANTICS 8.1).
    assert dump_index(writer.db_path) == fresh_full_index(vault, tmp_path)


def _has_path_trigger(writer: IndexWriter) -> bool:
    from notedex.store.schema import PATH_ANCHOR_DOCS

    return (
        writer.conn.execute(
            "SELECT 1 FROM sqlite_temp_master WHERE type = 'trigger' AND name = ?",
            (PATH_ANCHOR_DOCS,),
        ).fetchone()
        is not None
    )


@pytest.mark.slow
def test_a_move_sets_the_path_trigger_aside_and_back_even_when_it_fails(
    writer: IndexWriter, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stored documents of a moved file's broken anchors are rewritten set-based while the
    per-file trigger is set aside (store.moves._set_paths): it is back after a move, and after a
    move that fails inside (rolled back, the index as it was)."""
    vault = writer.vault
    write(vault / "Other.md", "# Other\n[[S#Nope]] [[T#Nope]]\n")
    apply_paths(writer, ["Other.md"])
    before = dump_index(writer.db_path)
    assert before["broken_anchor_docs"] != []

    def boom(vf: object) -> str | None:
        raise RuntimeError("disk_rel")

    os.rename(vault / "src", vault / "moved")
    with monkeypatch.context() as patch:
        patch.setattr(writer, "disk_rel", boom)
        with pytest.raises(RuntimeError):
            apply_paths(writer, ["src", "moved"])
    assert _has_path_trigger(writer)
    assert dump_index(writer.db_path) == before
    apply_paths(writer, ["src", "moved"])
    assert _has_path_trigger(writer)
    assert dump_index(writer.db_path) == fresh_full_index(vault, tmp_path)
    # The trigger still keeps a document when a path changes outside a move.
    with writer.transaction() as conn:
        conn.execute("UPDATE files SET path = 'moved/S2.md' WHERE path = 'moved/S.md'")
        docs = [row[0] for row in conn.execute("SELECT doc FROM broken_anchor_docs")]
        conn.execute("UPDATE files SET path = 'moved/S.md' WHERE path = 'moved/S2.md'")
    assert any('"target":"moved/S2.md"' in doc for doc in docs)


def _reresolved(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The linkpath of every link handed to a re-resolution from now on."""
    from notedex.store.links import LinkTargets

    seen: list[str] = []
    original = LinkTargets._reresolve_rows

    def record(
        self: LinkTargets, rows: list[tuple[int, int, str, str, int | None, int]], *a: object
    ) -> None:
        seen.extend(row[3] for row in rows)
        original(self, rows, *a)  # type: ignore[arg-type]

    monkeypatch.setattr(LinkTargets, "_reresolve_rows", record)
    return seen


@pytest.mark.slow
@pytest.mark.parametrize(
    ("text", "reread"),
    [
        ("[[../T]]", True),  # SEMANTICS 7.5: from b/c it is b/T, unresolved
        ("[[./Near]]", True),  # 7.5: a/Near.md stays, b/c/Near does not exist
        ("[[same]]", True),  # 7.7: a/same.md from a, b/c/same.md from b/c (its folder)
        ("[[a/same]]", False),  # 7.6: the full path, from anywhere
        ("[[same.md]]", True),  # 7.7 by the file name: the tie-break again
        ("[[x/Gone]]", False),  # broken from anywhere: no candidate
    ],
)
def test_a_moved_note_rereads_only_the_links_its_folder_decides(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, reread: bool
) -> None:
    """A note moved under its name (store.links.reresolve_moved): of its own links, the
    relative ones and the tie-breaks are re-resolved from its new folder; a path with a folder
    otherwise finds the same file from anywhere and is not read again. Each case ends equal to
    a fresh index (a link left unread that should change would break that)."""
    vault = make_vault(tmp_path / "v", {})
    write(vault / "T.md", "# T\n")
    write(vault / "a" / "Near.md", "# Near\n")
    write(vault / "a" / "same.md", "# Same in a\n")
    write(vault / "b" / "c" / "same.md", "# Same in b/c\n")
    write(vault / "a" / "S.md", f"# S\n{text}\n")
    with IndexWriter(tmp_path / "i.db", vault, workers=1) as writer:
        reconcile(writer)
        seen = _reresolved(monkeypatch)
        os.rename(vault / "a" / "S.md", vault / "b" / "c" / "S.md")
        report = apply_paths(writer, ["a/S.md", "b/c/S.md"])
        assert report.moved == 1
        assert dump_index(writer.db_path) == fresh_full_index(vault, tmp_path)
        assert (text.strip("[]") in seen) is reread


@pytest.mark.slow
def test_a_moved_files_anchor_documents_take_the_new_path_as_json_quotes_it(
    tmp_path: Path,
) -> None:
    """The stored documents of a moved file's broken anchors get only their path fields updated
    (``schema.moved_anchor_docs``, json_set): byte for byte what a fresh index renders, for a
    folder whose name JSON must escape, out of the moved notes, into them and within them;
    each document written once, both paths at once where both moved."""
    vault = make_vault(tmp_path / "v", {})
    write(vault / "T.md", "# T\n[[S#Nope]] [[sub/S#Nope too]]\n")
    write(vault / "src" / "S.md", "# S\n[[T#Nope]] [[#Self]] [[Near#Nope]]\n")
    write(vault / "src" / "Near.md", "# Near\n[[S#Nope]]\n")
    with IndexWriter(tmp_path / "i.db", vault, workers=1) as writer:
        reconcile(writer)
        before = [row[0] for row in writer.conn.execute("SELECT doc FROM broken_anchor_docs")]
        assert len(before) == 5
        writer.conn.execute("CREATE TEMP TABLE docs_written(source TEXT, seq INTEGER)")
        writer.conn.execute(
            "CREATE TEMP TRIGGER docs_written AFTER UPDATE ON main.broken_anchor_docs "
            "BEGIN INSERT INTO docs_written VALUES (old.source, old.seq); END"
        )
        for old, new in (("src", 'dir "q" \\ é 日本\t'), ('dir "q" \\ é 日本\t', "src")):
            writer.conn.execute("DELETE FROM temp.docs_written")
            os.rename(vault / old, vault / new)
            apply_paths(writer, [old, new])
            assert dump_index(writer.db_path) == fresh_full_index(vault, tmp_path)
            written = writer.conn.execute("SELECT * FROM temp.docs_written").fetchall()
            assert len(written) == len(set(written)) == 5  # S, Near and T's links, each once
        after = [row[0] for row in writer.conn.execute("SELECT doc FROM broken_anchor_docs")]
        assert after == before


def _broken_fixes(writer: IndexWriter) -> list[tuple[str, str | None, str | None]]:
    return writer.conn.execute(
        "SELECT text, suggestion, reason FROM broken_links ORDER BY text"
    ).fetchall()


@pytest.mark.slow
def test_a_move_refixes_the_folder_fixes_it_can_change(tmp_path: Path) -> None:
    """SEMANTICS 8.3's `folder` fix names the one file of the link's name by its bare name,
    which a move under the same name keeps (not recomputed: store.links.reresolve_moved
    refixes only keys of two files or more); a name two files share is no fix, before and
    after a folder rename; a new case in the name changes even the bare name. A broken
    link with a folder is read again by the move anyway (its key is a moved name): these are
    bare links to attachments without an extension, which 7.2 never finds (no `.md` retry
    for a name without one), so only the refix reaches them."""
    vault = make_vault(tmp_path / "v", {})
    write(vault / "src" / "Solo", "solo\n")
    write(vault / "src" / "Dup", "dup in src\n")
    write(vault / "zz" / "Dup", "dup in zz\n")
    write(vault / "src" / "lower", "lower\n")
    write(vault / "Links.md", "# Links\n[[Solo]] [[Dup]] [[lower]]\n")
    os.utime(vault / "src" / "lower", (1_600_000_000, 1_600_000_000))  # not racy: pairs by etag
    with IndexWriter(tmp_path / "i.db", vault, workers=1) as writer:
        reconcile(writer)
        assert _broken_fixes(writer) == [
            ("[[Dup]]", None, None),
            ("[[Solo]]", "[[Solo]]", "folder"),
            ("[[lower]]", "[[lower]]", "folder"),
        ]
        # First the new case, while no rename history names the file (it would refix it).
        os.rename(vault / "src" / "lower", vault / "src" / "Lower")
        report = apply_paths(writer, ["src/lower", "src/Lower"])
        assert report.moved == 1
        assert dump_index(writer.db_path) == fresh_full_index(vault, tmp_path)
        assert ("[[lower]]", "[[Lower]]", "folder") in _broken_fixes(writer)
        os.rename(vault / "src", vault / "moved")
        apply_paths(writer, ["src", "moved"])
        assert dump_index(writer.db_path) == fresh_full_index(vault, tmp_path)
        # Still no `folder` fix; the rename history now names the file that moved (8.3).
        assert ("[[Dup]]", "[[moved/Dup]]", "renamed") in _broken_fixes(writer)
        assert ("[[Solo]]", "[[Solo]]", "folder") in _broken_fixes(writer)


@pytest.mark.slow
def test_a_folder_rename_keeps_unused_attachments_exact(tmp_path: Path) -> None:
    """SEMANTICS 8.9 across a folder rename (findings.attachments_moved, read from the move's
    own table): an unused attachment's row takes the new path, a used one gets none, and an
    attachment whose one embed breaks with the rename (by path) becomes unused, and back."""
    vault = make_vault(tmp_path / "v", {})
    write(vault / "img" / "unused.png", "png")
    write(vault / "img" / "used.png", "png used")
    write(vault / "img" / "by path.png", "png by path")
    write(vault / "img" / "Note.md", "# Note\n![[unused2.png]]\n")
    write(vault / "Page.md", "# Page\n![[used.png]] ![[img/by path.png]]\n")
    with IndexWriter(tmp_path / "i.db", vault, workers=1) as writer:
        reconcile(writer)
        for old, new in (("img", "pics"), ("pics", "img")):
            os.rename(vault / old, vault / new)
            report = apply_paths(writer, [old, new])
            assert report.moved == 4
            index = dump_index(writer.db_path)
            assert index == fresh_full_index(vault, tmp_path)
            unused = [row for row in index["file_findings"] if row[0] == "unused-attachment"]
            assert len(unused) == (2 if new == "pics" else 1)


@pytest.mark.slow
def test_a_path_link_to_itself_that_a_folder_rename_breaks_drops_its_broken_anchor(
    tmp_path: Path,
) -> None:
    """A note links to itself by path with a missing heading (`[[F/N#Missing]]`: a broken
    anchor). Its folder is renamed: the link no longer resolves, so it is a broken link and
    no longer a broken anchor (SEMANTICS 10.7); a self link (`[[#Missing]]`) stays one."""
    vault = make_vault(tmp_path / "v", {})
    write(vault / "F" / "N.md", "# Top\nsee [[F/N#Missing]] and [[#Gone]]\n")
    with IndexWriter(tmp_path / "i.db", vault, workers=1) as writer:
        reconcile(writer)
        assert len(dump_index(writer.db_path)["broken_anchors"]) == 2
        for old, new in (("F", "G"), ("G", "F")):
            os.rename(vault / old, vault / new)
            apply_paths(writer, [old, new])
            index = dump_index(writer.db_path)
            assert index == fresh_full_index(vault, tmp_path)
            assert len(index["broken_anchors"]) == (1 if new == "G" else 2)
