"""bench/lookup_cycles.py's arithmetic: the cycle estimate of a callgrind output file (the full
run needs valgrind and minutes; docs/benchmarks.md gives its figures)."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

import lookup_cycles  # noqa: E402  (the bench folder, put on the path above)


def test_the_estimate_weighs_first_and_last_level_misses() -> None:
    lines = [
        "version: 1",
        "events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw",
        "fl=(1) x.c",
        "summary: 1000000 1 2 300 200 100 7 2 1",
    ]
    got = lookup_cycles.cycles(lines)
    assert got["L1 misses"] == 600 and got["LL misses"] == 10
    assert got["cycles"] == 1_000_000 + 10 * 600 + 100 * 10


def test_a_file_without_cache_events_is_its_instructions() -> None:
    got = lookup_cycles.cycles(["events: Ir", "totals: 42"])
    assert got == {"Ir": 42, "L1 misses": 0, "LL misses": 0, "cycles": 42}
