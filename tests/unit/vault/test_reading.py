"""vault.reading: a vault file is read through the file the symlink policy allows, resolved one
component at a time from the root (SEMANTICS 1.6, ARCHITECTURE "Reading vault text")."""

from __future__ import annotations

import errno
import itertools
import os
from pathlib import Path

import pytest

from notedex.vault import reading
from notedex.vault.files import NotARegularFile
from notedex.vault.reading import OUTSIDE_MESSAGE, OutsideVault, VaultReader
from tests.helpers import write


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A vault with links of every kind, and a folder outside it."""
    vault = tmp_path / "vault"
    outside = tmp_path / "outside"
    write(vault / "Areas" / "Inside.md", "inside\n")
    write(outside / "secret.md", "SECRET\n")
    write(outside / "folder" / "inner.md", "SECRET inner\n")
    os.symlink("Areas/Inside.md", vault / "relative.md")  # inside, relative
    os.symlink(vault / "Areas" / "Inside.md", vault / "absolute.md")  # inside, absolute
    os.symlink("Areas", vault / "Shortcut")  # a folder inside
    os.symlink("../vault/Areas/Inside.md", vault / "round-trip.md")  # out and back in
    os.symlink(outside / "secret.md", vault / "leak.md")
    os.symlink("../outside/secret.md", vault / "relative-leak.md")
    os.symlink(outside / "folder", vault / "linked")
    os.symlink(vault / "Areas" / "Inside.md", outside / "back-in.md")
    os.symlink(outside / "back-in.md", vault / "via-outside.md")  # a chain that ends inside
    os.symlink("loop-b.md", vault / "loop-a.md")
    os.symlink("loop-a.md", vault / "loop-b.md")
    os.symlink("missing.md", vault / "dangling.md")
    return vault


def read(vault: Path, rel: str, *, follow: bool = False) -> bytes:
    return VaultReader(vault, follow_outside=follow).read(rel, 1000)[0]


@pytest.mark.parametrize(
    "rel",
    [
        "Areas/Inside.md",
        "relative.md",
        "absolute.md",
        "Shortcut/Inside.md",
        "round-trip.md",
        "via-outside.md",
        "Areas/../Areas/Inside.md",
    ],
)
def test_files_and_links_inside_the_vault_are_read(tree: Path, rel: str) -> None:
    assert read(tree, rel) == b"inside\n"


@pytest.mark.parametrize(
    "rel", ["leak.md", "relative-leak.md", "linked/inner.md", "../outside/secret.md"]
)
def test_a_file_outside_the_vault_is_refused_unless_the_setting_follows_it(
    tree: Path, rel: str
) -> None:
    with pytest.raises(OutsideVault) as caught:
        read(tree, rel)
    assert caught.value.strerror == OUTSIDE_MESSAGE and "follow_symlinks" in OUTSIDE_MESSAGE
    assert read(tree, rel, follow=True).startswith(b"SECRET")


def test_the_policy_agrees_with_realpath_on_every_link_of_the_tree(tree: Path) -> None:
    """The walk's rule (vault.walk: the real path inside the root) and the reader's agree."""
    root = os.path.realpath(tree)
    checked = 0
    for rel in sorted(os.listdir(tree)):
        real = os.path.realpath(tree / rel)
        if not os.path.isfile(real):
            continue
        inside = real.startswith(root + os.sep)
        try:
            read(tree, rel)
            allowed = True
        except OutsideVault:
            allowed = False
        assert allowed == inside, rel
        checked += 1
    assert checked == 6


def test_loops_dangling_links_and_odd_files_are_errors(tree: Path) -> None:
    with pytest.raises(OSError) as loop:
        read(tree, "loop-a.md")
    assert loop.value.errno == errno.ELOOP
    with pytest.raises(FileNotFoundError):
        read(tree, "dangling.md")
    with pytest.raises(FileNotFoundError):
        read(tree, "Areas/none.md")
    with pytest.raises(NotADirectoryError):
        read(tree, "Areas/Inside.md/x.md")
    with pytest.raises(NotARegularFile):
        read(tree, "Areas")
    with pytest.raises(NotARegularFile):
        read(tree, "Shortcut")
    os.mkfifo(tree / "pipe.md")
    with pytest.raises(NotARegularFile):
        read(tree, "pipe.md")  # a blocking open would hang: nobody writes to it


def test_a_vault_reached_through_a_symlink_is_still_inside(tmp_path: Path) -> None:
    write(tmp_path / "real" / "Note.md", "note\n")
    os.symlink(tmp_path / "real", tmp_path / "vault")
    os.symlink(tmp_path / "vault" / "Note.md", tmp_path / "real" / "by-link-path.md")
    assert read(tmp_path / "vault", "Note.md") == b"note\n"
    assert read(tmp_path / "vault", "by-link-path.md") == b"note\n"


def test_the_size_cap_is_read_as_read_capped_reads_it(tree: Path) -> None:
    write(tree / "big.md", "x" * 500)
    data, info = VaultReader(tree).read("big.md", 100)
    assert data == b"x" * 101 and info.st_size == 500


def test_no_descriptor_is_left_open(tree: Path) -> None:
    fds = Path("/proc/self/fd")
    if not fds.is_dir():
        pytest.skip("no /proc/self/fd here")
    reader = VaultReader(tree)
    before = len(os.listdir(fds))
    for rel in itertools.islice(itertools.cycle(os.listdir(tree)), 300):
        try:
            reader.read(rel, 1000)
        except OSError:
            pass
    assert len(os.listdir(fds)) == before


def test_without_openat_the_descriptor_is_compared_with_the_real_path(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reading, "_WALKS", False)
    assert read(tree, "relative.md") == b"inside\n"
    assert read(tree, "Shortcut/Inside.md") == b"inside\n"
    for rel in ("leak.md", "linked/inner.md"):
        with pytest.raises(OutsideVault):
            read(tree, rel)
    assert read(tree, "leak.md", follow=True) == b"SECRET\n"


# -- a batch of reads keeps its folders open (issue 35) ----------------------------------------

EVERY_REL = [
    "Areas/Inside.md",
    "relative.md",
    "absolute.md",
    "Shortcut/Inside.md",
    "round-trip.md",
    "via-outside.md",
    "Areas/../Areas/Inside.md",
    "leak.md",
    "relative-leak.md",
    "linked/inner.md",
    "../outside/secret.md",
    "loop-a.md",
    "dangling.md",
    "Areas/none.md",
    "Areas/Inside.md/x.md",
    "Areas",
    "Shortcut",
    "./Areas//Inside.md",
    "",
]


def _outcome(reader: VaultReader, rel: str) -> object:
    try:
        return reader.read(rel, 1000)[0]
    except OSError as exc:
        return (type(exc), exc.errno)


def test_a_batch_reads_exactly_what_single_reads_read(tree: Path) -> None:
    """Inside ``with reader:`` a file is opened in its kept folder; every outcome (text, or
    the error and its errno) is the one a read of its own gives, twice over (folders kept)."""
    alone = {rel: _outcome(VaultReader(tree), rel) for rel in EVERY_REL}
    assert alone["Areas/Inside.md"] == b"inside\n" and alone["leak.md"][0] is OutsideVault
    with VaultReader(tree) as reader:
        for _ in range(2):
            assert {rel: _outcome(reader, rel) for rel in EVERY_REL} == alone


def test_a_batch_opens_a_file_in_its_kept_folder_and_still_refuses_a_swapped_link(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second read of a folder's files is one ``open`` (the kept folder's); a note swapped
    for a symlink that leads outside, or a folder swapped for one, is still refused."""
    write(tree / "Areas" / "Other.md", "other\n")
    opened: list[str] = []
    real_open = os.open

    def counting(path: str, *args: object, **kwargs: object) -> int:
        opened.append(path)
        return real_open(path, *args, **kwargs)  # type: ignore[arg-type]

    with VaultReader(tree) as reader:
        assert reader.read("Areas/Inside.md", 100)[0] == b"inside\n"
        monkeypatch.setattr(reading.os, "open", counting)
        assert reader.read("Areas/Other.md", 100)[0] == b"other\n"
        assert opened == ["Other.md"]
        os.replace(tree / "Areas" / "Other.md", tree / "Other-moved.md")
        os.symlink(tree.parent / "outside" / "secret.md", tree / "Areas" / "Other.md")
        with pytest.raises(OutsideVault):
            reader.read("Areas/Other.md", 100)
        os.rename(tree / "Areas", tree / "Areas-moved")
        os.symlink(tree.parent / "outside" / "folder", tree / "Areas")
        with pytest.raises(OutsideVault):
            reader.read("Areas/inner.md", 100)


def test_a_batch_closes_its_folders_and_keeps_a_bounded_number_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fds = Path("/proc/self/fd")
    if not fds.is_dir():
        pytest.skip("no /proc/self/fd here")
    monkeypatch.setattr(reading, "_MAX_KEPT", 8)
    for i in range(30):
        write(tmp_path / f"f{i}" / "deep" / "n.md", f"{i}\n")
    before = len(os.listdir(fds))
    with VaultReader(tmp_path) as reader:
        for i in range(30):
            assert reader.read(f"f{i}/deep/n.md", 100)[0] == f"{i}\n".encode()
            assert len(os.listdir(fds)) <= before + 8 + 1
    assert len(os.listdir(fds)) == before
