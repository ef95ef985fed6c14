"""Shared index checks: FTS integrity after every test, tiny vaults, settled mtimes, index diffs.

``fts_sound_after`` is autouse for every test (tests/conftest.py imports it): after the test,
every index it left behind (under ``tmp_path`` or the isolated state home) must pass FTS5's
``integrity-check`` with rank 1. Modules that still import it as well get the same fixture.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import DEMO_VAULT, run_inprocess, write

_SCANDIR = os.scandir  # the real one: a test may still have os.scandir patched at teardown


def index_files(*roots: Path) -> list[Path]:
    """Every notedex index (an SQLite file with a ``note_fts`` table) under ``roots``."""
    found: list[Path] = []
    stack = [str(root) for root in roots if root.is_dir()]
    while stack:
        try:
            listing = _SCANDIR(stack.pop())
        except OSError:  # a folder a test left unreadable holds no index we can check
            continue
        with listing as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                elif (
                    entry.name.endswith(".db") and entry.is_file() and _fts_tables(Path(entry.path))
                ):
                    found.append(Path(entry.path))
    return sorted(found)


def _fts_tables(db: Path) -> list[str]:
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    except sqlite3.Error:
        return []
    try:
        rows = conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%fts5%'"
        ).fetchall()
    except sqlite3.DatabaseError:
        return []
    finally:
        conn.close()
    return [row[0] for row in rows]


def fts_problems(db: Path) -> list[str]:
    """Every FTS5 table of ``db`` that fails ``integrity-check`` with rank 1, with the error."""
    from notedex.store.database import add_sql_functions

    bad: list[str] = []
    conn = sqlite3.connect(str(db))
    add_sql_functions(conn)  # note_fts reads its content from a view that segments text
    try:
        for table in _fts_tables(db):
            try:
                conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 1)")
            except sqlite3.DatabaseError as exc:
                bad.append(f"{db.name}:{table}: {exc}")
    finally:
        conn.close()
    return bad


@pytest.fixture(autouse=True)
def fts_sound_after(tmp_path: Path) -> Iterator[None]:
    yield
    roots = [tmp_path]
    state = os.environ.get("XDG_STATE_HOME")
    if state:
        roots.append(Path(state))
    problems = [p for db in index_files(*roots) for p in fts_problems(db)]
    assert problems == [], f"FTS integrity-check (rank 1) failed: {problems}"


def make_vault(root: Path, files: dict[str, str | bytes]) -> Path:
    """A vault (with ``.obsidian/``) holding ``files``: vault-relative path -> text or bytes."""
    (root / ".obsidian").mkdir(parents=True, exist_ok=True)
    for rel, content in files.items():
        path = root / rel
        if isinstance(content, bytes):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
        else:
            write(path, content)
    return root


def indexed_vault(
    tmp_path_factory: pytest.TempPathFactory,
    name: str,
    files: Mapping[str, str | bytes],
    app: str = "{}",
) -> Path:
    """A read-only vault of ``files`` for a module: ``make_vault`` under a fresh folder named
    ``name``, its ``.obsidian/app.json`` holding ``app`` (JSON), indexed in-process by ``notedex
    status`` (the way a first query builds it); its index database."""
    root = tmp_path_factory.mktemp(name)
    vault, db = make_vault(root / "vault", {".obsidian/app.json": app, **files}), root / "index.db"
    result = run_inprocess("status", "--vault", vault, "--db", db, "--json")
    assert result.code == 0, result.stderr
    return db


def vm_steps(conn: sqlite3.Connection, run: Callable[[], object], per: int = 100) -> int:
    """SQLite virtual-machine steps ``run()`` takes on ``conn``, counted in ``per``s (hundreds
    by default; FTS5's shadow statements included): a cost that does not depend on the
    machine's speed."""
    steps = 0

    def tick() -> int:
        nonlocal steps
        steps += 1
        return 0

    conn.set_progress_handler(tick, per)
    try:
        run()
    finally:
        conn.set_progress_handler(None, per)
    return steps


def age(root: Path, seconds: float = 60.0) -> None:
    """Move every file's mtime into the past, out of the racy window (a settled vault)."""
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            ns = st.st_mtime_ns - int(seconds * 1e9)
            os.utime(path, ns=(ns, ns), follow_symlinks=False)


def index_diff(actual: dict[str, list[Any]], expected: dict[str, list[Any]], limit: int = 8) -> str:
    """A readable difference of two ``dump_index`` results: per table, rows only on one side."""
    lines = []
    for table in sorted(set(actual) | set(expected)):
        have, want = actual.get(table, []), expected.get(table, [])
        if have == want:
            continue
        extra = [row for row in have if row not in want][:limit]
        missing = [row for row in want if row not in have][:limit]
        lines.append(f"{table}: extra {extra!r}; missing {missing!r}")
    return "\n".join(lines)


def copy_demo(base: Path) -> tuple[Path, Path]:
    """A settled copy of the demo vault under ``base`` and its freshly built index."""
    vault = base / "demo-vault"  # the real folder name: export's scope is "vault:demo-vault"
    shutil.copytree(DEMO_VAULT, vault)
    (vault / ".obsidian").mkdir(exist_ok=True)
    age(vault)  # settled: no file is in the racy window of the index
    db = base / "state" / "index.db"
    result = run_inprocess("index", "--vault", vault, "--db", db)
    assert result.code == 0, result.stderr
    return vault, db


def linked_subset(vault: Path, db: Path, root: Path) -> Path:
    """A vault of hard links to exactly the files the index holds (same etags): a consistent
    partial index equals a fresh full index of it."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        paths = [row[0] for row in conn.execute("SELECT path FROM files")]
    finally:
        conn.close()
    for path in paths:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        os.link(vault / path, root / path)
    return root
