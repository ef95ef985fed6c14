"""`notedex base` against interpreter start-up (issue 32: a base with three filters and a
formula, at most 5x start-up), on a generated vault.

    python bench/bases.py --notes 1000 --runs 7 [--work DIR]

Generates the vault (bench/genvault.py), writes `bench.base` into it, indexes it, then times
whole processes of the installed launcher with ``--no-refresh`` (the answer, not the freshness
walk) in a clean environment, as bench/doctor.py does: each repetition runs ``python -c pass``
and ``notedex base bench.base --json``, the order rotating. Prints the medians (wall and
CPU), their ratio to start-up, the row count and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from doctor import child_env, timed

ROOT = Path(__file__).resolve().parent.parent

# Three filters (a folder and a tag, narrowed in SQL; a property comparison in Python) and a
# formula over two file fields, shown and sorted.
BENCH_BASE = """\
filters:
  and:
    - 'file.inFolder("{folder}")'
    - 'file.hasTag("project")'
    - 'status != "done"'
formulas:
  kb: '(file.size / 1024).toFixed(1) + " KB " + file.basename.lower()'
views:
  - type: table
    name: Bench
    order: [file.name, status, formula.kb]
    sort:
      - property: formula.kb
        direction: DESC
"""


def _fullest(vault: Path) -> str:
    """The top-level folder with the most notes (the folder filter's argument)."""
    counts = {
        entry.name: sum(1 for _ in entry.rglob("*.md"))
        for entry in vault.iterdir()
        if entry.is_dir() and not entry.name.startswith(".")
    }
    return max(sorted(counts), key=lambda name: counts[name])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, required=True)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--work", type=Path, help="where the vault and index go (default: temp)")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-bases-"))
    vault, db = work / "vault", work / "index.db"
    env = child_env(work)
    if not vault.exists():
        subprocess.run(
            [sys.executable, str(ROOT / "bench" / "genvault.py"), "--notes", str(args.notes),
             "--out", str(vault)],
            check=True, capture_output=True,
        )  # fmt: skip
    (vault / "bench.base").write_text(BENCH_BASE.format(folder=_fullest(vault)), encoding="utf-8")
    launcher = str(Path(sys.executable).parent / "notedex")
    common = [sys.executable, launcher, "--vault", str(vault), "--db", str(db)]
    subprocess.run([*common, "index"], check=True, capture_output=True, env=env)
    command = [*common, "--no-refresh", "base", "bench.base", "--json"]
    answer = json.loads(subprocess.run(command, check=True, capture_output=True, env=env).stdout)
    pass_argv = [sys.executable, "-c", "pass"]
    timed(pass_argv, env)  # warm: .pyc files exist before timing
    samples: dict[str, list[tuple[float, float]]] = {"start-up": [], "base": []}
    load_before = os.getloadavg()
    for run in range(args.runs):
        order = [("start-up", pass_argv), ("base", command)]
        for name, argv in order if run % 2 == 0 else order[::-1]:
            samples[name].append(timed(argv, env))
    load_after = os.getloadavg()
    wall = {k: statistics.median(w for w, _ in v) for k, v in samples.items()}
    cpu = {k: statistics.median(c for _, c in v) for k, v in samples.items()}
    print(f"{args.notes} notes, {len(answer['rows'])} rows, {args.runs} runs")
    for name in samples:
        print(
            f"  {name:9} wall {wall[name] * 1000:6.1f} ms ({wall[name] / wall['start-up']:.1f}x)"
            f"  cpu {cpu[name] * 1000:6.1f} ms ({cpu[name] / cpu['start-up']:.1f}x)"
        )
    print(f"  load {load_before[0]:.1f} -> {load_after[0]:.1f}")


if __name__ == "__main__":
    main()
