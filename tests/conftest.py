"""Shared fixtures: every test gets its own HOME/XDG dirs, and no test may leak threads."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    for name in ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"):
        monkeypatch.setenv(name, str(home / name.lower()))
    for name in (
        "NOTEDEX_VAULT",
        "NOTEDEX_DB",
        "NOTEDEX_CONFIG",
        "NOTIFY_SOCKET",
        "JOURNAL_STREAM",
    ):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def _no_thread_leaks() -> Iterator[None]:
    before = set(threading.enumerate())
    yield
    deadline = time.monotonic() + 5
    leaked: list[threading.Thread] = []
    while time.monotonic() < deadline:
        leaked = [
            t for t in threading.enumerate() if t not in before and t.is_alive() and not t.daemon
        ]
        if not leaked:
            break
        time.sleep(0.05)
    assert not leaked, f"threads leaked by the test: {leaked}"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / ".obsidian").mkdir(parents=True)
    return root


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "state" / "index.db"
