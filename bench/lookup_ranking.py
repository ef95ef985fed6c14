"""Lookup's ranking cost (issue 11): each query kind against interpreter start-up, old and new.

    python bench/lookup_ranking.py --sizes 1000 100000 --runs 7 --old main

For each size, bench/run.py's generated vault (made or reused under OUT) is indexed once by this
checkout; the old revision reads the same index when its schema version is the same, else an index
of the same vault that it built itself (``ranking-old-*.db``, kept beside the other). Four
queries are timed, as the issue names them: the vault's most frequent tag-and-title keyword
(bench/run.py's pick, 12% of the notes at 100k), a two-word query (that keyword and the title
word seen most often with it), a Chinese question about the most frequent Chinese title word,
and a miss. Every command is a whole process of the installed launcher (the old side: its own)
with ``--no-refresh`` (the ranking, not the freshness walk), in bench/run.py's child
environment. A repetition runs ``python -c pass``, then each query on the new side and on the old side, the order rotating
(as bench/run.py's ``alternate`` does), after one untimed run of each (so .pyc files exist);
each side's old and new runs of a query are neighbours, so ``new / old`` is the median of the
per-repetition wall ratios (both saw nearly the same load), and ``query / start-up`` the ratio of
the medians, of wall time and of the child's CPU time (user + system, which barely moves with the
load), with the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

import run as bench  # noqa: E402  (a sibling script, not a package)

_CJK_RUN = re.compile(r"[\u4e00-\u9fff]{2,}")
_WORD = re.compile(r"[a-z]{3,}")


def queries(truth: dict[str, Any]) -> dict[str, str]:
    """The four query kinds for a generated vault, from its truth file."""
    notes = truth["notes"]
    keyword = bench.pick_keyword(notes)
    partners: Counter[str] = Counter()
    runs: Counter[str] = Counter()
    for entry in notes.values():
        title = str(entry["title"] or "")
        words = set(_WORD.findall(title.lower()))
        if keyword in words:
            partners.update(words - {keyword} - bench.STOP_WORDS)
        runs.update({run[:2] for run in _CJK_RUN.findall(title)})
    second = min(partners, key=lambda w: (-partners[w], w)) if partners else "notes"
    cjk = min(runs, key=lambda w: (-runs[w], w)) if runs else "筆記"
    return {
        "keyword": keyword,
        "two words": f"{keyword} {second}",
        "CJK question": f"vault 裡有哪些關於{cjk}的筆記？",
        "miss": bench.MISS_KEYWORD,
    }


# Words only the generated bodies hold (the fenced code of bench/genvault.py's fillers), for the
# body stage (issue 30): the first two that some body holds and no name or link text does.
_BODY_WORDS = ("stdio", "include", "define", "echo", "grep", "notatag", "faketilde", "fakemath")


def with_issue30(asked: dict[str, str], db: Path) -> dict[str, str]:
    """Issue 30's two more kinds: a question whose subject is absent (the miss word with the
    common keyword, which is generic), and a question only note text answers (the body
    stage), picked from the index ``db``."""
    import sqlite3

    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        words = [
            word
            for word in _BODY_WORDS
            if conn.execute(
                "SELECT 1 FROM body_fts WHERE body_fts MATCH ?", (f'"{word}"',)
            ).fetchone()
            and not any(
                conn.execute(
                    f"SELECT 1 FROM {table} WHERE {table} MATCH ?", (f'"{word}"',)
                ).fetchone()
                for table in ("note_fts", "link_fts")
            )
        ]
    finally:
        conn.close()
    keyword = asked["keyword"]
    return {
        **asked,
        "absent subject": f"how does a {bench.MISS_KEYWORD} {keyword} work",
        "body stage": " ".join(words[:2]) or bench.MISS_KEYWORD,
    }


def export_revision(rev: str, into: Path) -> Path:
    """``rev``'s ``src`` folder, exported with ``git archive`` (no checkout is touched), and its
    launcher beside it (``scripts/notedex``: the old side runs its own)."""
    archive = subprocess.run(
        ["git", "-C", str(bench.ROOT), "archive", rev, "src", "scripts"],
        capture_output=True,
        check=True,
    ).stdout
    with tempfile.TemporaryFile() as handle:
        handle.write(archive)
        handle.seek(0)
        with tarfile.open(fileobj=handle) as tar:
            tar.extractall(into, filter="data")
    return into / "src"


_SCHEMA_VERSION = re.compile(r"^SCHEMA_VERSION = (\d+)", re.MULTILINE)


def schema_version(src: Path) -> int | None:
    """The SCHEMA_VERSION a ``src`` folder declares (None when it cannot be read)."""
    for module in ("schema_head.py", "schema.py"):  # its home since issue 30's speed budget
        path = src / "notedex" / "store" / module
        found = _SCHEMA_VERSION.search(path.read_text(encoding="utf-8")) if path.exists() else None
        if found:
            return int(found.group(1))
    return None


def ensure_index(vault: Path, db: Path, env: dict[str, str] | None = None) -> None:
    """Index ``vault`` into ``db`` once (with the code ``env`` imports: this checkout's default)."""
    if not db.exists():
        subprocess.run(
            [sys.executable, "-m", "notedex", "index", "--vault", str(vault), "--db", str(db)],
            check=True,
            stdout=subprocess.DEVNULL,
            env=env,
        )


def measure(
    vault: Path,
    dbs: tuple[Path, Path],
    asked: dict[str, str],
    old_src: Path | None,
    reps: int,
    out: Path,
) -> dict[str, Any]:
    env = bench.child_env(out)
    old_env = dict(env, PYTHONPATH=str(old_src)) if old_src else env
    launcher = str(Path(sys.executable).parent / "notedex")
    old_launcher = old_src.parent / "scripts" / "notedex" if old_src else None
    launchers = {
        "new": launcher,
        "old": str(old_launcher) if old_launcher and old_launcher.exists() else launcher,
    }
    commands = [bench.Command("start-up", (sys.executable, "-c", "pass"))]
    for kind, question in asked.items():
        for side, db in (("new", dbs[0]), ("old", dbs[1])):
            if side == "old" and not old_src:
                continue
            argv = (sys.executable, launchers[side], "lookup", question, "--vault", str(vault))
            commands.append(
                bench.Command(f"{side} {kind}", (*argv, "--db", str(db), "--no-refresh"))
            )
    samples: dict[str, list[float]] = {c.name: [] for c in commands}
    cpu: dict[str, list[float]] = {c.name: [] for c in commands}
    for command in commands:  # once each first, so every .pyc exists before timing
        bench.run_measured(command, old_env if command.name.startswith("old ") else env)
    load = [os.getloadavg()[0]]
    for rep in range(reps):
        shift = rep % len(commands)
        for command in [*commands[shift:], *commands[:shift]]:
            side_env = old_env if command.name.startswith("old ") else env
            wall, used = bench.run_measured(command, side_env)
            samples[command.name].append(wall)
            cpu[command.name].append(used)
    load.append(os.getloadavg()[0])
    medians = {name: bench.median(values) for name, values in samples.items()}
    cpu_medians = {name: bench.median(values) for name, values in cpu.items()}
    start, start_cpu = medians["start-up"], cpu_medians["start-up"]
    rows: dict[str, Any] = {
        "start-up ms": round(start * 1000, 1),
        "start-up cpu ms": round(start_cpu * 1000, 1),
        "load": [round(x, 1) for x in load],
    }
    for kind, question in asked.items():
        new = f"new {kind}"
        row: dict[str, Any] = {
            "query": question,
            "new / start-up": medians[new] / start,
            "new / start-up cpu": cpu_medians[new] / start_cpu,
        }
        if old_src:
            old = f"old {kind}"
            row["old / start-up"] = medians[old] / start
            row["old / start-up cpu"] = cpu_medians[old] / start_cpu
            pairs = zip(samples[new], samples[old], strict=True)
            row["new / old"] = bench.median([n / o for n, o in pairs])
        rows[kind] = {k: round(v, 3) if isinstance(v, float) else v for k, v in row.items()}
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 100_000])
    parser.add_argument("--runs", type=int, default=7, help="repetitions per command (default 7)")
    parser.add_argument("--old", help="the old revision (a git rev); none: the new side only")
    parser.add_argument("--seed", type=int, default=bench.DEFAULT_SEED)
    parser.add_argument("--out", type=Path, default=BENCH_DIR / "out", help="work folder")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    old_src = export_revision(args.old, args.out / "ranking-old") if args.old else None
    results: dict[str, Any] = {}
    for notes in args.sizes:
        vault, _, truth = bench.ensure_vault(args.out, notes, args.seed)
        db = args.out / f"ranking-{bench.vault_name(notes)}.db"
        ensure_index(vault, db)
        old_db = db
        if old_src and schema_version(old_src) != schema_version(bench.ROOT / "src"):
            old_db = args.out / f"ranking-old-{bench.vault_name(notes)}.db"
            old_env = dict(bench.child_env(args.out), PYTHONPATH=str(old_src))
            ensure_index(vault, old_db, old_env)
        results[bench.vault_name(notes)] = measure(
            vault, (db, old_db), with_issue30(queries(truth), db), old_src, args.runs, args.out
        )
        print(
            json.dumps(
                {bench.vault_name(notes): results[bench.vault_name(notes)]},
                indent=1,
                ensure_ascii=False,
            )
        )
    text = json.dumps(results, indent=1, ensure_ascii=False) + "\n"
    (args.out / "ranking.json").write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
