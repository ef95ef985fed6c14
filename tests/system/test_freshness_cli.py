"""Without a daemon, the etag check before a query catches every kind of change the daemon
tests cover (issue 15): an edit, a same-size edit within a second, a rename, a delete and a
folder move. Through the CLI as a subprocess, no daemon anywhere; each change is made to an
index that was current, so only the check before the query can have noticed it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import pure_json, run_cli, write
from tests.indexcheck import age, make_vault

NOTES = {
    "a.md": "alpha one\n",
    "b.md": "beta here\n",
    "f/c.md": "gamma here\n",
    "f/sub/d.md": "delta here\n",
}


def _indexed(tmp_path: Path, *, settled: bool = True) -> tuple[Path, Path]:
    vault = make_vault(tmp_path / "vault", dict(NOTES))
    if settled:
        age(vault)  # out of the racy window: only the etags can tell
    db = tmp_path / "index.db"
    result = run_cli("index", "--vault", vault, "--db", db)
    assert result.code == 0, result.stderr
    assert _found(vault, db, "alpha") == ["a.md"]  # the refreshing query itself: current
    return vault, db


def _search(vault: Path, db: Path, word: str) -> dict[str, Any]:
    # A child process, as a user runs it; it refreshes (no --no-refresh) and no daemon runs.
    data: dict[str, Any] = pure_json(
        run_cli("search", word, "--vault", vault, "--db", db, "--json")
    )
    return data


def _found(vault: Path, db: Path, word: str) -> list[str]:
    return sorted(hit["path"] for hit in _search(vault, db, word)["hits"])


def test_an_edit_is_caught(tmp_path: Path) -> None:
    vault, db = _indexed(tmp_path)
    write(vault / "a.md", "alpha two and three\n")
    assert _found(vault, db, "three") == ["a.md"]


@pytest.mark.slow
def test_a_same_size_edit_within_a_second_is_caught(tmp_path: Path) -> None:
    vault, db = _indexed(tmp_path, settled=False)  # indexed just now, as after a save
    note = vault / "b.md"
    before = os.stat(note)
    write(note, "bota here\n")
    # As a file system with 1 s timestamps shows it: same size, same inode, same mtime.
    os.utime(note, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(note)
    assert (after.st_size, after.st_ino, after.st_mtime_ns) == (
        before.st_size,
        before.st_ino,
        before.st_mtime_ns,
    )
    assert _found(vault, db, "bota") == ["b.md"]
    assert _found(vault, db, "beta") == []


def test_a_rename_is_caught(tmp_path: Path) -> None:
    vault, db = _indexed(tmp_path)
    os.rename(vault / "a.md", vault / "z.md")
    assert _found(vault, db, "alpha") == ["z.md"]


@pytest.mark.slow
def test_a_delete_is_caught(tmp_path: Path) -> None:
    vault, db = _indexed(tmp_path)
    (vault / "b.md").unlink()
    data = _search(vault, db, "beta")
    assert data["total"] == 0 and data["hits"] == []


@pytest.mark.slow
def test_a_folder_move_is_caught(tmp_path: Path) -> None:
    vault, db = _indexed(tmp_path)
    shutil.move(str(vault / "f"), str(vault / "g"))
    assert _found(vault, db, "gamma") == ["g/c.md"]
    assert _found(vault, db, "delta") == ["g/sub/d.md"]
