"""Path safety, in-process: note names that would leave the vault, and symlinks that lead out."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from notedex.mcp_server.paths import check_inside_vault, refuse_outside_paths
from notedex.mcp_server.tools import ToolError
from tests.helpers import write


@pytest.mark.parametrize(
    "note", ["../x", "a/../../b", "/abs", "~/x", "~", "C:/x", "D:\\x", "a\\..\\..\\b", "nul\0"]
)
def test_outside_paths_are_refused_before_any_lookup(note: str) -> None:
    with pytest.raises(ToolError, match=r"refused|NUL"):
        refuse_outside_paths(note)


@pytest.mark.parametrize("note", ["PARA 方法", "Areas/PARA 方法.md", "Wait.. what", "a/b.c"])
def test_ordinary_names_pass(note: str) -> None:
    refuse_outside_paths(note)


def test_only_files_whose_real_path_is_inside_the_vault_pass(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    write(vault / "Areas" / "Inside.md", "inside\n")
    write(tmp_path / "outside" / "secret.md", "secret\n")
    os.symlink(vault / "Areas" / "Inside.md", vault / "alias.md")
    os.symlink(tmp_path / "outside" / "secret.md", vault / "leak.md")
    os.symlink(tmp_path / "outside", vault / "linked")
    check_inside_vault(vault, "Areas/Inside.md", "Areas/Inside.md", follow_symlinks=False)
    # a symlink that stays inside
    check_inside_vault(vault, "alias.md", "alias.md", follow_symlinks=False)
    for disk_rel in ("leak.md", "linked/secret.md"):
        with pytest.raises(ToolError) as caught:
            check_inside_vault(vault, disk_rel, disk_rel, follow_symlinks=False)
        assert str(caught.value) == (
            f"refused {disk_rel!r}: it is a symlink to a file outside the vault"
        )
        # follow_symlinks = true: the index follows it, so show may read it (as search does)
        check_inside_vault(vault, disk_rel, disk_rel, follow_symlinks=True)


def test_a_vault_reached_through_a_symlink_is_still_inside(tmp_path: Path) -> None:
    write(tmp_path / "real" / "Note.md", "note\n")
    os.symlink(tmp_path / "real", tmp_path / "vault")
    check_inside_vault(tmp_path / "vault", "Note.md", "Note.md", follow_symlinks=False)
