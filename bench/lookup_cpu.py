"""Lookup's own CPU in a fresh process (issue 30's speed budget), old and new, per query kind.

    python bench/lookup_cpu.py --sizes 10000 100000 --runs 15 --old main
    python bench/lookup_cpu.py --db INDEX --questions kafka zyzzogeton --runs 9 --old main

bench/lookup_ranking.py times whole processes against interpreter start-up; on a shared
machine their noise (a few ms) hides a cut of one statement. This one times what a cut can
change: each run is a fresh interpreter that imports lookup, then measures the CPU time
(``time.process_time``) and the page faults of opening the index and answering one question,
the first touch of every page included, as in a real query. The old revision's ``src`` is
exported with ``git archive`` and run on the same index (same schema version only); old and
new alternate, and each reports the median and the least CPU ms over ``--runs``, the median
page faults, and whether both gave the same answer. The six kinds and their vaults are
bench/lookup_ranking.py's (its indexes ``ranking-v*.db`` under OUT are reused: run it first).
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

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

import lookup_ranking as ranking  # noqa: E402  (a sibling script, not a package)
import run as bench  # noqa: E402

CHILD = r"""
import resource, sys, time
from notedex.store.connect import connect_readonly
from notedex.query.lookup import lookup
faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
started = time.process_time()
answer = lookup(connect_readonly(sys.argv[1]), sys.argv[2], limit=10)
used = time.process_time() - started
faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
paths = [c["path"] for c in answer["candidates"]]
print(used, faults, answer["stage"], answer["total"], "|".join(paths))
"""


def one_run(src: Path, db: Path, question: str) -> tuple[float, int, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "NOTEDEX_"))}
    env["PYTHONPATH"] = str(src)
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(db), question],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split(" ", 2)
    return float(out[0]) * 1000, int(out[1]), out[2]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--old", default="main", help="the old revision (a git rev)")
    parser.add_argument("--seed", type=int, default=bench.DEFAULT_SEED)
    parser.add_argument("--out", type=Path, default=BENCH_DIR / "out", help="work folder")
    parser.add_argument(
        "--db",
        type=Path,
        help="an existing index to ask instead of the generated sizes (opened read-only, never "
        "built nor refreshed: the shared 1M index of issue 35), with --questions",
    )
    parser.add_argument("--questions", nargs="+", default=[], help="the questions asked of --db")
    args = parser.parse_args(argv)
    new_src = bench.ROOT / "src"
    results: dict[str, dict[str, dict[str, object]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        old_src = ranking.export_revision(args.old, Path(tmp))
        if ranking.schema_version(old_src) != ranking.schema_version(new_src):
            raise SystemExit("the old revision has another schema version: nothing to compare")
        indexes: list[tuple[str, Path, dict[str, str]]] = []
        if args.db is not None:
            indexes.append((args.db.stem, args.db, {q: q for q in args.questions}))
        for notes in [] if args.db is not None else args.sizes:
            name = bench.vault_name(notes)
            vault, _, truth = bench.ensure_vault(args.out, notes, args.seed)
            db = args.out / f"ranking-{name}.db"
            ranking.ensure_index(vault, db)
            indexes.append((name, db, ranking.with_issue30(ranking.queries(truth), db)))
        for name, db, asked in indexes:
            results[name] = {}
            for kind, question in asked.items():
                cpu: dict[str, list[float]] = {"old": [], "new": []}
                faults: dict[str, list[int]] = {"old": [], "new": []}
                answers: dict[str, str] = {}
                for rep in range(args.runs):
                    for side in ("old", "new") if rep % 2 else ("new", "old"):
                        used, touched, answer = one_run(
                            old_src if side == "old" else new_src, db, question
                        )
                        cpu[side].append(used)
                        faults[side].append(touched)
                        answers[side] = answer
                row = {
                    "query": question,
                    **{
                        f"{side} {what}": round(value, 2)
                        for side in ("old", "new")
                        for what, value in (
                            ("cpu ms median", statistics.median(cpu[side])),
                            ("cpu ms least", min(cpu[side])),
                            ("faults", statistics.median(faults[side])),
                        )
                    },
                    "same answer": answers["old"] == answers["new"],
                }
                results[name][kind] = row
                print(json.dumps({name: {kind: row}}, ensure_ascii=False), flush=True)
    text = json.dumps(results, indent=1, ensure_ascii=False) + "\n"
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "lookup-cpu.json").write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
