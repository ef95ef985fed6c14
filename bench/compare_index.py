"""Is a cold index of a revision row for row the same as another's? (issue 12, the cold index cuts)

    python bench/compare_index.py main VAULT [VAULT ...]          # main against the working tree
    python bench/compare_index.py --new OTHER_REV main VAULT ...  # two commits

For each vault, each side builds a cold ``index --full`` into a database of its own (``python -m
notedex`` with that side's ``src`` first on ``PYTHONPATH``; a revision is exported with ``git
archive`` under ``OUT/compare``), then every table of the two databases is compared row for row:
the FTS5 shadow tables included, ``body_store`` inflated (the compressed bytes may differ with the
zlib build, the text may not), the times of the build left out (``meta.last_indexed``,
``files.indexed_ns``). Then each
side's ``health --json`` and ``tags --json`` on its own index must be byte for byte the same.
Exit 0: everything the same; 1: something differs (printed); 2: a build or a command failed.
"""

from __future__ import annotations

import argparse
import io
import os
import sqlite3
import subprocess
import sys
import tarfile
import zlib
from collections.abc import Sequence
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
MASKED_META = {"last_indexed"}
# (table, column) whose value is compared after a transformation.
INFLATED = {("body_store", "z")}
MASKED = {("files", "indexed_ns")}  # when the row was written
SKIPPED = {"body_dict"}  # body_store's dictionary: compared through the bodies it inflates


def export(rev: str, out: Path) -> Path:
    """``git archive`` of ``rev``'s ``src`` into ``out/src-COMMIT`` (reused); its src folder."""
    commit = subprocess.run(
        ["git", "rev-parse", "--verify", f"{rev}^{{commit}}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    dest = out / f"src-{commit[:12]}"
    if not (dest / "src" / "notedex").is_dir():
        archive = subprocess.run(
            ["git", "archive", "--format=tar", commit, "src"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        ).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(dest, filter="data")
    return dest / "src"


def child_env(src: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "NOTEDEX_"))}
    env["PYTHONPATH"] = str(src)
    env["NOTEDEX_CONFIG"] = str(src / "no-config.toml")  # a file that does not exist
    return env


def run(src: Path, argv: Sequence[str], ok: Sequence[int] = (0,)) -> bytes:
    done = subprocess.run(
        [sys.executable, "-m", "notedex", *argv], env=child_env(src), capture_output=True
    )
    if done.returncode not in ok:
        sys.stderr.write(done.stderr.decode(errors="replace"))
        raise SystemExit(f"compare_index: `notedex {' '.join(argv)}` exited {done.returncode}")
    return done.stdout


def build(src: Path, vault: Path, db: Path) -> None:
    for suffix in ("", "-wal", "-shm", ".lock"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    run(src, ["index", "--full", "--vault", str(vault), "--db", str(db)])


def add_sides_arguments(parser: argparse.ArgumentParser) -> None:
    """The options that name the two sides and the work folder (this script's and
    ``bench/compare_answers.py``'s)."""
    parser.add_argument("--new", help="the new revision (default: this working tree's src)")
    parser.add_argument("--out", type=Path, default=BENCH_DIR / "out", help="work folder")


def sides_of(args: argparse.Namespace) -> tuple[Path, dict[str, Path]]:
    """The work folder (``OUT/compare``) and each side's ``src``: ``old`` exported, ``new``
    exported or this working tree's."""
    work = (args.out / "compare").resolve()
    work.mkdir(parents=True, exist_ok=True)
    sides = {
        "old": export(args.old, work),
        "new": export(args.new, work) if args.new else ROOT / "src",
    }
    return work, sides


def build_sides(
    sides: dict[str, Path], vault: Path, work: Path, prefix: str = ""
) -> dict[str, Path]:
    """Each side's cold index of ``vault`` in ``work/PREFIX{side}-{vault}.db``, by side."""
    dbs = {name: work / f"{prefix}{name}-{vault.name}.db" for name in sides}
    for name, src in sides.items():
        build(src, vault, dbs[name])
    return dbs


def inflate(conn: sqlite3.Connection, blob: bytes) -> bytes:
    """A body_store stream's bytes, with the dictionary its header names (schema 27) if any."""
    if not blob[1] & 0x20:
        return zlib.decompress(blob)
    adler = int.from_bytes(blob[2:6], "big")
    (zdict,) = conn.execute("SELECT d FROM body_dict WHERE adler = ?", (adler,)).fetchone()
    one = zlib.decompressobj(zdict=zdict)
    return one.decompress(blob) + one.flush()


def table_rows(conn: sqlite3.Connection, table: str) -> list[tuple[object, ...]]:
    columns = [row[1] for row in conn.execute(f"PRAGMA table_info('{table}')")]
    rows = []
    for row in conn.execute(f"SELECT * FROM '{table}'"):
        values = list(row)
        for i, column in enumerate(columns):
            if (table, column) in INFLATED and values[i] is not None:
                values[i] = inflate(conn, values[i])
            elif (table, column) in MASKED:
                values[i] = None
        if table == "meta" and values[0] in MASKED_META:
            continue
        rows.append(tuple(values))
    return sorted(rows, key=repr)


def stored_tables(conn: sqlite3.Connection) -> list[str]:
    """Every table that holds rows: ordinary tables and FTS5 shadow tables, not the virtual
    tables themselves (their rows are the shadow tables' or the external content's)."""
    return sorted(
        name
        for (name, sql) in conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
        if not (sql or "").upper().startswith("CREATE VIRTUAL") and name not in SKIPPED
    )


def compare_dbs(old: Path, new: Path) -> list[str]:
    """What differs between the two databases (empty: the same)."""
    a, b = sqlite3.connect(old), sqlite3.connect(new)
    try:
        problems = []
        ta, tb = stored_tables(a), stored_tables(b)
        if ta != tb:
            problems.append(f"tables differ: {sorted(set(ta) ^ set(tb))}")
        for table in sorted(set(ta) & set(tb)):
            ra, rb = table_rows(a, table), table_rows(b, table)
            if ra != rb:
                only_old = [row for row in ra if row not in set(rb)][:2]
                only_new = [row for row in rb if row not in set(ra)][:2]
                problems.append(
                    f"{table}: {len(ra)} rows against {len(rb)}; old only {only_old!r:.300}; "
                    f"new only {only_new!r:.300}"
                )
        print(f"  {len(set(ta) & set(tb))} tables compared")
        return problems
    finally:
        a.close()
        b.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", help="the old revision (a commit, branch or tag)")
    parser.add_argument("vaults", nargs="+", type=Path, help="vaults to index (read only)")
    add_sides_arguments(parser)
    args = parser.parse_args(argv)
    work, sides = sides_of(args)
    different = False
    for vault in args.vaults:
        vault = vault.resolve()
        print(f"{vault.name}:")
        dbs = build_sides(sides, vault, work)
        problems = compare_dbs(dbs["old"], dbs["new"])
        for command in (["health", "--json"], ["tags", "--json"]):
            outputs = {
                name: run(src, [*command, "--vault", str(vault), "--db", str(dbs[name])], (0, 1))
                for name, src in sides.items()
            }
            if outputs["old"] != outputs["new"]:
                problems.append(f"`{' '.join(command)}` differs")
            else:
                print(f"  `{' '.join(command)}` the same ({len(outputs['new'])} bytes)")
        for problem in problems:
            print(f"  DIFFERS {problem}")
        different |= bool(problems)
    print("different" if different else "the same")
    return 1 if different else 0


if __name__ == "__main__":
    raise SystemExit(main())
