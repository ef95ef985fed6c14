"""Reconcile: disk versus index by (size, mtime_ns, inode), exact link re-resolution, and the
safety rules (a missing vault or an empty scan deletes nothing).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from notedex.error_kinds import VaultNotFound
from notedex.indexing import pool as parse_pool
from notedex.indexing.reconcile import apply_paths, reconcile
from notedex.store.links import LinkTargets
from notedex.store.schema import LINK_TEXT
from notedex.store.writer import IndexWriter
from notedex.vault.resolve import affected_name_keys, name_key
from tests.helpers import dump_index, fresh_full_index, run_inprocess, write
from tests.indexcheck import age, fts_sound_after, make_vault

__all__ = ["fts_sound_after"]  # autouse: FTS integrity-check after every test


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The vault paths the writer parses (read_note calls), in order."""
    calls: list[str] = []
    real = parse_pool.read_note

    def spy(disk_path: Any, path: str, **kw: Any) -> Any:
        calls.append(path)
        return real(disk_path, path, **kw)

    monkeypatch.setattr(parse_pool, "read_note", spy)
    return calls


@pytest.fixture
def writer(tmp_path: Path) -> Iterator[IndexWriter]:
    vault = make_vault(tmp_path / "v", {})
    with IndexWriter(tmp_path / "i.db", vault, workers=1) as w:
        yield w


def links(db: Path) -> list[tuple[str, str, str | None]]:
    """(source, raw, target or None) for every non-self link."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            f"SELECT s.path, {LINK_TEXT}, t.path FROM links l JOIN files s ON s.id = l.source_id "
            "LEFT JOIN files t ON t.id = l.target_id WHERE l.linkpath <> '' ORDER BY s.path, l.line, l.col"
        ).fetchall()
    finally:
        conn.close()
    return [tuple(r) for r in rows]


def counts(report: Any) -> tuple[int, int, int]:
    return report.added, report.changed, report.removed


# -- etags ------------------------------------------------------------------------------------


def test_only_changed_files_are_parsed(writer: IndexWriter, parsed: list[str]) -> None:
    vault = writer.vault
    for i in range(20):
        write(vault / f"n{i}.md", f"note {i} [[n{i + 1}]]\n")
    age(vault)
    assert counts(reconcile(writer)) == (20, 0, 0)
    assert sorted(parsed) == sorted(f"n{i}.md" for i in range(20))
    parsed.clear()
    report = reconcile(writer)
    assert counts(report) == (0, 0, 0) and report.unchanged == 20
    assert parsed == []
    write(vault / "n3.md", "edited\n")
    (vault / "n4.md").unlink()
    assert counts(reconcile(writer)) == (0, 1, 1)
    assert parsed == ["n3.md"]


def test_size_mtime_and_inode_are_each_noticed_and_the_hash_settles_same_size(
    writer: IndexWriter, parsed: list[str]
) -> None:
    """A new size is a change; a new mtime or inode with the same size is read and hashed:
    the same bytes are unchanged (rehashed, not parsed), other bytes are a change."""
    vault = writer.vault
    for name in ("size.md", "mtime.md", "inode.md", "same.md", "edit.md"):
        write(vault / name, "0123456789\n")
    age(vault)
    reconcile(writer)
    parsed.clear()

    st = (vault / "size.md").stat()
    write(vault / "size.md", "0123456789 longer\n")
    os.utime(vault / "size.md", ns=(st.st_atime_ns, st.st_mtime_ns))  # same mtime, other size

    st = (vault / "mtime.md").stat()
    os.utime(vault / "mtime.md", ns=(st.st_atime_ns, st.st_mtime_ns - 10**9))  # only the mtime

    st = (vault / "inode.md").stat()
    shutil.copy2(vault / "inode.md", vault / "inode.tmp")
    os.replace(vault / "inode.tmp", vault / "inode.md")  # same size and mtime, new inode
    assert (vault / "inode.md").stat().st_ino != st.st_ino
    assert (vault / "inode.md").stat().st_mtime_ns == st.st_mtime_ns

    st = (vault / "edit.md").stat()
    write(vault / "edit.md", "9876543210\n")  # same size, new bytes, in place
    os.utime(vault / "edit.md", ns=(st.st_atime_ns, st.st_mtime_ns - 10**9))

    parsed_before, hashed_before = writer.parsed, writer.hashed
    report = reconcile(writer)
    assert counts(report) == (0, 2, 0)
    assert (report.unchanged, report.rehashed) == (3, 2)
    assert sorted(parsed) == ["edit.md", "size.md"]
    assert writer.parsed - parsed_before == 2
    assert writer.hashed - hashed_before == 3  # mtime.md, inode.md, edit.md
    assert dump_index(writer.db_path) == fresh_full_index(vault, writer.db_path.parent)

    # The confirmed rows took the new etags: the next reconcile reads nothing.
    hashed_before = writer.hashed
    again = reconcile(writer)
    assert (counts(again), again.rehashed) == ((0, 0, 0), 0)
    assert writer.hashed - hashed_before == 0


def test_a_racy_edit_with_the_same_etag_is_still_found(writer: IndexWriter) -> None:
    """Same size, same mtime_ns, same inode, new content, within the racy window: the writer
    compares the content hash (coarse file-system clocks hide such writes)."""
    vault = writer.vault
    write(vault / "a.md", "[[b]]\n")
    reconcile(writer)
    st = (vault / "a.md").stat()
    with open(vault / "a.md", "r+b") as handle:  # in place: same inode
        handle.write(b"[[c]]\n")
    os.utime(vault / "a.md", ns=(st.st_atime_ns, st.st_mtime_ns))
    after = (vault / "a.md").stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (
        st.st_size,
        st.st_mtime_ns,
        st.st_ino,
    )
    assert counts(reconcile(writer)) == (0, 1, 0)
    assert links(writer.db_path) == [("a.md", "[[c]]", None)]
    # An unchanged racy file is checked, not re-indexed, and then leaves the racy window.
    assert counts(reconcile(writer)) == (0, 0, 0)


def test_the_cli_sees_a_racy_edit_too(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", {"a.md": "[[b]]\n", "b.md": ""})
    db = tmp_path / "i.db"
    # Racy means read within 2 s of its mtime. Under load the first CLI run can start later than
    # that, so the mtime is set ahead: the index reads the file while it is racy, whatever the load.
    ahead = time.time_ns() + 30_000_000_000
    os.utime(vault / "a.md", ns=(ahead, ahead))
    assert run_inprocess("health", "--json", "--vault", vault, "--db", db).code == 0
    st = (vault / "a.md").stat()
    with open(vault / "a.md", "r+b") as handle:
        handle.write(b"[[x]]\n")
    os.utime(vault / "a.md", ns=(st.st_atime_ns, st.st_mtime_ns))
    result = run_inprocess("health", "--json", "--vault", vault, "--db", db)
    assert result.code == 1
    assert [b["target"] for b in result.json()["brokenLinks"]] == ["x"]


# -- safety -----------------------------------------------------------------------------------


def test_a_missing_vault_deletes_nothing(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", {"a.md": "[[b]]\n", "b.md": ""})
    db = tmp_path / "i.db"
    with IndexWriter(db, vault, workers=1) as writer:
        reconcile(writer)
        before = dump_index(db)
        vault.rename(tmp_path / "unmounted")
        with pytest.raises(VaultNotFound):
            reconcile(writer)
        with pytest.raises(VaultNotFound):
            reconcile(writer, full=True)
        report = apply_paths(writer, ["a.md", "b.md", ""])
        assert counts(report) == (0, 0, 0) and report.kept
    assert dump_index(db) == before


@pytest.mark.slow
def test_an_empty_scan_deletes_nothing_and_says_so(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", {f"n{i}.md": f"[[n{i + 1}]]\n" for i in range(10)})
    db = tmp_path / "i.db"
    assert run_inprocess("index", "--vault", vault, "--db", db).code == 0
    before = dump_index(db)
    parked = tmp_path / "parked"
    parked.mkdir()
    for note in vault.glob("*.md"):
        note.rename(parked / note.name)  # e.g. a cloud folder not synced yet

    for args in (
        ("index",),
        ("index", "--full"),
        ("index", "--json"),
        ("scan", "--json"),
        ("health", "--json"),
    ):
        result = run_inprocess(*args, "--vault", vault, "--db", db)
        assert result.code in (0, 1), result.stderr
        assert "found no files" in result.stderr and "kept 10" in result.stderr, args
        if "--json" in args:
            json.loads(result.stdout)
        assert dump_index(db) == before, args
    assert run_inprocess("scan", "--json", "--vault", vault, "--db", db).json()["noteCount"] == 10


# -- link re-resolution -----------------------------------------------------------------------


def broken_targets(vault: Path, db: Path) -> list[tuple[str, str]]:
    result = run_inprocess("health", "--json", "--vault", vault, "--db", db)
    data = result.json()
    assert result.code == (1 if data["brokenLinks"] else 0)
    return [(b["source"], b["target"]) for b in data["brokenLinks"]]


def test_broken_link_resolves_when_its_target_is_created_and_breaks_again(tmp_path: Path) -> None:
    vault = make_vault(
        tmp_path / "v",
        {"src.md": "[[Target]] and [[sub/Target|t]] and [t](Target.md) and ![[pic.png]]\n"},
    )
    db = tmp_path / "i.db"
    assert broken_targets(vault, db) == [
        ("src.md", "Target"),
        ("src.md", "sub/Target"),
        ("src.md", "Target"),
        ("src.md", "pic.png"),
    ]
    write(vault / "sub" / "Target.md", "# T\n")
    (vault / "img").mkdir()
    (vault / "img" / "pic.png").write_bytes(b"png")
    assert broken_targets(vault, db) == []
    assert [t for _s, _r, t in links(db)] == [
        "sub/Target.md",
        "sub/Target.md",
        "sub/Target.md",
        "img/pic.png",
    ]
    # Deleted: every link to it breaks again.
    (vault / "sub" / "Target.md").unlink()
    assert broken_targets(vault, db) == [
        ("src.md", "Target"),
        ("src.md", "sub/Target"),
        ("src.md", "Target"),
    ]
    assert dump_index(db) == fresh_full_index(vault, tmp_path)


@pytest.mark.slow
def test_rename_breaks_old_links_and_resolves_links_to_the_new_name(tmp_path: Path) -> None:
    vault = make_vault(
        tmp_path / "v",
        {"a.md": "[[Old]] [[New]]\n", "b.md": "![[Old]]\n", "Old.md": "[[a]]\n"},
    )
    db = tmp_path / "i.db"
    assert broken_targets(vault, db) == [("a.md", "New")]
    (vault / "Old.md").rename(vault / "New.md")
    assert broken_targets(vault, db) == [("a.md", "Old"), ("b.md", "Old")]
    assert ("a.md", "[[New]]", "New.md") in links(db)
    # The renamed note's own links and backlinks are intact.
    show = run_inprocess("show", "New", "--json", "--vault", vault, "--db", db).json()
    assert [link["target"] for link in show["links"]] == ["a.md"]
    assert [b["source"] for b in show["backlinks"]] == ["a.md"]
    # A folder move: a path link breaks, a bare link follows the note.
    write(vault / "Sub" / "T.md", "")
    write(vault / "c.md", "[[Sub/T]] [[T]]\n")
    assert broken_targets(vault, db) == [("a.md", "Old"), ("b.md", "Old")]
    (vault / "Sub").rename(vault / "Sub2")
    assert broken_targets(vault, db) == [("a.md", "Old"), ("b.md", "Old"), ("c.md", "Sub/T")]
    assert ("c.md", "[[T]]", "Sub2/T.md") in links(db)
    assert dump_index(db) == fresh_full_index(vault, tmp_path)


def test_a_new_note_changes_an_ambiguous_resolution(tmp_path: Path) -> None:
    vault = make_vault(
        tmp_path / "v",
        {"A/Start.md": "[[Dup]]\n", "B/Long/Dup.md": "", "C/Dup.md": ""},
    )
    db = tmp_path / "i.db"
    with IndexWriter(db, vault, workers=1) as writer:
        reconcile(writer)
        assert links(db) == [("A/Start.md", "[[Dup]]", "C/Dup.md")]  # shortest path
        write(vault / "A" / "Sub" / "Dup.md", "")
        reconcile(writer)
        assert links(db) == [("A/Start.md", "[[Dup]]", "A/Sub/Dup.md")]  # source folder first
        (vault / "A" / "Sub" / "Dup.md").unlink()
        reconcile(writer)
        assert links(db) == [("A/Start.md", "[[Dup]]", "C/Dup.md")]
        (vault / "B" / "Long").rename(vault / "A" / "Long")  # a folder move into A/
        reconcile(writer)
        assert links(db) == [("A/Start.md", "[[Dup]]", "A/Long/Dup.md")]
        (vault / "A" / "Long").rename(vault / "B" / "Long")
        reconcile(writer)
        assert links(db) == [("A/Start.md", "[[Dup]]", "C/Dup.md")]
    assert dump_index(db) == fresh_full_index(vault, tmp_path)


def test_only_links_whose_resolution_can_change_are_re_resolved(
    writer: IndexWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = writer.vault
    write(vault / "hub.md", "[[Foo]] [[foo.md]] [[x/FOO]] [[Bar]] [[Baz]] [[Foo.png]] [[Foobar]]\n")
    write(vault / "other.md", "[[Foo#h]] [[Qux]]\n")
    reconcile(writer)
    resolved: list[tuple[str, str]] = []
    real = LinkTargets.resolve

    def spy(self: LinkTargets, linkpath: str, source: str) -> Any:
        resolved.append((linkpath, source))
        return real(self, linkpath, source)

    monkeypatch.setattr(LinkTargets, "resolve", spy)
    write(vault / "x" / "Foo.md", "")  # a new note without links
    reconcile(writer)
    keys = set(affected_name_keys("x/Foo.md"))
    assert {name_key(linkpath) for linkpath, _ in resolved} <= keys
    assert sorted(resolved) == sorted(
        [("Foo", "hub.md"), ("foo.md", "hub.md"), ("x/FOO", "hub.md"), ("Foo", "other.md")]
    )
    assert [t for s, r, t in links(writer.db_path) if s == "hub.md"] == [
        "x/Foo.md",
        "x/Foo.md",
        "x/Foo.md",
        None,
        None,
        None,
        None,
    ]


# -- the daemon's path: hints -----------------------------------------------------------------


@pytest.mark.slow
def test_apply_paths_follows_hints_for_both_ends_of_moves(tmp_path: Path) -> None:
    vault = make_vault(
        tmp_path / "v",
        {
            "a.md": "[[Note]] [[B/Other]]\n",
            "A/Note.md": "[[a]]\n",
            "B/Other.md": "",
            "B/c.png": b"x",
        },
    )
    db = tmp_path / "i.db"
    with IndexWriter(db, vault, workers=1) as writer:
        reconcile(writer)
        (vault / "A" / "Note.md").rename(vault / "A" / "Renamed.md")
        apply_paths(writer, ["A/Note.md", "A/Renamed.md"])
        assert dump_index(db) == fresh_full_index(vault, tmp_path)
        (vault / "B").rename(vault / "Moved")
        report = apply_paths(writer, ["B", "Moved"])
        # Just indexed, so racy: the note moves by its content hash; the attachment (no hash)
        # by its file name and size.
        assert (report.added, report.removed, report.moved) == (0, 0, 2)
        assert dump_index(db) == fresh_full_index(vault, tmp_path)
        shutil.rmtree(vault / "Moved")
        apply_paths(writer, ["Moved"])
        assert dump_index(db) == fresh_full_index(vault, tmp_path)
        write(vault / "Note.md", "")
        apply_paths(writer, ["Note.md", ".obsidian/workspace.json", "A/Renamed.md"])
        assert dump_index(db) == fresh_full_index(vault, tmp_path)


def test_excluded_files_setting_is_picked_up(tmp_path: Path) -> None:
    vault = make_vault(
        tmp_path / "v", {"a.md": "[[Archive/old]]\n", "Archive/old.md": "[[gone]]\n"}
    )
    db = tmp_path / "i.db"
    assert broken_targets(vault, db) == [("Archive/old.md", "gone")]
    write(vault / ".obsidian" / "app.json", json.dumps({"userIgnoreFilters": ["Archive/"]}))
    assert broken_targets(vault, db) == []  # excluded from reports, still a link target
    assert ("a.md", "[[Archive/old]]", "Archive/old.md") in links(db)
    assert dump_index(db) == fresh_full_index(vault, tmp_path)
