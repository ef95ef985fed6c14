"""The note filter's budget (issue 32): a filtered listing against interpreter start-up, and the
cold index of this tree against another source tree, alternated.

    python bench/filters.py queries VAULT DB [--runs 7]
    python bench/filters.py cold VAULT --other OTHER_SRC [--rounds 3]

``queries`` indexes VAULT into DB if needed, then times (best of ``--runs``, wall clock, each a
fresh ``python scripts/notedex ... --no-refresh``) interpreter start-up (``python -c pass``), an
unfiltered ``scan --json``, a filtered ``scan`` (a property condition and a folder), ``recent``
and ``properties``, and prints each against start-up. ``cold`` alternates ``index --full`` of
this tree and of OTHER_SRC (a checkout's ``src``, first on ``PYTHONPATH``) into fresh databases
and prints each side's best and median. Small vaults only on a shared machine (1k-10k notes).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
LAUNCHER = SRC.parent / "scripts" / "notedex"  # what the installed command runs (no runpy)


def timed(cmd: Sequence[str], env: dict[str, str] | None = None, cpu: bool = False) -> float:
    """Wall seconds of one run, or with ``cpu`` its user + system CPU seconds: on a loaded
    machine the CPU time is the figure that does not depend on the neighbours."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    used = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return used if cpu else wall


def best(cmd: Sequence[str], runs: int, env: dict[str, str] | None = None) -> tuple[float, float]:
    """(best wall, best CPU) of ``runs`` runs."""
    wall, cpu = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall.append(timed(cmd, env))
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
    return min(wall), min(cpu)


def env_for(src: Path) -> dict[str, str]:
    """The environment of a run of ``src``, its bytecode compiled once: a run that compiles
    every module it imports measures the compiler, not the command."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = str(src)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], check=True, env=env)
    return env


def queries(vault: Path, db: Path, runs: int, folder: str, where: str) -> None:
    env = env_for(SRC)
    notedex = [sys.executable, str(LAUNCHER)]
    common = ["--vault", str(vault), "--db", str(db), "--no-refresh"]
    if not db.exists():
        subprocess.run(
            [*notedex, "index", "--vault", str(vault), "--db", str(db)], check=True, env=env
        )
    start, start_cpu = best([sys.executable, "-c", "pass"], runs)
    print(f"interpreter start-up: {start * 1000:.1f} ms wall, {start_cpu * 1000:.1f} ms CPU")
    cases = {
        "scan --json": ["scan", "--json"],
        f"scan --where {where} --folder {folder} --json": [
            "scan",
            "--where",
            where,
            "--folder",
            folder,
            "--json",
        ],
        f"scan --where {where} --folder {folder} --sort modified": [
            "scan",
            "--where",
            where,
            "--folder",
            folder,
            "--sort",
            "modified",
            "--json",
        ],
        "recent --json": ["recent", "--json"],
        f"recent --folder {folder} --where {where}": [
            "recent",
            "--folder",
            folder,
            "--where",
            where,
            "--json",
        ],
        "properties --json": ["properties", "--json"],
        "properties status --json": ["properties", "status", "--json"],
    }
    for label, args in cases.items():
        seconds, cpu = best([*notedex, *args, *common], runs, env)
        print(
            f"{label:<58} {seconds * 1000:6.1f} ms {seconds / start:4.1f}x wall, "
            f"{cpu * 1000:6.1f} ms {cpu / start_cpu:4.1f}x CPU"
        )


def cold(vault: Path, other: Path, rounds: int) -> None:
    sides = {"this tree": SRC, "other": other}
    times: dict[str, list[float]] = {name: [] for name in sides}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(rounds):
            for name, src in sides.items():
                db = Path(tmp) / f"{name.replace(' ', '-')}-{i}.db"
                cmd = [sys.executable, "-m", "notedex", "index", "--full"]
                times[name].append(
                    timed([*cmd, "--vault", str(vault), "--db", str(db)], env_for(src))
                )
    for name, values in times.items():
        print(
            f"{name:<10} index --full CPU: best {min(values):.2f} s, median "
            f"{statistics.median(values):.2f} s ({', '.join(f'{v:.2f}' for v in values)})"
        )
    ratio = min(times["this tree"]) / min(times["other"])
    print(f"this tree / other (best): {ratio:.3f}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    q = sub.add_parser("queries")
    q.add_argument("vault", type=Path)
    q.add_argument("db", type=Path)
    q.add_argument("--runs", type=int, default=7)
    q.add_argument("--folder", default="Areas")
    q.add_argument("--where", default="status=draft")
    c = sub.add_parser("cold")
    c.add_argument("vault", type=Path)
    c.add_argument("--other", type=Path, required=True, help="the other tree's src folder")
    c.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    if args.what == "queries":
        queries(args.vault, args.db, args.runs, args.folder, args.where)
    else:
        cold(args.vault, args.other, args.rounds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
