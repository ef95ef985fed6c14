"""Issue 32's benchmarks keep working from one command each (bench/tasks.py, bench/bases.py,
bench/filters.py) on the vault they share (bench/benchvault.py), made once per size in
``--work`` and reused; nothing about time, only that every figure and its target is printed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def bench(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *map(str, args)], capture_output=True, text=True, timeout=300, check=True
    )


def test_the_issue_32_benches_share_one_vault(tmp_path: Path) -> None:
    size = ["--notes", "60", "--work", tmp_path]
    tasks = bench(REPO / "bench" / "tasks.py", *size, "--runs", "1")
    assert "generating 60 notes" in tasks.stderr
    assert "tasks --open --json:" in tasks.stdout and "(target <= 3x)" in tasks.stdout
    assert (tmp_path / "vault-60" / ".genvault.json").is_file()
    appended = (tmp_path / "vault-60.tasks").read_text(encoding="utf-8")
    bases = bench(REPO / "bench" / "bases.py", *size, "--runs", "1")
    assert "generating" not in bases.stderr  # the vault of tasks.py, reused
    assert "(target <= 5x CPU)" in bases.stdout
    filters = bench(REPO / "bench" / "filters.py", "queries", *size, "--runs", "1")
    assert "generating" not in filters.stderr
    assert "(target <= 3x)" in filters.stdout
    again = bench(REPO / "bench" / "tasks.py", *size, "--runs", "1")
    assert "generating" not in again.stderr
    assert (tmp_path / "vault-60.tasks").read_text(encoding="utf-8") == appended  # not twice
