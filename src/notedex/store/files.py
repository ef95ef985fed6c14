"""The ``files`` rows: etags (size, mtime_ns, inode), registration of new files, walk
problems and the notes the parser could not read. All the SQL of the file table lives here."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

from notedex.store.etags import RACY_WINDOW_NS
from notedex.store.etags_aside import ASIDE_ROWS, rows_aside
from notedex.vault.model import VaultFile

LOOKUP_CHUNK = 5000  # paths looked up (or re-resolved) per query: bounds what is held at once
PENDING_SIZE = -1  # files.size of a note registered but not yet written
RACY_SIZE = -2  # iter_etags's size of a racy row: equal to no file's
UNREADABLE_KIND = "read"  # vault.parse's problem kind for a note it could not open or read

_FILE_COLUMNS = "id, path, disk_rel, is_note, size, mtime_ns, inode, indexed_ns, ctime_ns"
_FILES_BY_PATHS = (
    f"SELECT {_FILE_COLUMNS} FROM files WHERE path IN (SELECT value FROM json_each(?))"
)
_FILES_IN_PATH_ORDER = f"SELECT {_FILE_COLUMNS} FROM files ORDER BY path"
# IndexedFile.racy's rule, negated: a note with mtime_ns + RACY_WINDOW_NS >= indexed_ns is
# racy (an attachment never is: store.etags.has_racy_rows); a racy row's size is RACY_SIZE,
# which no file has.
_ETAGS = (
    "SELECT path, CASE WHEN is_note = 0 OR mtime_ns + ? < indexed_ns THEN size "
    f"ELSE {RACY_SIZE} END, mtime_ns, inode, ctime_ns FROM files"
)
_ETAGS_IN_PATH_ORDER = f"{_ETAGS} ORDER BY path"
_ETAGS_AFTER = f"{_ETAGS} WHERE path > ? ORDER BY path"
# folder, folder + "/", folder + "0": "0" follows "/", so the range is exactly "folder/..."
_FILES_UNDER = f"SELECT {_FILE_COLUMNS} FROM files WHERE path = ? OR (path >= ? AND path < ?)"


class IndexedFile(NamedTuple):
    """A ``files`` row (a tuple: the reconcile makes one per indexed file, and fast)."""

    id: int
    path: str
    disk_rel: str | None
    is_note: int
    """1 for a note, 0 for an attachment (SQLite's boolean, as stored)."""
    size: int
    mtime_ns: int
    inode: int
    indexed_ns: int
    ctime_ns: int
    """0 in a row written before the change time was stored, or a note not written yet."""

    def same_etag(self, vf: VaultFile) -> bool:
        return (self.size, self.mtime_ns, self.inode, self.is_note) == (
            vf.size,
            vf.mtime_ns,
            vf.inode,
            vf.is_note,
        )

    def same_ctime(self, vf: VaultFile) -> bool:
        """The change time did not move: no write since the row was made (an edit that kept the
        size and put the mtime back still moves it, issue 31.7)."""
        return self.ctime_ns == vf.ctime_ns

    @property
    def racy(self) -> bool:
        return self.mtime_ns + RACY_WINDOW_NS >= self.indexed_ns


def file_rows(conn: sqlite3.Connection, paths: Iterable[str]) -> dict[str, IndexedFile]:
    """The indexed rows of ``paths`` (those that have one), by path."""
    wanted = list(dict.fromkeys(paths))
    rows: dict[str, IndexedFile] = {}
    for start in range(0, len(wanted), LOOKUP_CHUNK):
        chunk = json.dumps(wanted[start : start + LOOKUP_CHUNK])
        rows.update((row.path, row) for row in _select(conn, _FILES_BY_PATHS, (chunk,)))
    return rows


def iter_files(conn: sqlite3.Connection) -> Iterator[IndexedFile]:
    """Every indexed row in path order (the order ``VaultStream`` walks the real tree in)."""
    return _select(conn, _FILES_IN_PATH_ORDER, ())


def iter_etags(
    conn: sqlite3.Connection, db_path: Path | None = None, *, aside_from: int | None = None
) -> Iterator[tuple[str, int, int, int, int]]:
    """(path, size, mtime_ns, inode, ctime_ns) of every row in path order, as plain tuples,
    with ``RACY_SIZE`` for the size of a ``racy`` row: a tuple equal to a walked file's
    (``vault.walk.Entry``'s first five) is a settled row of an unchanged file, one compare
    (issue 35: five values a row instead of nine, at 1M rows). With ``db_path`` (the index
    ``conn`` reads) and about ``aside_from`` rows or more (``ASIDE_ROWS``), a child process
    reads them (``store.etags_aside``)."""
    if aside_from is None:
        aside_from = ASIDE_ROWS
    if db_path is not None and _row_estimate(conn) >= aside_from:
        return rows_aside(conn, db_path, _ETAGS_IN_PATH_ORDER, _ETAGS_AFTER, RACY_WINDOW_NS)
    return iter(conn.execute(_ETAGS_IN_PATH_ORDER, (RACY_WINDOW_NS,)))


def _row_estimate(conn: sqlite3.Connection) -> int:
    """The largest row id: about the number of rows, read from the end of one b-tree."""
    row = conn.execute("SELECT max(id) FROM files").fetchone()
    return int(row[0] or 0)


def files_under(conn: sqlite3.Connection, folder: str) -> list[IndexedFile]:
    """The rows of ``folder`` itself and of every path below it."""
    return list(_select(conn, _FILES_UNDER, (folder, folder + "/", folder + "0")))


def paths_sharing_inodes(
    conn: sqlite3.Connection, inodes: Iterable[int], paths: Iterable[str]
) -> list[str]:
    """The on-disk names of the rows other than ``paths`` that hold one of ``inodes``: the
    other names (hard links, symlinks) of the files an event named."""
    wanted = sorted({inode for inode in inodes if inode})
    if not wanted:
        return []
    sql = (
        "SELECT coalesce(disk_rel, path) FROM files WHERE inode IN "
        "(SELECT value FROM json_each(?)) AND path NOT IN (SELECT value FROM json_each(?))"
    )
    return [row[0] for row in conn.execute(sql, (json.dumps(wanted), json.dumps(list(paths))))]


def attachments_of_sizes(conn: sqlite3.Connection, sizes: Iterable[int]) -> list[tuple[str, int]]:
    """(path, size) of the indexed attachments of one of ``sizes`` (a scan of ``files``: a
    move-like batch's new attachments, issue 17)."""
    sql = (
        "SELECT path, size FROM files WHERE is_note = 0 AND size IN "
        "(SELECT value FROM json_each(?))"
    )
    return [(row[0], row[1]) for row in conn.execute(sql, (json.dumps(sorted(set(sizes))),))]


def walk_problems(conn: sqlite3.Connection) -> dict[str, str]:
    """The walk's problems as recorded by the last vault walk: path -> message."""
    return dict(conn.execute("SELECT path, message FROM problems WHERE kind = 'walk'"))


def has_files(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM files LIMIT 1").fetchone() is not None


def _select(conn: sqlite3.Connection, sql: str, args: tuple[object, ...]) -> Iterator[IndexedFile]:
    return map(IndexedFile._make, conn.execute(sql, args))


def register(
    conn: sqlite3.Connection,
    attachments: Sequence[VaultFile],
    notes: Sequence[VaultFile],
    existing: set[str],
    disk_rel: Callable[[VaultFile], str | None],
) -> set[str]:
    """Upsert attachment rows and give every new note a row with a pending etag.

    ``existing``: the paths that already have a row. Returns the paths new to the index.
    (A path's kind never changes: it follows its suffix.)
    """
    now = time.time_ns()
    created: set[str] = set()
    rows = []
    for vf in attachments:
        if vf.path not in existing:
            created.add(vf.path)
        rows.append((vf.path, disk_rel(vf), 0, vf.size, vf.mtime_ns, vf.inode, now, vf.ctime_ns))
    for vf in notes:
        if vf.path not in existing:
            created.add(vf.path)
            # A pending etag never equals the disk: a crash before the note's batch
            # commits means it is parsed again by the next reconcile.
            rows.append((vf.path, disk_rel(vf), 1, PENDING_SIZE, 0, 0, 0, 0))
    conn.executemany(
        """
        INSERT INTO files(path, disk_rel, is_note, size, mtime_ns, inode, indexed_ns, ctime_ns)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT(path) DO UPDATE SET
            disk_rel = excluded.disk_rel, is_note = excluded.is_note, size = excluded.size,
            mtime_ns = excluded.mtime_ns, inode = excluded.inode, indexed_ns = excluded.indexed_ns,
            ctime_ns = excluded.ctime_ns
        """,
        rows,
    )
    return created


def update_etags(conn: sqlite3.Connection, etags: Sequence[tuple[object, ...]]) -> None:
    """(disk_rel, size, mtime_ns, inode, indexed_ns, ctime_ns, id) of notes just written."""
    conn.executemany(
        "UPDATE files SET disk_rel = ?, is_note = 1, size = ?, mtime_ns = ?, inode = ?, "
        "indexed_ns = ?, ctime_ns = ? WHERE id = ?",
        etags,
    )


def refresh_etags(conn: sqlite3.Connection, etags: Sequence[tuple[object, ...]]) -> None:
    """(disk_rel, size, mtime_ns, inode, indexed_ns, ctime_ns, id) of files known to be
    unchanged (their content hash matched): the row is updated in place, nothing else is
    touched."""
    conn.executemany(
        "UPDATE files SET disk_rel = ?, size = ?, mtime_ns = ?, inode = ?, indexed_ns = ?, "
        "ctime_ns = ? WHERE id = ?",
        etags,
    )


def delete_file_row(conn: sqlite3.Connection, file_id: int, path: str) -> None:
    conn.execute("DELETE FROM files WHERE id = ?", (file_id,))
    conn.execute("DELETE FROM bases WHERE file_id = ?", (file_id,))
    conn.execute("DELETE FROM problems WHERE path = ?", (path,))


def record_walk_problems(
    conn: sqlite3.Connection, problems: Iterable[tuple[str, str, str]]
) -> None:
    """(path, message, severity): the walk's problems replace the last walk's."""
    conn.execute("DELETE FROM problems WHERE kind = 'walk'")
    conn.executemany(
        "INSERT INTO problems(path, message, severity, kind) VALUES (?, ?, ?, 'walk')",
        list(problems),
    )


def touch_indexed(conn: sqlite3.Connection, rows: Sequence[tuple[int, str]]) -> None:
    """(indexed_ns, path): racy-but-unchanged files checked now."""
    conn.executemany("UPDATE files SET indexed_ns = ? WHERE path = ?", rows)


def unreadable_paths(conn: sqlite3.Connection) -> set[str]:
    """Notes the parser could not read: retried on every reconcile, since making a file
    readable again (chmod) changes none of size, mtime_ns and inode."""
    return {
        row[0]
        for row in conn.execute(
            # Literal values: the partial index problems_unreadable answers it (issue 35).
            f"SELECT path FROM problems WHERE kind = '{UNREADABLE_KIND}' AND severity = 'error'"
        )
    }
