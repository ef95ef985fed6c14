"""The daemon's low-memory paths (issue 6): the streaming walk, the merge-join diff of the walk
against the ``files`` rows, and the hash -> id index the writer finds link candidates with.
"""

from __future__ import annotations

import os
import random
import sqlite3
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest

from notedex.indexing.reconcile import diff_against_index, reconcile
from notedex.store import keyindex
from notedex.store.keyindex import FileKeyIndex
from notedex.store.writer import IndexWriter
from notedex.vault.model import VaultFile
from notedex.vault.resolve import file_keys
from notedex.vault.walk import VaultStream, walk_vault
from tests.helpers import dump_index, fresh_full_index, write
from tests.indexcheck import age, fts_sound_after, make_vault

__all__ = ["fts_sound_after"]  # autouse: FTS integrity-check after every test

needs_symlinks = pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks")

# Names whose path order differs from a naive depth-first order ("A b.md" < "A/x.md" < "A0.md")
# or from the order of their on-disk bytes (an NFD "é" sorts before "f", its NFC form after).
TRICKY = [
    "A b.md",
    "A/x.md",
    "A/B/y.md",
    "A-c.md",
    "A.md",
    "A0.md",
    "a/lower.md",
    "Z.md",
    "f.md",
    unicodedata.normalize("NFD", "é.md"),
    "日本/語.md",
    "img/pic.png",
    "A/B c.png",
]


def sqlite_order(paths: list[str]) -> list[str]:
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("CREATE TABLE t(path TEXT PRIMARY KEY)")
        conn.executemany("INSERT INTO t VALUES (?)", [(p,) for p in paths])
        return [row[0] for row in conn.execute("SELECT path FROM t ORDER BY path")]
    finally:
        conn.close()


@pytest.fixture
def writer(tmp_path: Path) -> Iterator[IndexWriter]:
    vault = make_vault(tmp_path / "v", {name: "x\n" for name in TRICKY})
    with IndexWriter(tmp_path / "i.db", vault, workers=1) as w:
        yield w


# -- the streaming walk --------------------------------------------------------------------


def test_stream_yields_the_real_tree_in_sqlite_path_order(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", {name: "x\n" for name in TRICKY})
    streamed = [f.path for f in VaultStream(vault).files]
    assert streamed == sqlite_order(streamed)
    assert streamed == [f.path for f in walk_vault(vault).files]
    assert unicodedata.normalize("NFC", "é.md") in streamed


@needs_symlinks
def test_stream_leaves_symlinked_folders_for_last_and_reports_after_exhaustion(
    tmp_path: Path,
) -> None:
    outside = make_vault(tmp_path / "outside", {"shared.md": "x\n"})
    vault = make_vault(tmp_path / "v", {"A.md": "x\n", "Z.md": "x\n", "sub/.hidden.md": "x\n"})
    os.symlink(outside, vault / "B-link")
    os.symlink(tmp_path / "missing.md", vault / "dangling.md")
    stream = VaultStream(vault)
    files = [f.path for f in stream.files]
    assert files == ["A.md", "Z.md", "B-link/shared.md"]
    whole = walk_vault(vault)
    assert [p.path for p in stream.problems] == ["dangling.md"]
    assert stream.problems == whole.problems
    assert stream.unreadable_dirs == whole.unreadable_dirs == ()


# -- the merge-join diff ---------------------------------------------------------------------


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
        assert (report.added, report.changed, report.removed) == (1, 0, 2)
    assert dump_index(db) == fresh_full_index(vault, tmp_path)


# -- the link-candidate index ------------------------------------------------------------------


def test_key_index_files_names_and_note_stems() -> None:
    index = FileKeyIndex([(1, "A/Foo.md"), (2, "img/foo.png"), (3, "B/foo.md")])
    assert sorted(index.ids("foo")) == [1, 3]
    assert sorted(index.ids("foo.md")) == [1, 3]
    assert list(index.ids("foo.png")) == [2]
    assert list(index.ids("bar")) == []
    index.add([(4, "C/FOO")])  # no extension: a name key only
    assert sorted(index.ids("foo")) == [1, 3, 4]
    index.remove(1, "A/Foo.md")
    assert sorted(index.ids("foo")) == [3, 4]
    assert sorted(index.ids("foo.md")) == [3]
    index.add([(10 + i, f"n/{i}.md") for i in range(keyindex.REBUILD_AT + 1)])  # re-sorted
    assert list(index.ids("7")) == [17]
    assert sorted(index.ids("foo")) == [3, 4]
    assert len(index) == 2 + 1 + 1 + 2 * (keyindex.REBUILD_AT + 1)


def test_key_index_keys_are_the_resolver_keys() -> None:
    index = FileKeyIndex([(1, "Λόγος.md")])
    name_key, stem_key = file_keys("Λόγος.md")
    assert list(index.ids(name_key)) == [1] and list(index.ids(stem_key or "")) == [1]


def test_colliding_key_hashes_never_change_a_resolution(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every key hashes alike: every file is a candidate of every link, yet each link still
    resolves exactly as SEMANTICS 7 says (the candidates are re-filed by their real keys)."""
    monkeypatch.setattr(keyindex, "hash", lambda key: 42, raising=False)
    files = {
        "Note.md": "[[Dup]] [[pic.png]] [[pic]] [[v1.2]] [[A/B/Dup]] [[nope]]\n",
        "A/Start.md": "[[Dup]] [[note]]\n",
        "A/B/Dup.md": "",
        "C/Dup.md": "[[Dup]] [[../Note]]\n",
        "img/pic.png": "",
        "v1.2.md": "",
    }
    vault = make_vault(tmp_path / "v", files)
    db = tmp_path / "i.db"
    with IndexWriter(db, vault, workers=1) as writer:
        reconcile(writer)
        write(vault / "Dup.md", "now a unique bare name?\n")
        (vault / "C" / "Dup.md").unlink()
        reconcile(writer)
    monkeypatch.undo()
    assert dump_index(db) == fresh_full_index(vault, tmp_path)
