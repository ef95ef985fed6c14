"""The change time in the freshness check (issue 31.7, ARCHITECTURE "Freshness", its change time): an edit that
keeps the size and puts the old mtime back, made while no daemon runs, is seen by `index`, by a
query's check and by the daemon's start-up rescan; a change of the change time alone is
confirmed by content hash, never parsed. Through the CLI as a subprocess.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.helpers import pure_json, run_cli, write
from tests.indexcheck import age, make_vault
from tests.system.daemons import Daemons, assert_converges

NOTES = {"a.md": "# A\n\nalpha [[b]]\n", "b.md": "# B\n\nbeta\n"}


def _indexed(tmp_path: Path) -> tuple[Path, Path]:
    vault = make_vault(tmp_path / "vault", dict(NOTES))
    age(vault)  # out of the racy window: only the etags (and now the change time) can tell
    db = tmp_path / "state" / "index.db"
    result = run_cli("index", "--vault", vault, "--db", db)
    assert result.code == 0, result.stderr
    return vault, db


def _rewrite_keeping_size_and_mtime(note: Path, text: str) -> None:
    """A same-size rewrite whose mtime is put back (`touch -r`, a sync tool, an editor's
    "preserve timestamps"); only the change time moves."""
    before = os.stat(note)
    assert len(text.encode()) == before.st_size
    write(note, text)
    os.utime(note, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(note)
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (
        before.st_size,
        before.st_mtime_ns,
        before.st_ino,
    )
    assert after.st_ctime_ns != before.st_ctime_ns


def _index(vault: Path, db: Path) -> dict[str, object]:
    return dict(pure_json(run_cli("index", "--vault", vault, "--db", db, "--json")))


def _hits(vault: Path, db: Path, word: str, *refresh: str) -> list[str]:
    found = pure_json(run_cli("search", word, "--vault", vault, "--db", db, "--json", *refresh))
    return sorted(hit["path"] for hit in found["hits"])


def test_index_sees_an_edit_that_kept_size_and_mtime(tmp_path: Path) -> None:
    vault, db = _indexed(tmp_path)
    _rewrite_keeping_size_and_mtime(vault / "a.md", "# A\n\nomega [[c]]\n")

    report = _index(vault, db)

    assert report["changed"] == 1, report
    assert _hits(vault, db, "omega", "--no-refresh") == ["a.md"]
    assert _hits(vault, db, "alpha", "--no-refresh") == []
    again = _index(vault, db)  # the new change time is stored: nothing left to confirm
    assert (again["changed"], again["rehashed"]) == (0, 0), again


def test_a_query_check_sees_it_too(tmp_path: Path) -> None:
    vault, db = _indexed(tmp_path)
    _rewrite_keeping_size_and_mtime(vault / "b.md", "# B\n\nbota\n")
    assert _hits(vault, db, "bota") == ["b.md"]  # the query's own freshness check


def test_only_the_change_time_moved_costs_a_hash_not_a_parse(tmp_path: Path) -> None:
    """The same bytes written again (or a chmod): the content hash confirms it, nothing is
    parsed, and the row takes the new change time."""
    vault, db = _indexed(tmp_path)
    _rewrite_keeping_size_and_mtime(vault / "a.md", NOTES["a.md"])
    os.chmod(vault / "b.md", 0o640)  # a change time of its own, same bytes

    report = _index(vault, db)

    assert (report["changed"], report["rehashed"], report["added"]) == (0, 2, 0), report
    assert _index(vault, db)["rehashed"] == 0


def test_the_daemon_start_up_check_sees_it(tmp_path: Path) -> None:
    vault, db = _indexed(tmp_path)
    _rewrite_keeping_size_and_mtime(vault / "a.md", "# A\n\nomega [[c]]\n")
    daemons = Daemons(vault, db, tmp_path)
    try:
        run = daemons.start()
        assert _hits(vault, db, "omega", "--no-refresh") == ["a.md"]
        assert run.stop() == 0
    finally:
        daemons.kill_all()


def test_a_renamed_note_rewritten_keeping_size_and_mtime_is_read_again(tmp_path: Path) -> None:
    """A rename keeps (size, mtime, inode), so the renamed note pairs with its old row as a move,
    nothing read; an edit after it that kept the size and put the mtime back, before the index
    heard of either (the daemon's soak, seed 3: both in one batch), must not ride on that move
    with the old row's text: the row would take the new change time and stay stale for good."""
    vault, db = _indexed(tmp_path)
    os.rename(vault / "a.md", vault / "c.md")
    _rewrite_keeping_size_and_mtime(vault / "c.md", "# A\n\nomega [[c]]\n")

    report = _index(vault, db)

    assert (report["added"], report["removed"]) == (1, 1), report
    assert _hits(vault, db, "omega", "--no-refresh") == ["c.md"]
    assert _hits(vault, db, "alpha", "--no-refresh") == []


def test_a_rename_that_kept_the_bytes_is_still_a_move(tmp_path: Path) -> None:
    """The change time moves on a rename too: the pairing then confirms the move by content
    hash (one read), and the bytes being the same, it stays a move, nothing parsed."""
    vault, db = _indexed(tmp_path)
    os.rename(vault / "a.md", vault / "c.md")

    report = _index(vault, db)

    assert (report["moved"], report["added"], report["removed"]) == (1, 0, 0), report
    assert _hits(vault, db, "alpha", "--no-refresh") == ["c.md"]


def test_the_daemon_reads_a_note_renamed_and_rewritten_in_one_batch(tmp_path: Path) -> None:
    """The soak's case (seed 3, phase 12): the rename and the rewrite that kept the size and put
    the mtime back reach the daemon in one batch; the note must not keep its old text."""
    vault, db = _indexed(tmp_path)
    daemons = Daemons(vault, db, tmp_path)
    try:
        run = daemons.start()
        os.rename(vault / "a.md", vault / "c.md")
        _rewrite_keeping_size_and_mtime(vault / "c.md", "# A\n\nomega [[c]]\n")
        assert_converges(vault, db, tmp_path, run=run)
        assert _hits(vault, db, "omega", "--no-refresh") == ["c.md"]
        assert run.stop() == 0
    finally:
        daemons.kill_all()
