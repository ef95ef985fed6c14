"""The walk of a first index held in a temp table, not in Python (issue 35: a cold build's
memory).

A first index (the index has no files) takes every file the walk finds. Holding the walk's
``VaultFile`` of each file for the whole build (about 520 bytes each with their strings and
integers) grew the writer by about 560 MB at 1M files. Here the walk goes into
``temp.walked`` a few thousand files at a time, as it comes; the files are registered from it
in one statement, in the order ``files.register`` gives them (attachments, then notes, each
in path order: the same row ids), and the notes come back a page at a time for the batches.
The temp table lives in SQLite's temporary file, not in the process.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator

from notedex.store.files import PENDING_SIZE
from notedex.vault.model import VaultFile

_WALKED = (
    "CREATE TEMP TABLE IF NOT EXISTS walked(path TEXT PRIMARY KEY, disk_rel TEXT, "
    "is_note INTEGER NOT NULL, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, "
    "inode INTEGER NOT NULL, ctime_ns INTEGER NOT NULL) WITHOUT ROWID"
)

Row = tuple[str, str | None, int, int, int, int, int]


def start(conn: sqlite3.Connection) -> None:
    """An empty ``temp.walked`` (one left by a stopped build is emptied)."""
    conn.execute(_WALKED)
    conn.execute("DELETE FROM temp.walked")


def add(
    conn: sqlite3.Connection,
    files: Iterable[VaultFile],
    disk_rel: Callable[[VaultFile], str | None],
) -> None:
    """Inside a transaction: these walked files, into ``temp.walked``."""
    conn.executemany(
        "INSERT OR REPLACE INTO temp.walked VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            (vf.path, disk_rel(vf), int(vf.is_note), vf.size, vf.mtime_ns, vf.inode, vf.ctime_ns)
            for vf in files
        ),
    )


def counts(conn: sqlite3.Connection) -> tuple[int, int]:
    """(notes, attachments) walked."""
    notes, every = conn.execute("SELECT total(is_note), count(*) FROM temp.walked").fetchone()
    return int(notes), every - int(notes)


def register(conn: sqlite3.Connection) -> None:
    """Inside a transaction, on an index with no files: a row for every walked file, as
    ``files.register`` makes them (attachments with their etag, notes with a pending one),
    in its order (attachments, then notes, each by path)."""
    conn.execute(
        """
        INSERT INTO files(path, disk_rel, is_note, size, mtime_ns, inode, indexed_ns, ctime_ns)
        SELECT path, disk_rel, is_note,
            CASE is_note WHEN 1 THEN ?1 ELSE size END,
            CASE is_note WHEN 1 THEN 0 ELSE mtime_ns END,
            CASE is_note WHEN 1 THEN 0 ELSE inode END,
            CASE is_note WHEN 1 THEN 0 ELSE ?2 END,
            CASE is_note WHEN 1 THEN 0 ELSE ctime_ns END
        FROM temp.walked ORDER BY is_note, path
        """,
        {"1": PENDING_SIZE, "2": time.time_ns()},
    )


def _files(rows: Iterable[Row], prefix: str) -> list[VaultFile]:
    def disk(rel: str) -> str:
        return prefix + (rel if os.sep == "/" else rel.replace("/", os.sep))

    return [
        VaultFile(path, disk(rel or path), bool(note), size, mtime, inode, ctime)
        for path, rel, note, size, mtime, inode, ctime in rows
    ]


_PAGE = "SELECT * FROM temp.walked WHERE is_note = ?1 AND path > ?2 ORDER BY path LIMIT ?3"


def pages(
    conn: sqlite3.Connection, *, notes: bool, prefix: str, size: int = 1000
) -> Iterator[list[VaultFile]]:
    """The walked notes (or attachments) in path order, ``size`` at a time, as the walk made
    them (``prefix``: the vault root's disk path with its separator). Each page is read
    whole: the connection writes between pages."""
    after = ""
    while True:
        rows = conn.execute(_PAGE, {"1": int(notes), "2": after, "3": size}).fetchall()
        if not rows:
            return
        after = rows[-1][0]
        yield _files(rows, prefix)


def paths(conn: sqlite3.Connection, *, size: int = 5000) -> Iterator[list[str]]:
    """Every walked path in path order, ``size`` at a time."""
    after: str | None = ""
    while after is not None:
        found = [
            path
            for (path,) in conn.execute(
                "SELECT path FROM temp.walked WHERE path > ? ORDER BY path LIMIT ?", (after, size)
            )
        ]
        after = found[-1] if found else None
        if found:
            yield found


def finish(conn: sqlite3.Connection) -> None:
    """``temp.walked`` dropped: its pages go back."""
    conn.execute("DROP TABLE IF EXISTS temp.walked")
