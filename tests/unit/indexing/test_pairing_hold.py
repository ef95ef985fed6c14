"""indexing/pairing.py ``hold``: the daemon pairs the two ends of a move across two batches (a
`git checkout` writes each file anew and unlinks the old one; the batcher's cap cuts that stream
anywhere). Nothing is parsed, nothing invented or lost, and the index ends equal to a fresh full
index."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from notedex.indexing import pairing
from notedex.indexing.pairing import HOLD_MIN
from notedex.indexing.reconcile import apply_paths, reconcile
from notedex.store.writer import IndexWriter
from tests.helpers import dump_index, fresh_full_index, write
from tests.indexcheck import fts_sound_after, make_vault

__all__ = ["fts_sound_after"]  # autouse: FTS integrity-check after every test

N = 2 * HOLD_MIN + 4


@pytest.fixture
def writer(tmp_path: Path) -> Iterator[IndexWriter]:
    vault = make_vault(tmp_path / "v", {})
    for i in range(N):
        write(vault / "a" / f"n{i}.md", f"# N{i}\n[[n{(i + 1) % N}]] [[a/n{(i + 3) % N}]]\n")
    write(vault / "out.md", "# Out\n[[a/n1]] [[b/n2]] [[n4]]\n")
    with IndexWriter(tmp_path / "i.db", vault, workers=1) as w:
        reconcile(w)
        yield w


def _rewrite(vault: Path, i: int, *, unlink: bool = True) -> None:
    """What git does to one moved file: written anew (a new inode), the old one unlinked."""
    src, dst = vault / "a" / f"n{i}.md", vault / "b" / f"n{i}.md"
    dst.parent.mkdir(exist_ok=True)
    dst.write_bytes(src.read_bytes())
    if unlink:
        src.unlink()


def test_new_copies_whose_sources_go_next_batch_are_held_and_paired(
    writer: IndexWriter, tmp_path: Path
) -> None:
    vault, parsed, hashed = writer.vault, writer.parsed, writer.hashed
    half = N // 2
    for i in range(N):
        _rewrite(vault, i, unlink=i < half)  # the second half's old files go in the next batch
    hints = [f"b/n{i}.md" for i in range(N)] + [f"a/n{i}.md" for i in range(half)]
    first = apply_paths(writer, hints, hold_unpaired=set())
    assert first.moved == half and first.added == 0
    assert writer.hashed - hashed == N  # each new note read once: the held ones too
    assert first.held == sorted(f"b/n{i}.md" for i in range(half, N))
    for i in range(half, N):
        os.unlink(vault / "a" / f"n{i}.md")
    again = [*first.held, *(f"a/n{i}.md" for i in range(half, N))]
    second = apply_paths(writer, again, hold_unpaired=set(first.held))
    assert second.moved == N - half and second.added == second.removed == 0
    assert second.held == []
    assert writer.parsed == parsed  # a move, never a parse
    assert dump_index(writer.db_path) == fresh_full_index(vault, tmp_path)


def test_deletes_whose_files_come_back_next_batch_are_held_and_paired(
    writer: IndexWriter, tmp_path: Path
) -> None:
    vault, parsed = writer.vault, writer.parsed
    kept = {i: (vault / "a" / f"n{i}.md").read_bytes() for i in range(N)}
    for i in range(N):
        os.unlink(vault / "a" / f"n{i}.md")  # git removes first...
    first = apply_paths(writer, ["a"], hold_unpaired=set())
    assert first.removed == 0 and len(first.held) == N
    assert writer.file_rows([f"a/n{i}.md" for i in range(N)]).keys() == set(first.held)
    for i, data in kept.items():
        write(vault / "b" / f"n{i}.md", data.decode())  # ...and writes the new paths next
    second = apply_paths(writer, [*first.held, "b"], hold_unpaired=set(first.held))
    assert second.moved == N and second.removed == second.added == 0
    assert writer.parsed == parsed
    assert dump_index(writer.db_path) == fresh_full_index(vault, tmp_path)


def test_a_held_delete_that_nothing_pairs_is_a_delete_one_batch_later(
    writer: IndexWriter, tmp_path: Path
) -> None:
    vault = writer.vault
    for i in range(N):
        os.unlink(vault / "a" / f"n{i}.md")
    first = apply_paths(writer, ["a"], hold_unpaired=set())
    assert len(first.held) == N
    second = apply_paths(writer, first.held, hold_unpaired=set(first.held))
    assert second.removed == N and second.held == []
    assert dump_index(writer.db_path) == fresh_full_index(vault, tmp_path)


def test_a_lone_delete_or_new_note_is_applied_at_once(writer: IndexWriter, tmp_path: Path) -> None:
    vault = writer.vault
    os.unlink(vault / "a" / "n0.md")
    _rewrite(vault, 1, unlink=False)  # a copy: its source stays
    report = apply_paths(writer, ["a/n0.md", "b/n1.md"], hold_unpaired=set())
    assert report.held == [] and report.removed == 1 and report.added == 1
    assert dump_index(writer.db_path) == fresh_full_index(vault, tmp_path)


def test_without_hold_nothing_is_held(writer: IndexWriter, tmp_path: Path) -> None:
    vault = writer.vault
    for i in range(N):
        os.unlink(vault / "a" / f"n{i}.md")
    report = apply_paths(writer, ["a"])
    assert report.held == [] and report.removed == N
    assert dump_index(writer.db_path) == fresh_full_index(vault, tmp_path)


def test_a_folder_of_copies_pasted_in_is_not_held(writer: IndexWriter, tmp_path: Path) -> None:
    vault = writer.vault
    for i in range(N):
        _rewrite(vault, i, unlink=False)  # copies: nothing leaves
    report = apply_paths(writer, ["b"], hold_unpaired=set())
    assert report.held == [] and report.added == N
    assert dump_index(writer.db_path) == fresh_full_index(vault, tmp_path)


def _git_rewrite(vault: Path, src: str, dst: str) -> None:
    """A file rewritten under another path, as git does: new bytes on disk, the old unlinked."""
    data = (vault / src).read_bytes()
    (vault / dst).parent.mkdir(parents=True, exist_ok=True)
    (vault / dst).write_bytes(data)
    os.utime(vault / dst, ns=(1_000_000_000, 1_000_000_000))  # a new mtime, surely
    (vault / src).unlink()


def test_rewritten_attachments_pair_by_file_name_and_size_unique_on_both_sides(
    writer: IndexWriter, tmp_path: Path
) -> None:
    vault = writer.vault
    files = {"a/p0.png": b"x" * 10, "a/p1.png": b"y" * 11, "a/s/dup.png": b"z", "a/t/dup.png": b"w"}
    files["a/resized.png"] = b"r" * 5
    for rel, data in files.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_bytes(data)
    reconcile(writer)
    parsed = writer.parsed
    for rel in [*files, *(f"a/n{i}.md" for i in range(N))]:
        _git_rewrite(vault, rel, "b" + rel[1:])
    (vault / "b" / "resized.png").write_bytes(b"r" * 6)  # the same name, another size
    report = apply_paths(writer, ["a", "b"])
    # The notes by content, p0 and p1 by name and size; the two dup.png (one name, one size:
    # which went where is a guess) and resized.png are deletes and adds.
    assert (report.moved, report.added, report.removed) == (N + 2, 3, 3)
    assert writer.parsed == parsed
    assert dump_index(writer.db_path) == fresh_full_index(vault, tmp_path)


def test_a_deleted_attachment_is_held_with_the_notes_and_paired_next_batch(
    writer: IndexWriter, tmp_path: Path
) -> None:
    vault = writer.vault
    (vault / "a" / "pic.png").write_bytes(b"png")
    reconcile(writer)
    kept = {p.name: p.read_bytes() for p in (vault / "a").iterdir()}
    for name in kept:
        os.unlink(vault / "a" / name)  # git removes first...
    first = apply_paths(writer, ["a"], hold_unpaired=set())
    assert "a/pic.png" in first.held and first.removed == 0
    for name, data in kept.items():  # ...and writes the new paths next
        (vault / "b").mkdir(exist_ok=True)
        (vault / "b" / name).write_bytes(data)
    second = apply_paths(writer, [*first.held, "b"], hold_unpaired=set(first.held))
    assert (second.moved, second.added, second.removed) == (N + 1, 0, 0)
    assert dump_index(writer.db_path) == fresh_full_index(vault, tmp_path)


def test_a_batch_hashes_in_the_writers_process_below_the_pool_minimum(
    writer: IndexWriter, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Starting the parse pool cost the daemon 1-2 s a batch (issue 17)."""
    used: list[int] = []
    real = pairing.hash_notes

    def spy(notes: list[Any], *, workers: int, max_bytes: int) -> list[str | None]:
        used.append(workers)
        return real(notes, workers=workers, max_bytes=max_bytes)

    monkeypatch.setattr(pairing, "hash_notes", spy)
    writer.workers = 4
    for i in range(N):
        _rewrite(writer.vault, i)
    assert apply_paths(writer, ["a", "b"]).moved == N
    assert used and set(used) == {1}
    monkeypatch.setattr(pairing, "POOL_MIN", N)
    for i in range(N):
        _git_rewrite(writer.vault, f"b/n{i}.md", f"c/n{i}.md")
    assert apply_paths(writer, ["b", "c"]).moved == N
    assert used[-1] == 4
    assert dump_index(writer.db_path) == fresh_full_index(writer.vault, tmp_path)


def test_a_new_attachment_whose_old_path_goes_next_batch_is_held_and_paired(
    writer: IndexWriter, tmp_path: Path
) -> None:
    vault = writer.vault
    (vault / "a" / "pic.png").write_bytes(b"png")
    (vault / "a" / "kept.png").write_bytes(b"kept")
    reconcile(writer)
    for i in range(N):
        _rewrite(vault, i)
    (vault / "b" / "pic.png").write_bytes(b"png")  # its old path goes in the next batch
    (vault / "b" / "other.png").write_bytes(b"kept!")  # no attachment of its name and size
    first = apply_paths(writer, ["a", "b"], hold_unpaired=set())
    assert first.moved == N and first.held == ["b/pic.png"] and first.added == 1
    os.unlink(vault / "a" / "pic.png")
    second = apply_paths(writer, ["b/pic.png", "a/pic.png"], hold_unpaired=set(first.held))
    assert (second.moved, second.added, second.removed) == (1, 0, 0)
    assert dump_index(writer.db_path) == fresh_full_index(vault, tmp_path)


def test_a_new_file_met_empty_by_a_walk_is_held_until_it_is_written(
    writer: IndexWriter, tmp_path: Path
) -> None:
    """A checkout storm: the walk of the new folder meets a file created but not yet written
    (size 0) while its old path is still indexed. Indexed then, a reader would see the note at
    both paths, and an empty note; held, it pairs with its old path once written."""
    vault, parsed = writer.vault, writer.parsed
    for i in range(N - 1):
        _rewrite(vault, i)
    last_old, last_new = vault / "a" / f"n{N - 1}.md", vault / "b" / f"n{N - 1}.md"
    last_new.touch()  # git's open(O_CREAT): the bytes come a moment later
    hints = ["b", *(f"a/n{i}.md" for i in range(N - 1))]
    first = apply_paths(writer, hints, hold_unpaired=set())
    assert first.moved == N - 1 and first.added == 0 and first.held == [f"b/n{N - 1}.md"]
    assert f"b/n{N - 1}.md" not in writer.file_rows([f"b/n{N - 1}.md"])
    last_new.write_bytes(last_old.read_bytes())
    last_old.unlink()
    second = apply_paths(writer, [*first.held, f"a/n{N - 1}.md"], hold_unpaired=set(first.held))
    assert second.moved == 1 and second.added == second.removed == 0
    assert writer.parsed == parsed
    assert dump_index(writer.db_path) == fresh_full_index(vault, tmp_path)


def test_an_empty_note_that_stays_empty_is_indexed_one_batch_later(
    writer: IndexWriter, tmp_path: Path
) -> None:
    vault = writer.vault
    for i in range(N):
        _rewrite(vault, i)
    (vault / "b" / "empty.md").touch()
    hints = ["b", *(f"a/n{i}.md" for i in range(N))]
    first = apply_paths(writer, hints, hold_unpaired=set())
    assert first.moved == N and first.held == ["b/empty.md"]
    second = apply_paths(writer, first.held, hold_unpaired=set(first.held))
    assert second.added == 1 and second.held == []
    assert dump_index(writer.db_path) == fresh_full_index(vault, tmp_path)
