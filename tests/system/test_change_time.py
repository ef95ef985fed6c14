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
from tests.system.daemons import Daemons

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
