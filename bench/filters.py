"""The note filter's budget (issue 32): a filtered listing against interpreter start-up, and the
cold index of this tree against another source tree, alternated.

    python bench/filters.py queries --notes 100000 --work DIR [--runs 7]
    python bench/filters.py queries VAULT DB [--runs 7]
    python bench/filters.py cold --notes 10000 --work DIR --old REV [--rounds 3]
    python bench/filters.py cold VAULT --other OTHER_SRC [--rounds 3]

With ``--notes`` the vault is bench/benchvault.py's in ``--work`` (shared with bench/tasks.py and
bench/bases.py, made once per size: at 100k notes about 5-6 minutes with its index the first
time, a minute or two after). ``queries`` indexes the vault into DB if needed, then times (best
of ``--runs``, each a fresh ``python scripts/notedex ... --no-refresh`` from bytecode)
interpreter start-up (``python -c pass``), an unfiltered ``scan --json``, a filtered ``scan`` (a
property condition and a folder: the budget's, target 3x start-up), ``recent`` and
``properties``, and prints each against start-up, wall and CPU. ``cold`` alternates ``index
--full`` of this tree and of OTHER_SRC (a checkout's ``src``, first on ``PYTHONPATH``; ``--old
REV`` exports one with ``git archive``) into fresh databases and prints each side's best and
median CPU (the issue's bound: this tree within 10% of the tree before issue 32). Cold runs at
10k notes at most on a shared machine (about 10 s CPU a run).
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchvault import SRC, TARGETS, child_env, compiled, vault
from doctor import export_revision

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
    compiled(src)
    return child_env(Path(tempfile.gettempdir()), src)


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
        budget = "--where" in args and "--sort" not in args and args[0] == "scan"
        target = f" (target <= {TARGETS['filters']:.0f}x)" if budget else ""
        print(
            f"{label:<58} {seconds * 1000:6.1f} ms {seconds / start:4.1f}x wall, "
            f"{cpu * 1000:6.1f} ms {cpu / start_cpu:4.2f}x CPU{target}"
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
                    timed([*cmd, "--vault", str(vault), "--db", str(db)], env_for(src), cpu=True)
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
    q.add_argument("vault", type=Path, nargs="?")
    q.add_argument("db", type=Path, nargs="?")
    q.add_argument("--runs", type=int, default=7)
    q.add_argument("--folder", default="Areas")
    q.add_argument("--where", default="status=draft")
    c = sub.add_parser("cold")
    c.add_argument("vault", type=Path, nargs="?")
    c.add_argument("--other", type=Path, help="the other tree's src folder")
    c.add_argument("--old", help="a git revision whose src is the other tree")
    c.add_argument("--rounds", type=int, default=3)
    for each in (q, c):
        each.add_argument("--notes", type=int, help="benchvault's generated vault of this size")
        each.add_argument("--work", type=Path, help="where that vault is kept (with --notes)")
    args = parser.parse_args(argv)
    if args.notes:
        work = args.work or parser.error("--notes needs --work")
        args.vault = vault(work, args.notes)
        if args.what == "queries":
            args.db = args.db or work / f"index-{args.notes}.db"
    if args.vault is None or (args.what == "queries" and args.db is None):
        parser.error("give VAULT (and DB) or --notes N --work DIR")
    if args.what == "queries":
        queries(args.vault, args.db, args.runs, args.folder, args.where)
    else:
        other = args.other
        if args.old:
            other = export_revision(args.old, Path(tempfile.mkdtemp(prefix="bench-old-")))
        if other is None:
            parser.error("cold needs --other SRC or --old REV")
        cold(args.vault, other, args.rounds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
