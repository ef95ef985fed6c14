"""Faults that used to lose or invent notes while the daemon runs (issue 13).

Each test is one deterministic scenario and ends with the index equal to a fresh full index of
the vault and a sound FTS (``assert_converges``).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.helpers import write
from tests.indexcheck import age
from tests.system.daemons import Daemons, assert_converges, note


def test_folder_moved_out_of_the_vault_and_back_stays_watched(
    daemons: Daemons, vault: Path, db_path: Path, tmp_path: Path
) -> None:
    write(vault / "P" / "F" / "old.md", note("Old", links="[[kept]]"))
    write(vault / "P" / "F" / "sub" / "kept.md", note("Kept"))
    write(vault / "P" / "F" / "sub" / "gone.md", note("Gone"))
    write(vault / "P" / "other.md", note("Other"))
    (vault / "40_Archive").mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    run = daemons.start()

    os.rename(vault / "P" / "F", outside / "F")
    os.rename(outside / "F", vault / "40_Archive" / "G")
    os.rename(vault / "P", vault / "P2")
    assert_converges(vault, db_path, tmp_path, run=run)

    # The folder that came back is heard again, at its new place, and so is its subfolder.
    write(vault / "40_Archive" / "G" / "new.md", note("New", links="[[old]]"))
    write(vault / "40_Archive" / "G" / "sub" / "deeper.md", note("Deeper"))
    write(vault / "40_Archive" / "G" / "old.md", note("Old edited", tags="edited"))
    (vault / "40_Archive" / "G" / "sub" / "gone.md").unlink()
    assert_converges(vault, db_path, tmp_path, run=run)
    assert not run.find("batch", sample=["P2/F/new.md"])
    assert not [b for b in run.find("batch") if any(p.startswith("P2/F") for p in b["sample"])]


def _projects(vault: Path) -> None:
    for i in range(3):
        write(vault / "10_Projects" / "alpha" / f"a{i}.md", note(f"Alpha {i}", links="[[b0]]"))
    write(vault / "10_Projects" / "alpha" / "deep" / "b0.md", note("Bee"))
    write(vault / "20_Areas" / "area.md", note("Area", links="[[a1]]"))


def test_symlink_to_a_folder_already_in_the_vault_invents_no_notes(
    daemons: Daemons, vault: Path, db_path: Path, tmp_path: Path
) -> None:
    _projects(vault)
    run = daemons.start()
    (vault / "alpha-link").symlink_to("10_Projects/alpha", target_is_directory=True)
    # And one inside a folder, to a folder above it that is already in the vault.
    (vault / "20_Areas" / "projects-link").symlink_to("../10_Projects", target_is_directory=True)
    assert_converges(vault, db_path, tmp_path, run=run)


def test_symlink_loop_created_while_running_invents_no_notes(
    daemons: Daemons, vault: Path, db_path: Path, tmp_path: Path
) -> None:
    _projects(vault)
    run = daemons.start()
    (vault / "20_Areas" / "loop").symlink_to("..", target_is_directory=True)
    assert_converges(vault, db_path, tmp_path, run=run)
    # A folder event over a subtree holding the loop walks it with the vault-wide rules too.
    write(vault / "20_Areas" / "sub" / "x.md", note("X"))
    (vault / "20_Areas" / "sub" / "up").symlink_to("../..", target_is_directory=True)
    os.rename(vault / "20_Areas", vault / "21_Areas")
    assert_converges(vault, db_path, tmp_path, run=run)


def test_a_note_that_becomes_a_fifo_a_folder_or_a_dangling_symlink_is_no_longer_a_note(
    daemons: Daemons, vault: Path, db_path: Path, tmp_path: Path
) -> None:
    for name in ("fifo", "folder", "dangling"):
        write(vault / f"{name}.md", note(name.title()))
    write(vault / "linker.md", note("Linker", links="[[fifo]] [[folder]] [[dangling]]"))
    run = daemons.start()
    for name in ("fifo", "folder", "dangling"):
        (vault / f"{name}.md").unlink()
    os.mkfifo(vault / "fifo.md")
    write(vault / "folder.md" / "inside.md", note("Inside"))
    (vault / "dangling.md").symlink_to("nowhere.md")
    assert_converges(vault, db_path, tmp_path, run=run)


@pytest.mark.slow
def test_a_folder_replaced_by_a_file_of_the_same_name_leaves_no_phantoms(
    daemons: Daemons, vault: Path, db_path: Path, tmp_path: Path
) -> None:
    for i in range(20):
        write(vault / "F" / f"n{i}.md", note(f"N {i}"))
        write(vault / "F" / "sub" / f"s{i}.md", note(f"S {i}"))
    run = daemons.start()
    shutil.rmtree(vault / "F")
    write(vault / "F", "a file now\n")
    assert_converges(vault, db_path, tmp_path, run=run)


def test_a_same_size_rewrite_whose_mtime_is_put_back_is_indexed(
    daemons: Daemons, vault: Path, db_path: Path, tmp_path: Path
) -> None:
    write(vault / "a.md", note("Alpha", tags="aaaa"))
    write(vault / "b.md", note("Bravo", tags="bbbb"))
    age(vault)  # out of the racy window: only the event can tell
    run = daemons.start()
    before = (vault / "a.md").stat()
    with open(vault / "a.md", "r+b") as handle:  # in place: same inode, same size
        handle.write(note("Omega", tags="oooo").encode())
    os.utime(vault / "a.md", ns=(before.st_atime_ns, before.st_mtime_ns))
    # Delete and recreate, reusing the inode number when the file system does, same etag.
    old = (vault / "b.md").stat()
    (vault / "b.md").unlink()
    write(vault / "b.md", note("Bravx", tags="bbbx"))
    os.utime(vault / "b.md", ns=(old.st_atime_ns, old.st_mtime_ns))
    assert (vault / "a.md").stat().st_size == before.st_size
    assert_converges(vault, db_path, tmp_path, run=run)


def test_deleting_the_nfd_one_of_two_nfc_twins_keeps_the_other(
    daemons: Daemons, vault: Path, db_path: Path, tmp_path: Path
) -> None:
    nfc_name, nfd_name = "caf\u00e9.md", "cafe\u0301.md"
    write(vault / nfc_name, note("Composed"))
    write(vault / nfd_name, note("Decomposed"))
    write(vault / "linker.md", note("Linker", links="[[café]]"))
    run = daemons.start()
    assert_converges(vault, db_path, tmp_path, run=run)
    (vault / nfd_name).unlink()
    assert_converges(vault, db_path, tmp_path, run=run)


def test_an_ascii_name_created_beside_its_kelvin_sign_twin_is_seen(
    daemons: Daemons, vault: Path, db_path: Path, tmp_path: Path
) -> None:
    # U+212A KELVIN SIGN folds to ASCII "K" under NFC, so the twin that arrives second can be the
    # ASCII name: the event names a name that is its own NFC form (SEMANTICS 1.4).
    write(vault / "\u212aelvin.md", note("Sign"))
    write(vault / "linker.md", note("Linker", links="[[Kelvin]]"))
    run = daemons.start()
    assert_converges(vault, db_path, tmp_path, run=run)
    write(vault / "Kelvin.md", note("Letter"))
    assert_converges(vault, db_path, tmp_path, run=run)
    (vault / "\u212aelvin.md").unlink()
    assert_converges(vault, db_path, tmp_path, run=run)


def test_an_edit_that_put_the_mtime_back_then_a_move_of_its_folder_is_indexed(
    daemons: Daemons, vault: Path, db_path: Path, tmp_path: Path
) -> None:
    # Found by the unprivileged soak (issue 31): the edit's event named the old path, the
    # folder's move brought the file under a new one, and the move was paired by the etag,
    # which the edit had kept: the old content moved on as if unchanged.
    write(vault / "F" / "a.md", note("Alpha", tags="aaaa"))
    write(vault / "b.md", note("Bravo", links="[[a]]"))
    age(vault)
    run = daemons.start()
    path = vault / "F" / "a.md"
    before = path.stat()
    with open(path, "r+b") as handle:  # in place: same inode, same size, other bytes
        handle.write(note("Omega", tags="oooo").encode())
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.rename(vault / "F", vault / "G")  # at once: one batch with the edit's event
    assert_converges(vault, db_path, tmp_path, run=run)
