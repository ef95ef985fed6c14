"""store/basedocs.py through the indexer: every .base file's YAML stored as JSON at index time,
kept by incremental applies as a fresh index would have it, and a bad base recorded as an
error of its path (issue 32; SEMANTICS 15)."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from pathlib import Path

from notedex.indexing.reconcile import reconcile
from notedex.store.writer import IndexWriter
from tests.helpers import dump_index, fresh_full_index, run_inprocess, write


def stored(db: Path) -> dict[str, tuple[object, str | None]]:
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute(
            "SELECT f.path, b.doc, b.error FROM bases b JOIN files f ON f.id = b.file_id"
        ).fetchall()
    finally:
        conn.close()
    return {path: (None if doc is None else json.loads(doc), error) for path, doc, error in rows}


def index(vault: Path, db: Path) -> None:
    with IndexWriter(db, vault, workers=1) as writer:
        reconcile(writer)


def test_bases_are_stored_and_kept_incrementally(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    write(vault / "A.md", "---\ntags: [x]\n---\nbody\n")
    write(vault / "Views/one.base", "filters: file.hasTag('x')\nviews:\n  - name: V\n")
    write(vault / "bad.base", "filters: [unclosed\n")
    db = tmp_path / "index.db"
    index(vault, db)
    assert stored(db) == {
        "Views/one.base": ({"filters": "file.hasTag('x')", "views": [{"name": "V"}]}, None),
        "bad.base": (None, stored(db)["bad.base"][1]),
    }
    assert "invalid YAML" in str(stored(db)["bad.base"][1])

    # An edit, a fix, a move and a deletion, each applied incrementally.
    write(vault / "Views/one.base", "views:\n  - name: W\n")
    os.utime(vault / "Views/one.base", ns=(1, 2_000_000_000))
    write(vault / "bad.base", "views: []\n")
    write(vault / "new.base", "")
    os.rename(vault / "Views", vault / "Moved")
    index(vault, db)
    assert stored(db) == {
        "Moved/one.base": ({"views": [{"name": "W"}]}, None),
        "bad.base": ({"views": []}, None),
        "new.base": (None, None),
    }
    assert dump_index(db)["bases"] == fresh_full_index(vault, tmp_path)["bases"]
    (vault / "new.base").unlink()
    index(vault, db)
    assert set(stored(db)) == {"Moved/one.base", "bad.base"}


def test_a_bad_base_is_an_error_of_its_path_in_health(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    write(vault / "A.md", "text\n")
    write(vault / "list.base", "- not\n- a mapping\n")
    db = tmp_path / "index.db"
    result = run_inprocess("health", "--json", "--vault", vault, "--db", db)
    errors = json.loads(result.stdout)["errors"]
    assert [(e["path"], e["message"]) for e in errors] == [
        ("list.base", "a base is a mapping of filters, formulas and views")
    ]
    write(vault / "list.base", "views: []\n")
    result = run_inprocess("health", "--json", "--vault", vault, "--db", db)
    assert json.loads(result.stdout)["errors"] == []


def test_the_base_command_reads_the_stored_copy_without_yaml(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    write(vault / "A.md", "---\ntags: [x]\n---\n")
    write(vault / "B.md", "no tags\n")
    write(vault / "x.base", "filters: file.hasTag('x')\n")
    for name in ("A.md", "B.md", "x.base"):  # not racy: the refresh finds nothing to re-read
        os.utime(vault / name, ns=(1, 1_000_000_000))
    db = tmp_path / "index.db"
    assert run_inprocess("index", "--vault", vault, "--db", db).code == 0
    probe = (
        "import sys; from notedex.cli import main; "
        f"code = main(['base', 'x.base', '--paths', '--vault', {str(vault)!r}, '--db', {str(db)!r}]); "
        "print('yaml' in sys.modules, code)"
    )
    import subprocess

    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert out.splitlines() == ["A.md", "False 0"]
    # A copy the index does not have yet (no refresh): the file is parsed now, never stale.
    write(vault / "x.base", "filters: '!file.hasTag(\"x\")'\n")
    os.utime(vault / "x.base", ns=(1, 3_000_000_000))
    result = run_inprocess(
        "base", "x.base", "--paths", "--no-refresh", "--vault", vault, "--db", db
    )
    assert result.stdout.splitlines() == ["B.md", "x.base"]
