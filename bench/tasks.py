"""`notedex tasks` against interpreter start-up, and a cold index against another revision
(issue 32: `tasks --open` at most 3x start-up; the cold index at most 10% slower).

    python bench/tasks.py --notes 1000
    python bench/tasks.py --notes 100000 --work ~/bench-work --runs 7
    python bench/tasks.py --notes 10000 --work ~/bench-work --old main --pairs 3

The vault is bench/benchvault.py's (genvault's, seed 0, with tasks appended to every third note:
1,135 tasks at 1k notes, about 11,600 at 10k), made once in ``--work`` and reused (default: a
temporary folder, removed after). Every timed run is a whole process of this checkout's code
with ``--no-refresh``, from bytecode, in a clean environment (benchvault.child_env); the figure
is the median CPU time (user + system) of ``--runs`` runs, the commands' order rotating, and its
ratio to ``python -c pass``'s, against the target. With ``--old REV`` (a git revision) or
``--old-src DIR`` (a ``src`` folder), ``index --full`` into a new database runs alternately with
that code and this checkout's, pair by pair, so a shared machine's load hits both alike.
Nothing is asserted. At 100k notes the first run builds the vault and index (5-6 minutes), each
later one about a minute; a cold pair at 10k takes about 20 s.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchvault import SRC, TARGETS, child_env, compiled, index, task_count, vault
from doctor import export_revision, timed

QUERIES = (
    ["tasks", "--open", "--json"],
    ["tasks", "--open"],
    ["tasks", "--open", "--due-before", "2026-03-01", "--json"],
    ["tasks", "--open", "--limit", "20", "--json"],
    ["lookup", "kubernetes", "--json"],
)
"""The first two are the budget's (`tasks --open`, piped JSON and text); `lookup` for scale."""


def cold_index(src: Path, vault_dir: Path, db: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of ``notedex index --full`` on a new index, with ``src``'s code."""
    for leftover in db.parent.glob(db.name + "*"):
        leftover.unlink()
    argv = [sys.executable, "-m", "notedex", "index", "--full", "--vault", str(vault_dir)]
    return timed([*argv, "--db", str(db)], {**env, "PYTHONPATH": str(src)})


def queries(vault_dir: Path, db: Path, runs: int, env: dict[str, str]) -> None:
    notedex = [sys.executable, str(SRC.parent / "scripts" / "notedex")]
    common = ["--vault", str(vault_dir), "--db", str(db), "--no-refresh"]
    argvs = [[sys.executable, "-c", "pass"]] + [[*notedex, *q, *common] for q in QUERIES]
    for argv in argvs:
        timed(argv, env)  # warm: the page cache and every .pyc
    spent: list[list[float]] = [[] for _ in argvs]
    for run in range(runs):
        for k in range(len(argvs)):
            turn = (k + run) % len(argvs)
            spent[turn].append(timed(argvs[turn], env)[1])
    start_up = statistics.median(spent[0])
    print(f"python -c pass: {start_up * 1000:.1f} ms CPU (median of {runs})")
    for query, times in zip(QUERIES, spent[1:], strict=True):
        cpu = statistics.median(times)
        budget = query in QUERIES[:2]
        target = f" (target <= {TARGETS['tasks']:.0f}x)" if budget else ""
        print(f"{' '.join(query)}: {cpu * 1000:.1f} ms CPU = {cpu / start_up:.2f}x{target}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=15, help="runs per query figure")
    parser.add_argument("--work", type=Path, help="keeps the vault and index for later runs")
    parser.add_argument("--old", help="a git revision whose cold index to compare")
    parser.add_argument("--old-src", type=Path, help="another revision's src folder")
    parser.add_argument("--pairs", type=int, default=3, help="cold index pairs with --old")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="notedex-tasks-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        started = time.perf_counter()
        vault_dir = vault(work, args.notes, with_tasks=True)
        db = work / f"index-{args.notes}.db"
        env = child_env(work)
        compiled()
        index(vault_dir, db, env)
        print(f"{args.notes} notes, {task_count(work, args.notes)} tasks appended "
              f"(ready in {time.perf_counter() - started:.0f} s), load {os.getloadavg()[0]:.1f}")  # fmt: skip
        queries(vault_dir, db, args.runs, env)
        old = args.old_src
        if args.old:
            old = export_revision(args.old, work / "old")
        if old:
            compiled(old)
            for _ in range(args.pairs):
                for name, src in (("old", old), ("new", SRC)):
                    wall, cpu = cold_index(src, vault_dir, work / f"cold-{name}.db", env)
                    print(f"cold index --full ({name}): {wall:.2f} s wall, {cpu:.2f} s CPU")
        print(f"load {os.getloadavg()[0]:.1f}")
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
