"""``query.lookup_stage1.rounded_ln``: a term's weight, ``int(log(y) + 0.5)``, computed without
loading ``math`` (issue 30's speed budget), and always the same integer."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from notedex.query.lookup_stage1 import _HALF_EDGES, rounded_ln
from tests.helpers import modules_after


def weight(notes: int, named: int) -> float:
    return 1 + (notes - named + 0.5) / (named + 0.5)


def test_every_count_of_names_weighs_as_math_log_says() -> None:
    for notes in (1, 2, 7, 100, 1_000, 10_000, 100_000, 1_001_997):
        for named in {
            *range(1, min(notes, 3_000) + 1),
            *range(1, notes + 1, max(notes // 3_000, 1)),
        }:
            y = weight(notes, named)
            assert rounded_ln(y) == int(math.log(y) + 0.5), (notes, named)


@given(st.floats(min_value=0.01, max_value=1e30, allow_nan=False))
def test_any_value_weighs_as_math_log_says(y: float) -> None:
    assert rounded_ln(y) == int(math.log(y) + 0.5)


def test_values_at_the_edges_are_left_to_math_log() -> None:
    for k in range(len(_HALF_EDGES)):
        exact = math.exp(k + 0.5)
        for y in (exact, math.nextafter(exact, 0), math.nextafter(exact, math.inf)):
            assert rounded_ln(y) == int(math.log(y) + 0.5)


def test_two_term_weights_load_no_math() -> None:
    code = (
        "from notedex.query.lookup_stage1 import rounded_ln\n"
        "[rounded_ln(1 + (100000 - n + 0.5) / (n + 0.5)) for n in range(1, 5000, 7)]"
    )
    assert "math" not in modules_after(code)


def test_a_two_word_lookup_loads_neither_math_nor_unicodedata(demo: tuple[Path, Path]) -> None:
    """A whole lookup of two words on the demo vault (both were loaded on main)."""
    vault, db = demo
    asked = ["lookup", "cli", "framework", "--vault", str(vault), "--db", str(db), "--no-refresh"]
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "notedex", *asked],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    loaded = {line.rsplit("|", 1)[1].strip() for line in proc.stderr.splitlines() if "|" in line}
    assert "notedex.query.lookup_stage1" in loaded
    assert {"math", "unicodedata"} & loaded == set()
