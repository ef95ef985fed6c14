"""Test helpers: run the CLI as a subprocess, wait for conditions, compare indexes."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DEMO_VAULT = REPO / "examples" / "demo-vault"


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)


def run_cli(
    *args: str | Path,
    env: dict[str, str] | None = None,
    input: str | None = None,
    timeout: float = 120,
) -> Result:
    """Run `python -m notedex ARGS` in a subprocess and capture everything."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    proc = subprocess.run(
        [sys.executable, "-m", "notedex", *map(str, args)],
        capture_output=True,
        text=True,
        env=full_env,
        input=input,
        timeout=timeout,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def wait_until(
    predicate: Callable[[], Any],
    timeout: float = 20.0,
    interval: float = 0.05,
    message: str = "condition",
) -> Any:
    """Poll until predicate() is truthy; never sleep for luck (STYLE 13)."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = predicate()
        except Exception as exc:  # the index may be mid-creation
            last = exc
        else:
            if last:
                return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {message}; last value: {last!r}")


def dump_index(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every fact of the index, keyed by paths rather than row ids, sorted: for equality checks."""
    from notedex.store.schema import LINK_TEXT, NOTE_TITLE
    from notedex.store.writer import add_sql_functions

    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    add_sql_functions(conn)  # note_fts's content is the view note_fts_text
    try:
        q = conn.execute
        files = "(SELECT id, path FROM files)"
        out = {
            "files": q(
                "SELECT path, is_note, size, mtime_ns, inode, coalesce(disk_rel, '') FROM files"
            ).fetchall(),
            "notes": q(
                f"SELECT f.path, stem, {NOTE_TITLE}, frontmatter_title, first_h1, note_id, type, status, "
                f"excluded, content_hash, properties FROM notes n JOIN {files} f ON f.id = n.file_id"
            ).fetchall(),
            "tags": q(
                f"SELECT f.path, k.tag, k.tag_key, t.inline, t.position FROM tags t "
                f"JOIN tag_names k ON k.id = t.tag_id JOIN {files} f ON f.id = t.file_id"
            ).fetchall(),
            "aliases": q(
                f"SELECT f.path, position, alias FROM aliases a JOIN {files} f ON f.id = a.file_id"
            ).fetchall(),
            "links": q(
                f"SELECT s.path, seq, kind, {LINK_TEXT}, raw, linkpath, subpath, display, line, col, name_key, "
                f"t.path, ambiguous "
                f"FROM links l JOIN {files} s ON s.id = l.source_id LEFT JOIN {files} t ON t.id = l.target_id"
            ).fetchall(),
            "problems": q("SELECT path, severity, kind, message FROM problems").fetchall(),
            "lonely_notes": q("SELECT lonely, path, title FROM lonely_notes").fetchall(),
            "broken_links": q(
                "SELECT source, line, col, seq, text, target FROM broken_links"
            ).fetchall(),
            "note_fts": q(
                f"SELECT f.path, title, tags, aliases, anchors, unresolved FROM note_fts x JOIN {files} f ON f.id = x.rowid"
            ).fetchall(),
            "body_fts": q(
                f"SELECT f.path, body FROM body_fts x JOIN {files} f ON f.id = x.rowid"
            ).fetchall(),
        }
    finally:
        conn.close()
    return {k: sorted(v, key=repr) for k, v in out.items()}


def fts_integrity_ok(db: Path) -> bool:
    """FTS5 integrity-check with rank 1 (compares the index with its content)."""
    from notedex.store.schema import FTS_TABLES
    from notedex.store.writer import add_sql_functions

    conn = sqlite3.connect(str(db))
    add_sql_functions(conn)
    try:
        for table in FTS_TABLES:
            conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 1)")
        return True
    except sqlite3.DatabaseError:
        return False
    finally:
        conn.close()


def fresh_full_index(vault: Path, tmp: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Index the vault from scratch into a new database and dump it."""
    from notedex.indexing.reconcile import reconcile
    from notedex.store.writer import IndexWriter

    db = tmp / f"fresh-{time.monotonic_ns()}.db"
    with IndexWriter(db, vault, workers=1) as writer:
        reconcile(writer)
    return dump_index(db)


def indexed_demo(base: Path) -> tuple[Path, Path]:
    """A private copy of the demo vault under ``base``, indexed through the CLI: (vault, db)."""
    import shutil

    vault = base / "vault"
    shutil.copytree(DEMO_VAULT, vault)
    db = base / "index.db"
    result = run_cli("index", "--vault", vault, "--db", db)
    assert result.code == 0, result.stderr
    return vault, db
