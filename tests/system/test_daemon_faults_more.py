"""More faults that used to lose notes or fail batches while the daemon runs (issue 13, 8-9).

Each test is one deterministic scenario and ends with the index equal to a fresh full index of
the vault and a sound FTS (``assert_converges``).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers import wait_until, write
from tests.indexcheck import age
from tests.system.daemons import DaemonRun, Daemons, assert_converges, note


@pytest.mark.slow
def test_the_vault_renamed_away_and_back_within_a_second_keeps_the_change_made_meanwhile(
    daemons: Daemons, vault: Path, db_path: Path, tmp_path: Path
) -> None:
    write(vault / "a.md", note("Alpha"))
    write(vault / "sub" / "b.md", note("Bravo"))
    age(vault)
    run = daemons.start()
    away = tmp_path / "vault-away"
    os.rename(vault, away)
    write(away / "a.md", note("Alpha edited", tags="edited"))
    write(away / "sub" / "c.md", note("Charlie"))
    (away / "sub" / "b.md").unlink()
    # The events name the vault's own paths; their batch meets no vault. Back at once after
    # it, well within the supervisor's one-second look at the vault folder.
    wait_until(lambda: _met_no_vault(run), timeout=10, message="a batch that met no vault")
    os.rename(away, vault)
    assert_converges(vault, db_path, tmp_path, run=run)
    # And the watch still hears the vault afterwards.
    write(vault / "d.md", note("Delta"))
    assert_converges(vault, db_path, tmp_path, run=run)


def _met_no_vault(run: DaemonRun) -> bool:
    return any(
        (e.get("event") == "kept index rows" and "not there" in str(e.get("reason")))
        or (e.get("event") == "vault missing" and e.get("logger") == "notedex.daemon.indexer")
        for e in run.events()
    )


@pytest.mark.slow
def test_hard_linked_and_symlinked_notes_edited_through_the_other_name_stay_fresh(
    daemons: Daemons, vault: Path, db_path: Path, tmp_path: Path
) -> None:
    write(vault / "a.md", note("Alpha", tags="aaaa"))
    os.link(vault / "a.md", vault / "hard.md")
    write(vault / "t.md", note("Target", tags="tttt"))
    (vault / "sub").mkdir()
    (vault / "sub" / "soft.md").symlink_to("../t.md")
    age(vault)
    run = daemons.start()
    assert_converges(vault, db_path, tmp_path, run=run)
    with open(vault / "a.md", "r+b") as handle:  # in place: the other name shares the inode
        handle.write(note("Omega", tags="oooo").encode())
        handle.truncate()
    with open(vault / "sub" / "soft.md", "r+b") as handle:  # through the link: t.md changes
        handle.write(note("Tango", tags="tang").encode())
        handle.truncate()
    assert_converges(vault, db_path, tmp_path, run=run)
    # The target of a file symlink deleted: the link is dangling, a walk error, at once.
    (vault / "t.md").unlink()
    assert_converges(vault, db_path, tmp_path, run=run)


@pytest.mark.slow
def test_a_file_name_that_is_not_utf8_never_fails_its_batch(
    daemons: Daemons, vault: Path, db_path: Path, tmp_path: Path
) -> None:
    write(vault / "a.md", note("Alpha"))
    run = daemons.start()
    bad = os.path.join(os.fsencode(vault), b"caf\xe9.md")
    with open(bad, "wb") as handle:
        handle.write(note("Latin-1").encode())
    write(vault / "b.md", note("Bravo", links="[[a]]"))  # in the same batch
    assert_converges(vault, db_path, tmp_path, run=run)
    os.rename(bad, os.path.join(os.fsencode(vault), b"sub\xff.md"))
    assert_converges(vault, db_path, tmp_path, run=run)
    os.unlink(os.path.join(os.fsencode(vault), b"sub\xff.md"))
    assert_converges(vault, db_path, tmp_path, run=run)
    assert not run.find("batch failed"), run.log_text()
    assert "Traceback" not in run.log_text()


@pytest.mark.slow
def test_walk_errors_appear_and_disappear_with_incremental_updates(
    daemons: Daemons, vault: Path, db_path: Path, tmp_path: Path
) -> None:
    write(vault / "a.md", note("Alpha"))
    (vault / "dangling.md").symlink_to("later.md")
    (vault / "F").mkdir()
    (vault / "F" / "loop").symlink_to("..", target_is_directory=True)
    run = daemons.start()
    assert_converges(vault, db_path, tmp_path, run=run)
    # Disappear: the dangling link's target is created; the loop is removed.
    write(vault / "later.md", note("Later"))
    (vault / "F" / "loop").unlink()
    assert_converges(vault, db_path, tmp_path, run=run)
    # Appear and disappear: NFC twins.
    write(vault / "caf\u00e9.md", note("Composed"))
    write(vault / "cafe\u0301.md", note("Decomposed"))
    assert_converges(vault, db_path, tmp_path, run=run)
    (vault / "cafe\u0301.md").unlink()
    assert_converges(vault, db_path, tmp_path, run=run)
    # Appear: the target of a symlink goes away.
    (vault / "later.md").unlink()
    assert_converges(vault, db_path, tmp_path, run=run)


@pytest.mark.slow
def test_with_poll_a_permission_blip_during_a_read_is_retried(
    daemons: Daemons, vault: Path, db_path: Path, tmp_path: Path
) -> None:
    write(vault / "a.md", note("Alpha"))
    locks = tmp_path / "locks"
    locks.mkdir()
    run = daemons.start("--poll", launcher=("-m", "tests.system.blip", str(locks)))
    (locks / "blip.md").touch()  # unreadable from now on
    write(vault / "blip.md", note("Blip", links="[[a]]"))
    wait_until(
        lambda: any(b.get("notes_with_errors") for b in run.find("batch")),
        timeout=20,
        message="the read",
    )
    (locks / "blip.md").unlink()  # readable again: no event says so (chmod moves no mtime)
    assert_converges(vault, db_path, tmp_path, run=run)
