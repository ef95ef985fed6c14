"""edit.safewrite: replace through a fsynced temporary file, keep the mode, never overwrite a
file that changed since it was read, never write outside the vault."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from notedex.edit import safewrite
from notedex.edit.safewrite import Changed, VaultWriter
from notedex.vault.reading import OutsideVault


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob(".notedex-*"))


def test_replace_writes_the_new_bytes_and_keeps_the_mode(tmp_path: Path) -> None:
    note = tmp_path / "a" / "Note.md"
    note.parent.mkdir()
    note.write_bytes(b"old [[x]]\n")
    note.chmod(0o640)
    inode = note.stat().st_ino
    writer = VaultWriter(tmp_path)
    snapshot = writer.read("a/Note.md")
    assert snapshot.data == b"old [[x]]\n" and snapshot.real == "a/Note.md"
    writer.replace(snapshot, b"new [[y]]\n")
    assert note.read_bytes() == b"new [[y]]\n"
    assert note.stat().st_mode & 0o777 == 0o640
    assert note.stat().st_ino != inode  # renamed over, never written in place
    assert leftovers(tmp_path) == []


def test_a_file_edited_after_the_read_is_never_overwritten(tmp_path: Path) -> None:
    note = tmp_path / "Note.md"
    note.write_bytes(b"one\n")
    writer = VaultWriter(tmp_path)
    snapshot = writer.read("Note.md")
    note.write_bytes(b"the user's edit\n")
    with pytest.raises(Changed):
        writer.replace(snapshot, b"ours\n")
    assert note.read_bytes() == b"the user's edit\n"
    assert leftovers(tmp_path) == []


def test_an_edit_between_the_temporary_file_and_the_rename_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race at its narrowest: the user saves while our bytes are being written and synced."""
    note = tmp_path / "Note.md"
    note.write_bytes(b"one\n")
    real_write_temp = safewrite._write_temp

    def write_temp_then_user_saves(*args: object, **kwargs: object) -> str:
        temp = real_write_temp(*args, **kwargs)  # type: ignore[arg-type]
        note.write_bytes(b"one, and the user's line\n")  # same inode, same second
        return temp

    monkeypatch.setattr(safewrite, "_write_temp", write_temp_then_user_saves)
    writer = VaultWriter(tmp_path)
    with pytest.raises(Changed):
        writer.replace(writer.read("Note.md"), b"ours\n")
    assert note.read_bytes() == b"one, and the user's line\n"
    assert leftovers(tmp_path) == []


def test_a_deleted_file_is_not_recreated(tmp_path: Path) -> None:
    note = tmp_path / "Note.md"
    note.write_bytes(b"one\n")
    writer = VaultWriter(tmp_path)
    snapshot = writer.read("Note.md")
    note.unlink()
    with pytest.raises(Changed):
        writer.replace(snapshot, b"ours\n")
    assert not note.exists() and leftovers(tmp_path) == []


def test_a_touch_without_a_change_does_not_stop_the_edit(tmp_path: Path) -> None:
    note = tmp_path / "Note.md"
    note.write_bytes(b"one\n")
    writer = VaultWriter(tmp_path)
    snapshot = writer.read("Note.md")
    os.utime(note, ns=(1, 1))
    writer.replace(snapshot, b"two\n")
    assert note.read_bytes() == b"two\n"


def test_symlinks_out_of_the_vault_are_never_followed(tmp_path: Path) -> None:
    vault, outside = tmp_path / "vault", tmp_path / "outside"
    vault.mkdir()
    outside.mkdir()
    (outside / "Secret.md").write_bytes(b"keep\n")
    (vault / "Link.md").symlink_to(outside / "Secret.md")
    (vault / "dir").symlink_to(outside, target_is_directory=True)
    writer = VaultWriter(vault)
    for rel in ("Link.md", "dir/Secret.md", "../outside/Secret.md"):
        with pytest.raises(OutsideVault):
            writer.read(rel)
    for rel in ("dir/New.md", "../outside/New.md"):
        with pytest.raises(OutsideVault):
            writer.create([rel], b"x")
    with pytest.raises(FileExistsError):  # the symlink's name is taken, never followed
        writer.create(["Link.md"], b"x")
    assert (outside / "Secret.md").read_bytes() == b"keep\n"
    assert sorted(p.name for p in outside.iterdir()) == ["Secret.md"]


def test_a_folder_swapped_for_an_outward_symlink_after_the_read_is_refused(
    tmp_path: Path,
) -> None:
    vault, outside = tmp_path / "vault", tmp_path / "outside"
    (vault / "a").mkdir(parents=True)
    outside.mkdir()
    (vault / "a" / "Note.md").write_bytes(b"one\n")
    (outside / "Note.md").write_bytes(b"one\n")
    writer = VaultWriter(vault)
    snapshot = writer.read("a/Note.md")
    (vault / "a").rename(vault / "moved")
    (vault / "a").symlink_to(outside, target_is_directory=True)
    with pytest.raises(OutsideVault):
        writer.replace(snapshot, b"ours\n")
    assert (outside / "Note.md").read_bytes() == b"one\n"


def test_a_symlink_inside_the_vault_writes_its_real_file(tmp_path: Path) -> None:
    (tmp_path / "real.md").write_bytes(b"one\n")
    (tmp_path / "alias.md").symlink_to("real.md")
    writer = VaultWriter(tmp_path)
    snapshot = writer.read("alias.md")
    assert snapshot.real == "real.md"
    writer.replace(snapshot, b"two\n")
    assert (tmp_path / "alias.md").is_symlink()
    assert (tmp_path / "real.md").read_bytes() == b"two\n"


def test_create_never_replaces_a_file(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "Idea.md").write_bytes(b"first\n")
    writer = VaultWriter(tmp_path)
    rel = writer.create(["in/Idea.md", "in/Idea 2.md"], b"second\n")
    assert rel == "in/Idea 2.md"
    assert (tmp_path / "in" / "Idea.md").read_bytes() == b"first\n"
    assert (tmp_path / "in" / "Idea 2.md").read_bytes() == b"second\n"
    with pytest.raises(FileExistsError):
        writer.create(["in/Idea.md"], b"third\n")
    assert leftovers(tmp_path) == []


def test_folders_are_synced_once_for_many_files(tmp_path: Path) -> None:
    for name in ("a/One.md", "a/Two.md", "Root.md"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_bytes(b"old\n")
    writer = VaultWriter(tmp_path)
    for name in ("a/One.md", "a/Two.md", "Root.md"):
        writer.replace(writer.read(name), b"new\n", sync_folder=False)
    assert writer.unsynced == {"a", ""}
    writer.sync_folders()
    assert writer.unsynced == set()
    assert {(tmp_path / n).read_bytes() for n in ("a/One.md", "a/Two.md", "Root.md")} == {b"new\n"}


def test_replace_many_writes_each_file_and_skips_the_changed_one(tmp_path: Path) -> None:
    for name in ("a/One.md", "a/Two.md", "Root.md"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_bytes(b"old\n")
    (tmp_path / "a/Two.md").chmod(0o600)
    writer = VaultWriter(tmp_path)
    snapshots = [writer.read(name) for name in ("a/One.md", "a/Two.md", "Root.md")]
    (tmp_path / "Root.md").write_bytes(b"the user's\n")
    outcome = writer.replace_many([(snapshot, b"new\n") for snapshot in snapshots])
    assert outcome[:2] == [None, None] and isinstance(outcome[2], Changed)
    assert (tmp_path / "a/One.md").read_bytes() == (tmp_path / "a/Two.md").read_bytes() == b"new\n"
    assert (tmp_path / "a/Two.md").stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "Root.md").read_bytes() == b"the user's\n"
    assert writer.unsynced == set() and leftovers(tmp_path) == []


def test_replace_many_never_writes_through_a_folder_swapped_after_the_temporaries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault, outside = tmp_path / "vault", tmp_path / "outside"
    (vault / "a").mkdir(parents=True)
    outside.mkdir()
    (vault / "a" / "Note.md").write_bytes(b"one\n")
    (outside / "Note.md").write_bytes(b"one\n")

    def swap(phase: str) -> None:
        if phase == "flushed":
            (vault / "a").rename(vault / "moved")
            (vault / "a").symlink_to(outside, target_is_directory=True)

    monkeypatch.setattr(safewrite, "crash_point", swap)
    writer = VaultWriter(vault)
    [problem] = writer.replace_many([(writer.read("a/Note.md"), b"ours\n")])
    assert isinstance(problem, OutsideVault)
    assert (outside / "Note.md").read_bytes() == b"one\n" and leftovers(outside) == []
    assert (vault / "moved" / "Note.md").read_bytes() == b"one\n"


CRASHING_CHILD = """
import os, signal, sys
from notedex.edit import safewrite
from notedex.edit.safewrite import VaultWriter

vault, at = sys.argv[1], sys.argv[2]

def crash(phase):
    if phase == at:
        os.kill(os.getpid(), signal.SIGKILL)

safewrite.crash_point = crash
writer = VaultWriter(vault)
names = sorted(
    os.path.relpath(os.path.join(d, f), vault) for d, _, fs in os.walk(vault) for f in fs
)
writer.replace_many([(writer.read(n), writer.read(n).data.upper()) for n in names])
"""


@pytest.mark.parametrize("phase", safewrite.PHASES)
def test_a_crash_between_the_steps_never_loses_a_note(tmp_path: Path, phase: str) -> None:
    """Killed (SIGKILL) at each point between replace_many's steps: every note holds its old
    bytes or its new ones, whole; only hidden temporary files are left behind."""
    import signal
    import subprocess
    import sys

    old = {
        f"{folder}Note {i}.md": f"note {i} [[x]]\n".encode() * 50
        for i in range(6)
        for folder in ("", "a/")
    }
    for name, data in old.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_bytes(data)
    child = subprocess.run(
        [sys.executable, "-c", CRASHING_CHILD, str(tmp_path), phase], capture_output=True
    )
    assert child.returncode == -signal.SIGKILL, child.stderr.decode()
    now = {name: (tmp_path / name).read_bytes() for name in old}
    assert all(now[name] in (data, data.upper()) for name, data in old.items())
    new = [name for name in old if now[name] != old[name]]
    assert len(new) == {"temporaries": 0, "flushed": 0, "renamed one": 1, "renamed": 12}[phase]
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.md")) == sorted(old)
    assert all(p.name.startswith(".notedex-") for p in tmp_path.rglob(".*"))
