"""Benchmarks of notedex against its targets (issue #6): indexing, freshness, queries, memory, size.

    python bench/run.py --sizes 1000 10000 100000 --runs 5      # the full run (about 20 minutes)
    python bench/run.py --sizes 1000 10000 --quick              # a quicker look
    python bench/run.py --smoke                                 # CI: 1k notes, 1 run, no timing claims
    python bench/run.py --sizes 1000000                         # issue 35's 1M column (hours; not CI)

For each size the vault comes from ``bench/genvault.py`` (reused while its truth file matches).
Every command is a whole process of the *installed* ``notedex`` console script: by default a
virtual environment under ``OUT/venv`` gets a regular (non-editable) install of this checkout,
and every child process runs without ``PYTHON*`` variables, so byte code is cached as on a
user's machine. Every figure is the median of ``--runs`` runs; a comparison is a ratio taken
inside one run, alternating the commands. docs/benchmarks.md explains the method.

Writes ``bench/results.json`` (``--results``), a chart (``--chart``, via bench/chart.py) and
``OUT/table.md``; ``--update-docs`` puts the table into docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import math
import os
import platform
import random
import re
import resource
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))

import genvault  # noqa: E402  (a sibling script, not a package)
import moves  # noqa: E402  (a sibling script: the large-move rows, issue 17)

RESULTS_SCHEMA = 1
DEFAULT_SEED = 1
MISS_KEYWORD = "zyzzogeton"
"""A real English word that the generator never writes: lookup and rg both find nothing."""
SAVE_DIR = "_bench"
"""Where the save loop creates its new notes (removed again afterwards)."""
STOP_WORDS = {"note", "notes", "vault", "file", "files"}
"""Words lookup drops from every question: never a keyword."""
LARGE = 1_000_000
"""From this size on (issue 35's 1M column, not in CI) the slow parts run once: one cold index,
one restore, one run of the queries and saves (their repetitions bounded by --group-budget as
at every size), and no large moves (bench/moves.py); each is said when skipped."""
DOCS_BEGIN = "<!-- bench:results:begin -->"
DOCS_END = "<!-- bench:results:end -->"


class BenchError(Exception):
    """A measurement that could not be made; reported in one line (exit 1)."""


# --- settings ---------------------------------------------------------------------------------


@dataclass
class Settings:
    sizes: list[int]
    runs: int
    cold_runs: int
    reps: int
    saves: int
    seed: int
    out: Path
    results: Path
    chart: Path
    smoke: bool
    quick: bool
    keyword: str | None
    group_budget: float
    save_timeout: float
    use_venv: bool
    install_rg: bool
    update_docs: Path | None
    argv: list[str]
    restore_runs: int = 0
    moves: bool = True


def parse_args(argv: Sequence[str] | None = None) -> Settings:
    parser = argparse.ArgumentParser(
        prog="bench/run.py",
        description="Measure notedex on generated vaults of the given sizes and compare with the targets.",
        epilog="--quick: 3 runs, 5 repetitions, 50 saves. --smoke: 1k notes, 1 run, 10 saves, "
        "the current interpreter and its notedex, results under OUT (for CI; asserts nothing). "
        "--sizes 1000000: issue 35's 1M column (not in CI, hours; the vault is generated once "
        "and reused): from 1,000,000 notes on, one cold index, one restore and one run, no "
        "large moves; each size ends with issue 35's rows and the load beside each.",
    )
    parser.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        metavar="N",
        help="vault sizes in notes (default 1000 10000 100000; 1000000: see below)",
    )
    parser.add_argument("--runs", type=int, help="runs per figure (default 5; --quick 3)")
    parser.add_argument(
        "--cold-runs", type=int, help="runs of the cold full index (default: --runs)"
    )
    parser.add_argument(
        "--restore-runs",
        type=int,
        help="runs of the `cp -a` restore and its `index` (default: --runs; a copy of the 100k vault each)",
    )
    parser.add_argument(
        "--no-moves",
        action="store_true",
        help="skip the large-move rows (bench/moves.py: minutes at 100k notes)",
    )
    parser.add_argument(
        "--reps", type=int, help="alternations of each query inside one run (default 10; --quick 5)"
    )
    parser.add_argument(
        "--saves",
        type=int,
        help="saves timed through the daemon, at least 50 (default 100; --quick 50)",
    )
    parser.add_argument(
        "--seed", type=int, default=DEFAULT_SEED, help=f"genvault seed (default {DEFAULT_SEED})"
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=BENCH_DIR / "out",
        help="work folder: vaults, venv, databases, logs (default bench/out)",
    )
    parser.add_argument(
        "--results",
        type=Path,
        help="results JSON (default bench/results.json; --smoke: OUT/results.json)",
    )
    parser.add_argument(
        "--chart",
        type=Path,
        help="chart PNG (default docs/benchmarks.png; --smoke: OUT/benchmarks.png)",
    )
    parser.add_argument(
        "--keyword", help="the lookup keyword that exists (default: picked from the truth file)"
    )
    parser.add_argument("--quick", action="store_true", help="fewer runs, repetitions and saves")
    parser.add_argument(
        "--table",
        action="store_true",
        help="the 1k/10k/100k table in about 10 minutes on 2 quiet cores: --cold-runs 1 --restore-runs 1 "
        "--no-moves --group-budget 8 unless given (the large moves are bench/moves.py's, issue 17)",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="CI smoke run: keeps the scripts working, claims nothing",
    )
    parser.add_argument(
        "--no-venv",
        action="store_true",
        help="measure the current interpreter's notedex (start-up then includes whatever its environment does)",
    )
    parser.add_argument(
        "--no-install-rg",
        action="store_true",
        help="never install ripgrep (default: apt-get install it when missing and root)",
    )
    parser.add_argument(
        "--update-docs",
        nargs="?",
        type=Path,
        const=ROOT / "docs" / "benchmarks.md",
        metavar="MD",
        help="replace the results block of docs/benchmarks.md",
    )
    parser.add_argument(
        "--group-budget",
        type=float,
        metavar="S",
        help="seconds one query group may take per run; fewer repetitions (at least 3) for slow commands (default 15; --table 8)",
    )
    parser.add_argument(
        "--save-timeout",
        type=float,
        default=10.0,
        metavar="S",
        help="give up on one save after S seconds (default 10)",
    )
    args = parser.parse_args(argv)

    smoke = args.smoke
    quick = args.quick or smoke
    runs = args.runs or (1 if smoke else 3 if quick else 5)
    reps = args.reps or (2 if smoke else 5 if quick else 10)
    saves = args.saves or (10 if smoke else 50 if quick else 100)
    sizes = args.sizes or ([1000] if smoke else [1000, 10000, 100000])
    if min(sizes) < 1 or runs < 1 or reps < 1 or saves < 2:
        parser.error("sizes and runs must be positive, saves at least 2")
    if not smoke and saves < 50:
        print("bench: note: the targets ask for at least 50 saves", file=sys.stderr)
    out = args.out.resolve()
    table_preset = args.table and not smoke
    return Settings(
        sizes=sorted(set(sizes)),
        runs=runs,
        cold_runs=args.cold_runs or (1 if table_preset else runs),
        reps=reps,
        saves=saves,
        seed=args.seed,
        out=out,
        results=(
            args.results or (out / "results.json" if smoke else BENCH_DIR / "results.json")
        ).resolve(),
        chart=(
            args.chart or (out / "benchmarks.png" if smoke else ROOT / "docs" / "benchmarks.png")
        ).resolve(),
        smoke=smoke,
        quick=quick,
        keyword=args.keyword,
        group_budget=args.group_budget or (8.0 if table_preset else 15.0),
        save_timeout=args.save_timeout,
        use_venv=not (smoke or args.no_venv),
        install_rg=not (smoke or args.no_install_rg),
        update_docs=args.update_docs,
        argv=list(sys.argv[1:] if argv is None else argv),
        restore_runs=args.restore_runs or (1 if table_preset else runs),
        moves=not (args.no_moves or table_preset),
    )


def say(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


# --- tools: the measured install, ripgrep, the child environment --------------------------------


@dataclass
class Tools:
    python: str
    """The interpreter of the measured install (``python -c pass`` is the start-up baseline)."""
    notedex: list[str]
    rg: str | None
    env: dict[str, str]
    venv: bool


def child_env(out: Path) -> dict[str, str]:
    """The environment of every measured process: no PYTHON* (DONTWRITEBYTECODE would make each
    process recompile), no NOTEDEX_*, no config file, no systemd variables."""
    drop = ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "JOURNAL_STREAM")
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PYTHON", "NOTEDEX_")) and key not in drop
    }
    env["NOTEDEX_CONFIG"] = str(out / "no-config.toml")  # never created: defaults only
    env["XDG_STATE_HOME"] = str(out / "state")
    return env


def setup_tools(settings: Settings) -> Tools:
    env = child_env(settings.out)
    if settings.use_venv:
        tools = install_checkout(settings.out / "venv", ROOT, env, extras="[bench]")
    else:
        script = Path(sys.executable).parent / "notedex"
        command = [str(script)] if script.exists() else [sys.executable, "-m", "notedex"]
        tools = Tools(sys.executable, command, None, env, False)
    tools.rg = shutil.which("rg")
    if tools.rg is None and settings.install_rg:
        tools.rg = install_ripgrep()
    if tools.rg is None:
        say("ripgrep (rg) not found: the rg comparisons are skipped")
    return tools


def install_checkout(venv: Path, source: Path, env: dict[str, str], *, extras: str = "") -> Tools:
    """A regular (non-editable) install of the checkout ``source`` into ``venv``, created if
    missing; the measured ``notedex`` is that venv's console script (no ripgrep set)."""
    python = venv / "bin" / "python"
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    fresh = not python.exists()
    if fresh:
        say(f"creating the bench venv in {display_path(venv)}")
        _check([sys.executable, "-m", "venv", str(venv)], env)
    say(f"installing notedex{extras} (not editable) into {display_path(venv)}")
    _check([*pip, f"{source}{extras}"], env)
    if not fresh:
        # Same version number: pip would keep the old build. This checkout is what we measure.
        _check([*pip, "--no-deps", "--force-reinstall", str(source)], env)
    return Tools(str(python), [str(venv / "bin" / "notedex")], None, env, True)


def install_ripgrep() -> str | None:
    """Debian's ripgrep (the PyPI `ripgrep` package is an sdist needing a Rust toolchain)."""
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        say(
            "ripgrep missing: install it (e.g. `apt-get install -y ripgrep`) for the rg comparisons"
        )
        return None
    say("installing ripgrep with apt-get")
    for attempt in (
        ["apt-get", "install", "-y", "-q", "ripgrep"],
        ["apt-get", "update", "-q"],
        ["apt-get", "install", "-y", "-q", "ripgrep"],
    ):
        done = subprocess.run(
            attempt, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False
        )
        if done.returncode == 0 and attempt[1] == "install":
            break
    return shutil.which("rg")


def _check(cmd: Sequence[str], env: dict[str, str], *, cwd: Path | None = None) -> str:
    done = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise BenchError(
            f"{' '.join(cmd[:4])}... exited {done.returncode}: {done.stderr.strip()[-2000:]}"
        )
    return done.stdout


def machine_info(tools: Tools) -> dict[str, Any]:
    """Cores, memory and versions only: nothing that names the machine."""
    probe = (
        "import json, sqlite3, sys; from importlib.metadata import version; "
        "print(json.dumps({'python': sys.version.split()[0], 'sqlite': sqlite3.sqlite_version, "
        "'notedex': version('notedex')}))"
    )
    info: dict[str, Any] = json.loads(_check([tools.python, "-c", probe], tools.env))
    info["cores"] = os.cpu_count()
    info["memory_gib"] = _memory_gib()
    info["os"] = platform.system()
    info["ripgrep"] = None
    if tools.rg:
        first = _check([tools.rg, "--version"], tools.env).splitlines()[0]
        info["ripgrep"] = first.split()[1] if len(first.split()) > 1 else first
    info["install"] = "bench venv, regular install" if tools.venv else "current interpreter"
    info["commit"] = _checkout_commit()
    return info


def _checkout_commit() -> str | None:
    """The measured checkout: HEAD's short hash, ``+changes`` when src/ differs from it."""
    try:
        head = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--", "src", "pyproject.toml"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("+changes" if dirty else "")


def _memory_gib() -> float | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    return round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return None


# --- vaults -----------------------------------------------------------------------------------


def vault_name(notes: int) -> str:
    return f"v{notes // 1000}k" if notes % 1000 == 0 else f"v{notes}"


@dataclass
class Vault:
    notes: int
    path: Path
    truth_file: Path
    keyword: str
    edit_targets: list[str]
    """Vault paths of existing notes the save loop edits (ASCII names, valid frontmatter)."""
    link_stems: list[str]
    files: int = 0
    bytes: int = 0
    truth: dict[str, int] | None = None
    """The generator's counts that health, scan and graph must agree with (``truth_counts``)."""


def prepare_vault(settings: Settings, notes: int) -> Vault:
    path, truth_file, truth = ensure_vault(settings.out, notes, settings.seed)
    name = path.name
    keyword = check_keyword(settings.keyword or pick_keyword(truth["notes"]), truth, name)
    invalid = set(truth.get("invalid_yaml", []))
    ascii_notes = sorted(
        p for p in truth["notes"] if re.fullmatch(r"[A-Za-z0-9 _./-]+\.md", p) and p not in invalid
    )
    if not ascii_notes:
        raise BenchError(f"{name} has no note with a plain ASCII name to edit")
    wanted = max(1, math.ceil(settings.saves / 2))
    step = max(1, len(ascii_notes) // wanted)
    edit_targets = ascii_notes[::step][:wanted]
    link_stems = [Path(p).stem for p in ascii_notes[step // 2 :: step][:wanted]] or [
        Path(ascii_notes[0]).stem
    ]
    vault = Vault(notes, path, truth_file, keyword, edit_targets, link_stems)
    vault.files, vault.bytes = vault_bytes(path)
    vault.truth = truth_counts(truth)
    return vault


def truth_counts(truth: dict[str, Any]) -> dict[str, int]:
    """What the generator wrote: its notes, orphans, broken links, and links that resolve to
    another file (graph's edges into notes and attachments, each link counted once)."""
    notes = truth["notes"]
    resolved = sum(
        1
        for path, note in notes.items()
        for link in note["links"]
        if link.get("target") and link["target"] != path
    )
    return {
        "notes": len(notes),
        "orphans": len(truth["orphans"]),
        "broken": len(truth["broken"]),
        "resolved_links": resolved,
    }


def truth_disagreements(
    want: dict[str, int], health: dict[str, Any], scan: dict[str, Any], graph: dict[str, Any]
) -> dict[str, list[int]]:
    """Each count of ``health --json``, ``scan --json`` and ``graph --json`` beside the
    generator's (``truth_counts``), as [answer, truth]: the index agrees with the vault."""
    kind = {node["id"]: node["kind"] for node in graph["nodes"]}
    into: Counter[str] = Counter()
    for edge in graph["edges"]:
        into[kind.get(edge["target"], "unresolved")] += edge["count"]
    got = {
        "scan_notes": (scan["noteCount"], want["notes"]),
        "health_orphans": (health["orphanCount"], want["orphans"]),
        "health_broken_links": (health["brokenLinkCount"], want["broken"]),
        "graph_notes": (sum(1 for k in kind.values() if k == "note"), want["notes"]),
        "graph_unresolved_links": (into["unresolved"], want["broken"]),
        "graph_resolved_links": (into["note"] + into["attachment"], want["resolved_links"]),
    }
    return {key: [answer, truth] for key, (answer, truth) in got.items()}


def ensure_vault(out: Path, notes: int, seed: int) -> tuple[Path, Path, dict[str, Any]]:
    """The vault of ``notes`` notes under ``out`` (generated unless its truth file matches, any
    interrupted save loop undone): its path, its truth file and the truth."""
    name = vault_name(notes)
    path = out / name
    truth_file = out / f"{name}.truth.json"
    restore_vault(out, name)
    truth = _load_truth(truth_file)
    if truth is not None and _truth_matches(truth, path, notes, seed):
        say(f"reusing {name} (its truth file matches)")
        return path, truth_file, truth
    say(f"generating {name} ({notes} notes, seed {seed})")
    started = time.perf_counter()
    cmd = [
        sys.executable,
        str(BENCH_DIR / "genvault.py"),
        "--notes",
        str(notes),
        "--seed",
        str(seed),
        "--out",
        str(path),
        "--truth",
        str(truth_file),
    ]
    if path.exists():
        cmd.append("--force")
    _check(cmd, dict(os.environ))
    say(f"generated {name} in {time.perf_counter() - started:.1f}s")
    truth = _load_truth(truth_file)
    if truth is None:
        raise BenchError(f"genvault wrote no readable truth file for {name}")
    return path, truth_file, truth


def check_keyword(keyword: str, truth: dict[str, Any], name: str) -> str:
    """``keyword`` if it is a tag or title word of the vault and the miss keyword is absent."""
    if not _occurs(keyword, truth["notes"]):
        raise BenchError(f"the keyword {keyword!r} is neither a tag nor a title word in {name}")
    if MISS_KEYWORD in json.dumps(truth["notes"]).lower():
        raise BenchError(f"the miss keyword {MISS_KEYWORD!r} occurs in {name}")
    return keyword


def _load_truth(truth_file: Path) -> dict[str, Any] | None:
    try:
        with open(truth_file, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _truth_matches(truth: dict[str, Any] | None, vault: Path, notes: int, seed: int) -> bool:
    if truth is None:
        return False
    expected = {
        "generator": genvault.GENERATOR,
        "version": genvault.GENERATOR_VERSION,
        "seed": seed,
    }
    if any(truth.get(k) != v for k, v in expected.items()) or truth.get("notes_requested") != notes:
        return False
    try:
        marker = json.loads((vault / genvault.MARKER_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return marker == {**expected, "notes": notes}


def pick_keyword(notes: dict[str, Any]) -> str:
    """The plain word that is most often a tag and a title word: a realistic, well-hit query."""
    tags: Counter[str] = Counter()
    titles: Counter[str] = Counter()
    for entry in notes.values():
        for tag in {t.lower() for t in entry["tags"]}:
            if re.fullmatch(r"[a-z]{4,}", tag) and tag not in STOP_WORDS:
                tags[tag] += 1
        for word in set(re.findall(r"[a-z]+", str(entry["title"] or "").lower())):
            titles[word] += 1
    both = sorted(
        ((tags[w] + titles[w], w) for w in tags if titles[w]), key=lambda c: (-c[0], c[1])
    )
    if not both:
        raise BenchError("no tag of the vault is also a title word; pass --keyword")
    return both[0][1]


def _occurs(keyword: str, notes: dict[str, Any]) -> bool:
    word = keyword.lower()
    return any(
        word in {t.lower() for t in entry["tags"]} or word in str(entry["title"] or "").lower()
        for entry in notes.values()
    )


def vault_bytes(vault: Path) -> tuple[int, int]:
    """Files and bytes of what notedex indexes: everything outside dot-folders."""
    files = size = 0
    for dirpath, dirnames, filenames in os.walk(vault):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            if name.startswith("."):
                continue
            files += 1
            size += os.lstat(os.path.join(dirpath, name)).st_size
    return files, size


def warm_page_cache(vault: Path) -> None:
    """Read every vault file once: every figure is for a warm page cache, as in daily use."""
    for dirpath, _dirnames, filenames in os.walk(vault):
        for name in filenames:
            with open(os.path.join(dirpath, name), "rb") as handle:
                while handle.read(1 << 20):
                    pass


# The save loop edits real notes: each original is copied aside first, and a manifest beside
# the vault says what to put back, so even an interrupted run leaves a reusable vault.


def _manifest(out: Path, name: str) -> Path:
    return out / f"{name}.bench-dirty.json"


def _backup_dir(out: Path, name: str) -> Path:
    return out / f"{name}.bench-backup"


def restore_vault(out: Path, name: str) -> None:
    manifest = _manifest(out, name)
    if not manifest.exists():
        return
    vault = out / name
    backups = _backup_dir(out, name)
    data = json.loads(manifest.read_text(encoding="utf-8"))
    for rel in data.get("edited", []):
        source = backups / rel
        if source.exists():
            shutil.copy2(source, vault / rel)  # same inode, original bytes and mtime
    shutil.rmtree(vault / SAVE_DIR, ignore_errors=True)
    shutil.rmtree(backups, ignore_errors=True)
    manifest.unlink()


def restore_with_cp_a(vault: Path) -> None:
    """Replace the vault by a ``cp -a`` copy of itself: new inodes (the old files are still in
    use while the copy is made, so none is reused), the same bytes and mtimes."""
    aside = vault.with_name(vault.name + ".restoring")
    os.rename(vault, aside)
    try:
        subprocess.run(["cp", "-a", str(aside), str(vault)], check=True)
    except BaseException:
        shutil.rmtree(vault, ignore_errors=True)
        os.rename(aside, vault)
        raise
    shutil.rmtree(aside)


class VaultEditor:
    """Writes the save loop's notes; keeps the manifest up to date before touching a file."""

    def __init__(self, out: Path, vault: Vault) -> None:
        self.vault = vault
        self.name = vault.path.name
        self.manifest = _manifest(out, self.name)
        self.backups = _backup_dir(out, self.name)
        self.edited: list[str] = []
        self._write_manifest()
        (vault.path / SAVE_DIR).mkdir(exist_ok=True)

    def _write_manifest(self) -> None:
        self.manifest.write_text(json.dumps({"edited": self.edited}), encoding="utf-8")

    def new_note(self, run: int, index: int) -> tuple[str, bytes]:
        path = f"{SAVE_DIR}/Bench save r{run} n{index}.md"
        stem = self.vault.link_stems[index % len(self.vault.link_stems)]
        text = (
            f"---\ntags: [benchmark]\n---\n# Bench save r{run} n{index}\n\n"
            f"Written by bench/run.py to time save-to-visible; see [[{stem}]].\n"
        )
        return path, text.encode("utf-8")

    def edit(self, run: int, index: int, counter: int) -> tuple[str, bytes]:
        path = self.vault.edit_targets[counter % len(self.vault.edit_targets)]
        if path not in self.edited:
            target = self.backups / path
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(self.vault.path / path, target)
            self.edited.append(path)
            self._write_manifest()
        original = (self.backups / path).read_bytes()
        return (
            path,
            original + f"\n\nEdited by bench/run.py (r{run} n{index}) #benchedit\n".encode(),
        )


# --- measuring processes ------------------------------------------------------------------------


@dataclass(frozen=True)
class Command:
    name: str
    argv: tuple[str, ...]
    ok: tuple[int, ...] = (0,)


def run_timed(command: Command, env: dict[str, str]) -> float:
    return run_measured(command, env)[0]


def run_measured(command: Command, env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds from spawn to exit, and the CPU seconds (user + system) of the process and
    every descendant it waited for. CPU time barely moves with the load of a shared machine."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    code = subprocess.call(
        command.argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if code not in command.ok:
        done = subprocess.run(command.argv, env=env, capture_output=True, text=True, check=False)
        raise BenchError(
            f"{command.name}: `{' '.join(command.argv)}` exited {code}: {done.stderr.strip()[-1500:]}"
        )
    return elapsed, cpu


_TREERSS_LINE = re.compile(
    r"exit (-?\d+); wall ([\d.]+) s; CPU ([\d.]+) s \(sampled over the tree ([\d.]+) s\); "
    r"peak RSS: largest process (\d+) MB \(ru_maxrss (\d+)\), tree (\d+) MB"
)


def run_tree(command: Command, env: dict[str, str]) -> tuple[float, float, float, float]:
    """Wall seconds, CPU seconds, and the peak RSS (MB) of the largest process and of the
    whole process tree, as ``bench/treerss.py`` measures them, run under it: a small parent,
    whose ``ru_maxrss`` of the command is the command's own (a child spawned from this large
    process, the 1M truth loaded, reports this process's peak as its own). The pool workers
    of a cold index start from a forkserver the command does not wait for: their CPU is
    summed from treerss's samples (the larger of that and the waited-for CPU)."""
    done = subprocess.run(
        [sys.executable, str(BENCH_DIR / "treerss.py"), "--", *command.argv],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    found = _TREERSS_LINE.search(done.stdout)
    if found is None:
        raise BenchError(f"{command.name}: bench/treerss.py printed {done.stdout!r}")
    code, wall, cpu, sampled, largest, maxrss, tree = found.groups()
    if int(code) not in command.ok:
        raise BenchError(f"{command.name}: `{' '.join(command.argv)}` exited {code}")
    one = max(float(largest), float(maxrss))
    return float(wall), max(float(cpu), float(sampled)), one, max(float(tree), one)


def run_output(command: Command, env: dict[str, str]) -> tuple[int, str]:
    done = subprocess.run(command.argv, env=env, capture_output=True, text=True, check=False)
    if done.returncode not in command.ok:
        raise BenchError(f"{command.name}: exited {done.returncode}: {done.stderr.strip()[-1500:]}")
    return done.returncode, done.stdout


def alternate(
    commands: Sequence[Command],
    reps: int,
    env: dict[str, str],
    cpu: dict[str, list[float]] | None = None,
) -> dict[str, list[float]]:
    """Each repetition runs every command once, the order rotating, so noise hits all alike.
    Wall seconds per command; its CPU seconds go to ``cpu`` when given."""
    samples: dict[str, list[float]] = {c.name: [] for c in commands}
    for rep in range(reps):
        shift = rep % len(commands)
        for command in [*commands[shift:], *commands[:shift]]:
            wall, used = run_measured(command, env)
            samples[command.name].append(wall)
            if cpu is not None:
                cpu.setdefault(command.name, []).append(used)
    return samples


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def percentile(values: Sequence[float], pct: float) -> float:
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    rank = (len(ordered) - 1) * pct / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def remove_db(db: Path) -> None:
    for suffix in ("", "-wal", "-shm", ".lock"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)


def db_sizes(db: Path) -> dict[str, Any]:
    """Database bytes, the body table's share (dbstat), and the largest tables."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        per_table = conn.execute(
            "SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC"
        ).fetchall()
    finally:
        conn.close()
    total = page_size * pages
    # The body index: body_fts* (FTS5) and body_store (its compressed text, schema 13).
    body = sum(size for name, size in per_table if name.startswith("body_"))
    return {
        "db_bytes": total,
        "body_bytes": body,
        "db_no_body_bytes": total - body,
        "tables": {name: size for name, size in per_table[:15]},
    }


# --- the daemon -------------------------------------------------------------------------------


class Daemon:
    """``notedex daemon`` in the foreground; READY=1 arrives on our own NOTIFY_SOCKET."""

    def __init__(self, tools: Tools, vault: Path, db: Path, log: Path) -> None:
        self.tools = tools
        self.argv = [*tools.notedex, "daemon", "--vault", str(vault), "--db", str(db)]
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None
        self._dir: str | None = None
        self._sock: socket.socket | None = None

    def start(self, timeout: float) -> float:
        """Start it and wait for READY=1 (after the startup reconcile); return the seconds."""
        self._dir = tempfile.mkdtemp(prefix="ndx-")
        address = os.path.join(self._dir, "notify")
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._sock.bind(address)
        self._sock.settimeout(0.2)
        env = dict(self.tools.env, NOTIFY_SOCKET=address)
        started = time.perf_counter()
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                self.argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env
            )
        while True:
            try:
                message = self._sock.recv(4096)
            except TimeoutError:
                message = b""
            if b"READY=1" in message.split(b"\n"):
                return time.perf_counter() - started
            code = self.proc.poll()
            if code is not None:
                raise BenchError(f"the daemon exited {code} before it was ready; see {self.log}")
            if time.perf_counter() - started > timeout:
                raise BenchError(f"the daemon was not ready after {timeout:.0f}s; see {self.log}")

    def memory(self) -> dict[str, float | None]:
        """VmHWM (peak) and VmRSS of the daemon, and RSS of it plus its children, in MB."""
        assert self.proc is not None
        status = _proc_status(self.proc.pid)
        tree = sum(_proc_status(pid).get("VmRSS", 0) for pid in _descendants(self.proc.pid))
        return {
            "peak_mb": _mb(status.get("VmHWM")),
            "rss_mb": _mb(status.get("VmRSS")),
            "tree_rss_mb": _mb(status.get("VmRSS", 0) + tree) if status else None,
        }

    def stop(self) -> int | None:
        code = None
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)
            try:
                code = self.proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                code = self.proc.wait()
            self.proc = None
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None
        return code


def _proc_status(pid: int) -> dict[str, int]:
    values: dict[str, int] = {}
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as handle:
            for line in handle:
                key, _, rest = line.partition(":")
                if key in ("VmHWM", "VmRSS"):
                    values[key] = int(rest.split()[0])  # kB
    except OSError:
        pass
    return values


def _descendants(root: int) -> list[int]:
    parents: dict[int, int] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            parents[int(entry)] = int(fields[1])
        except (OSError, IndexError, ValueError):
            continue
    found: list[int] = []
    frontier = [root]
    while frontier:
        pid = frontier.pop()
        children = [child for child, parent in parents.items() if parent == pid]
        found.extend(children)
        frontier.extend(children)
    return found


def _mb(kilobytes: int | None) -> float | None:
    return None if kilobytes is None else round(kilobytes / 1024, 1)


@contextmanager
def running_daemon(daemon: Daemon, timeout: float) -> Iterator[float]:
    try:
        yield daemon.start(timeout)
    finally:
        code = daemon.stop()
        if code not in (0, None):
            say(f"the daemon exited {code} on SIGTERM; see {daemon.log}")


def save_loop(
    editor: VaultEditor,
    db: Path,
    run: int,
    count: int,
    first: int,
    timeout: float,
    rng: random.Random,
) -> list[dict[str, Any]]:
    """Alternate new note / edit of an existing one; poll the index read-only until visible."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, isolation_level=None)
    query = "SELECT n.content_hash FROM files f JOIN notes n ON n.file_id = f.id WHERE f.path = ?"

    def visible_hash(path: str) -> str | None:
        row = conn.execute(query, (path,)).fetchone()
        return row[0] if row else None

    saves: list[dict[str, Any]] = []
    try:
        for index in range(count):
            kind = "new" if (first + index) % 2 == 0 else "edit"
            if kind == "new":
                path, data = editor.new_note(run, index)
            else:
                path, data = editor.edit(run, index, (first + index) // 2)
            before = visible_hash(path)
            # notes.content_hash holds the sha256's first 60 bits (store.schema.content_key)
            expected = int(hashlib.sha256(data).hexdigest()[:15], 16)
            started = time.perf_counter()
            with open(editor.vault.path / path, "wb") as handle:  # in place, as editors save
                handle.write(data)
            seconds: float | None = None
            while True:
                now = time.perf_counter()
                current = visible_hash(path)
                if current is not None and current != before:
                    seconds = time.perf_counter() - started  # visible by the end of this query
                    break
                if now - started > timeout:
                    break
                time.sleep(0.002)
            saves.append({"kind": kind, "seconds": seconds, "hash_matches": current == expected})
            time.sleep(rng.uniform(0.1, 0.2))  # apart, so one save is one batch
    finally:
        conn.close()
    return saves


# --- one vault size ----------------------------------------------------------------------------


RACY_SETTLE_S = 2.5
"""More than notedex's racy window (store.etags.RACY_WINDOW_NS, 2 s)."""


def settle_racy(refreshing: Command, env: dict[str, str]) -> None:
    """Let the no-daemon rows measure the check of an unchanged vault. The cold index, or the
    last run's saves, left notes indexed within the racy window, which every refreshing query
    re-reads until the window has passed: wait it out, then one untimed refresh settles them."""
    time.sleep(RACY_SETTLE_S)
    run_timed(refreshing, env)


def measure_size(settings: Settings, tools: Tools, notes: int) -> dict[str, Any]:
    load_before = load_average()
    began = time.perf_counter()
    vault = prepare_vault(settings, notes)
    name = vault.path.name
    say(f"{name}: {vault.files} files, {vault.bytes / 1e6:.1f} MB; keyword {vault.keyword!r}")
    warm_page_cache(vault.path)
    db_dir = settings.out / "db"
    db_dir.mkdir(parents=True, exist_ok=True)
    db = db_dir / f"{name}.db"
    log = settings.out / "logs" / f"{name}.daemon.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("", encoding="utf-8")
    env = tools.env
    nd = tools.notedex
    where = ("--vault", str(vault.path), "--db", str(db))
    figures: dict[str, Any] = {}
    info: dict[str, Any] = {"keyword": vault.keyword, "miss_keyword": MISS_KEYWORD}
    samples: dict[str, Any] = {}
    loads: dict[str, float | None] = {}
    """The 1-minute load average when each figure was taken (issue 35's table shows it)."""
    large, (cold_runs, restore_runs, runs) = bounded_runs(settings, notes, name)

    # 1. cold full index, a fresh database each run: wall, CPU, peak RSS of one process and of
    # the process tree (its parse workers and findings helper)
    cold = Command("index --full", (*nd, "index", "--full", *where))
    measure_cold(cold, db, cold_runs, env, figures, samples, loads)
    figures["cold_index_notes_per_s"] = notes / figures["cold_index_s"]

    # 5b. database size (the last cold index's file)
    sizes = db_sizes(db)
    info["db_tables_bytes"] = sizes.pop("tables")
    figures.update(sizes)
    figures["vault_bytes"] = vault.bytes
    figures["db_ratio"] = sizes["db_bytes"] / vault.bytes
    figures["db_no_body_ratio"] = sizes["db_no_body_bytes"] / vault.bytes
    figures["body_ratio"] = sizes["body_bytes"] / vault.bytes
    loads["db_ratio"] = load_average()

    # 2. no-op reconcile (one untimed run first: it settles files indexed within the racy window)
    noop = Command("index", (*nd, "index", *where))
    run_timed(noop, env)
    times = [run_timed(noop, env) for _ in range(settings.runs)]
    samples["noop_reconcile_s"] = times
    figures["noop_reconcile_s"] = median(times)
    say(f"{name}: no-op reconcile {figures['noop_reconcile_s']:.2f}s")

    # 2b. a restored vault (issue 18): `cp -a` puts a copy back at the same path, every file a
    # new inode with the same bytes and mtime; `index` confirms the notes by hash, parses none
    restore = Command("index after cp -a", (*nd, "index", *where))
    times = []
    for _ in range(restore_runs or runs):
        restore_with_cp_a(vault.path)
        times.append(run_timed(restore, env))
    samples["restore_index_s"] = times
    figures["restore_index_s"] = median(times)
    figures["restore_vs_cold"] = figures["restore_index_s"] / figures["cold_index_s"]
    say(f"{name}: index after a cp -a restore {figures['restore_index_s']:.2f}s")

    # 3-5. per run: lookup --no-refresh without a daemon; then a daemon session with queries,
    # saves and memory.
    python = Command("python -c pass", (tools.python, "-c", "pass"))
    lookup = Command("lookup", (*nd, "lookup", vault.keyword, *where))
    miss = Command("lookup miss", (*nd, "lookup", MISS_KEYWORD, *where))
    health = Command("health --json", (*nd, "health", "--json", *where), ok=(0, 1))
    scan = Command("scan --json", (*nd, "scan", "--json", *where))
    tags = Command("tags --json", (*nd, "tags", "--json", *where))
    mentions = Command(
        "mentions --json", (*nd, "mentions", vault.edit_targets[0], "--json", *where)
    )
    norefresh = Command(
        "lookup --no-refresh", (*nd, "lookup", vault.keyword, "--no-refresh", *where)
    )
    refreshing = Command("lookup, refreshing", (*nd, "lookup", vault.keyword, *where))
    # The job of `rg -l -i`: every matching note. `--paths` (no positions) when the CLI has it.
    every = (
        ("--paths", "--limit", "100000000")  # every hit, not --paths' default top 20
        if "--paths" in run_output(Command("search --help", (*nd, "search", "--help")), env)[1]
        else ("--limit", "100000", "--json")
    )
    info["search_every_hit_args"] = list(every)
    search_all = Command("search, every hit", (*nd, "search", vault.keyword, *every, *where))
    search_top = Command("search, top 20", (*nd, "search", vault.keyword, "--json", *where))
    # Every hit with its first matching line (issue 35): the job of `rg -i -n -m 1`.
    search_lines = Command(
        "search, every hit with its line",
        (*nd, "search", vault.keyword, "--limit", "1000000", *where),
    )
    rg = rg_miss = rg_lines = None
    if tools.rg:
        rg_lines = Command(
            "rg -n -m 1",
            (tools.rg, "-i", "-n", "-m", "1", vault.keyword, str(vault.path)),
            ok=(0, 1),
        )
        rg = Command("rg", (tools.rg, "-l", "-i", vault.keyword, str(vault.path)), ok=(0, 1))
        rg_miss = Command(
            "rg miss", (tools.rg, "-l", "-i", MISS_KEYWORD, str(vault.path)), ok=(0, 1)
        )
    groups: list[tuple[str, list[Command]]] = [
        ("lookup", [python, lookup, *([rg] if rg else [])]),
        ("lookup_miss", [python, miss, *([rg_miss] if rg_miss else [])]),
        ("health", [python, health]),
        ("scan", [python, scan]),
        ("search_all", [python, search_all, *([rg] if rg else [])]),
        ("search_lines", [python, search_lines, *([rg_lines] if rg_lines else [])]),
        ("search", [python, search_top]),
        ("tags", [python, tags]),
        ("mentions", [python, mentions]),
    ]
    per_run: dict[str, list[float]] = {}

    def record(key: str, value: float | None) -> None:
        if value is not None:
            per_run.setdefault(key, []).append(value)
            loads[key] = load_average()

    editor = VaultEditor(settings.out, vault)
    saves: list[dict[str, Any]] = []
    per_run_saves = math.ceil(settings.saves / runs)
    rng = random.Random(settings.seed)
    reps_for: dict[str, int] = {}
    ready_timeout = 600.0
    try:
        for run in range(runs):
            settle_racy(refreshing, env)
            if run == 0:
                info.update(validate_without_daemon(norefresh, env))
                reps_for["norefresh"] = _reps(settings, [python, norefresh, refreshing], env)
            used: dict[str, list[float]] = {}
            got = alternate([python, norefresh, refreshing], reps_for["norefresh"], env, used)
            bare, plain = median(got[python.name]), median(got[norefresh.name])
            fresh = median(got[refreshing.name])
            fresh_cpu, plain_cpu = median(used[refreshing.name]), median(used[norefresh.name])
            record("etag_check_cpu_ms", max(fresh_cpu - plain_cpu, 0.0) * 1000)
            record("lookup_norefresh_ms", plain * 1000)
            record("lookup_norefresh_vs_startup", plain / bare)
            record("lookup_refresh_nodaemon_ms", fresh * 1000)
            record("lookup_refresh_nodaemon_vs_startup", fresh / bare)
            record("etag_check_ms", max(fresh - plain, 0.0) * 1000)

            daemon = Daemon(tools, vault.path, db, log)
            with running_daemon(daemon, ready_timeout) as ready:
                record("daemon_ready_s", ready)
                memory = daemon.memory()
                record("daemon_startup_peak_rss_mb", memory["peak_mb"])
                record("daemon_startup_rss_mb", memory["rss_mb"])
                if run == 0:
                    info.update(validate_with_daemon(lookup, miss, health, scan, rg, rg_miss, env))
                    info.update(validate_search(search_all, search_top, env))
                    info.update(measure_heavy(nd, where, vault, env, record))
                    for key, commands in groups:
                        reps_for[key] = _reps(settings, commands, env)
                for key, commands in groups:
                    used = {}
                    got = alternate(commands, reps_for[key], env, used)
                    start_up = median(got[python.name])
                    # CPU barely moves with the load of a shared machine (the table shows search's)
                    cpu_ratio = median(used[commands[1].name]) / median(used[python.name])
                    record(f"{key}_vs_startup_cpu", cpu_ratio)
                    record(
                        "python_startup_ms" if key == "lookup" else f"python_startup_ms_{key}",
                        start_up * 1000,
                    )
                    main = median(got[commands[1].name])
                    record(f"{key}_ms", main * 1000)
                    record(f"{key}_vs_startup", main / start_up)
                    if len(commands) > 2:
                        other = median(got[commands[2].name])
                        if key not in ("search_all", "search_lines"):  # rg -l, as lookup's
                            record(f"rg{'_miss' if key == 'lookup_miss' else ''}_ms", other * 1000)
                        record(f"rg_vs_{key}", other / main)
                done = save_loop(
                    editor, db, run, per_run_saves, run * per_run_saves, settings.save_timeout, rng
                )
                saves.extend(done)
                memory = daemon.memory()
                record("daemon_peak_rss_mb", memory["peak_mb"])
                record("daemon_rss_mb", memory["rss_mb"])
                record("daemon_tree_rss_mb", memory["tree_rss_mb"])
            say(
                f"{name}: run {run + 1}/{runs}: lookup {per_run['lookup_ms'][-1]:.1f} ms "
                f"({per_run['lookup_vs_startup'][-1]:.2f}x start-up), saves p50 "
                f"{_save_p50(done):.0f} ms, daemon peak {per_run.get('daemon_peak_rss_mb', [0])[-1]} MB"
            )
        restore_vault(settings.out, name)
        # Last: the SIGTERM row leaves the index behind the vault (the next start catches up).
        measure_moves(settings, tools, vault, db, log, figures, info, large=large)
    finally:
        restore_vault(settings.out, name)

    for key, values in per_run.items():
        figures[key] = median(values)
    samples["per_run"] = {k: [round(v, 4) for v in vals] for k, vals in per_run.items()}

    latencies = [s["seconds"] if s["seconds"] is not None else settings.save_timeout for s in saves]
    figures["save_count"] = len(saves)
    figures["save_timeouts"] = sum(1 for s in saves if s["seconds"] is None)
    figures["save_p50_ms"] = percentile(latencies, 50) * 1000
    figures["save_p95_ms"] = percentile(latencies, 95) * 1000
    loads["save_p50_ms"] = loads["save_p95_ms"] = loads.get("daemon_peak_rss_mb")  # after the saves
    figures["save_max_ms"] = max(latencies) * 1000
    for kind in ("new", "edit"):
        chosen = [lat for lat, s in zip(latencies, saves) if s["kind"] == kind]
        figures[f"save_{kind}_p50_ms"] = percentile(chosen, 50) * 1000 if chosen else None
    info["save_hash_mismatches"] = sum(1 for s in saves if not s["hash_matches"])
    samples["save_ms"] = [round(lat * 1000, 2) for lat in latencies]
    info["reps"] = reps_for
    info["load_average"] = {"start": load_before, "end": load_average()}
    info["seconds"] = round(time.perf_counter() - began, 1)
    info["figure_loads"] = loads
    for line in issue35_lines(name, figures, loads):
        say(line)
    say(f"{name}: measured in {info['seconds']:.0f}s")
    return {
        "notes": notes,
        "vault": name,
        "files": vault.files,
        "figures": {k: _round(v) for k, v in figures.items()},
        "info": info,
        "samples": samples,
    }


def measure_cold(
    cold: Command,
    db: Path,
    cold_runs: int,
    env: dict[str, str],
    figures: dict[str, Any],
    samples: dict[str, Any],
    loads: dict[str, float | None],
) -> None:
    """The cold full index, a fresh database each run: its wall (median), CPU (median) and
    the peak RSS of its largest process and of its process tree (the largest)."""
    times, cpus, largest, trees = [], [], [], []
    for run in range(cold_runs):
        remove_db(db)
        wall, cpu, one, tree = run_tree(cold, env)
        times.append(wall)
        cpus.append(cpu)
        largest.append(one)
        trees.append(tree)
        say(
            f"{db.stem}: cold full index run {run + 1}/{cold_runs}: {wall:.2f}s, CPU {cpu:.1f}s, "
            f"peak RSS {one:.0f} MB (one process) / {tree:.0f} MB (tree), load {load_average()}"
        )
    samples["cold_index_s"] = times
    figures["cold_index_s"] = median(times)
    figures["cold_index_cpu_s"] = median(cpus)
    figures["cold_index_peak_rss_mb"] = max(largest)
    figures["cold_index_tree_rss_mb"] = max(trees)
    for key in (
        "cold_index_s",
        "cold_index_cpu_s",
        "cold_index_peak_rss_mb",
        "cold_index_tree_rss_mb",
    ):
        loads[key] = load_average()


def bounded_runs(settings: Settings, notes: int, name: str) -> tuple[bool, tuple[int, int, int]]:
    """Whether ``notes`` is a ``LARGE`` size, and its cold-index, restore and query runs: one
    each there (said), the settings' elsewhere."""
    if notes < LARGE:
        return False, (settings.cold_runs, settings.restore_runs, settings.runs)
    say(f"{name}: {LARGE:,}+ notes: one cold index, one restore, one run (bench/run.py LARGE)")
    return True, (1, 1, 1)


def measure_heavy(
    nd: Sequence[str],
    where: Sequence[str],
    vault: Vault,
    env: dict[str, str],
    record: Callable[[str, float | None], None],
) -> dict[str, Any]:
    """Issue 35's whole-vault answers, once each: CPU and peak RSS of ``scan --json`` and
    ``graph --json``; then the counts of ``health``, ``scan`` and ``graph`` against the
    generator's (``truth_disagreements``): ``truth_mismatches`` counts those that differ."""
    outputs: dict[str, Any] = {}
    for key, args, ok in (
        ("scan", ("scan", "--json"), (0,)),
        ("graph", ("graph", "--json"), (0,)),
        ("health", ("health", "--json"), (0, 1)),
    ):
        command = Command(f"{key} --json", (*nd, *args, *where), ok=ok)
        if key != "health":
            _, cpu, one, _ = run_tree(command, env)
            record(f"{key}_cpu_s", cpu)
            record(f"{key}_peak_rss_mb", one)
        outputs[key] = json.loads(run_output(command, env)[1])
    info: dict[str, Any] = {}
    if vault.truth is not None:
        agreement = truth_disagreements(
            vault.truth, outputs["health"], outputs["scan"], outputs["graph"]
        )
        wrong = {k: v for k, v in agreement.items() if v[0] != v[1]}
        record("truth_mismatches", len(wrong))
        info["truth_agreement"] = agreement
        say(
            f"{vault.path.name}: health, scan and graph against the generator's counts: "
            + (f"DIFFER {wrong}" if wrong else f"all {len(agreement)} agree")
        )
    return info


ISSUE35 = [
    ("cold_index_s", "cold `index --full`: wall", "s"),
    ("cold_index_cpu_s", "cold `index --full`: CPU", "s"),
    ("cold_index_peak_rss_mb", "cold `index --full`: peak RSS, one process", "MB"),
    ("cold_index_tree_rss_mb", "cold `index --full`: peak RSS, process tree", "MB"),
    ("save_p50_ms", "daemon: save -> visible p50", "ms"),
    ("save_p95_ms", "daemon: save -> visible p95", "ms"),
    ("daemon_ready_s", "daemon: start -> ready", "s"),
    ("daemon_startup_peak_rss_mb", "daemon: RSS peak after start", "MB"),
    ("lookup_norefresh_vs_startup", "`lookup KEYWORD --no-refresh` / start-up", "x"),
    ("search_ms", "`search KEYWORD`, top 20", "ms"),
    ("search_vs_startup", "`search KEYWORD`, top 20 / start-up", "x"),
    ("scan_cpu_s", "`scan --json`: CPU", "s"),
    ("scan_peak_rss_mb", "`scan --json`: peak RSS", "MB"),
    ("graph_cpu_s", "`graph --json`: CPU", "s"),
    ("graph_peak_rss_mb", "`graph --json`: peak RSS", "MB"),
    ("db_ratio", "database / vault bytes", "x"),
    ("truth_mismatches", "health, scan, graph counts unlike the generator's", ""),
]
"""Issue 35's table, printed at the end of each size with the load beside each figure. The
writer time of one save (its first row) is bench/editcost.py's, not measured here."""


def issue35_lines(name: str, figures: dict[str, Any], loads: dict[str, float | None]) -> list[str]:
    lines = [f"{name}: issue 35's rows (figure; 1-minute load average when it was taken):"]
    for key, label, unit in ISSUE35:
        value = figures.get(key)
        shown = (
            "-"
            if value is None
            else f"{value:.2f}{unit}"
            if isinstance(value, float)
            else f"{value}{unit}"
        )
        lines.append(f"{name}:   {label}: {shown} (load {loads.get(key, '-')})")
    lines.append(f"{name}:   one save's writer time: bench/editcost.py (not run here)")
    return lines


def measure_moves(
    settings: Settings,
    tools: Tools,
    vault: Vault,
    db: Path,
    log: Path,
    figures: dict[str, Any],
    info: dict[str, Any],
    *,
    large: bool = False,
) -> None:
    """The large-move rows (bench/moves.py), unless ``--no-moves`` or ``large``."""
    if large:
        say(f"{vault.path.name}: the large moves are not measured at this size (bench/moves.py)")
    if not settings.moves or large:
        return
    moved = moves.measure(vault.path, db, Daemon(tools, vault.path, db, log), say=say)
    figures.update({k: v for k, v in moved.items() if v is not None})
    info["moves"] = {k: moved[k] for k in ("moves_notes", "moves_folders")}


def load_average() -> float | None:
    """The 1-minute load average: how busy the shared machine was (2 cores: 2.0 is full)."""
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


def _save_p50(saves: list[dict[str, Any]]) -> float:
    values = [s["seconds"] for s in saves if s["seconds"] is not None]
    return median(values) * 1000 if values else float("nan")


def _reps(settings: Settings, commands: Sequence[Command], env: dict[str, str]) -> int:
    """Repetitions for one group: ``--reps``, fewer (at least 3) when one round is slow."""
    one_round = sum(run_timed(c, env) for c in commands)
    fit = int(settings.group_budget / max(one_round, 1e-3))
    return max(min(settings.reps, fit), min(3, settings.reps))


def validate_without_daemon(norefresh: Command, env: dict[str, str]) -> dict[str, Any]:
    _, out = run_output(Command(norefresh.name, (*norefresh.argv, "--json")), env)
    found = json.loads(out)
    if not found["total"]:
        raise BenchError(f"lookup --no-refresh found nothing for {norefresh.argv}")
    return {"lookup_norefresh_total": found["total"]}


def validate_with_daemon(
    lookup: Command,
    miss: Command,
    health: Command,
    scan: Command,
    rg: Command | None,
    rg_miss: Command | None,
    env: dict[str, str],
) -> dict[str, Any]:
    """One untimed run of each query, reading its output: the timed runs measure real answers."""
    info: dict[str, Any] = {}
    hit = json.loads(run_output(Command(lookup.name, (*lookup.argv, "--json")), env)[1])
    if not hit["total"]:
        raise BenchError(f"lookup {lookup.argv} found nothing: pick another --keyword")
    info["lookup_total"] = hit["total"]
    info["lookup_stage"] = hit["stage"]
    nothing = json.loads(run_output(Command(miss.name, (*miss.argv, "--json")), env)[1])
    if nothing["total"]:
        raise BenchError(f"lookup {MISS_KEYWORD} found {nothing['total']} notes")
    info["lookup_miss_stage"] = nothing["stage"]
    report = json.loads(run_output(health, env)[1])
    info["health_broken_links"] = report["brokenLinkCount"]
    info["health_orphans"] = report["orphanCount"]
    listing = json.loads(run_output(scan, env)[1])
    info["scan_notes"] = listing["noteCount"]
    if rg is not None and rg_miss is not None:
        info["rg_files"] = len(run_output(rg, env)[1].splitlines())
        code, out = run_output(rg_miss, env)
        if code != 1 or out:
            raise BenchError(f"rg found {MISS_KEYWORD} in the vault")
    return info


def validate_search(every: Command, top: Command, env: dict[str, str]) -> dict[str, Any]:
    """The every-hit search lists every match (or, with --paths, prints something)."""
    top_page = json.loads(run_output(top, env)[1])
    if not top_page["total"]:
        raise BenchError(f"search {top.argv} found nothing")
    _, out = run_output(every, env)
    if "--json" in every.argv:
        page = json.loads(out)
        if page["shown"] != page["total"]:
            raise BenchError(f"search {every.argv} showed {page['shown']} of {page['total']}")
    elif not out.strip():
        raise BenchError(f"search {every.argv} printed nothing")
    return {"search_total": top_page["total"]}


def _round(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 4) if abs(value) < 1000 else round(value, 1)
    return value


# --- targets, table, results ----------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    key: str
    label: str
    unit: str
    target: tuple[str, float] | None = None
    note: str = ""
    smaller: tuple[tuple[int, str, float], ...] = ()
    """Targets of the smaller sizes (notes, op, limit), used when the table is judged there."""


ROWS: list[Row] = [
    Row("cold_index_s", "cold full index", "s", ("<=", 30)),
    Row("cold_index_notes_per_s", "cold full index rate", "notes/s"),
    Row("cold_index_cpu_s", "cold full index: CPU, the process tree", "s"),
    Row("cold_index_peak_rss_mb", "cold full index: peak RSS, largest process", "MB"),
    Row("cold_index_tree_rss_mb", "cold full index: peak RSS, process tree", "MB"),
    Row("noop_reconcile_s", "no-op reconcile (`index`)", "s", ("<=", 2)),
    Row("restore_index_s", "`index` after a `cp -a` restore", "s"),
    Row("restore_vs_cold", "restore / cold full index", "x", ("<=", 0.4)),
    Row("save_p50_ms", "save-to-visible p50", "ms", ("<=", 250)),
    Row("save_p95_ms", "save-to-visible p95", "ms", ("<=", 1000)),
    Row("save_new_p50_ms", "save-to-visible p50, new note", "ms"),
    Row("save_edit_p50_ms", "save-to-visible p50, edit", "ms"),
    Row("save_p50_flatness", "save p50 at largest / at smallest size", "x", ("<=", 1.5)),
    Row("python_startup_ms", "`python -c pass` (start-up)", "ms"),
    Row("lookup_ms", "`lookup KEYWORD`", "ms"),
    Row("lookup_vs_startup", "lookup / start-up", "x", ("<=", 2)),
    Row("rg_vs_lookup", "rg -l ÷ lookup top 10 (not the same job)", "x", (">=", 10)),
    Row("lookup_miss_ms", "`lookup` finding nothing", "ms"),
    Row("lookup_miss_vs_startup", "lookup miss / start-up", "x", ("<=", 2)),
    Row("rg_vs_lookup_miss", "rg -l miss ÷ lookup miss (not the same job)", "x", (">=", 10)),
    Row("rg_ms", "`rg -l -i KEYWORD`", "ms"),
    Row("rg_miss_ms", "`rg -l -i` finding nothing", "ms"),
    Row("lookup_norefresh_ms", "`lookup --no-refresh`, no daemon", "ms"),
    Row("lookup_norefresh_vs_startup", "lookup --no-refresh / start-up", "x"),
    Row("lookup_refresh_nodaemon_ms", "`lookup KEYWORD`, no daemon (refreshing)", "ms"),
    Row("lookup_refresh_nodaemon_vs_startup", "refreshing lookup, no daemon / start-up", "x"),
    Row(
        "etag_check_ms",
        "etag check before a query, no daemon (refreshing − --no-refresh)",
        "ms",
        ("<=", 500),
        "10k: ≤ 100 ms",
        ((10_000, "<=", 100),),
    ),
    Row("etag_check_cpu_ms", "etag check, CPU (user + system, refreshing − --no-refresh)", "ms"),
    Row("search_all_ms", "`search KEYWORD`, every hit", "ms"),
    Row(
        "rg_vs_search_all",
        "rg -l -i ÷ every-hit search (same job)",
        "x",
        (">=", 5),
        "10k: > 1x",
        ((10_000, ">", 1),),
    ),
    Row("search_lines_ms", "`search KEYWORD --limit 1000000`, every hit with its line", "ms"),
    Row(
        "rg_vs_search_lines",
        "rg -i -n -m 1 ÷ every hit with its line (same job)",
        "x",
        (">=", 1),
    ),
    Row("search_ms", "`search KEYWORD` (top 20)", "ms"),
    Row(
        "search_vs_startup",
        "search top 20 / start-up",
        "x",
        ("<=", 5),
        "1k, 10k: ≤ 2.5x",
        ((1_000, "<=", 2.5), (10_000, "<=", 2.5)),
    ),
    Row("search_vs_startup_cpu", "search top 20 / start-up, CPU (user + system)", "x"),
    Row("health_ms", "`health --json`", "ms"),
    Row("health_vs_startup", "health --json / start-up", "x", ("<=", 10)),
    Row("scan_ms", "`scan --json`", "ms"),
    Row("scan_vs_startup", "scan --json / start-up", "x"),
    Row("scan_cpu_s", "`scan --json`: CPU", "s"),
    Row("scan_peak_rss_mb", "`scan --json`: peak RSS", "MB"),
    Row("graph_cpu_s", "`graph --json`: CPU", "s"),
    Row("graph_peak_rss_mb", "`graph --json`: peak RSS", "MB"),
    Row("truth_mismatches", "health, scan, graph counts unlike the generator's", "", ("<=", 0)),
    Row("tags_ms", "`tags --json`", "ms"),
    Row("tags_vs_startup", "tags --json / start-up", "x", ("<=", 3)),
    Row("mentions_ms", "`mentions NOTE --json`", "ms"),
    Row("mentions_vs_startup", "mentions --json / start-up", "x", ("<=", 5)),
    Row("daemon_ready_s", "daemon start to READY (startup reconcile)", "s"),
    Row("daemon_startup_peak_rss_mb", "daemon peak RSS after startup", "MB"),
    Row("daemon_startup_rss_mb", "daemon RSS after startup", "MB"),
    Row("daemon_peak_rss_mb", "daemon peak RSS after the saves", "MB", ("<=", 120)),
    Row("daemon_rss_mb", "daemon RSS after the saves (steady)", "MB"),
    Row(
        "folder_rename_visible_s", "folder rename of ~10% of the notes, to visible", "s", ("<=", 2)
    ),
    Row(
        "git_checkout_moves_visible_s",
        "checkout moving ~10% of the notes, to visible",
        "s",
        ("<=", 5),
    ),
    Row("git_checkout_moves_total_s", "checkout moving ~10%, from its first file", "s"),
    Row("sigterm_exit_s", "SIGTERM to exit during a large batch", "s"),
    Row("db_bytes", "database", "MB"),
    Row("db_no_body_bytes", "database: structure (all but the body index)", "MB"),
    Row("body_bytes", "database: body index (body_fts*, body_store)", "MB"),
    Row("vault_bytes", "vault", "MB"),
    Row("db_ratio", "database / vault", "%"),
    Row("db_no_body_ratio", "structure / vault", "%", ("<=", 0.30)),
    Row("body_ratio", "body index / vault", "x", ("<=", 1.2)),
]

TARGET_SIZE = 100_000


def add_cross_size(sizes: list[dict[str, Any]]) -> None:
    """p50 at the largest size over p50 at the smallest, shown in the largest size's column."""
    if len(sizes) < 2:
        return
    small, large = sizes[0]["figures"], sizes[-1]["figures"]
    if small.get("save_p50_ms") and large.get("save_p50_ms") is not None:
        large["save_p50_flatness"] = _round(large["save_p50_ms"] / small["save_p50_ms"])


def judge(sizes: list[dict[str, Any]]) -> tuple[int, list[dict[str, Any]]]:
    """Targets hold at 100k notes; without a 100k run they are judged at the largest size, by
    that size's own target where the issue gives one (the etag check's 100 ms at 10k)."""
    at = next((s for s in sizes if s["notes"] == TARGET_SIZE), sizes[-1])
    verdicts = []
    for row in ROWS:
        if row.target is None:
            continue
        op, limit = next(((o, x) for n, o, x in row.smaller if n == at["notes"]), row.target)
        value = at["figures"].get(row.key)
        passed = None if value is None else _holds(value, op, limit)
        verdicts.append(
            {
                "figure": row.key,
                "notes": at["notes"],
                "op": op,
                "limit": limit,
                "value": value,
                "pass": passed,
            }
        )
    return at["notes"], verdicts


def _holds(value: float, op: str, limit: float) -> bool:
    return {"<=": value <= limit, ">=": value >= limit, ">": value > limit}[op]


def fmt(row: Row, value: Any) -> str:
    if value is None:
        return "—"
    if row.unit == "MB":
        return f"{value / 1e6:.1f}" if row.key.endswith("bytes") else f"{value:.1f}"
    if row.unit == "%":
        return f"{value * 100:.0f}%"
    if row.unit == "x":
        return f"{value:.2f}x" if value < 10 else f"{value:.1f}x"
    if row.unit == "notes/s":
        return f"{value:,.0f}"
    if row.unit == "s":
        return f"{value:.2f}" if value < 100 else f"{value:.0f}"
    if row.unit == "ms":
        return f"{value:.1f}" if value < 1000 else f"{value:,.0f}"
    return str(value)


def fmt_target(row: Row) -> str:
    if row.target is None:
        return ""
    op, limit = row.target
    sign = "≤" if op == "<=" else "≥"
    if row.unit == "%":
        text = f"{sign} {limit * 100:.0f}%"
    elif row.unit == "x":
        text = f"{sign} {limit:g}x"
    else:
        text = f"{sign} {limit:g} {row.unit}"
    return f"{text} ({row.note})" if row.note else text


def size_label(notes: int) -> str:
    return f"{notes // 1000}k" if notes % 1000 == 0 else str(notes)


def table(results: dict[str, Any]) -> str:
    sizes = results["sizes"]
    judged_at = results["targets_at"]
    verdicts = {v["figure"]: v for v in results["targets"]}
    head = [
        "figure",
        *[f"{size_label(s['notes'])} notes" for s in sizes],
        "target",
        f"pass/fail ({size_label(judged_at)})",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in ROWS:
        values = [fmt(row, s["figures"].get(row.key)) for s in sizes]
        if all(v == "—" for v in values):
            continue
        unit = "" if row.unit in ("x", "%") else f" ({row.unit})"
        verdict = verdicts.get(row.key)
        mark = ""
        if verdict is not None:
            mark = (
                "n/a" if verdict["pass"] is None else "**pass**" if verdict["pass"] else "**FAIL**"
            )
        lines.append(
            "| " + " | ".join([f"{row.label}{unit}", *values, fmt_target(row), mark]) + " |"
        )
    return "\n".join(lines)


def _timing(results: dict[str, Any]) -> str:
    """How long each size took, with the 1-minute load average at its start and end."""
    parts = []
    for size in results["sizes"]:
        info = size["info"]
        load = info.get("load_average") or {}
        seconds = info.get("seconds")
        took = f"{seconds / 60:.1f} min" if seconds is not None else "?"
        loads = "-".join(f"{load[k]:.1f}" for k in ("start", "end") if load.get(k) is not None)
        parts.append(f"{size_label(size['notes'])} {took}" + (f" (load {loads})" if loads else ""))
    return ", ".join(parts) + f"; {results['seconds'] / 60:.1f} min in all"


def summary_markdown(results: dict[str, Any]) -> str:
    m = results["machine"]
    s = results["settings"]
    sizes = results["sizes"]
    keywords = ", ".join(f"{size_label(x['notes'])}: `{x['info']['keyword']}`" for x in sizes)
    lines = [
        f"Run {results['date']}: `python bench/run.py {' '.join(results['command'])}`",
        "",
        f"Machine: {m['cores']} cores, {m['memory_gib']} GiB memory, {m['os']}; Python {m['python']}, "
        f"SQLite {m['sqlite']}, notedex {m['notedex']} (commit {m.get('commit') or 'unknown'}), "
        f"ripgrep {m['ripgrep'] or 'absent'} ({m['install']}).",
        "",
        f"Runs: {s['runs']} (cold full index: {s['cold_runs']}; `cp -a` restore: "
        f"{s.get('restore_runs', s['runs'])}"
        f"{'' if s.get('moves', True) else '; large moves not run: bench/moves.py measures them (issue 17)'}); "
        "query repetitions per run: up to "
        f"{s['reps']} (at most {s.get('group_budget_s', 15):g} s per query group and run); saves: "
        f"{sizes[0]['figures'].get('save_count')} per size. Keyword: {keywords}; "
        f"the keyword that finds nothing: `{MISS_KEYWORD}`.",
        "",
        f"Time: {_timing(results)}.",
        "",
        table(results),
        "",
        "![notedex benchmarks against vault size](benchmarks.png)",
    ]
    return "\n".join(lines)


def update_docs(path: Path, block: str) -> None:
    text = path.read_text(encoding="utf-8")
    start, end = text.find(DOCS_BEGIN), text.find(DOCS_END)
    if start < 0 or end < start:
        raise BenchError(f"{path} has no {DOCS_BEGIN} ... {DOCS_END} block")
    text = text[: start + len(DOCS_BEGIN)] + "\n" + block + "\n" + text[end:]
    path.write_text(text, encoding="utf-8")


def draw_chart(tools: Tools, results_file: Path, chart: Path, smoke: bool) -> bool:
    """bench/chart.py under the measured install's interpreter (that is where matplotlib is)."""
    chart.parent.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [tools.python, str(BENCH_DIR / "chart.py"), str(results_file), str(chart)],
        env=tools.env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode == 3:
        say("matplotlib is not installed: no chart (pip install 'notedex[bench]')")
        return False
    if done.returncode != 0:
        message = f"the chart failed: {done.stderr.strip()[-1500:]}"
        if smoke:
            say(message)
            return False
        raise BenchError(message)
    return True


def display_path(path: Path) -> str:
    """Repository-relative where possible: results never carry machine paths."""
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return path.name


def main(argv: Sequence[str] | None = None) -> int:
    settings = parse_args(argv)
    settings.out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    try:
        tools = setup_tools(settings)
        machine = machine_info(tools)
        say(
            f"measuring notedex {machine['notedex']} ({machine['install']}), Python {machine['python']}, "
            f"SQLite {machine['sqlite']}, {machine['cores']} cores"
        )
        sizes = []
        for notes in settings.sizes:
            sizes.append(measure_size(settings, tools, notes))
            # One keyword for every size (picked from the smallest vault), so sizes compare.
            settings.keyword = settings.keyword or sizes[-1]["info"]["keyword"]
    except BenchError as exc:
        say(f"error: {exc}")
        return 1
    add_cross_size(sizes)
    results: dict[str, Any] = {
        "schema": RESULTS_SCHEMA,
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d"),
        "command": [a if not os.path.isabs(a) else display_path(Path(a)) for a in settings.argv],
        "machine": machine,
        "settings": {
            "runs": settings.runs,
            "cold_runs": settings.cold_runs,
            "restore_runs": settings.restore_runs,
            "moves": settings.moves,
            "reps": settings.reps,
            "saves": settings.saves,
            "seed": settings.seed,
            "quick": settings.quick,
            "smoke": settings.smoke,
            "group_budget_s": settings.group_budget,
        },
        "sizes": sizes,
        "seconds": round(time.perf_counter() - started, 1),
    }
    results["targets_at"], results["targets"] = judge(sizes)
    settings.results.parent.mkdir(parents=True, exist_ok=True)
    settings.results.write_text(
        json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    block = summary_markdown(results)
    (settings.out / "table.md").write_text(block + "\n", encoding="utf-8")
    charted = draw_chart(tools, settings.results, settings.chart, settings.smoke)
    if settings.update_docs is not None:
        update_docs(settings.update_docs, block)
    print(table(results))
    say(
        f"results: {display_path(settings.results)}"
        + (f", chart: {display_path(settings.chart)}" if charted else "")
        + f"; {results['seconds']:.0f}s in all"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
