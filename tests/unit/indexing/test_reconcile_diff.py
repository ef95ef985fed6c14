"""indexing/reconcile.py diff_against_index: the merge-join of the walk against the files rows, in path order, independent of the walk order (issue 6)."""

from __future__ import annotations

import os
import random
import subprocess
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from notedex.indexing.reconcile import Diff, _compare, diff_against_index, diff_entries, reconcile
from notedex.store import files as files_module
from notedex.store.files import IndexedFile
from notedex.store.writer import IndexWriter
from notedex.vault.model import VaultFile
from notedex.vault.walk import VaultStream
from tests.helpers import dump_index, fresh_full_index, write
from tests.indexcheck import age, fts_sound_after, make_vault
from tests.unit.vault.test_walk_stream import TRICKY

__all__ = ["fts_sound_after"]  # autouse: FTS integrity-check after every test


@pytest.fixture
def writer(tmp_path: Path) -> Iterator[IndexWriter]:
    vault = make_vault(tmp_path / "v", {name: "x\n" for name in TRICKY})
    with IndexWriter(tmp_path / "i.db", vault, workers=1) as w:
        yield w


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
        # Note.md -> note.md is a move, paired by its content hash (just indexed: racy).
        assert (report.added, report.changed, report.removed, report.moved) == (0, 0, 1, 1)
    assert dump_index(db) == fresh_full_index(vault, tmp_path)


def _reference(writer: IndexWriter, hinted: frozenset[str]) -> Diff:
    """The diff made the plain way: every walked file through ``_compare`` with its row."""
    from notedex.vault.walk import walk_vault

    diff = Diff()
    listed = walk_vault(writer.vault)
    rows = {row.path: row for row in writer.iter_files()}
    unreadable = writer.unreadable_paths()
    for vf in listed.files:
        _compare(vf, rows.pop(vf.path, None), unreadable, diff, forced=vf.path in hinted)
        diff.walked += 1
    diff.stale = rows
    return diff


def _shape(diff: Diff) -> tuple[list[str], list[str], list[str], list[str], int]:
    return (
        sorted(vf.path for vf in diff.upserts),
        sorted(vf.path for vf, _ in diff.to_hash),
        sorted(vf.path for vf, _ in diff.relinked),
        sorted(diff.stale),
        diff.walked,
    )


@pytest.fixture(params=["in process", "child"])
def rows_read(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The merge's rows read in process, or by a child process as at scale (issue 35)."""
    if request.param == "child":
        monkeypatch.setattr(files_module, "ASIDE_ROWS", 0)
    return str(request.param)


def test_the_streamed_diff_passes_over_only_what_the_plain_comparison_finds_unchanged(
    writer: IndexWriter, rows_read: str
) -> None:
    # diff_entries passes over a file whose stat matches its row without making an object
    # for it (issue 35): it must find exactly what _compare finds, file by file.
    vault = writer.vault
    age(vault)
    reconcile(writer)
    assert (
        _shape(diff_entries(writer, VaultStream(vault).entries))
        == _shape(_reference(writer, frozenset()))
        == ([], [], [], [], len(TRICKY))
    )

    same = vault / "A" / "x.md"  # the same size, its mtime put back: only the ctime moved
    st = os.stat(same)
    same.write_text("y\n")
    os.utime(same, ns=(st.st_atime_ns, st.st_mtime_ns))
    touched = vault / "Z.md"  # a new mtime, the same size
    os.utime(touched, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    (vault / "f.md").write_text("longer now\n")  # a new size
    pic = os.stat(vault / "img" / "pic.png")  # an attachment whose ctime alone moved
    os.utime(vault / "img" / "pic.png", ns=(pic.st_atime_ns, pic.st_mtime_ns))
    (vault / "A0.md").unlink()  # gone
    write(vault / "A b2.md", "new\n")  # new
    with writer.transaction():  # A.md read within its mtime's racy window
        writer.conn.execute("UPDATE files SET indexed_ns = mtime_ns WHERE path = 'A.md'")
    hinted = frozenset({"A-c.md"})  # an event named it: its content is compared
    streamed = _shape(diff_entries(writer, VaultStream(vault).entries, hinted))
    assert streamed == _shape(_reference(writer, hinted))
    upserts, to_hash, relinked, stale, walked = streamed
    assert walked == len(TRICKY)  # one gone, one new
    assert upserts == ["A b2.md", "f.md"] and stale == ["A0.md"]
    assert to_hash == ["A-c.md", "A.md", "A/x.md", "Z.md"] and relinked == ["img/pic.png"]


def test_the_streamed_diff_reads_the_differing_rows_a_chunk_at_a_time(
    writer: IndexWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A cp -a restore: every file under a new inode, so every row is read whole; a chunk at a
    # time (issue 35: the rows are not all held at once), with the same result.
    from notedex.indexing import reconcile as module

    vault = writer.vault
    age(vault)
    reconcile(writer)
    aside = vault.with_name("aside")
    os.rename(vault, aside)
    subprocess.run(["cp", "-a", str(aside), str(vault)], check=True)
    os.remove(vault / "A0.md")
    reads: list[int] = []
    real = IndexWriter.file_rows

    def counted(self: IndexWriter, paths: Iterable[str]) -> dict[str, IndexedFile]:
        wanted = list(paths)
        reads.append(len(wanted))
        return real(self, wanted)

    monkeypatch.setattr(module, "LOOKUP_CHUNK", 3)
    monkeypatch.setattr(IndexWriter, "file_rows", counted)
    streamed = _shape(diff_entries(writer, VaultStream(vault).entries))
    monkeypatch.setattr(IndexWriter, "file_rows", real)
    assert streamed == _shape(_reference(writer, frozenset()))
    assert streamed[3] == ["A0.md"] and streamed[2] == ["A/B c.png", "img/pic.png"]
    assert len(streamed[1]) == len(TRICKY) - 3  # every note left: its content decides
    assert max(reads) <= 3 and sum(reads) == len(TRICKY)  # every row, stale one included


def test_every_change_made_while_stopped_is_seen_with_the_rows_read_by_a_child(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A clean start of a large vault reads the rows' etags in a child process (issue 35): no
    # change may hide from that merge, whatever stat it keeps.
    vault = make_vault(
        tmp_path / "v",
        {
            "A/same.md": "one [[B/b]]\n",
            "A/reused.md": "reused\n",
            "A/old name.md": "renamed within its folder\n",
            "B/b.md": "# B\n",
            "C/inside.md": "a folder that becomes a file\n",
            "Case.md": "case only\n",
            "gone.md": "deleted\n",
            "pic.png": b"png",
        },
    )
    age(vault)
    db = tmp_path / "i.db"
    monkeypatch.setattr(files_module, "ASIDE_ROWS", 0)
    with IndexWriter(db, vault, workers=1) as writer:
        reconcile(writer)
        same = vault / "A" / "same.md"  # the same size, the mtime put back
        st = os.stat(same)
        same.write_text("two [[B/b]]\n")
        os.utime(same, ns=(st.st_atime_ns, st.st_mtime_ns))
        reused = vault / "A" / "reused.md"  # recreated: the same size and mtime
        st = os.stat(reused)
        reused.unlink()
        reused.write_text("REUSED\n")
        os.utime(reused, ns=(st.st_atime_ns, st.st_mtime_ns))
        (vault / "A" / "old name.md").rename(vault / "A" / "new name.md")
        (vault / "C" / "inside.md").unlink()
        (vault / "C").rmdir()
        write(vault / "C", "now a file, not a note\n")
        (vault / "Case.md").rename(vault / "case.md")
        (vault / "gone.md").unlink()
        write(vault / "D" / "E" / "new.md", "a new folder [[case]]\n")
        report = reconcile(writer)
        assert report.unchanged == 2  # B/b.md and pic.png, passed over
    assert dump_index(db) == fresh_full_index(vault, tmp_path)
