"""Fixtures of the system tests: a group of daemons killed at teardown, and a small vault."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import write
from tests.system.daemons import Daemons, note


@pytest.fixture
def daemons(vault: Path, db_path: Path, tmp_path: Path) -> Iterator[Daemons]:
    group = Daemons(vault, db_path, tmp_path)
    try:
        yield group
    finally:
        group.kill_all()


@pytest.fixture
def small_vault(vault: Path) -> Path:
    write(vault / "a.md", note("Alpha", tags="x", links="[[b]] [[Gamma]]"))
    write(vault / "b.md", note("Beta", links="[[a|the first]]"))
    write(vault / "sub" / "c.md", note("Gamma", tags="y/z", links="[[a]] [[nowhere]]"))
    write(vault / "sub" / "deep" / "d.md", note("Delta", links="[[c]]"))
    write(vault / "img.png", "not really a png")
    return vault


GENVAULT = Path(__file__).resolve().parents[2] / "bench" / "genvault.py"


@pytest.fixture(scope="session")
def big_vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """3,000 generated notes (bench/genvault.py): an index of a few seconds, long enough to
    signal or kill it mid-build, while its parse workers run. Read-only for the tests: one
    vault for the session (three modules use it; each used to generate its own)."""
    out = tmp_path_factory.mktemp("generated") / "vault"
    subprocess.run(
        [sys.executable, str(GENVAULT), "--notes", "3000", "--out", str(out)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return out
