"""A/B speed check of two notedex revisions: is the new one as fast as the old one (issue 10)?

    python bench/ab.py OLD_REV NEW_REV --size 10000 --runs 5     # the house refactor's check
    python bench/ab.py main main --size 1000                      # validation: ratios near 1.0

Each revision (a commit: ``git archive`` exports it) gets a regular, non-editable install in its
own virtual environment under ``OUT/ab`` and its own index of one generated vault (bench/run.py
generates and reuses it). The measured commands are whole processes with bench/run.py's argv and
environment: ``lookup KEYWORD`` and ``health --json`` while each revision's daemon runs,
``lookup KEYWORD`` with no daemon (its freshness check walks the vault) and a cold ``index
--full`` on a fresh database. The revisions alternate pair by pair (old new, new old, ...) so the
load of a shared machine hits both alike; each run's wall time and CPU time are kept. The table
(stdout) and the JSON file give per revision the median and spread, and per command the ratio
new/old with its 95% interval and a verdict against 0.95-1.05 (bench/ab_report.py).
Exit 0: every judged ratio within the band; 1: some ratio outside it; 2: a measurement failed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

import ab_report as report  # noqa: E402  (sibling scripts, not a package)
import run as bench  # noqa: E402
from ab_report import METRICS, Samples  # noqa: E402

RESULTS_SCHEMA = 1
SIDES = ("old", "new")
EXPORT_MARKER = ".ab-export"
INSTALL_MARKER = ".ab-installed"


@dataclass(frozen=True)
class Spec:
    """One measured command: its key, label and unit."""

    key: str
    label: str
    unit: str


SPECS = [
    Spec("lookup", "`lookup KEYWORD`, daemon running", "ms"),
    Spec("health", "`health --json`, daemon running", "ms"),
    Spec("lookup_nodaemon", "`lookup KEYWORD`, no daemon (freshness check)", "ms"),
    Spec("cold_index", "cold `index --full`, fresh database", "s"),
]
SPEC_BY_KEY = {spec.key: spec for spec in SPECS}


@dataclass
class Side:
    """One revision: its install, its index for the queries and its database for cold runs."""

    name: str
    rev: str
    commit: str
    tools: bench.Tools
    query_db: Path
    cold_db: Path
    commands: dict[str, bench.Command]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="bench/ab.py",
        description="Alternated A/B timing of two notedex revisions on one generated vault.",
        epilog="Exit 0: every ratio new/old within the band; 1: some ratio outside it; "
        "2: a measurement failed. docs/benchmarks.md explains the method.",
    )
    parser.add_argument("old", metavar="OLD_REV", help="the baseline revision (any git rev)")
    parser.add_argument("new", metavar="NEW_REV", help="the revision to judge")
    parser.add_argument("--size", type=int, default=10000, help="vault notes (default 10000)")
    parser.add_argument("--runs", type=int, default=5, help="rounds (default 5)")
    parser.add_argument(
        "--reps", type=int, default=20, help="query pairs per command and round (default 20)"
    )
    parser.add_argument(
        "--cold-reps", type=int, default=4, help="cold index pairs per round (default 4)"
    )
    parser.add_argument(
        "--tolerance",
        type=float,
        default=0.05,
        help="the band is 1 +- this (default 0.05: 0.95-1.05)",
    )
    parser.add_argument(
        "--judge",
        choices=("wall", "cpu", "both"),
        default="both",
        help="which time the verdict uses: wall clock, CPU (user + system, the process and its "
        "children), or both (default both)",
    )
    parser.add_argument(
        "--commands",
        nargs="+",
        choices=[spec.key for spec in SPECS],
        default=[spec.key for spec in SPECS],
        help="what to measure (default: all)",
    )
    parser.add_argument("--seed", type=int, default=bench.DEFAULT_SEED, help="genvault seed")
    parser.add_argument("--keyword", help="lookup keyword (default: picked from the truth file)")
    parser.add_argument(
        "--out",
        type=Path,
        default=BENCH_DIR / "out",
        help="work folder, shared with bench/run.py (default bench/out)",
    )
    parser.add_argument("--json", type=Path, help="results file (default OUT/ab/ab-OLD-NEW-N.json)")
    args = parser.parse_args(argv)
    if args.size < 1 or args.runs < 1 or args.reps < 1 or args.cold_reps < 1:
        parser.error("--size, --runs, --reps and --cold-reps must be positive")
    args.out = args.out.resolve()
    return args


# --- the two installs ---------------------------------------------------------------------------


def resolve(rev: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(bench.ROOT), "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise bench.BenchError(f"{rev!r} is not a commit of this repository")
    return done.stdout.strip()


def export(commit: str, dest: Path) -> Path:
    """The commit's tree under ``dest`` (reused when its marker names the same commit)."""
    marker = dest / EXPORT_MARKER
    if marker.is_file() and marker.read_text(encoding="ascii").strip() == commit:
        return dest
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(bench.ROOT), "archive", "--format=tar", commit],
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        # The "data" filter (Python 3.11.4+) refuses links and paths outside dest.
        if hasattr(tarfile, "data_filter"):
            tar.extractall(dest, filter="data")
        else:
            tar.extractall(dest)
    marker.write_text(commit + "\n", encoding="ascii")
    return dest


def install(name: str, commit: str, work: Path, env: dict[str, str]) -> bench.Tools:
    """A venv per side and commit: ``main main`` compares two installs, not one with itself."""
    venv = work / f"venv-{name}-{commit[:12]}"
    marker = venv / INSTALL_MARKER
    if marker.is_file() and marker.read_text(encoding="ascii").strip() == commit:
        bench.say(f"{name}: reusing {bench.display_path(venv)}")
        python = venv / "bin" / "python"
        return bench.Tools(str(python), [str(venv / "bin" / "notedex")], None, env, True)
    shutil.rmtree(venv, ignore_errors=True)
    source = export(commit, work / f"src-{commit[:12]}")
    tools = bench.install_checkout(venv, source, env)
    marker.write_text(commit + "\n", encoding="ascii")
    return tools


def make_side(name: str, rev: str, args: argparse.Namespace, vault: Path, keyword: str) -> Side:
    work = args.out / "ab"
    commit = resolve(rev)
    tools = install(name, commit, work, bench.child_env(args.out))
    dbs = work / "db"
    dbs.mkdir(parents=True, exist_ok=True)
    query_db = dbs / f"{name}-{args.size}.db"
    cold_db = dbs / f"{name}-{args.size}-cold.db"
    nd = tools.notedex

    def where(db: Path) -> tuple[str, ...]:
        return ("--vault", str(vault), "--db", str(db))

    commands = {
        "lookup": bench.Command("lookup", (*nd, "lookup", keyword, *where(query_db))),
        "health": bench.Command(
            "health --json", (*nd, "health", "--json", *where(query_db)), ok=(0, 1)
        ),
        "cold_index": bench.Command("index --full", (*nd, "index", "--full", *where(cold_db))),
    }
    commands["lookup_nodaemon"] = commands["lookup"]
    return Side(name, rev, commit, tools, query_db, cold_db, commands)


def build_index(side: Side, vault: Path) -> None:
    """The side's query index, then one no-op `index` (it settles files in the racy window)."""
    bench.remove_db(side.query_db)
    where = ("--vault", str(vault), "--db", str(side.query_db))
    for argv in (("index", "--full", *where), ("index", *where)):
        bench.run_timed(bench.Command("index", (*side.tools.notedex, *argv)), side.tools.env)


def validate(sides: list[Side]) -> dict[str, Any]:
    """One untimed run of each query per side: real answers, and whether the sides agree."""
    info: dict[str, Any] = {}
    outputs: dict[str, list[str]] = {}
    for side in sides:
        lookup = side.commands["lookup"]
        _, found = bench.run_output(
            bench.Command("lookup", (*lookup.argv, "--json")), side.tools.env
        )
        total = json.loads(found)["total"]
        if not total:
            raise bench.BenchError(f"{side.name}: lookup found nothing: pass another --keyword")
        _, health = bench.run_output(side.commands["health"], side.tools.env)
        info[f"{side.name}_lookup_total"] = total
        outputs[side.name] = [found, health]
    info["outputs_identical"] = outputs["old"] == outputs["new"]
    return info


# --- alternated measurement ---------------------------------------------------------------------


def pairs(
    key: str,
    sides: list[Side],
    count: int,
    samples: Samples,
    before: Callable[[Side], None],
    flip: int,
) -> None:
    """``count`` pairs of ``key``, the order flipping each pair (old new, new old, ...); ``flip``
    (the round number) makes sure the first run of a round is not always the same side's."""
    for _ in range(count):
        done = len(samples["wall"][key]["old"])
        order = sides if (done + flip) % 2 == 0 else sides[::-1]
        for side in order:
            before(side)
            wall, cpu = bench.run_measured(side.commands[key], side.tools.env)
            samples["wall"][key][side.name].append(wall)
            samples["cpu"][key][side.name].append(cpu)


def one_round(
    number: int, sides: list[Side], vault: Path, args: argparse.Namespace, samples: Samples
) -> None:
    """Without daemons: the no-daemon lookup, then the cold index; then with both daemons
    running, lookup and health interleaved pair by pair."""

    def nothing(side: Side) -> None:
        pass

    def fresh_db(side: Side) -> None:
        bench.remove_db(side.cold_db)

    keys = samples["wall"]
    if "lookup_nodaemon" in keys:
        pairs("lookup_nodaemon", sides, args.reps, samples, nothing, number)
    if "cold_index" in keys:
        pairs("cold_index", sides, args.cold_reps, samples, fresh_db, number)
    queried = [key for key in ("lookup", "health") if key in keys]
    if not queried:
        return
    logs = args.out / "ab" / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    with ExitStack() as stack:
        for side in sides if number % 2 == 0 else sides[::-1]:
            daemon = bench.Daemon(side.tools, vault, side.query_db, logs / f"{side.name}.log")
            stack.enter_context(bench.running_daemon(daemon, 600.0))
        for _ in range(args.reps):
            for key in queried:
                pairs(key, sides, 1, samples, nothing, number)


def measure(args: argparse.Namespace) -> dict[str, Any]:
    started = time.perf_counter()
    load_start = bench.load_average()
    vault, _, truth = bench.ensure_vault(args.out, args.size, args.seed)
    keyword = bench.check_keyword(
        args.keyword or bench.pick_keyword(truth["notes"]), truth, vault.name
    )
    sides = [
        make_side(name, rev, args, vault, keyword) for name, rev in zip(SIDES, (args.old, args.new))
    ]
    bench.warm_page_cache(vault)
    for side in sides:
        bench.say(f"{side.name}: building its index of {vault.name}")
        build_index(side, vault)
    info = validate(sides)
    samples: Samples = {
        metric: {key: {"old": [], "new": []} for key in args.commands} for metric in METRICS
    }
    for number in range(args.runs):
        one_round(number, sides, vault, args, samples)
        medians = ", ".join(
            f"{key} {report.scaled(statistics.median(s['old']), SPEC_BY_KEY[key].unit)}/"
            f"{report.scaled(statistics.median(s['new']), SPEC_BY_KEY[key].unit)}"
            for key, s in samples["wall"].items()
        )
        bench.say(f"round {number + 1}/{args.runs} (old/new so far): {medians}")
    band = (1 - args.tolerance, 1 + args.tolerance)
    judged = METRICS if args.judge == "both" else (args.judge,)
    labels = {spec.key: (spec.label, spec.unit) for spec in SPECS}
    found = report.figures(samples, labels, band, judged)
    return {
        "schema": RESULTS_SCHEMA,
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "revisions": {s.name: {"rev": s.rev, "commit": s.commit} for s in sides},
        "settings": {
            "size": args.size,
            "runs": args.runs,
            "reps": args.reps,
            "cold_reps": args.cold_reps,
            "seed": args.seed,
            "keyword": keyword,
        },
        "machine": {
            "cores": os.cpu_count(),
            "os": platform.system(),
            "python": platform.python_version(),
            "load_average": {"start": load_start, "end": bench.load_average()},
        },
        "info": info,
        "band": list(band),
        "judged": list(judged),
        "figures": found,
        "pass": all(f["pass"] for f in found.values()),
        "seconds": time.perf_counter() - started,
    }


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        result = measure(args)
    except (bench.BenchError, subprocess.CalledProcessError) as exc:
        bench.say(f"error: {exc}")
        return 2
    old, new = (result["revisions"][s]["commit"][:12] for s in SIDES)
    path = (args.json or args.out / "ab" / f"ab-{old}-{new}-{args.size}.json").resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report.rounded(result), indent=1) + "\n", encoding="utf-8")
    print(report.table(result))
    verdict = "every ratio within the band" if result["pass"] else "a ratio outside the band"
    bench.say(f"{verdict}; results: {bench.display_path(path)}; {result['seconds']:.0f}s in all")
    return 0 if result["pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
