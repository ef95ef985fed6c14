"""bench/lookup_cpu.py keeps working: one repetition on a small generated vault, no timing claim.

It checks that the six query kinds of bench/lookup_ranking.py are measured in fresh processes
for the old revision (HEAD, exported with git archive) and the checkout, with the CPU
milliseconds, the page faults and whether both answered the same.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_lookup_cpu_bench_measures_six_query_kinds(tmp_path: Path) -> None:
    script = str(REPO / "bench" / "lookup_cpu.py")
    argv = [sys.executable, script, "--sizes", "200", "--runs", "1", "--old", "HEAD"]
    done = subprocess.run(
        [*argv, "--out", str(tmp_path)], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "lookup-cpu.json").read_text(encoding="utf-8"))
    kinds = results["v200"]
    assert set(kinds) == {
        "keyword",
        "two words",
        "CJK question",
        "miss",
        "absent subject",
        "body stage",
    }
    for row in kinds.values():
        for side in ("old", "new"):
            assert row[f"{side} cpu ms median"] > 0
            assert row[f"{side} cpu ms least"] <= row[f"{side} cpu ms median"]
            assert row[f"{side} faults"] > 0
        assert isinstance(row["same answer"], bool)
    assert kinds["miss"]["query"] == "zyzzogeton"
