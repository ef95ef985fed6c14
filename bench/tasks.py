"""`notedex tasks` against interpreter start-up, and a cold index against another revision
(issue 32: `tasks --open` at most 3x start-up; the cold index at most 10% slower).

    python bench/tasks.py --notes 1000
    python bench/tasks.py --notes 10000 --old-src /tmp/main/src --pairs 3

The vault is bench/genvault.py's (same --notes, seed 0) with Markdown tasks appended to every
third note (1-6 each, statuses ` x-/`, 60% with a 📅 due date; deterministic), so the answer has
thousands of tasks at 10k notes. CPU time (user + system of the child) is the median of --runs
runs. With --old-src (a `src` folder exported from another revision, e.g. `git archive main`),
`index --full` runs alternately with that code and this checkout's, pair by pair, so a shared
machine's load hits both alike. Prints one line per figure; nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
SRC = BENCH.parent / "src"


def add_tasks(vault: Path) -> int:
    """Append tasks to every third note, in path order; returns how many were written."""
    rnd = random.Random(1)
    written = 0
    notes = sorted(p for p in vault.rglob("*.md") if ".obsidian" not in p.parts)
    for index, path in enumerate(notes):
        if index % 3 != 2:
            continue
        lines = []
        for k in range(rnd.randint(1, 6)):
            status = rnd.choice(" x-/ ")
            due = f" 📅 2026-{rnd.randint(1, 12):02d}-{rnd.randint(1, 28):02d}"
            lines.append(f"- [{status}] task {k} #t{k}{due if rnd.random() < 0.6 else ''}\n")
        with path.open("a", encoding="utf-8") as note:
            note.write("\n" + "".join(lines))
        written += len(lines)
    return written


def cpu(argv: list[str], runs: int, env: dict[str, str] | None = None) -> float:
    """The median CPU seconds of ``argv`` as a child process."""
    spent = []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        spent.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(spent)


def cold_index(src: Path, vault: Path, db: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of ``notedex index --full`` on a new index, with ``src``'s code."""
    for leftover in db.parent.glob(db.name + "*"):
        leftover.unlink()
    env = {**os.environ, "PYTHONPATH": str(src)}
    argv = [sys.executable, "-m", "notedex", "index", "--full", "--vault", str(vault)]
    start = time.perf_counter()
    spent = cpu([*argv, "--db", str(db)], 1, env)
    return time.perf_counter() - start, spent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=15, help="runs per query figure")
    parser.add_argument("--old-src", type=Path, help="another revision's src folder")
    parser.add_argument("--pairs", type=int, default=3, help="cold index pairs with --old-src")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="notedex-tasks-bench-"))
    try:
        vault, db = work / "vault", work / "index.db"
        subprocess.run(
            [
                sys.executable,
                str(BENCH / "genvault.py"),
                "--notes",
                str(args.notes),
                "--out",
                vault,
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        print(f"{args.notes} notes, {add_tasks(vault)} tasks")
        env = {**os.environ, "PYTHONPATH": str(SRC)}
        notedex = [sys.executable, "-m", "notedex"]
        index = [*notedex, "index", "--vault", vault, "--db", db]
        subprocess.run(index, env=env, check=True, capture_output=True)
        start_up = cpu([sys.executable, "-c", "pass"], args.runs)
        print(f"python -c pass: {start_up * 1000:.1f} ms CPU")
        common = ["--vault", str(vault), "--db", str(db), "--no-refresh"]
        for query in (
            ["tasks", "--open", "--json"],
            ["tasks", "--open"],
            ["tasks", "--open", "--due-before", "2026-03-01", "--json"],
            ["lookup", "kubernetes", "--json"],
        ):
            spent = cpu([*notedex, *query, *common], args.runs, env)
            print(f"{' '.join(query)}: {spent * 1000:.1f} ms CPU = {spent / start_up:.2f}x")
        if args.old_src:
            for _ in range(args.pairs):
                for name, src in (("old", args.old_src), ("new", SRC)):
                    wall, spent = cold_index(src, vault, work / f"cold-{name}.db")
                    print(f"cold index --full ({name}): {wall:.2f} s wall, {spent:.2f} s CPU")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
