"""The generated vault the issue-32 benchmarks share (bench/tasks.py, bench/bases.py,
bench/filters.py): made once per work folder and size, reused by every later run.

``vault(work, notes)`` is ``WORK/vault-N`` (bench/genvault.py, seed 0), generated only when its
marker does not say N notes; ``with_tasks`` appends bench/tasks.py's tasks once (a marker file
beside the vault remembers it). ``index(...)`` brings ``WORK/index-N.db`` up to date with an
ordinary (incremental) ``notedex index``, so only the first run of a size pays for the full
build: at 100k notes about 2 minutes for the vault and 3-4 for the index on a quiet machine.
``child_env`` and ``compiled`` make every timed process load bytecode rather than compile it.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
SRC = BENCH.parent / "src"
TARGETS = {"filters": 3.0, "tasks": 3.0, "bases": 5.0}
"""Issue 32's budgets: the command's CPU over interpreter start-up's, at most."""


def vault(work: Path, notes: int, with_tasks: bool = False) -> Path:
    """``WORK/vault-N``, generated if it is not there yet (with tasks if asked)."""
    path = work / f"vault-{notes}"
    marker = path / ".genvault.json"
    try:
        made = json.loads(marker.read_text(encoding="utf-8")).get("notes") == notes
    except (OSError, ValueError):
        made = False
    if not made:
        print(f"generating {notes} notes in {path} ...", file=sys.stderr, flush=True)
        subprocess.run(
            [sys.executable, str(BENCH / "genvault.py"), "--notes", str(notes), "--out", path,
             "--force"],
            check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        (work / f"vault-{notes}.tasks").unlink(missing_ok=True)
    tasks_marker = work / f"vault-{notes}.tasks"
    if with_tasks and not tasks_marker.exists():
        tasks_marker.write_text(f"{add_tasks(path)}\n", encoding="utf-8")
    return path


def task_count(work: Path, notes: int) -> int | None:
    """How many tasks ``vault`` appended to that vault (None: none)."""
    try:
        return int((work / f"vault-{notes}.tasks").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def add_tasks(path: Path) -> int:
    """Append tasks to every third note, in path order (1-6 each, statuses ` x-/`, 60% with a
    📅 due date; deterministic); returns how many were written."""
    rnd = random.Random(1)
    written = 0
    notes = sorted(p for p in path.rglob("*.md") if ".obsidian" not in p.parts)
    for number, note in enumerate(notes):
        if number % 3 != 2:
            continue
        lines = []
        for k in range(rnd.randint(1, 6)):
            status = rnd.choice(" x-/ ")
            due = f" 📅 2026-{rnd.randint(1, 12):02d}-{rnd.randint(1, 28):02d}"
            lines.append(f"- [{status}] task {k} #t{k}{due if rnd.random() < 0.6 else ''}\n")
        with note.open("a", encoding="utf-8") as handle:
            handle.write("\n" + "".join(lines))
        written += len(lines)
    return written


def child_env(work: Path, src: Path = SRC) -> dict[str, str]:
    """A clean environment for a timed process of ``src``'s code: no PYTHON* variables but
    ``PYTHONPATH`` (with PYTHONDONTWRITEBYTECODE every process would recompile every module),
    no NOTEDEX_* and no config file."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "NOTEDEX_"))}
    env["PYTHONPATH"] = str(src)
    env["NOTEDEX_CONFIG"] = str(work / "no-config.toml")  # never created: defaults only
    env["XDG_STATE_HOME"] = str(work / "state")
    return env


def compiled(src: Path = SRC) -> None:
    """Write ``src``'s bytecode once, so that no timed run compiles."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], check=True, env=env)


def index(vault_dir: Path, db: Path, env: dict[str, str]) -> None:
    """Bring ``db`` up to date with ``vault_dir`` (built the first time, incremental after)."""
    argv = [sys.executable, "-m", "notedex", "index", "--vault", str(vault_dir), "--db", str(db)]
    subprocess.run(argv, check=True, capture_output=True, env=env)
