"""The writer's connection: open (creating) the index, its pragmas, SQL functions and the
schema rebuild; what a writer's SQLite error means (ARCHITECTURE "Recovery"): a corrupt file set
aside, a read-only place, a full disk, Ctrl-C. The read side's cheap connect is store/connect.py,
on the query hot path."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from notedex.error_kinds import IndexCorrupt, IndexDiskFull, IndexUnavailable
from notedex.store import bodyzip
from notedex.store.connect import (
    SQLITE_CORRUPT,
    SQLITE_NOTADB,
    apply_pragmas,
    is_corrupt,
    sqlite_code,
)
from notedex.store.schema import (
    EXTERNAL_FTS,
    RETIRED_TABLES,
    SCHEMA_VERSION,
    TABLES,
    VIEWS,
    split_ddl,
)
from notedex.vault.fixes import broken_link_confidence, offered
from notedex.vault.resolve import file_name_crc, name_key
from notedex.vault.text import fold, segment_or_empty

__all__ = ["is_corrupt"]  # the rule lives in store.connect (the read side needs it too)

# SQLite's primary result codes (the low byte of an extended code).
SQLITE_PERM, SQLITE_READONLY, SQLITE_FULL, SQLITE_CANTOPEN = 3, 8, 13, 14
_NOT_WRITABLE = (SQLITE_PERM, SQLITE_READONLY, SQLITE_CANTOPEN)

DISK_FULL_ENV = "NOTEDEX_TEST_DISK_FULL"
"""Test-only fault: while the file this names exists, a writer connection may not grow the index
(``PRAGMA max_page_count``): its writes fail with SQLITE_FULL, the code a full disk gives."""

_interrupted = False
_live_change = ""
_stop_requested = False
SIGNAL_CHECK_STEPS = 50_000
"""SQLite virtual-machine steps between two calls of the writer's progress handler (a few
milliseconds at most): the moment a stop signal's Python handler gets to run (issue 31.8)."""


def open_writer_connection(db_path: Path, *, verify: bool = False) -> sqlite3.Connection:
    """Open (creating) the index for writing: WAL, synchronous=NORMAL, mode 0600, current schema.

    ``verify`` runs ``PRAGMA quick_check`` first (the daemon's start). A damaged file raises
    `IndexCorrupt` (the caller sets it aside); a read-only file or folder `IndexUnavailable`.
    """
    conn: sqlite3.Connection | None = None
    created = False
    try:
        db_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not db_path.exists():
            # Create it 0600 before SQLite does (SQLite honours the umask only).
            os.close(os.open(db_path, os.O_RDWR | os.O_CREAT, 0o600))
            created = True
        _check_writable(db_path)
        conn = sqlite3.connect(str(db_path), isolation_level=None, check_same_thread=False)
        apply_pragmas(conn)
        if db_path.stat().st_size == 0:
            # Only a new file can take it: free pages (FTS merges leave thousands after a
            # full index) can then be given back, see maintenance.release_free_pages().
            conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        add_sql_functions(conn)
        conn.set_progress_handler(_let_signals_in, SIGNAL_CHECK_STEPS)
        if verify:
            _quick_check(conn, db_path)
        if schema_version(conn) != SCHEMA_VERSION:
            rebuild_schema(conn, db_path)
        add_triggers(conn)
        _inject_disk_full(conn)
    except (OSError, sqlite3.DatabaseError, IndexUnavailable) as exc:
        if conn is not None:
            conn.close()
        raise _open_error(exc, db_path) from exc
    _tighten_mode(db_path, created)
    return conn


def _open_error(exc: BaseException, db_path: Path) -> BaseException:
    if isinstance(exc, IndexUnavailable):
        return exc
    if isinstance(exc, sqlite3.DatabaseError):
        translated = translate(exc, db_path)
        if translated is not exc:
            return translated
    # A folder, a read-only place: an input error (exit 2).
    return IndexUnavailable(
        f"cannot open the index {db_path} for writing: {exc}; remove it or pass another --db"
    )


def _check_writable(db_path: Path) -> None:
    """A read-only index or state folder is the user's choice: say so (exit 2), never chmod it."""
    folder = db_path.parent
    if not os.access(db_path, os.W_OK):
        raise IndexUnavailable(
            f"the index {db_path} is read-only; make it writable or pass another --db"
        )
    if not os.access(folder, os.W_OK | os.X_OK) and not Path(f"{db_path}-wal").exists():
        raise IndexUnavailable(
            f"the folder {folder} of the index is read-only (SQLite writes {db_path.name}-wal "
            "beside the index); make it writable or pass another --db"
        )


def _tighten_mode(db_path: Path, created: bool) -> None:
    """0600 for the files we made; an existing file only loses group and other bits."""
    for suffix in ("", "-wal", "-shm"):
        path = str(db_path) + suffix
        with contextlib.suppress(OSError):
            mode = os.stat(path).st_mode & 0o777
            wanted = 0o600 if created and suffix == "" else mode & 0o700
            if wanted != mode:
                os.chmod(path, wanted)


def _quick_check(conn: sqlite3.Connection, db_path: Path) -> None:
    """``PRAGMA quick_check``: the B-trees and pages are sound (not FTS contents: a daily job)."""
    rows = conn.execute("PRAGMA quick_check(1)").fetchall()
    if rows != [("ok",)]:
        raise IndexCorrupt(db_path, str(rows[0][0]) if rows else "no answer", not_a_database=False)


def _inject_disk_full(conn: sqlite3.Connection) -> None:
    flag = os.environ.get(DISK_FULL_ENV)
    if flag and os.path.exists(flag):
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {int(pages)}")


def translate(exc: sqlite3.Error, db_path: Path) -> BaseException:
    """What a writer's SQLite error means for the user; ``exc`` itself when it is a bug."""
    code = sqlite_code(exc)
    if take_interrupt():
        # Ctrl-C inside one of our SQL functions reaches us as "user-defined function raised
        # exception": it was the user, not a bug (exit 130).
        return KeyboardInterrupt()
    if code in (SQLITE_CORRUPT, SQLITE_NOTADB):
        return IndexCorrupt(db_path, str(exc), not_a_database=code == SQLITE_NOTADB)
    if code == SQLITE_FULL:
        return IndexDiskFull(
            f"the disk holding the index {db_path} is full ({exc}); free some space and run "
            "again (nothing was lost: the index keeps its last complete state)"
        )
    if code in _NOT_WRITABLE:
        return IndexUnavailable(
            f"cannot write the index {db_path} ({exc}); make it and its folder writable, or "
            "pass another --db"
        )
    return exc


@contextlib.contextmanager
def writer_errors(db_path: Path) -> Iterator[None]:
    """Turn a writer's SQLite errors into what they mean (`translate`): one place for all."""
    try:
        yield
    except sqlite3.Error as exc:
        translated = translate(exc, db_path)
        if translated is exc:
            raise
        raise translated from exc


def set_aside(db_path: Path) -> Path:
    """Move a corrupt index (and its -wal and -shm) to ``<name>.corrupt-<UTC time>``; the new name.

    Nothing is deleted: the file may be someone's, or worth a look. The caller has closed its
    connection; the next open creates a new index.
    """
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    target = db_path.with_name(f"{db_path.name}.corrupt-{stamp}")
    number = 1
    while target.exists():
        number += 1
        target = db_path.with_name(f"{db_path.name}.corrupt-{stamp}-{number}")
    if db_path.exists():
        os.replace(db_path, target)
    for suffix in ("-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.replace(f"{db_path}{suffix}", f"{target}{suffix}")
    return target


def _let_signals_in() -> int:
    """The writer's progress handler. A signal's Python handler runs only between bytecodes,
    never inside one long SQLite statement (a merge, a large delete): this call is such a
    moment. When the CLI's stop handler raises there, or has run (``request_stop``), SQLite
    aborts the statement ("interrupted") and the CLI, which recorded the signal, exits 130
    (143)."""
    return 1 if _stop_requested else 0


def request_stop() -> None:
    """A stop signal reached the CLI: abort the writer's statements from now on."""
    global _stop_requested
    _stop_requested = True


def note_live_change(how: str = "committed") -> None:
    """A writer committed to the live index (not a build aside), or a build was ``installed``
    in its place: an interrupted command can no longer say "the index is unchanged"."""
    global _live_change
    if _live_change != "installed":
        _live_change = how


def live_index_change() -> str:
    """ "" (none), "committed" or "installed": what this process did to the live index."""
    return _live_change


def take_interrupt() -> bool:
    """Ctrl-C was pressed while SQLite ran one of our functions (see `translate`); once."""
    global _interrupted
    was, _interrupted = _interrupted, False
    return was


def _guarded(function: Callable[..., Any]) -> Callable[..., Any]:
    """SQLite turns any exception in a function into "user-defined function raised exception":
    remember that a KeyboardInterrupt was one."""

    def call(*values: Any) -> Any:
        global _interrupted
        try:
            return function(*values)
        except KeyboardInterrupt:
            _interrupted = True
            raise

    return call


def _reversed(text: str | None) -> str | None:
    return None if text is None else text[::-1]


def add_sql_functions(conn: sqlite3.Connection) -> None:
    """The writer's SQL functions; note_fts_text (the content of note_fts) needs nx_segment."""
    conn.create_function("nx_segment", 1, _guarded(segment_or_empty), deterministic=True)
    # SEMANTICS 7's fold (NFC, str.lower): SQLite's lower() folds ASCII letters only.
    conn.create_function("nx_fold", 1, _guarded(fold), deterministic=True)
    conn.create_function("nx_name_key", 1, _guarded(name_key), deterministic=True)
    # files_name_key: the files filed under a name, probed by LinkTargets.ids_of (issue 33).
    conn.create_function("nx_file_name_crc", 1, _guarded(file_name_crc), deterministic=True)
    # links_unresolved_reversed: the broken keys by their end, for the `typo` probes (issue 35).
    conn.create_function("nx_reverse", 1, _guarded(_reversed), deterministic=True)
    # body_text (the content of body_fts): FTS5 reads a body back only to delete its row.
    conn.create_function("nx_inflate", 1, _guarded(bodyzip.inflater(conn)), deterministic=True)
    # broken_links.confidence (issue 33): a suggestion's confidence, NULL if not offered.
    conn.create_function(
        "nx_link_confidence", 2, _guarded(_offered_link_confidence), deterministic=True
    )


def _offered_link_confidence(reason: str | None, target: str) -> float | None:
    """SEMANTICS 8.10: a broken link's suggestion's confidence if it is offered, else None."""
    confidence = broken_link_confidence(reason, target)
    return confidence if offered(confidence) else None


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
    ours = (
        *TABLES,
        *RETIRED_TABLES,
        *EXTERNAL_FTS,
        "sqlite_",
    )  # FTS5 shadow tables are note_fts_data etc.
    if "meta" not in tables and any(not name.startswith(ours) for name in tables):
        raise IndexUnavailable(
            f"{db_path} is an SQLite database but not a notedex index; pass another --db"
        )
    for table in (*EXTERNAL_FTS, *TABLES, *RETIRED_TABLES, "meta"):
        db.table(table).drop(ignore=True)
    for view in set(VIEWS) & set(db.view_names()):
        db.view(view).drop()
    _create_schema(conn)


def add_triggers(conn: sqlite3.Connection) -> None:
    """The triggers that keep the stored answers (``schema.split_ddl``): TEMP triggers of this
    connection, so a writer must call this once the schema exists (``open_writer_connection``
    does); readers never parse them."""
    for trigger in split_ddl()[1]:
        conn.execute(trigger)


def _create_schema(conn: sqlite3.Connection) -> None:
    conn.executescript(split_ddl()[0])
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
