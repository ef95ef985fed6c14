"""`notedex base` against interpreter start-up (issue 32: a base with three filters and a
formula, at most 5x start-up), on a generated vault.

    python bench/bases.py --notes 1000 --runs 7 [--work DIR]
    python bench/bases.py --notes 100000 --work ~/bench-work     # the vault made once, reused

The vault is bench/benchvault.py's (genvault, seed 0) in ``--work`` (default: a temporary
folder, removed after), shared with bench/tasks.py and bench/filters.py and made only once per
size (at 100k notes about 5-6 minutes for the vault and its index the first time; each later
run a minute or two). Writes `bench.base` into it, brings the index up to date, then times
whole processes of this checkout's code (scripts/notedex, from bytecode) with ``--no-refresh``
(the answer, not the freshness walk) in a clean environment: each repetition runs ``python -c
pass`` and ``notedex base bench.base --json``, the order rotating. Prints the medians (wall and
CPU), their ratio to start-up against the target, the row count and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchvault import SRC, TARGETS, child_env, compiled, index, vault
from doctor import timed

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
    work.mkdir(parents=True, exist_ok=True)
    try:
        measure(work, args.notes, args.runs)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


def measure(work: Path, notes: int, runs: int) -> None:
    vault_dir, db = vault(work, notes), work / f"index-{notes}.db"
    env = child_env(work)
    compiled()
    base = BENCH_BASE.format(folder=_fullest(vault_dir))
    written = vault_dir / "bench.base"
    if not written.exists() or written.read_text(encoding="utf-8") != base:
        written.write_text(base, encoding="utf-8")
    index(vault_dir, db, env)
    launcher = str(SRC.parent / "scripts" / "notedex")
    common = [sys.executable, launcher, "--vault", str(vault_dir), "--db", str(db)]
    command = [*common, "--no-refresh", "base", "bench.base", "--json"]
    answer = json.loads(subprocess.run(command, check=True, capture_output=True, env=env).stdout)
    pass_argv = [sys.executable, "-c", "pass"]
    timed(pass_argv, env)  # warm: .pyc files exist before timing
    samples: dict[str, list[tuple[float, float]]] = {"start-up": [], "base": []}
    load_before = os.getloadavg()
    for run in range(runs):
        order = [("start-up", pass_argv), ("base", command)]
        for name, argv in order if run % 2 == 0 else order[::-1]:
            samples[name].append(timed(argv, env))
    load_after = os.getloadavg()
    wall = {k: statistics.median(w for w, _ in v) for k, v in samples.items()}
    cpu = {k: statistics.median(c for _, c in v) for k, v in samples.items()}
    print(f"{notes} notes, {len(answer['rows'])} rows, {runs} runs")
    for name in samples:
        target = f" (target <= {TARGETS['bases']:.0f}x CPU)" if name == "base" else ""
        print(
            f"  {name:9} wall {wall[name] * 1000:6.1f} ms ({wall[name] / wall['start-up']:.1f}x)"
            f"  cpu {cpu[name] * 1000:6.1f} ms ({cpu[name] / cpu['start-up']:.2f}x){target}"
        )
    print(f"  load {load_before[0]:.1f} -> {load_after[0]:.1f}")


if __name__ == "__main__":
    main()
