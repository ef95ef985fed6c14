"""Snapshot every command's output on the demo vault, to prove a refactor changed no behaviour.

    python bench/contract.py snapshot OUT.json   # run the commands, write their outputs
    python bench/contract.py diff OLD.json NEW.json   # exit 1 and show what differs

Each command runs as a subprocess (`python -m notedex`) against a copy of the bundled demo vault
and a fresh index, so the snapshot holds exactly what a user or an agent would read: stdout,
stderr and the exit code. Values that change from run to run (times, the scratch folder, the
pid) are masked before comparison; everything else must be byte-equal.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "examples" / "demo-vault"
CASES = ROOT / "examples" / "demo-cases.json"

# (name, argv after the global options). Every query command with --json, the text output of
# the ones people read, and a few error paths (exit 2 and its message are part of the contract).
COMMANDS: list[tuple[str, list[str]]] = [
    ("index", ["index", "--json"]),
    ("status", ["status", "--json"]),
    ("scan", ["scan", "--json"]),
    ("scan-text", ["scan"]),
    ("health", ["health", "--json"]),
    ("health-text", ["health"]),
    ("tags", ["tags", "--json"]),
    ("tags-text", ["tags"]),
    ("mentions", ["mentions", "PARA 方法", "--json"]),
    ("graph", ["graph", "--json"]),
    ("graph-text", ["graph"]),
    ("show-title", ["show", "Cobra CLI 框架", "--json"]),
    ("show-path-body", ["show", "Projects/Cobra CLI 框架.md", "--body", "--json"]),
    ("show-text", ["show", "Go 錯誤處理", "--body"]),
    ("show-missing", ["show", "No such note", "--json"]),
    ("lookup-cobra", ["lookup", "Cobra", "--json"]),
    ("lookup-zh", ["lookup", "vault 裡有哪些跟 Cobra 這個 CLI 框架相關的筆記？", "--json"]),
    ("lookup-para", ["lookup", "PARA", "--limit", "2", "--json"]),
    ("lookup-text", ["lookup", "Go 錯誤處理"]),
    ("lookup-miss", ["lookup", "zzzqqq", "--json"]),
    ("lookup-fts-syntax", ["lookup", 'NEAR("a" OR) *', "--json"]),
    ("search-cobra", ["search", "cobra", "--json"]),
    ("search-phrase", ["search", '"shell completion"', "--json"]),
    ("search-text", ["search", "框架"]),
    ("search-bad", ["search", "", "--json"]),
    ("export", ["export", "--json"]),
    ("eval", ["eval", str(CASES), "--json"]),
    ("unknown-command", ["frobnicate"]),
    ("help", ["--help"]),
    *[
        (f"help-{c}", [c, "--help"])
        for c in (
            "lookup",
            "health",
            "scan",
            "tags",
            "mentions",
            "graph",
            "show",
            "capture",
            "status",
            "index",
            "daemon",
            "search",
            "export",
            "mcp",
            "eval",
            "service",
        )
    ],
    ("bad-limit", ["lookup", "x", "--limit", "0", "--json"]),
]

PINNED_MTIME = 1_780_000_000  # 2026-05-28, a fixed time for every file of the copied vault

# Keys whose values differ between two runs of the same commit.
VOLATILE_KEYS = {
    "producedAt",
    "seconds",
    "lastIndexed",
    "secondsSinceIndexed",
    "dbBytes",
    "modified",
    "created",
}


def mask(value: object) -> object:
    if isinstance(value, dict):
        return {k: "<masked>" if k in VOLATILE_KEYS else mask(v) for k, v in value.items()}
    if isinstance(value, list):
        return [mask(v) for v in value]
    return value


def normalise(text: str, scratch: str) -> str:
    text = text.replace(scratch, "<scratch>")
    # Elapsed times in text output ("0.01s") differ from run to run.
    return re.sub(r"\b\d+\.\d+s\b", "<t>s", text)


def run_all() -> dict[str, dict[str, object]]:
    out: dict[str, dict[str, object]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        vault = Path(scratch) / "vault"
        shutil.copytree(DEMO, vault)
        # A checkout gives the demo files new mtimes; pin them so `modified` is comparable.
        for path in sorted(vault.rglob("*"), reverse=True):
            os.utime(path, (PINNED_MTIME, PINNED_MTIME), follow_symlinks=False)
        db = Path(scratch) / "index.db"
        env = {k: v for k, v in os.environ.items() if not k.startswith("NOTEDEX_")}
        env["XDG_STATE_HOME"] = str(Path(scratch) / "state")
        env["XDG_CONFIG_HOME"] = str(Path(scratch) / "config")
        env["COLUMNS"] = "100"
        env["PYTHONPATH"] = str(ROOT / "src")
        for name, argv in COMMANDS:
            cmd = [sys.executable, "-m", "notedex", *argv, "--vault", str(vault), "--db", str(db)]
            if argv[0] in ("frobnicate", "--help") or "--help" in argv:
                cmd = [sys.executable, "-m", "notedex", *argv]
            done = subprocess.run(cmd, capture_output=True, env=env, cwd=scratch, timeout=120)
            stdout = done.stdout.decode("utf-8", "replace")
            stderr = normalise(done.stderr.decode("utf-8", "replace"), scratch)
            entry: dict[str, object] = {"exit": done.returncode, "stderr": stderr}
            if "--json" in argv and stdout.strip():
                entry["json"] = mask(json.loads(normalise(stdout, scratch)))
            else:
                entry["stdout"] = normalise(stdout, scratch)
            out[name] = entry
    return out


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="what", required=True)
    snap = sub.add_parser("snapshot")
    snap.add_argument("out", type=Path)
    diff = sub.add_parser("diff")
    diff.add_argument("old", type=Path)
    diff.add_argument("new", type=Path)
    args = parser.parse_args()
    if args.what == "snapshot":
        data = run_all()
        args.out.write_text(json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n")
        print(f"{len(data)} commands -> {args.out}", file=sys.stderr)
        return 0
    old = args.old.read_text().splitlines(keepends=True)
    new = args.new.read_text().splitlines(keepends=True)
    delta = list(difflib.unified_diff(old, new, str(args.old), str(args.new)))
    sys.stdout.writelines(delta)
    print("identical" if not delta else f"{len(delta)} diff lines", file=sys.stderr)
    return 1 if delta else 0


if __name__ == "__main__":
    sys.exit(main())
