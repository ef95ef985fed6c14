"""indexing/reconcile.py: moves are path updates (issue 17). A file found under a new path
with its etag (size, mtime_ns, inode) keeps its rows; nothing is parsed again, and the index
equals a fresh full index of the vault."""

from __future__ import annotations

import os
import shutil
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from notedex.indexing.reconcile import apply_paths, reconcile
from notedex.store.files import IndexedFile
from notedex.store.writer import IndexWriter
from tests.helpers import dump_index, fresh_full_index, write
from tests.indexcheck import age, fts_sound_after, make_vault

__all__ = ["fts_sound_after"]  # autouse: FTS integrity-check after every test

FOLDERS = ("alpha", "beta", "gamma", "delta")


def populate(vault: Path, notes: int) -> None:
    """Notes in four folders, linking by name, by path and to names that collide across
    folders (the tie-break of SEMANTICS 7 depends on where a note is)."""
    for i in range(notes):
        folder = FOLDERS[i % 4]
        write(
            vault / "p" / folder / f"n{i}.md",
            f"---\ntags: [t{i % 5}]\n---\n# Note {i}\n\n[[n{(i + 1) % notes}]] "
            f"[[p/{FOLDERS[(i + 1) % 4]}/n{(i + 2) % notes}]] [[same]] [[missing{i % 3}]] "
            f"![[pic.png]]\n",
        )
    for folder in FOLDERS:
        write(vault / "p" / folder / "same.md", f"# Same in {folder}\n[[n1]]\n")
    (vault / "p" / "alpha" / "pic.png").write_bytes(b"png")
    write(vault / ".obsidian" / "app.json", '{"userIgnoreFilters": ["p/alpha-moved/"]}')


@pytest.fixture
def writer(tmp_path: Path) -> Iterator[IndexWriter]:
    vault = make_vault(tmp_path / "v", {})
    with IndexWriter(tmp_path / "i.db", vault, workers=2) as w:
        yield w


@pytest.mark.slow
def test_a_folder_renamed_and_back_is_moved_in_place_never_parsed(writer: IndexWriter) -> None:
    vault = writer.vault
    populate(vault, 2000)
    age(vault)
    reconcile(writer)
    fresh = fresh_full_index(vault, writer.db_path.parent)
    assert dump_index(writer.db_path) == fresh
    parsed = writer.parsed

    # A quarter of the vault, into a folder that Excluded files hide.
    os.rename(vault / "p" / "alpha", vault / "p" / "alpha-moved")
    report = reconcile(writer)
    assert (report.added, report.changed, report.removed, report.moved) == (0, 0, 0, 502)
    assert writer.parsed == parsed
    assert dump_index(writer.db_path) == fresh_full_index(vault, writer.db_path.parent)

    os.rename(vault / "p" / "alpha-moved", vault / "p" / "alpha")
    back = reconcile(writer)
    assert (back.added, back.changed, back.removed, back.moved) == (0, 0, 0, 502)
    assert writer.parsed == parsed
    assert dump_index(writer.db_path) == fresh


def test_renames_that_change_stems_and_resolution(writer: IndexWriter) -> None:
    vault = writer.vault
    write(vault / "a.md", "# A\n[[b]] [[c]] [[nowhere]]\n")
    write(vault / "b.md", "# B\n[[a]]\n")
    write(vault / "sub" / "c.md", "---\n: [\n---\n[[a]] [[nowhere]]\n")  # a parse error
    age(vault)
    reconcile(writer)
    parsed = writer.parsed
    os.rename(vault / "b.md", vault / "sub" / "b2.md")  # [[b]] breaks, [[a]] still resolves
    os.rename(vault / "sub" / "c.md", vault / "nowhere.md")  # [[c]] breaks, [[nowhere]] resolves
    report = reconcile(writer)
    assert (report.added, report.removed, report.moved, writer.parsed - parsed) == (0, 0, 2, 0)
    assert dump_index(writer.db_path) == fresh_full_index(vault, writer.db_path.parent)


def test_a_swap_is_two_moves(writer: IndexWriter) -> None:
    """Both paths stay in the index: each row moves to the other path, nothing is parsed."""
    vault = writer.vault
    write(vault / "a.md", "# A\n[[b]]\n")
    write(vault / "b.md", "# B, longer\n")
    write(vault / "c.md", "[[a]] [[b]]\n")
    age(vault)
    reconcile(writer)
    parsed = writer.parsed
    os.rename(vault / "a.md", vault / "tmp.md")
    os.rename(vault / "b.md", vault / "a.md")
    os.rename(vault / "tmp.md", vault / "b.md")
    report = reconcile(writer)
    assert (report.changed, report.moved, writer.parsed - parsed) == (0, 2, 0)
    assert dump_index(writer.db_path) == fresh_full_index(vault, writer.db_path.parent)


def test_a_rotation_of_same_size_copies_is_paired_by_content(writer: IndexWriter) -> None:
    """Rewritten files (new inodes and mtimes, as a git checkout leaves them), same sizes:
    the content hash tells which row is which."""
    vault = writer.vault
    texts = {name: f"# {name.upper()}\n[[{name}x]]\n" for name in ("a", "b", "c")}
    for name, text in texts.items():
        write(vault / f"{name}.md", text)
    write(vault / "ax.md", "[[a]]\n")
    age(vault)
    reconcile(writer)
    parsed = writer.parsed
    for old, new in (("a", "b"), ("b", "c"), ("c", "a")):
        (vault / f"{new}.md").unlink()
        write(vault / f"{new}.md", texts[old])
    age(vault)
    report = reconcile(writer)
    assert (report.added, report.changed, report.removed, report.moved) == (0, 0, 0, 3)
    assert writer.parsed == parsed
    assert dump_index(writer.db_path) == fresh_full_index(vault, writer.db_path.parent)


def test_a_copy_and_delete_is_a_move_by_content(writer: IndexWriter) -> None:
    """Across file systems (or by git) a move is a new file with the same bytes: a new inode
    and mtime. Two gone notes with equal content are both paired."""
    vault = writer.vault
    populate(vault, 40)
    write(vault / "p" / "alpha" / "twin1.md", "same bytes\n")
    write(vault / "p" / "alpha" / "twin2.md", "same bytes\n")
    age(vault)
    reconcile(writer)
    parsed = writer.parsed
    moved = 0
    for src in sorted((vault / "p" / "alpha").glob("*.md")):
        data = src.read_bytes()
        src.unlink()
        (vault / "elsewhere").mkdir(exist_ok=True)
        (vault / "elsewhere" / src.name).write_bytes(data)
        moved += 1
    age(vault)
    report = reconcile(writer)
    assert (report.added, report.removed, report.moved) == (0, 0, moved)
    assert writer.parsed == parsed
    assert dump_index(writer.db_path) == fresh_full_index(vault, writer.db_path.parent)


def test_a_rename_over_an_existing_note(writer: IndexWriter) -> None:
    """``mv a.md b.md`` while b.md exists: b's row goes, a's row takes its path."""
    vault = writer.vault
    write(vault / "a.md", "# A\n[[b]]\n")
    write(vault / "b.md", "# B\n")
    write(vault / "c.md", "[[a]]\n")
    age(vault)
    reconcile(writer)
    parsed = writer.parsed
    os.rename(vault / "a.md", vault / "b.md")
    report = apply_paths(writer, ["a.md", "b.md"])
    assert (report.added, report.changed, report.removed, report.moved) == (0, 0, 1, 1)
    assert writer.parsed == parsed
    assert dump_index(writer.db_path) == fresh_full_index(vault, writer.db_path.parent)


def test_the_daemons_path_hints_move_too(writer: IndexWriter) -> None:
    vault = writer.vault
    populate(vault, 40)
    age(vault)
    reconcile(writer)
    parsed = writer.parsed
    os.rename(vault / "p" / "beta", vault / "q")
    report = apply_paths(writer, ["p/beta", "q"])
    assert (report.added, report.removed, report.moved, writer.parsed - parsed) == (0, 0, 11, 0)
    assert dump_index(writer.db_path) == fresh_full_index(vault, writer.db_path.parent)


def test_the_daemons_hints_pair_a_copied_folder_by_content(writer: IndexWriter) -> None:
    vault = writer.vault
    populate(vault, 40)
    age(vault)
    reconcile(writer)
    parsed = writer.parsed
    shutil.copytree(vault / "p" / "gamma", vault / "r", copy_function=shutil.copyfile)
    shutil.rmtree(vault / "p" / "gamma")
    report = apply_paths(writer, ["p/gamma", "r"])
    assert (report.added, report.removed, report.moved, writer.parsed - parsed) == (0, 0, 11, 0)
    assert dump_index(writer.db_path) == fresh_full_index(vault, writer.db_path.parent)


def test_a_move_with_an_edit_is_a_delete_and_an_add(writer: IndexWriter) -> None:
    vault = writer.vault
    write(vault / "a.md", "# A\n")
    write(vault / "b.md", "[[a]]\n")
    age(vault)
    reconcile(writer)
    os.rename(vault / "a.md", vault / "c.md")
    write(vault / "c.md", "# C, edited\n")
    report = reconcile(writer)
    assert (report.added, report.removed, report.moved) == (1, 1, 0)
    assert dump_index(writer.db_path) == fresh_full_index(vault, writer.db_path.parent)


@pytest.mark.slow
def test_readers_see_a_folder_move_whole_or_not_at_all(writer: IndexWriter) -> None:
    """A reader polling throughout a folder move (with other changes in the same apply) sees
    the folder under its old path or its new one, never split."""
    vault = writer.vault
    populate(vault, 1200)
    age(vault)
    reconcile(writer)
    for i in range(1500):
        write(vault / "new" / f"x{i}.md", f"# X {i}\n[[n{i}]]\n")  # more than one chunk
    os.rename(vault / "p" / "beta", vault / "p" / "beta2")
    seen: set[tuple[int, int]] = set()
    done = threading.Event()

    def read() -> None:
        conn = sqlite3.connect(f"file:{writer.db_path}?mode=ro", uri=True, timeout=10)
        try:
            while not done.is_set():
                seen.add(
                    conn.execute(
                        "SELECT sum(path LIKE 'p/beta/%'), sum(path LIKE 'p/beta2/%') FROM files"
                    ).fetchone()
                )
        finally:
            conn.close()

    reader = threading.Thread(target=read)
    reader.start()
    try:
        report = reconcile(writer)
    finally:
        done.set()
        reader.join()
    assert report.moved == 301
    assert seen <= {(301, 0), (0, 301)} and (0, 301) in seen
    assert dump_index(writer.db_path) == fresh_full_index(vault, writer.db_path.parent)


@pytest.mark.slow
def test_a_folder_rename_re_resolves_what_depends_on_the_folder(writer: IndexWriter) -> None:
    """A folder rename keeps every file's name, so a bare name with one candidate keeps its
    target (SEMANTICS 7.4); what can change is each case that reads a path: the tie-break
    (7.7, the source's folder and the shortest path), a path (7.6), a relative path (7.5),
    and the fix suggested for a broken link (8.3). Each must end as a fresh full index."""
    vault = writer.vault
    write(vault / "f" / "dup.md", "# dup in f\n")
    write(vault / "f" / "inner" / "own.md", "# own\n[[dup]] [[../dup]] [[./deep/x]] [[unique]]\n")
    write(vault / "f" / "inner" / "deep" / "x.md", "# x\n[[f/inner/own]] [[g/dup]]\n")
    write(vault / "f" / "Alias Owner.md", "---\naliases: [Zed]\n---\n# owner\n")
    write(vault / "g" / "dup.md", "# dup in g\n[[inner/own]] [[h/inner/own]]\n")
    write(vault / "g" / "Alias Owner.md", "# the other owner name\n")
    write(vault / "gg" / "dup.md", "# dup in gg\n")
    write(vault / "unique.md", "# unique\n[[dup]] [[f/dup]] [[h/dup]] [[Zed]] [[x]]\n")
    write(
        vault / "z" / "y.md",
        "[[own]] [[deep/x.md]] [[Zed|z]] [[f/nothing]] [[own#top]] [[inerr]] [[dupx]]\n",
    )
    age(vault)
    reconcile(writer)
    parsed = writer.parsed
    for old, new in (("f", "h"), ("h", "a/very/long/folder"), ("a/very/long/folder", "f")):
        (vault / new).parent.mkdir(parents=True, exist_ok=True)
        os.rename(vault / old, vault / new)
        report = apply_paths(writer, [old, new])
        assert (report.added, report.removed, report.moved) == (0, 0, 4), (old, new)
        assert writer.parsed == parsed
        assert dump_index(writer.db_path) == fresh_full_index(vault, writer.db_path.parent)


def test_a_folder_rename_with_other_changes_in_the_same_apply(writer: IndexWriter) -> None:
    """Moves next to a deletion and a creation that share the moved files' names: the
    candidates of those names change in the same transaction."""
    vault = writer.vault
    write(vault / "f" / "dup.md", "# dup in f\n[[dup]]\n")
    write(vault / "g" / "dup.md", "# dup in g\n")
    write(vault / "f" / "solo.md", "# solo\n[[dup]] [[solo]]\n")
    write(vault / "top.md", "[[dup]] [[solo]] [[k/solo]]\n")
    age(vault)
    reconcile(writer)
    os.rename(vault / "f", vault / "k")
    (vault / "g" / "dup.md").unlink()
    write(vault / "k2" / "solo.md", "# another solo\n")
    report = apply_paths(writer, ["f", "k", "g/dup.md", "k2"])
    assert (report.added, report.removed, report.moved) == (1, 1, 2)
    assert dump_index(writer.db_path) == fresh_full_index(vault, writer.db_path.parent)


def test_a_folder_renames_rows_are_read_once(
    writer: IndexWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rows under a looked-at folder come with its look (``files_under``): pairing, the hold
    and the apply read no path under it again (issue 17: seven reads of the same 24k paths)."""
    vault = writer.vault
    populate(vault, 40)
    age(vault)
    reconcile(writer)
    looked_up: list[str] = []
    file_rows = writer.file_rows

    def counting(paths: Iterable[str]) -> dict[str, IndexedFile]:
        paths = list(paths)
        looked_up.extend(paths)
        return file_rows(paths)

    monkeypatch.setattr(writer, "file_rows", counting)
    os.rename(vault / "p" / "beta", vault / "q")
    write(vault / "loose.md", "# Loose\n[[q/n1]]\n")
    report = apply_paths(writer, ["p/beta", "q", "loose.md"], hold_unpaired=set())
    assert (report.added, report.removed, report.moved) == (1, 0, 11)
    assert looked_up == []  # every row came with a look, the file hint's own included
    assert dump_index(writer.db_path) == fresh_full_index(vault, writer.db_path.parent)


def test_a_folder_moved_over_a_replaced_indexed_folder(writer: IndexWriter) -> None:
    """Rows already under the destination are read with its look: a file that lands on one is
    paired, and the replaced row goes (the memo must not take them for absent)."""
    vault = writer.vault
    populate(vault, 40)
    write(vault / "q" / "n1.md", "# an older q/n1\n[[n2]]\n")
    write(vault / "q" / "only.md", "# only in the old q\n")
    age(vault)
    reconcile(writer)
    parsed = writer.parsed
    shutil.rmtree(vault / "q")
    os.rename(vault / "p" / "beta", vault / "q")
    report = apply_paths(writer, ["q", "p/beta"])
    # q/only.md goes, and so does the old q/n1.md: a move lands on its path
    assert (report.added, report.removed, report.moved, writer.parsed - parsed) == (0, 2, 11, 0)
    assert dump_index(writer.db_path) == fresh_full_index(vault, writer.db_path.parent)
