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
