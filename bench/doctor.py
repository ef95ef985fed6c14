"""The link doctor's query costs (issue 12): `health --json`, `tags --json` and `mentions NOTE
--json` against interpreter start-up, on an indexed vault, optionally against an old revision.

    python bench/doctor.py --vault V --db D --note "Some title" --runs 7 [--old main [--old-db D0]]

Every command is a whole process of the installed launcher with ``--no-refresh`` (the answer,
not the freshness walk), in a clean environment (no PYTHON* variables: with
PYTHONDONTWRITEBYTECODE every process would recompile; no NOTEDEX_*, no config file). Each
command runs once before timing, so its .pyc files exist. A repetition runs ``python -c pass``
and every command (new side, then old side), the order rotating per repetition. Wall time is
spawn to exit; CPU is the child's user + system time from ``os.wait4``. Reported: the medians,
each command's median over start-up's (wall and CPU), ``new / old`` as the median of the
per-repetition ratios, and the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def child_env(scratch: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "NOTEDEX_"))}
    env["NOTEDEX_CONFIG"] = str(scratch / "no-config.toml")  # never created: defaults only
    env["XDG_STATE_HOME"] = str(scratch / "state")
    return env


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, child CPU seconds) of one process; its output is discarded."""
    started = time.perf_counter()
    with open(os.devnull, "wb") as null:
        process = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=null, stderr=null, env=env
        )
        _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in (0, 1):  # health exits 1 with findings
        raise SystemExit(f"`{' '.join(argv)}` exited {process.returncode}")
    return wall, usage.ru_utime + usage.ru_stime


def export_revision(rev: str, into: Path) -> Path:
    """``rev``'s ``src`` folder, exported with ``git archive`` (no checkout is touched)."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "src"], capture_output=True, check=True
    ).stdout
    with tempfile.TemporaryFile() as handle:
        handle.write(archive)
        handle.seek(0)
        with tarfile.open(fileobj=handle) as tar:
            tar.extractall(into, filter="data")
    return into / "src"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vault", type=Path, required=True)
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--note", help="the note for `mentions` (none: no mentions row)")
    parser.add_argument("--runs", type=int, default=7, help="repetitions (default 7)")
    parser.add_argument("--old", help="an old revision (git rev) to compare with")
    parser.add_argument("--old-db", type=Path, help="the old side's index (default: --db)")
    parser.add_argument("--only", nargs="+", choices=("health", "tags", "mentions"))
    args = parser.parse_args(argv)
    scratch = Path(tempfile.mkdtemp(prefix="doctor-bench-"))
    env = child_env(scratch)
    sides = {"new": env}
    if args.old:
        sides["old"] = dict(env, PYTHONPATH=str(export_revision(args.old, scratch / "old")))
    launcher = str(Path(sys.executable).parent / "notedex")
    dbs = {"new": args.db, "old": args.old_db or args.db}
    queries = {"health": ["health", "--json"], "tags": ["tags", "--json"]}
    if args.note:
        queries["mentions"] = ["mentions", args.note, "--json"]
    if args.only:
        queries = {k: v for k, v in queries.items() if k in args.only}
    commands: list[tuple[str, list[str], dict[str, str]]] = [
        ("start-up", [sys.executable, "-c", "pass"], env)
    ]
    for name, query in queries.items():
        for side, side_env in sides.items():
            base = [sys.executable, launcher, "--vault", str(args.vault), "--db", str(dbs[side])]
            commands.append((f"{side} {name}", [*base, *query, "--no-refresh"], side_env))
    for _, command, command_env in commands:
        timed(command, command_env)  # warm: .pyc files, the page cache
    load_before = os.getloadavg()
    walls: dict[str, list[float]] = {name: [] for name, _, _ in commands}
    cpus: dict[str, list[float]] = {name: [] for name, _, _ in commands}
    for rep in range(args.runs):
        shift = rep % len(commands)
        for name, command, command_env in [*commands[shift:], *commands[:shift]]:
            wall, cpu = timed(command, command_env)
            walls[name].append(wall)
            cpus[name].append(cpu)
    start_wall = statistics.median(walls["start-up"])
    start_cpu = statistics.median(cpus["start-up"])
    report: dict[str, object] = {
        "runs": args.runs,
        "load before": [round(x, 2) for x in load_before],
        "load after": [round(x, 2) for x in os.getloadavg()],
        "start-up ms (wall, cpu)": [round(start_wall * 1000, 1), round(start_cpu * 1000, 1)],
    }
    for name, _, _ in commands[1:]:
        wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
        row = {
            "ms (wall, cpu)": [round(wall * 1000, 1), round(cpu * 1000, 1)],
            "/ start-up (wall, cpu)": [round(wall / start_wall, 2), round(cpu / start_cpu, 2)],
        }
        if name.startswith("new ") and "old " + name[4:] in walls:
            pairs = zip(walls[name], walls["old " + name[4:]], strict=True)
            row["new / old (wall)"] = round(statistics.median(n / o for n, o in pairs), 3)
        report[name] = row
    print(json.dumps(report, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
