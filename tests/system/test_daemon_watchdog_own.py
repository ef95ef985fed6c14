"""The daemon under a watchdog release its inotify refinements were not checked against
(pyproject allows ``watchdog>=7.1.1,<8``): it says so and watches with watchdog's own
observer, and the index still follows edits, new folders, folder renames and deletions.

The daemon runs as a real subprocess through ``tests.system.unchecked_watchdog``, which only
changes the version watchdog reports (docs/architecture.md, "Dependency ranges").
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.helpers import write
from tests.system.daemons import Daemons, assert_converges, note

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux")

UNCHECKED = ("-m", "tests.system.unchecked_watchdog", "7.99.0")


@pytest.mark.slow
def test_an_unchecked_release_is_logged_and_watched_with_watchdogs_own_observer(
    daemons: Daemons, small_vault: Path, db_path: Path, tmp_path: Path
) -> None:
    run = daemons.start(launcher=UNCHECKED)
    (warning,) = run.find("watchdog release not checked")
    assert warning["watchdog"] == "7.99.0"
    assert warning["using"] == "watchdog's own inotify observer"
    assert warning["level"] == "warning"
    assert run.find("ready")[-1]["watcher"] == "inotify"  # not polling

    write(small_vault / "a.md", note("Alpha edited", tags="edited", links="[[sub/c]]"))
    write(small_vault / "new" / "deeper" / "e.md", note("Epsilon", links="[[a]]"))
    assert_converges(small_vault, db_path, tmp_path, run=run)

    os.rename(small_vault / "new", small_vault / "renamed")  # a folder renamed within the vault
    (small_vault / "b.md").unlink()
    assert_converges(small_vault, db_path, tmp_path, run=run)

    write(small_vault / "renamed" / "deeper" / "f.md", note("Zeta"))  # still watched there
    shutil.rmtree(small_vault / "sub")
    assert_converges(small_vault, db_path, tmp_path, run=run)
    assert run.stop() == 0
    assert not run.find("polling")


def test_a_checked_release_watches_with_notedexs_observer_and_logs_no_warning(
    daemons: Daemons, small_vault: Path
) -> None:
    """The other side of the gate: the installed release, when checked, uses our subclass."""
    from watchdog.version import VERSION_STRING

    from notedex.daemon.inotify import BUILT_FOR

    if VERSION_STRING not in BUILT_FOR:
        pytest.skip(f"watchdog {VERSION_STRING} is not among {sorted(BUILT_FOR)}")
    run = daemons.start()
    assert not run.find("watchdog release not checked")
    assert run.find("ready")[-1]["watcher"] == "inotify"
    assert run.stop() == 0
