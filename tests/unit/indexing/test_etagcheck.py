"""indexing/etagcheck.py: the plain-case listing agrees with ``vault.walk`` and hands every
other case to it (issue 15). Real files, real index."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

import pytest

from notedex.indexing.etagcheck import _plain_listing, current_file_count
from notedex.vault.walk import walk_vault
from tests.helpers import run_inprocess, write
from tests.indexcheck import age, make_vault

FILES: dict[str, str | bytes] = {
    "a.md": "a\n",
    "Z.md": "z\n",
    "b/c.md": "c\n",
    "b c/d.md": "d\n",
    "b-c/e.md": "e\n",
    "bb/img.png": b"\x89PNG",
    "中文/筆記.md": "筆記\n",
    ".hidden.md": "not in the vault\n",
    ".obsidian/app.json": "{}",
}


def _etags(root: Path) -> list[tuple[str, int, int, int, int]]:
    return [(f.path, f.size, f.mtime_ns, f.inode, f.ctime_ns) for f in walk_vault(root).files]


def test_plain_listing_is_the_walk_in_path_order(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", FILES)
    nfd = unicodedata.normalize("NFD", "Café.md")
    (vault / nfd).write_text("nfd name\n", encoding="utf-8")  # as macOS writes it
    listed = _plain_listing(str(vault))
    assert listed is not None and listed == _etags(vault)
    assert "Café.md" in [etag[0] for etag in listed]
    assert not any(etag[0].startswith(".") for etag in listed)


def test_a_vault_reached_through_a_symlink_is_still_the_plain_case(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", FILES)
    os.symlink(vault, tmp_path / "link")
    assert _plain_listing(str(tmp_path / "link")) == _etags(vault)


@pytest.mark.parametrize("case", ["symlink", "fifo", "nfc-twins", "nfc-twin-folders"])
def test_anything_else_is_left_to_the_walk(tmp_path: Path, case: str) -> None:
    vault = make_vault(tmp_path / "v", FILES)
    if case == "symlink":
        os.symlink(vault / "b", vault / "linked")
    elif case == "fifo":
        os.mkfifo(vault / "pipe.md")
    elif case == "nfc-twin-folders":  # the same path through two folders, only one name NFD
        write(vault / "Café" / "sub" / "x.md", "nfc\n")
        write(vault / unicodedata.normalize("NFD", "Café") / "sub" / "x.md", "nfd\n")
    else:
        (vault / "Café.md").write_text("nfc\n", encoding="utf-8")
        (vault / unicodedata.normalize("NFD", "Café.md")).write_text("nfd\n", encoding="utf-8")
    assert _plain_listing(str(vault)) is None


@pytest.mark.slow
def test_a_vault_with_a_symlinked_folder_is_current_and_an_edit_there_is_seen(
    tmp_path: Path,
) -> None:
    """A symlink out of the vault is walked only with ``follow_symlinks`` (SEMANTICS 1.6): then
    an edit behind it makes the index stale; by default it is not part of the vault at all."""
    outside = make_vault(tmp_path / "outside", {"o.md": "outside\n"})
    vault = make_vault(tmp_path / "v", FILES)
    os.symlink(outside, vault / "linked")
    age(vault)
    age(outside)
    db = tmp_path / "i.db"
    assert run_inprocess("index", "--vault", vault, "--db", db).code == 0
    assert current_file_count(vault, db) == len(_etags(vault))
    config = tmp_path / "config.toml"
    config.write_text("follow_symlinks = true\n", encoding="utf-8")
    followed = tmp_path / "followed.db"
    env = {"NOTEDEX_CONFIG": str(config)}
    assert run_inprocess("index", "--vault", vault, "--db", followed, env=env).code == 0
    assert current_file_count(vault, followed, follow_symlinks=True) == len(_etags(vault)) + 1
    write(outside / "o.md", "outside, edited\n")
    assert current_file_count(vault, followed, follow_symlinks=True) is None
    assert current_file_count(vault, db) == len(_etags(vault))  # not followed: not the vault


def test_a_racy_row_is_never_current(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", FILES)  # written just now: inside the racy window
    db = tmp_path / "i.db"
    assert run_inprocess("index", "--vault", vault, "--db", db).code == 0
    assert current_file_count(vault, db) is None
    age(vault)
    assert run_inprocess("index", "--vault", vault, "--db", db).code == 0
    assert current_file_count(vault, db) == len(_etags(vault))


def test_an_attachment_in_the_racy_window_leaves_the_index_current(tmp_path: Path) -> None:
    """An attachment written just before the index read it is unchanged for the check: the
    index holds nothing of it but its etag, and the writer reads no attachment, so nothing
    would ever settle its row (every query without a daemon ran the writer again, for ever:
    a vault just cloned or copied, then indexed). A note in the window still is not current."""
    vault = make_vault(tmp_path / "v", FILES)
    age(vault)  # every file older than the racy window
    (vault / "bb" / "fresh.png").write_bytes(b"\x89PNG new")  # written now: in the window
    db = tmp_path / "i.db"
    assert run_inprocess("index", "--vault", vault, "--db", db).code == 0
    assert current_file_count(vault, db) == len(_etags(vault))
    write(vault / "fresh.md", "a note written now\n")
    assert run_inprocess("index", "--vault", vault, "--db", db).code == 0
    assert current_file_count(vault, db) is None  # the note: only its content can tell
