"""When a file counts as unchanged, and the etag rows the no-daemon freshness check compares.
Stdlib only: the CLI's freshness check imports this.
"""

from __future__ import annotations

from notedex.store.connect import sqlite3  # the `_sqlite3` C module at run time

# Coarse file systems (FAT 2 s, HFS+ 1 s) can hide a write made just after we read a file:
# a file modified this close to our last read is "racy" and its content is compared.
RACY_WINDOW_NS = 2_000_000_000

Etag = tuple[str, int, int, int, int]
"""(path, size, mtime_ns, inode, ctime_ns) of one vault file."""


def etag_rows(conn: sqlite3.Connection) -> list[Etag]:
    """Every file row as an ``Etag``, in path order.

    ``files.path`` is NFC text compared with SQLite's BINARY collation, i.e. UTF-8 byte order,
    which is code-point order: exactly how Python sorts ``str``, so a sorted walk compares equal.
    Read in table order and sorted here: ``ORDER BY path`` walks the path index and looks every
    row up in the table (200 against 150 ms at 100k files; the rows are nearly in path order,
    which Python's sort takes in one pass).
    """
    cursor = conn.cursor()
    cursor.row_factory = None  # plain tuples, compared as a whole list
    rows: list[Etag] = cursor.execute(
        "SELECT path, size, mtime_ns, inode, ctime_ns FROM files"
    ).fetchall()
    rows.sort()
    return rows


def has_racy_rows(conn: sqlite3.Connection) -> bool:
    """A note read within ``RACY_WINDOW_NS`` of its mtime: only its content can say it is
    unchanged. Never an attachment: the index holds nothing of one but its etag, so a write the
    window hid changes nothing indexed (and the writer, which reads no attachment, would never
    settle its row: every query without a daemon ran the writer again)."""
    row = conn.execute(
        "SELECT 1 FROM files WHERE is_note = 1 AND mtime_ns + ? >= indexed_ns LIMIT 1",
        (RACY_WINDOW_NS,),
    ).fetchone()
    return row is not None
