"""Do two revisions answer the same, and what does each one's index cost? (issue 35, size)

    python bench/compare_answers.py main VAULT [VAULT ...]          # main against the working tree
    python bench/compare_answers.py --new OTHER_REV main VAULT ...  # two commits
    python bench/compare_answers.py --sizes DB                      # one index's table sizes

For each vault, each side builds a cold ``index --full`` into a database of its own (the way of
``bench/compare_index.py``), then runs the read commands below with ``--json --no-refresh`` on
its own index: ``search`` (words common and rare, a phrase, a prefix, CJK, an exclusion, every
hit), ``lookup``, ``scan``, ``graph``, ``health``, ``show``, ``quote``, ``mentions`` and ``tags``,
on notes picked from the vault (the first, one in the middle and one near the end, by path).
Every document must be byte for byte the same, with its exit code. Then both indexes' bytes are
printed per table and index (SQLite's ``dbstat``), with the database's size over the vault's.
Exit 0: the same answers; 1: an answer differs (printed); 2: a build or a command failed.
"""

from __future__ import annotations

import argparse
import sqlite3
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare_index import add_sides_arguments, build_sides, child_env, sides_of

SEARCHES = (
    ["book"],
    ["book", "--limit", "1000000"],
    ["tokenizer"],
    ['"quiet weekly"'],
    ["sculpt*"],
    ["圖書館"],
    ["museum -book"],
    ["zyzzogeton"],
)
LOOKUPS = (["kafka"], ["python"], ["project review"], ["zyzzogeton"])


def notes_of(vault: Path) -> list[Path]:
    """Three notes of the vault, the same on both sides: first, middle, near the end by path."""
    notes = sorted(
        p
        for p in vault.rglob("*.md")
        if not any(part.startswith(".") for part in p.relative_to(vault).parts)
    )
    return [notes[0], notes[len(notes) // 2], notes[len(notes) * 9 // 10]]


def quoted_line(note: Path) -> str:
    """A line of the note's body long enough to quote (its longest)."""
    return max(note.read_text(encoding="utf-8").splitlines(), key=len)[:200]


def commands(vault: Path) -> list[list[str]]:
    out: list[list[str]] = [["search", *words] for words in SEARCHES]
    out += [["lookup", *words] for words in LOOKUPS]
    out += [["scan"], ["graph"], ["health"], ["tags"]]
    for note in notes_of(vault):
        rel = note.relative_to(vault).as_posix()
        out += [["show", rel], ["quote", rel, quoted_line(note)], ["mentions", rel]]
    return out


def answer(src: Path, vault: Path, db: Path, command: list[str]) -> tuple[int, bytes]:
    argv = [*command, "--json", "--no-refresh", "--vault", str(vault), "--db", str(db)]
    done = subprocess.run(
        [sys.executable, "-m", "notedex", *argv], env=child_env(src), capture_output=True
    )
    if done.returncode not in (0, 1):
        sys.stderr.write(done.stderr.decode(errors="replace"))
        raise SystemExit(2)
    return done.returncode, done.stdout


def table_bytes(db: Path) -> dict[str, int]:
    """Bytes of pages per table and index (FTS5 shadow tables apart), by ``dbstat``."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return dict(conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"))
    finally:
        conn.close()


def vault_bytes(vault: Path) -> int:
    return sum(p.stat().st_size for p in vault.rglob("*") if p.is_file())


def print_sizes(sizes: dict[str, dict[str, int]], vault_size: int | None) -> None:
    names = sorted(
        {n for side in sizes.values() for n in side},
        key=lambda n: -max(side.get(n, 0) for side in sizes.values()),
    )
    print("  | table or index | " + " | ".join(f"{s} MB" for s in sizes) + " |")
    for name in names:
        cells = " | ".join(f"{side.get(name, 0) / 1e6:.2f}" for side in sizes.values())
        print(f"  | {name} | {cells} |")
    totals = " | ".join(f"{sum(side.values()) / 1e6:.2f}" for side in sizes.values())
    print(f"  | **total** | {totals} |")
    if vault_size is None:
        return
    ratios = " | ".join(f"{sum(side.values()) / vault_size:.2f}x" for side in sizes.values())
    print(f"  | ÷ vault ({vault_size / 1e6:.2f} MB) | {ratios} |")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", nargs="?", help="the old revision (a commit, branch or tag)")
    parser.add_argument("vaults", nargs="*", type=Path, help="vaults to index (read only)")
    add_sides_arguments(parser)
    parser.add_argument("--sizes", type=Path, metavar="DB", help="print DB's table sizes only")
    args = parser.parse_args(argv)
    if args.sizes:
        print_sizes({"db": table_bytes(args.sizes)}, None)
        return 0
    if not args.old or not args.vaults:
        parser.error("give a revision and at least one vault")
    work, sides = sides_of(args)
    different = False
    for vault in args.vaults:
        vault = vault.resolve()
        print(f"{vault.name}:")
        dbs = build_sides(sides, vault, work, "answers-")
        for command in commands(vault):
            outputs = {name: answer(src, vault, dbs[name], command) for name, src in sides.items()}
            label = " ".join(command)[:70]
            if outputs["old"] != outputs["new"]:
                print(f"  DIFFERS `{label}`")
                different = True
            else:
                code, out = outputs["new"]
                print(f"  the same: `{label}` (exit {code}, {len(out)} bytes)")
        print_sizes({name: table_bytes(db) for name, db in dbs.items()}, vault_bytes(vault))
    print("different" if different else "the same")
    return 1 if different else 0


if __name__ == "__main__":
    raise SystemExit(main())
