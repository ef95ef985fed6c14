"""Every hit with its line against rg (issue 35): `search WORD --limit 1000000` and `rg -i -n -m 1`.

    python bench/search_lines.py --vault V --db D --word book --runs 9 [--old-src OLD/src]

The index ``D`` of vault ``V`` must exist (``notedex index --vault V --db D``). Each repetition
runs ``rg -i -n -m 1 WORD V``, this checkout's ``notedex search WORD --limit 1000000 --vault V
--db D --no-refresh`` and, with ``--old-src``, the same command on another source tree (a
``git archive`` of the base commit's ``src``: the same interpreter, ``PYTHONPATH`` set to it),
the order rotating (bench/run.py's ``alternate``), stdout to /dev/null, after one untimed run
of each. Printed: the medians of wall and CPU (user + system of the process and its forked
child) for each, rg's wall and CPU over notedex's (at least 1: as fast as rg), and the load
average before and after. ``--json`` adds ``--json`` to the searches.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

import run as bench  # noqa: E402  (a sibling script, not a package)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vault", type=Path, required=True)
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--word", default="book")
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--old-src", type=Path, help="another source tree to compare with")
    parser.add_argument("--json", action="store_true", help="search --json")
    args = parser.parse_args()
    env = bench.child_env(args.db.parent)
    search = (
        sys.executable,
        "-m",
        "notedex",
        "search",
        args.word,  # not after `--`: that takes argparse's path, not the queries' fast one
        "--limit",
        "1000000",
        *(("--json",) if args.json else ()),
        "--vault",
        str(args.vault),
        "--db",
        str(args.db),
        "--no-refresh",
    )
    commands = [
        bench.Command("rg", ("rg", "-i", "-n", "-m", "1", args.word, str(args.vault)), (0, 1)),
        bench.Command("notedex", search),
    ]
    envs = {"rg": env, "notedex": env}
    if args.old_src is not None:
        commands.append(bench.Command("old", search))
        envs["old"] = {**env, "PYTHONPATH": str(args.old_src.resolve())}
    wall: dict[str, list[float]] = {c.name: [] for c in commands}
    cpu: dict[str, list[float]] = {c.name: [] for c in commands}
    load = os.getloadavg()[0]
    for command in commands:  # untimed: .pyc files, the page cache
        bench.run_measured(command, envs[command.name])
    for rep in range(args.runs):
        shift = rep % len(commands)
        for command in [*commands[shift:], *commands[:shift]]:
            took, used = bench.run_measured(command, envs[command.name])
            wall[command.name].append(took)
            cpu[command.name].append(used)
    print(
        f"{args.vault.name} {args.word!r}, {args.runs} runs, load {load:.1f} -> "
        f"{os.getloadavg()[0]:.1f}"
    )
    medians = {n: (bench.median(wall[n]) * 1e3, bench.median(cpu[n]) * 1e3) for n in wall}
    for name, (w, c) in medians.items():
        print(f"  {name:8} wall {w:8.1f} ms  CPU {c:8.1f} ms")
    for name in medians:
        if name != "rg":
            w, c = medians[name]
            print(
                f"  rg / {name}: wall {medians['rg'][0] / w:.2f}x, CPU {medians['rg'][1] / c:.2f}x"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
