"""The spec suite's vault: an empty vault (with ``.obsidian/``) and its index, under ``tmp_path``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import SpecVault


@pytest.fixture
def v(tmp_path: Path) -> SpecVault:
    return SpecVault(tmp_path / "vault", tmp_path / "state" / "index.db")
