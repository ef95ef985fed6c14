"""store/etags_aside.py and store/files.iter_etags: the rows' etags for the start-up merge, read
by a child process at scale (issue 35), the same rows in the same order as in process, and
none lost or repeated when the child fails."""

from __future__ import annotations

import os
import signal
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from notedex.indexing.reconcile import reconcile
from notedex.store import files
from notedex.store.etags import RACY_WINDOW_NS
from notedex.store.etags_aside import rows_aside
from notedex.store.writer import IndexWriter
from tests.indexcheck import age, fts_sound_after, make_vault

__all__ = ["fts_sound_after"]  # autouse: FTS integrity-check after every test

ROWS = 12_345  # more than two of the child's chunks (5,000 rows)
SQL = files._ETAGS_IN_PATH_ORDER
AFTER = files._ETAGS_AFTER


@pytest.fixture
def writer(tmp_path: Path) -> Iterator[IndexWriter]:
    """An index of a real vault (a note, racy, and settled files), plus many attachment rows."""
    vault = make_vault(tmp_path / "v", {"a.md": "# A\n", "b/c.md": "[[a]]\n", "d.png": b"png"})
    age(vault)
    (vault / "e.md").write_text("racy: just written\n", encoding="utf-8")
    with IndexWriter(tmp_path / "i.db", vault, workers=1) as w:
        reconcile(w)
        with w.conn:
            w.conn.executemany(
                "INSERT INTO files(path, is_note, size, mtime_ns, inode, indexed_ns, ctime_ns) "
                "VALUES (?, 0, ?, ?, ?, ?, ?)",
                [
                    (f"z/{i:05}é.png", i, 10**18 + i, 7 * i, 2 * 10**18, 10**18 + 2 * i)
                    for i in range(ROWS)
                ],
            )
        yield w


def _in_process(writer: IndexWriter) -> list[tuple[str, int, int, int, int]]:
    return list(files.iter_etags(writer.conn))


def test_a_child_reads_the_same_rows_in_the_same_order(writer: IndexWriter) -> None:
    expected = _in_process(writer)
    assert len(expected) == ROWS + 4
    assert [row[0] for row in expected] == sorted(row[0] for row in expected)
    aside = list(files.iter_etags(writer.conn, writer.db_path, aside_from=0))
    assert aside == expected
    # The child alone: a closed connection would fail any row read in process.
    closed = sqlite3.connect(":memory:")
    closed.close()
    assert list(rows_aside(closed, writer.db_path, SQL, AFTER, RACY_WINDOW_NS)) == expected


def test_a_racy_row_has_a_size_no_file_has(writer: IndexWriter) -> None:
    rows = {row[0]: row for row in _in_process(writer)}
    assert rows["e.md"][1] == files.RACY_SIZE  # written within the racy window of its read
    assert rows["a.md"][1] == (writer.vault / "a.md").stat().st_size
    st = os.lstat(writer.vault / "b/c.md")
    assert rows["b/c.md"] == ("b/c.md", st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)


def test_a_child_that_cannot_open_the_index_leaves_every_row_to_the_parent(
    writer: IndexWriter, tmp_path: Path
) -> None:
    expected = _in_process(writer)
    missing = tmp_path / "no such index.db"
    rows = list(rows_aside(writer.conn, missing, SQL, AFTER, RACY_WINDOW_NS))
    assert rows == expected
    assert not missing.exists()  # read only: the child made nothing


def _children() -> set[int]:
    found: set[int] = set()
    for task in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{task}/children", encoding="ascii") as handle:
            found.update(int(pid) for pid in handle.read().split())
    return found


def test_a_child_killed_mid_stream_loses_and_repeats_no_row(writer: IndexWriter) -> None:
    expected = _in_process(writer)
    before = _children()
    stream = rows_aside(writer.conn, writer.db_path, SQL, AFTER, RACY_WINDOW_NS)
    got = [next(stream)]  # the first chunk is in: the child is on the next ones
    (child,) = _children() - before
    os.kill(child, signal.SIGKILL)
    got.extend(stream)
    assert got == expected
    assert child not in _children()  # waited for
