"""More faults that used to lose notes or fail batches while the daemon runs (issue 13, 8-9).

Each test is one deterministic scenario and ends with the index equal to a fresh full index of
the vault and a sound FTS (``assert_converges``).
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.helpers import wait_until, write
from tests.indexcheck import age
from tests.system.daemons import DaemonRun, Daemons, assert_converges, note


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
