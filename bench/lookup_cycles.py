"""Lookup's cost against interpreter start-up as cachegrind's cycle estimate (issue 30's speed
budget): deterministic, where CPU time on a shared machine is not.

    python bench/lookup_cycles.py --vault V --db D [--old REV] [--kinds keyword "body stage"]

Instructions alone misled us once: a change cut the 100k keyword's instructions by 5% and its
CPU time by nothing, because the work it removed ran in a tight loop while the work it added ran
cold code. Valgrind's callgrind with its cache simulation counts each process's instructions,
first-level misses (instruction and data) and last-level misses; the estimate is
``Ir + 10 * (L1 misses) + 100 * (LL misses)`` (KCachegrind's weights), and its ratio to
``python -c pass`` follows the measured CPU ratio of ``bench/lookup_ranking.py`` within a few
hundredths. Each command runs once to warm its bytecode caches, then once under valgrind
(about 10 s each). The questions are ``bench/lookup_ranking.py``'s six kinds, picked from the
vault's truth file (``V.truth.json``) and the index. ``--old REV`` runs that revision's ``src``
and launcher too, exported with ``git archive``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lookup_ranking  # beside this file

WEIGHTS = {"L1": 10, "LL": 100}
"""KCachegrind's cycle estimate: an instruction 1, a first-level miss 10, a last-level one 100."""


def estimate(argv: list[str], env: dict[str, str]) -> dict[str, float]:
    """One process's events under callgrind's cache simulation, and their cycle estimate."""
    subprocess.run(argv, env=env, capture_output=True)  # bytecode caches written first
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                "--cache-sim=yes",
                f"--callgrind-out-file={out}",
                *argv,
            ],
            env=env,
            capture_output=True,
            check=True,
        )
        return cycles(out.read_text(encoding="utf-8", errors="replace").splitlines())


def cycles(lines: list[str]) -> dict[str, float]:
    """The events of a callgrind output file (its ``events:`` and ``summary:`` lines) and
    their cycle estimate."""
    names = next(line.split()[1:] for line in lines if line.startswith("events:"))
    totals = next(line.split()[1:] for line in lines if line.startswith(("summary:", "totals:")))
    events = dict(zip(names, map(int, totals), strict=True))
    first = events.get("I1mr", 0) + events.get("D1mr", 0) + events.get("D1mw", 0)
    last = events.get("ILmr", 0) + events.get("DLmr", 0) + events.get("DLmw", 0)
    cycles = events["Ir"] + WEIGHTS["L1"] * first + WEIGHTS["LL"] * last
    return {"Ir": events["Ir"], "L1 misses": first, "LL misses": last, "cycles": cycles}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vault", type=Path, required=True)
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--old", help="another revision to run beside the working tree")
    parser.add_argument("--kinds", nargs="*", help="only these kinds (default: all six)")
    args = parser.parse_args()
    truth = json.loads(Path(f"{args.vault}.truth.json").read_text(encoding="utf-8"))
    asked = lookup_ranking.with_issue30(lookup_ranking.queries(truth), args.db)
    if args.kinds:
        asked = {kind: asked[kind] for kind in args.kinds}
    env = dict(os.environ, PYTHONHASHSEED="0")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    sides = {"new": (str(Path(sys.executable).parent / "notedex"), env)}
    with tempfile.TemporaryDirectory() as tmp:
        if args.old:
            old_src = lookup_ranking.export_revision(args.old, Path(tmp))
            old_env = dict(env, PYTHONPATH=str(old_src))
            sides["old"] = (str(old_src.parent / "scripts" / "notedex"), old_env)
        start = estimate([sys.executable, "-c", "pass"], env)
        print(
            f"start-up: {start['Ir'] / 1e6:.2f}M instructions, {start['cycles'] / 1e6:.2f}M cycles"
        )
        for kind, question in asked.items():
            for side, (launcher, side_env) in sides.items():
                argv = [sys.executable, launcher, "lookup", question, "--vault", str(args.vault)]
                got = estimate([*argv, "--db", str(args.db), "--no-refresh"], side_env)
                print(
                    f"{kind:16s} {side}: {got['Ir'] / 1e6:7.2f}M instructions, "
                    f"{got['cycles'] / 1e6:7.2f}M cycles, "
                    f"{got['cycles'] / start['cycles']:.3f}x start-up"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
