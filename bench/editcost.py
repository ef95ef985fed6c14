"""The cost of an ordinary daemon-style apply, in-process (issue 35): what one save costs the
writer must not grow with the vault. Copies a prepared index, opens one writer as the daemon
does, then times ``apply_paths`` of
small changes to a generated vault (``bench/genvault.py``), each undone afterwards:

- ``edit``: one note that holds a broken link gets a line appended (and back);
- ``new``: a new note with a broken link and a link to an existing note (then deleted);
- ``rename``: a note holding a broken link takes another name (and back);
- ``edit100``: 100 notes with broken links edited in one apply (and back).

Prints, per scenario, the median wall and CPU seconds of the change (the undo is timed apart)
and the SQLite virtual-machine steps of the change's apply (``set_progress_handler`` every 100 steps):
a figure that should stay the same from 10k to 40k notes. ``--profile FILE`` writes a cProfile
of every apply (``python -m pstats FILE``).

    python bench/genvault.py --notes 10000 --seed 1 --out bench/out/v10k
    notedex index --full --vault bench/out/v10k --db bench/out/v10k.db
    python bench/editcost.py --vault bench/out/v10k --db bench/out/v10k.db [--runs 5]

The vault is edited in place and put back: use a copy (``cp -a``) if it matters.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import shutil
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from notedex.indexing.reconcile import apply_paths
from notedex.store.writer import IndexWriter

STEP = 100


class Meter:
    """Wall seconds and SQLite VM steps of the applies run under ``measure``."""

    def __init__(self, writer: IndexWriter, profile: cProfile.Profile | None) -> None:
        self.writer, self.profile = writer, profile
        self.ticks = 0

    def _tick(self) -> int:
        self.ticks += 1
        return 0

    @contextmanager
    def measure(self, into: dict[str, list[float]], name: str) -> Iterator[None]:
        self.ticks = 0
        self.writer.conn.set_progress_handler(self._tick, STEP)
        if self.profile is not None:
            self.profile.enable()
        started, cpu = time.perf_counter(), time.process_time()
        try:
            yield
        finally:
            seconds = time.perf_counter() - started
            cpu = time.process_time() - cpu
            if self.profile is not None:
                self.profile.disable()
            self.writer.conn.set_progress_handler(None, 0)
            into.setdefault(name + "_s", []).append(seconds)
            into.setdefault(name + "_cpu_s", []).append(cpu)
            into.setdefault(name + "_steps", []).append(self.ticks * STEP)


def broken_sources(truth: dict[str, Any], vault: Path) -> list[str]:
    """Notes holding a broken link, in a fixed order (each once)."""
    seen = dict.fromkeys(row["source"] for row in truth["broken"])
    return [path for path in seen if (vault / path).is_file()]


def run(
    writer: IndexWriter, vault: Path, sources: Sequence[str], runs: int, meter: Meter
) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}

    def apply(name: str, hints: Sequence[str]) -> None:
        with meter.measure(out, name):
            report = apply_paths(writer, hints)
        if not (report.added or report.changed or report.removed or report.moved):
            raise SystemExit(f"{name}: the apply did nothing: {report.as_dict()}")

    def edited(paths: Sequence[str], name: str, counter: int) -> None:
        originals = {path: (vault / path).read_bytes() for path in paths}
        for path, text in originals.items():
            (vault / path).write_bytes(text + f"\nedited {counter}\n".encode())
        apply(name, paths)
        for path, text in originals.items():
            (vault / path).write_bytes(text)
            os.utime(vault / path, ns=(time.time_ns(), time.time_ns() + 1))
        apply(name + "_undo", paths)

    for counter in range(runs):
        edited([sources[counter]], "edit", counter)
        new = f"Editcost new {counter}.md"
        (vault / new).write_text(
            f"# New {counter}\n\nSee [[Editcost missing note {counter}]] and "
            f"[[{Path(sources[0]).stem}]].\n",
            encoding="utf-8",
        )
        apply("new", [new])
        (vault / new).unlink()
        apply("delete", [new])
        old = sources[runs + counter]
        moved = str(Path(old).with_name(f"Editcost renamed {counter}.md"))
        os.rename(vault / old, vault / moved)
        apply("rename", [old, moved])
        os.rename(vault / moved, vault / old)
        apply("rename_back", [moved, old])
        start = 2 * runs + 100 * counter
        edited(list(sources[start : start + 100]), "edit100", counter)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vault", type=Path)
    parser.add_argument("--db", type=Path, help="a prepared index (not changed)")
    parser.add_argument("--truth", type=Path, help="default: the vault's name + .truth.json")
    parser.add_argument("--work", type=Path, help="the index's copy (default: beside --db)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--profile", type=Path, help="write a cProfile of the applies here")
    args = parser.parse_args(argv)
    if args.vault is None or args.db is None:
        parser.error("--vault and --db are required")
    vault = Path(os.path.realpath(args.vault))  # as the daemon's config has it
    truth_file = args.truth or vault.with_name(vault.name + ".truth.json")
    sources = broken_sources(json.loads(truth_file.read_text(encoding="utf-8")), vault)
    if len(sources) < 102 * args.runs:
        raise SystemExit(f"too few notes with a broken link ({len(sources)}) for {args.runs} runs")
    work = args.work or args.db.with_name(args.db.name + ".editcost-work")
    shutil.copyfile(args.db, work)
    for suffix in ("-wal", "-shm"):
        Path(f"{work}{suffix}").unlink(missing_ok=True)
    profile = cProfile.Profile() if args.profile else None
    with IndexWriter(work, vault, workers=1) as writer:
        out = run(writer, vault, sources, args.runs, Meter(writer, profile))
    if profile is not None:
        profile.dump_stats(str(args.profile))
    summary: dict[str, Any] = {"load": round(os.getloadavg()[0], 2)}
    for key, values in out.items():
        median: Callable[[list[float]], float] = statistics.median
        summary[key] = round(median(values), 4) if key.endswith("_s") else int(median(values))
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
