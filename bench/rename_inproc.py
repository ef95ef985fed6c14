"""A folder rename in-process (issue 17): the writer's side of ``bench/moves.py`` without the
daemon. Copies a prepared index, ``os.rename``s the largest top folders (``moves.pick_folders``:
about 10% of the notes) and applies the old and new folder hints (``apply_paths``, as the
watcher hands them over), then the rename back. Prints, per run, the wall and CPU seconds of
each apply and the seconds spent in the move's and the findings' parts (wrappers timed with
``perf_counter``, no profiler; a part missing from the revision under test is left out). The
vault is given as its real path, as the daemon's configuration has it.

    python bench/rename_inproc.py --vault bench/out/v100k --db D [--work W] [--runs N]

The vault is renamed in place and back: use a copy (``cp -a``). Run it from another revision's
checkout with ``PYTHONPATH=<that checkout>/src`` to compare, alternating.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from moves import pick_folders
from notedex.indexing.reconcile import apply_paths
from notedex.store import findings, linkfixes, renames
from notedex.store import moves as store_moves
from notedex.store.links import LinkTargets
from notedex.store.writer import IndexWriter

PARTS: tuple[tuple[ModuleType | type, str], ...] = (
    (store_moves, "_set_paths"),
    (LinkTargets, "reresolve_moved"),
    (LinkTargets, "_reresolve_rows"),
    (findings, "withdraw_links"),
    (findings, "record_renames"),
    (renames, "record"),
    (findings, "refresh_link_texts"),
    (findings, "dirty_link_texts"),
    (findings, "refresh_fts"),
    (findings, "refresh_findings"),
    (findings, "_refresh_broken_anchors"),
    (linkfixes, "suggest_link_fixes"),
    (LinkTargets, "files_named_many"),
    (linkfixes, "typo_neighbours"),
    (linkfixes, "typo_neighbours_moved"),
)


def _timed(totals: dict[str, float], name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            totals[name] = totals.get(name, 0.0) + time.perf_counter() - started

    return timed


def run_once(vault: Path, db: Path, work: Path, names: Sequence[str]) -> dict[str, Any]:
    totals: dict[str, float] = {}
    saved = [
        (module, name, getattr(module, name)) for module, name in PARTS if hasattr(module, name)
    ]
    for module, name, fn in saved:
        setattr(module, name, _timed(totals, name, fn))
    shutil.copyfile(db, work)
    for suffix in ("-wal", "-shm"):
        Path(f"{work}{suffix}").unlink(missing_ok=True)
    walls, cpus, moved = [], [], []
    moved_names = [f"{name} moved" for name in names]
    try:
        with IndexWriter(work, vault, workers=1) as writer:
            for src, dst in ((names, moved_names), (moved_names, names)):
                for old, new in zip(src, dst, strict=True):
                    os.rename(vault / old, vault / new)
                wall, cpu = time.perf_counter(), time.process_time()
                report = apply_paths(writer, [*src, *dst])
                walls.append(round(time.perf_counter() - wall, 3))
                cpus.append(round(time.process_time() - cpu, 3))
                moved.append((report.moved, report.added, report.removed))
    finally:
        for module, name, fn in saved:
            setattr(module, name, fn)
    return {
        "wall_s": walls,
        "cpu_s": cpus,
        "moved_added_removed": moved,
        "parts_s": {name: round(seconds, 3) for name, seconds in totals.items()},
        "load": round(os.getloadavg()[0], 2),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vault", type=Path, required=True)
    parser.add_argument("--db", type=Path, required=True, help="a prepared index (not changed)")
    parser.add_argument("--work", type=Path, default=None, help="the copy (default: beside --db)")
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args(argv)
    work = args.work or args.db.with_name(args.db.name + ".rename-work")
    vault = Path(os.path.realpath(args.vault))  # as the daemon's config has it (config.py)
    names = [name for name, _ in pick_folders(vault)]
    for _ in range(args.runs):
        print(run_once(vault, args.db, work, names), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
