"""The writer's connection: open (creating) the index, its pragmas, SQL functions and the
schema rebuild. The read side's cheap connect is store/connect.py, on the query hot path."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import zlib
from pathlib import Path

from notedex.errors import IndexUnavailable
from notedex.store.connect import apply_pragmas
from notedex.store.schema import DDL, EXTERNAL_FTS, SCHEMA_VERSION, TABLES, VIEWS
from notedex.vault.resolve import name_key
from notedex.vault.text import fold, segment


def open_writer_connection(db_path: Path) -> sqlite3.Connection:
    """Open (creating) the index for writing: WAL, synchronous=NORMAL, mode 0600, current schema."""
    conn: sqlite3.Connection | None = None
    try:
        db_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not db_path.exists():
            # Create it 0600 before SQLite does (SQLite honours the umask only).
            os.close(os.open(db_path, os.O_RDWR | os.O_CREAT, 0o600))
        conn = sqlite3.connect(str(db_path), isolation_level=None, check_same_thread=False)
        apply_pragmas(conn)
        if db_path.stat().st_size == 0:
            # Only a new file can take it: free pages (FTS merges leave thousands after a
            # full index) can then be given back, see maintenance.release_free_pages().
            conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        add_sql_functions(conn)
        if schema_version(conn) != SCHEMA_VERSION:
            rebuild_schema(conn, db_path)
    except (OSError, sqlite3.DatabaseError, IndexUnavailable) as exc:
        if conn is not None:
            conn.close()
        if isinstance(exc, IndexUnavailable):
            raise
        # A folder, a file that is not SQLite, a read-only place: an input error (exit 2).
        raise IndexUnavailable(
            f"cannot open the index {db_path} for writing: {exc}; remove it or pass another --db"
        ) from exc
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(OSError):
            os.chmod(str(db_path) + suffix, 0o600)
    return conn


def add_sql_functions(conn: sqlite3.Connection) -> None:
    """The writer's SQL functions; note_fts_text (the content of note_fts) needs nx_segment."""
    conn.create_function("nx_segment", 1, _segment_or_empty, deterministic=True)
    # SEMANTICS 7's fold (NFC, str.lower): SQLite's lower() folds ASCII letters only.
    conn.create_function("nx_fold", 1, fold, deterministic=True)
    conn.create_function("nx_name_key", 1, name_key, deterministic=True)
    # body_text (the content of body_fts): FTS5 reads a body back only to delete its row.
    conn.create_function("nx_inflate", 1, inflate_body, deterministic=True)


def rebuild_schema(conn: sqlite3.Connection, db_path: Path) -> None:
    """STYLE 3: the index is a cache; the vault is the truth. Rebuild on any version mismatch.

    A database without our ``meta`` table that holds other tables is someone else's file
    (``--db`` pointed at the wrong thing): it is refused, never altered. The DDL stays SQL:
    sqlite-utils cannot declare an FTS5 table whose content is a view.
    """
    if conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone() is None:
        _create_schema(conn)  # a new file: nothing to inspect or drop
        return
    # An existing file of another version (rare: after an upgrade): sqlite-utils inspects and
    # drops. Importing it costs about 13 MB of RSS and 150-450 ms, too much for every first
    # index (3.3 s at 10k notes), so a new file never pays it.
    import sqlite_utils

    db = sqlite_utils.Database(conn, recursive_triggers=False, execute_plugins=False)
    tables = set(db.table_names())
    ours = (*TABLES, *EXTERNAL_FTS, "sqlite_")  # FTS5 shadow tables are note_fts_data etc.
    if "meta" not in tables and any(not name.startswith(ours) for name in tables):
        raise IndexUnavailable(
            f"{db_path} is an SQLite database but not a notedex index; pass another --db"
        )
    for table in (*EXTERNAL_FTS, *TABLES, "meta"):
        db.table(table).drop(ignore=True)
    for view in set(VIEWS) & set(db.view_names()):
        db.view(view).drop()
    _create_schema(conn)


def _create_schema(conn: sqlite3.Connection) -> None:
    conn.executescript(DDL)
    conn.execute(
        "INSERT INTO meta(key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
    )


def schema_version(conn: sqlite3.Connection) -> int | None:
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.DatabaseError:
        return None
    return int(row[0]) if row and str(row[0]).isdigit() else None


def set_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute(
        "INSERT INTO meta(key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


def stored_meta(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def deflate_body(text: str) -> bytes:
    """body_store.z: the segmented body as zlib-compressed UTF-8 (ARCHITECTURE "The body index")."""
    return zlib.compress(text.encode("utf-8"), 6)


def inflate_body(blob: bytes | None) -> str:
    return zlib.decompress(blob).decode("utf-8") if blob else ""


def _segment_or_empty(text: str | None) -> str:
    return segment(text) if text else ""
