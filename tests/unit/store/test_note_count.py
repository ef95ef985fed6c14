"""store/lookup_terms.note_count: the notes lookup may show, read from FTS5's averages record
(one page) instead of counting every note; it must equal the count it replaces through
builds, new and deleted notes, moves, exclusions and an empty vault."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from notedex.indexing.reconcile import reconcile
from notedex.store import lookup_terms
from notedex.store.writer import IndexWriter
from tests.indexcheck import make_vault

COUNTED = "SELECT (SELECT count(*) FROM notes) - (SELECT count(*) FROM notes WHERE excluded = 1)"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _both(db: Path) -> tuple[int, int]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return lookup_terms.note_count(conn), int(conn.execute(COUNTED).fetchone()[0])
    finally:
        conn.close()


def test_note_count_equals_the_count_through_every_kind_of_change(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", {})
    db = tmp_path / "i.db"
    steps = [
        lambda: [_write(vault / f"A/n{i}.md", f"# N{i}\n[[n{i + 1}]]\n") for i in range(30)],
        lambda: _write(vault / "pic.png", "png"),  # an attachment is no note
        lambda: [(vault / f"A/n{i}.md").unlink() for i in range(0, 30, 3)],
        lambda: (vault / "A").rename(vault / "B"),
        lambda: _write(vault / ".obsidian/app.json", json.dumps({"userIgnoreFilters": ["B/n1"]})),
        lambda: _write(vault / "C/new.md", "new\n"),
        lambda: _write(vault / ".obsidian/app.json", "{}"),
        lambda: shutil.rmtree(vault / "B"),
        lambda: (vault / "C/new.md").unlink(),
    ]
    seen = []
    with IndexWriter(db, vault, workers=1) as writer:
        reconcile(writer)
        assert _both(db) == (0, 0)  # an empty index: no averages record yet
        for step in steps:
            step()
            reconcile(writer)
            fast, counted = _both(db)
            assert fast == counted
            seen.append(counted)
    assert seen[0] == 30 and min(seen[1:-1]) > 0 and seen[-1] == 0
    assert seen[4] < seen[3]  # the exclusion took notes away
