"""Folders and notes the daemon cannot read for a while (issue 31), through a real daemon that
runs as an unprivileged user (as root, it is forked and becomes ``nobody``: tests/privileges.py),
so a ``chmod 000`` refuses it for real."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import run_inprocess, wait_until, write
from tests.indexcheck import age
from tests.privileges import chown_tree, unprivileged_base
from tests.system.daemons import Daemons, note


@pytest.fixture
def reachable(tmp_path: Path) -> Iterator[Daemons]:
    """Daemons on a vault and an index in a folder the unprivileged daemon owns."""
    base = unprivileged_base()
    group = Daemons(base / "vault", base / "index.db", tmp_path)
    try:
        yield group
    finally:
        group.kill_all()
        shutil.rmtree(base, ignore_errors=True)  # as root: whatever a test left locked


def indexed(db: Path, path: str) -> bool:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    try:
        return conn.execute("SELECT 1 FROM files WHERE path = ?", (path,)).fetchone() is not None
    finally:
        conn.close()


def status(daemons: Daemons, *json_flag: str) -> Any:
    """``notedex status --no-refresh`` (``--json``: its document, else its text)."""
    result = run_inprocess(
        "status", *json_flag, "--no-refresh", "--vault", daemons.vault, "--db", daemons.db
    )
    assert result.code == 0, result.stderr
    return json.loads(result.stdout) if json_flag else result.stdout


def test_a_folder_made_while_an_ancestor_is_unreadable_is_watched_once_it_is_readable(
    reachable: Daemons,
) -> None:
    # The repro of issue 31.1: `chmod 000 V/P; mkdir V/P/a/new; echo x > V/P/a/new/first.md;
    # chmod 755 V/P`, then a note written in the new folder was never indexed.
    vault = reachable.vault
    write(vault / "P" / "a" / "old.md", note("Old"))
    write(vault / "top.md", note("Top"))
    chown_tree(vault.parent)
    run = reachable.start_unprivileged()
    assert run.find("ready", watcher="inotify")
    (vault / "P").chmod(0)
    write(vault / "P" / "a" / "new" / "first.md", "x\n")
    # The daemon heard the folder made and could not look into it (nor watch it).
    run.wait_for("unreadable for now")
    not_watched = wait_until(
        lambda: status(reachable, "--json")["daemon"]["foldersNotWatched"] == 1,
        message="status to count the folder not watched",
    )
    assert not_watched
    assert status(reachable, "--json")["daemon"]["notWatchedSample"] == ["P/a/new"]
    assert "not watched  1 folder (P/a/new)" in status(reachable)
    # Retried meanwhile (after 0.5 s, then 1, 2... s), and still counted: out of reach is not
    # gone. One retry shows it; waiting for the third (4 s) only made the folder wait longer.
    run.wait_for("unreadable for now", retry_in=1.0)
    assert status(reachable, "--json")["daemon"]["notWatchedSample"] == ["P/a/new"]
    (vault / "P").chmod(0o755)
    wait_until(lambda: indexed(reachable.db, "P/a/new/first.md"), message="first.md indexed")
    write(vault / "P" / "a" / "new" / "later.md", note("Later"))
    wait_until(
        lambda: indexed(reachable.db, "P/a/new/later.md"), timeout=10, message="later.md indexed"
    )
    (vault / "P" / "a" / "new" / "later.md").write_text(note("Later again", tags="again"))
    wait_until(lambda: run.find("batch", sample=["P/a/new/later.md"]), timeout=10)
    assert len(run.find("folder not watched", path=str(vault / "P" / "a" / "new"))) == 1
    wait_until(lambda: status(reachable, "--json")["daemon"]["foldersNotWatched"] == 0)
    assert "not watched" not in status(reachable)


def problems(db: Path, path: str) -> list[str]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    try:
        rows = conn.execute("SELECT message FROM problems WHERE path = ?", (path,))
        return [str(row[0]) for row in rows]
    finally:
        conn.close()


def tags(daemons: Daemons, path: str) -> list[str]:
    result = run_inprocess(
        "show", path, "--json", "--no-refresh", "--vault", daemons.vault, "--db", daemons.db
    )
    assert result.code == 0, result.stderr
    return list(json.loads(result.stdout)["tags"])


def test_a_note_made_unreadable_then_moved_with_its_folder_is_read_again(
    reachable: Daemons,
) -> None:
    # Issue 31.4: a chmod moves no etag; the note was paired as a move by it and kept its old
    # tags and links as if it had been read, and no plain `index` healed it.
    vault = reachable.vault
    write(vault / "P" / "a.md", note("Alpha", tags="old", links="[[top]]"))
    write(vault / "top.md", note("Top"))
    age(vault)  # settled rows: the move is paired by etag
    chown_tree(vault.parent)
    reachable.start_unprivileged()
    (vault / "P" / "a.md").chmod(0)
    (vault / "P").rename(vault / "Q")
    wait_until(
        lambda: problems(reachable.db, "Q/a.md") == ["cannot read file: Permission denied"],
        message="Q/a.md indexed as unreadable",
    )
    assert tags(reachable, "Q/a.md") == []
    assert not indexed(reachable.db, "P/a.md")
    (vault / "Q" / "a.md").chmod(0o644)  # no event says so: the retries of unreadable notes
    wait_until(lambda: tags(reachable, "Q/a.md") == ["old"], message="read again")
    assert problems(reachable.db, "Q/a.md") == []


def scan_errors(daemons: Daemons) -> list[dict[str, str]]:
    result = run_inprocess(
        "scan", "--json", "--no-refresh", "--vault", daemons.vault, "--db", daemons.db
    )
    assert result.code == 0, result.stderr
    return list(json.loads(result.stdout)["errors"])


def show(daemons: Daemons, path: str) -> dict[str, Any]:
    result = run_inprocess(
        "show", path, "--json", "--no-refresh", "--vault", daemons.vault, "--db", daemons.db
    )
    assert result.code == 0, result.stderr
    data = json.loads(result.stdout)
    assert isinstance(data, dict)
    return data


def test_a_folder_made_unreadable_is_an_error_and_its_notes_possibly_stale(
    reachable: Daemons,
) -> None:
    # Issue 31.5: the rows under a folder that cannot be listed are kept (as designed), but the
    # daemon heard nothing of the chmod and said nothing: the notes were silently stale.
    vault = reachable.vault
    write(vault / "P" / "sub" / "a.md", note("Alpha", tags="kept"))
    write(vault / "top.md", note("Top"))
    chown_tree(vault.parent)
    run = reachable.start_unprivileged()
    denied = {"path": "P", "message": "cannot list folder: Permission denied"}
    (vault / "P").chmod(0)
    wait_until(lambda: denied in scan_errors(reachable), message="the error entry")
    shown = show(reachable, "P/sub/a.md")
    assert shown["tags"] == ["kept"]  # its rows are kept...
    assert shown["possiblyStale"] is True and shown["staleBecause"] == [denied]  # ...and marked
    text = run_inprocess(
        "show", "P/sub/a.md", "--no-refresh", "--vault", vault, "--db", reachable.db
    ).stdout
    assert "stale?   possibly: P: cannot list folder: Permission denied" in text
    assert show(reachable, "top.md")["possiblyStale"] is False
    run.wait_for("cannot read", paths=["P"])  # and the daemon says so
    (vault / "P").chmod(0o755)
    wait_until(lambda: denied not in scan_errors(reachable), message="the error gone")
    assert show(reachable, "P/sub/a.md")["possiblyStale"] is False


def test_an_edit_that_put_the_mtime_back_while_its_folder_was_locked_is_seen(
    reachable: Daemons,
) -> None:
    # The event named the note, but the note could not be looked at; the retry after the chmod
    # back compared etags only, and the etag had not moved: the edit was never seen.
    vault = reachable.vault
    write(vault / "P" / "a.md", note("Alpha", tags="aaaa"))
    write(vault / "top.md", note("Top"))
    age(vault)
    chown_tree(vault.parent)
    run = reachable.start_unprivileged()
    (vault / "P").chmod(0)
    wait_until(
        lambda: (
            {"path": "P", "message": "cannot list folder: Permission denied"}
            in scan_errors(reachable)
        ),
        message="the folder seen locked",
    )
    path = vault / "P" / "a.md"
    before = path.stat()
    with open(path, "r+b") as handle:  # in place: same inode, same size, other bytes
        handle.write(note("Omega", tags="oooo").encode())
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    wait_until(  # the event for the edit was handled, while the note could not be looked at
        lambda: [b for b in run.find("batch") if "P/a.md" in b["sample"]], message="the batch"
    )
    (vault / "P").chmod(0o755)
    wait_until(lambda: tags(reachable, "P/a.md") == ["oooo"], message="the edit indexed")
