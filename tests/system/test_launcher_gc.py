"""The launcher keeps the cyclic garbage collector out of a query (issue 30's speed budget).

Loading the CLI and lookup's modules makes about 8,000 objects that live until the process
ends; the collector walked them five times a lookup (about 1 ms, 7% of interpreter start-up).
Counted, not timed: a ``gc.callbacks`` hook in the launcher's own process (subprocesses)."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

import pytest

from notedex.cli import FAST_GC_THRESHOLD, restore_collector
from tests.helpers import REPO

LAUNCHER = REPO / "scripts" / "notedex"

# Runs the launcher as a script in this process, with a hook that records each collection
# once a module of ours is loaded, and reports it at the exit (a query ends with os._exit).
CHILD = r"""
import atexit, gc, os, runpy, sys
seen = []
gc.callbacks.append(
    lambda phase, info: phase == "start" and "notedex" in sys.modules and seen.append(info["generation"])
)
def report():
    print(f"gc-report {len(seen)} {gc.isenabled()} {gc.get_threshold()[0]}", file=sys.stderr, flush=True)
exit_now = os._exit
def reported_exit(code):
    report()
    exit_now(code)
os._exit = reported_exit
atexit.register(report)
launcher = sys.argv[1]
sys.argv = [launcher, *sys.argv[2:]]
runpy.run_path(launcher, run_name="__main__")
"""


def launched(*args: str | Path) -> tuple[int, bool, int]:
    """(collections once notedex loaded, collector on at the end, its first threshold)."""
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(LAUNCHER), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = [line for line in proc.stderr.splitlines() if line.startswith("gc-report ")]
    assert len(report) == 1, proc.stderr[-2000:]
    count, enabled, threshold = report[0].split()[1:]
    return int(count), enabled == "True", int(threshold)


@pytest.mark.parametrize(
    "question", [("cobra",), ("cli", "framework", "--json"), ("zyzzogeton",)], ids=" ".join
)
def test_a_lookup_runs_no_cyclic_collection(demo: tuple[Path, Path], question: tuple[str]) -> None:
    vault, db = demo
    count, enabled, threshold = launched(
        "lookup", *question, "--vault", vault, "--db", db, "--no-refresh"
    )
    assert count == 0  # five on main: during the imports, one of them a second-generation pass
    assert enabled and threshold == FAST_GC_THRESHOLD  # back on for whatever the query makes


def test_other_commands_get_the_interpreters_collector(demo_copy: tuple[Path, Path]) -> None:
    """The daemon, `index` and the MCP server run with the interpreter's own settings."""
    vault, db = demo_copy
    _, enabled, threshold = launched("index", "--vault", vault, "--db", db)
    assert enabled and threshold == 700


def test_a_caller_with_the_collector_on_keeps_its_settings() -> None:
    before = gc.get_threshold()
    assert gc.isenabled()
    restore_collector(fast=True)
    assert gc.isenabled() and gc.get_threshold() == before


def test_restoring_after_the_launcher_turned_it_off() -> None:
    before, frozen = gc.get_threshold(), gc.get_freeze_count()
    gc.disable()
    try:
        restore_collector(fast=True)
        assert gc.isenabled() and gc.get_threshold()[0] == FAST_GC_THRESHOLD
        assert gc.get_freeze_count() > frozen  # what is loaded stays out of its passes
    finally:
        gc.set_threshold(*before)
        gc.enable()
