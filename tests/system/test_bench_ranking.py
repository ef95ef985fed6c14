"""bench/lookup_ranking.py keeps working: one repetition on a small generated vault, no timing claim.

It checks that the four query kinds of issue 11, and issue 30's two (an absent subject, a
body-stage question), are measured against start-up (wall and child CPU, with the load
average) and against an old revision (HEAD, exported with git archive), and that the queries
are what the issues name.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_ranking_bench_measures_four_query_kinds(tmp_path: Path) -> None:
    script = str(REPO / "bench" / "lookup_ranking.py")
    argv = [sys.executable, script, "--sizes", "200", "--runs", "1", "--old", "HEAD"]
    done = subprocess.run(
        [*argv, "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "ranking.json").read_text(encoding="utf-8"))
    row = results["v200"]
    assert set(row) == {
        "start-up ms",
        "start-up cpu ms",
        "load",
        "keyword",
        "two words",
        "CJK question",
        "miss",
        "absent subject",
        "body stage",
    }
    assert row["start-up cpu ms"] > 0 and len(row["load"]) == 2
    assert row["miss"]["query"] == "zyzzogeton"
    assert row["two words"]["query"].startswith(row["keyword"]["query"] + " ")
    assert "筆記" in row["CJK question"]["query"]
    assert row["absent subject"]["query"] == f"how does a zyzzogeton {row['keyword']['query']} work"
    assert row["body stage"]["query"] != "zyzzogeton"  # two words only bodies hold were found
    for kind in ("keyword", "two words", "CJK question", "miss", "absent subject", "body stage"):
        assert row[kind]["new / start-up"] > 0 and row[kind]["new / old"] > 0, kind
        assert row[kind]["new / start-up cpu"] > 0 and row[kind]["old / start-up cpu"] > 0, kind
