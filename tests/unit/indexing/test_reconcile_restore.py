"""indexing/reconcile.py: a restored or copied vault (new inodes, same bytes and mtimes) is
confirmed by content hash, never parsed again (issue 18); pool.hash_notes settles it on every
core."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from notedex.indexing import pool
from notedex.indexing.reconcile import apply_paths, reconcile
from notedex.store.writer import IndexWriter
from notedex.vault.walk import walk_vault
from tests.helpers import dump_index, write
from tests.indexcheck import age, fts_sound_after, make_vault

__all__ = ["fts_sound_after"]  # autouse: FTS integrity-check after every test


def populate(vault: Path, notes: int) -> None:
    for i in range(notes):
        write(
            vault / f"f{i % 7}" / f"n{i}.md",
            f"---\ntags: [t{i % 5}]\naliases: [A{i}]\n---\n# Note {i}\n\n"
            f"Body {i}. [[n{(i + 1) % notes}]] [[missing{i % 3}]] ![[pic{i % 2}.png]]\n",
        )
    (vault / "pic0.png").write_bytes(b"\x89PNG zero")
    (vault / "pic1.png").write_bytes(b"\x89PNG one")
    write(vault / "big.md", "x" * 300 + "\n")  # over the writer's cap below: name only


def restore_with_cp_a(vault: Path) -> None:
    """Put back a ``cp -a`` copy of the vault at its path: every file a new inode (the old
    ones are still in use while the copy is made), the same bytes and mtimes."""
    backup = vault.with_name(vault.name + ".backup")
    os.rename(vault, backup)
    subprocess.run(["cp", "-a", str(backup), str(vault)], check=True)
    shutil.rmtree(backup)


def fresh(writer: IndexWriter) -> dict[str, list[tuple[object, ...]]]:
    """A fresh full index of the writer's vault with its settings, dumped."""
    db = writer.db_path.with_name(f"fresh-{time.monotonic_ns()}.db")
    with IndexWriter(db, writer.vault, workers=1, max_bytes=writer.max_bytes) as new:
        reconcile(new)
    return dump_index(db)


@pytest.fixture
def writer(tmp_path: Path) -> Iterator[IndexWriter]:
    vault = make_vault(tmp_path / "v", {})
    with IndexWriter(tmp_path / "i.db", vault, workers=2, max_bytes=200) as w:
        yield w


@pytest.mark.slow
@pytest.mark.parametrize("notes", [40, pool.HASH_PARALLEL_THRESHOLD + 100])
def test_a_vault_restored_with_cp_a_is_unchanged_and_nothing_is_parsed(
    writer: IndexWriter, notes: int
) -> None:
    vault = writer.vault
    populate(vault, notes)
    age(vault)
    cold = reconcile(writer)
    assert (cold.added, writer.parsed) == (notes + 3, notes + 1)
    inodes = {vf.path: vf.inode for vf in walk_vault(vault).files}

    restore_with_cp_a(vault)
    after = walk_vault(vault).files
    assert all(inodes[vf.path] != vf.inode for vf in after)  # really new inodes

    parsed, hashed = writer.parsed, writer.hashed
    report = reconcile(writer)
    # errors: what the index holds (issue 34's one count), big.md's size error
    assert (report.added, report.changed, report.removed, report.errors) == (0, 0, 0, 1)
    assert (report.unchanged, report.rehashed) == (notes + 3, notes + 1)
    assert writer.parsed == parsed  # no note parsed again
    assert writer.hashed - hashed == notes + 1  # notes are hashed; attachments are not read
    assert dump_index(writer.db_path) == fresh(writer)

    # One real edit in the restored vault is still found, and only it is parsed.
    write(vault / "f1" / "n1.md", "# Edited\n\n[[n2]]\n")
    edited = reconcile(writer)
    assert (edited.changed, edited.rehashed, writer.parsed - parsed) == (1, 0, 1)
    assert dump_index(writer.db_path) == fresh(writer)


def test_same_size_other_bytes_under_a_new_inode_is_a_change(writer: IndexWriter) -> None:
    vault = writer.vault
    write(vault / "a.md", "[[b]]\n")
    write(vault / "b.md", "bee\n")
    age(vault)
    reconcile(writer)
    st = (vault / "a.md").stat()
    write(vault / "a.tmp", "[[c]]\n")  # a sync tool's atomic replace: new inode, same size
    os.utime(vault / "a.tmp", ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(vault / "a.tmp", vault / "a.md")

    parsed = writer.parsed
    report = reconcile(writer)
    assert (report.changed, report.rehashed, writer.parsed - parsed) == (1, 0, 1)
    assert dump_index(writer.db_path) == fresh(writer)


def test_a_touched_attachment_is_a_change_a_copied_one_is_not(writer: IndexWriter) -> None:
    """An attachment has no stored hash: a new mtime counts as a change (its row is updated),
    a new inode with the same size and mtime (a copy) does not."""
    vault = writer.vault
    (vault / "touched.png").write_bytes(b"png")
    (vault / "copied.png").write_bytes(b"png")
    age(vault)
    reconcile(writer)
    st = (vault / "touched.png").stat()
    os.utime(vault / "touched.png", ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    shutil.copy2(vault / "copied.png", vault / "copied.tmp")
    os.replace(vault / "copied.tmp", vault / "copied.png")

    report = reconcile(writer)
    assert (report.changed, report.unchanged, report.rehashed) == (1, 1, 0)
    assert dump_index(writer.db_path) == fresh(writer)


def test_the_daemons_path_hints_confirm_a_touch_by_hash(writer: IndexWriter) -> None:
    vault = writer.vault
    write(vault / "a.md", "[[b]]\n")
    write(vault / "b.md", "bee\n")
    age(vault)
    reconcile(writer)
    st = (vault / "a.md").stat()
    os.utime(vault / "a.md", ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # `touch`

    parsed = writer.parsed
    report = apply_paths(writer, ["a.md"])
    assert (report.changed, report.rehashed, writer.parsed - parsed) == (0, 1, 0)
    assert dump_index(writer.db_path) == fresh(writer)


@pytest.mark.slow
def test_hash_notes_in_the_pool_equals_one_process(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", {})
    populate(vault, pool.HASH_PARALLEL_THRESHOLD + 10)
    files = [vf for vf in walk_vault(vault).files if vf.is_note]
    gone, moved = files[3], files[5]
    os.unlink(gone.disk_path)  # cannot be read: None
    write(Path(moved.disk_path), "other\n")  # no longer the walked etag: None
    serial = pool.hash_notes(files, workers=1, max_bytes=200)
    assert pool.hash_notes(files, workers=2, max_bytes=200) == serial
    assert serial[3] is None and serial[5] is None
    assert sum(1 for h in serial if h is None) == 2
