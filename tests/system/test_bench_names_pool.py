"""bench/names_pool.py keeps working: on a small index it times both pool rankings and tells the
pages apart, and it never touches the index it measures (it works on a copy)."""

from __future__ import annotations

import hashlib
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

from tests.indexcheck import make_vault
from tests.unit.store import build

REPO = Path(__file__).resolve().parents[2]


def test_the_names_pool_bench_compares_both_rankings_on_a_copy(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {
        # the tags lengthen note_fts's row, not name_fts's: the two pages differ in order
        "Python.md": "---\ntags: [one, two, three, four, five, six]\n---\nx\n",
        "Python notes on maps.md": "x\n",
        "Python.other.md": "---\ntags: [python]\n---\nx\n",
    }
    for i in range(12):
        files[f"P/Python {'word ' * (i % 4)}{i}.md"] = "x\n"
    db = tmp_path / "index.db"
    build(make_vault(tmp_path / "vault", files), db)
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "names_pool.py"), str(db), "--runs", "1"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    timing = re.search(r"^python: note_fts [\d.]+ ms, name_fts [\d.]+ ms", done.stdout, re.M)
    assert timing, done.stdout
    pages = re.search(r"^(\d+) of (\d+) top-10 pages differ$", done.stdout, re.M)
    assert pages and int(pages.group(2)) >= 1 and int(pages.group(1)) >= 1, done.stdout
    tags = re.search(
        r"^tags per top-10 note: note_fts ([\d.]+), name_fts ([\d.]+)", done.stdout, re.M
    )
    # the six-tag "Python" is today's last title hit and the names table's first
    assert tags and float(tags.group(1)) < float(tags.group(2)), done.stdout
    assert re.search(r"^top-10 notes with the word also a tag: ", done.stdout, re.M)
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    copy = sqlite3.connect(tmp_path / "index.db.names-pool")
    assert copy.execute("SELECT count(*) FROM name_fts").fetchone()[0] == len(files)
