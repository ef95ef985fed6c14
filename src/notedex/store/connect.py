"""Readers' connections, and who holds the writer lock. Stdlib only: the query path imports this module.

Readers open ``mode=ro`` and keep transactions short. One writer at a time, guarded by an
``flock`` on a lock file beside the database (``store.writer_lock``, which a query never
loads); the lock file also says who holds it (``lock_holder``, read here without the lock,
never through a symlink).
"""

import os
import stat

from notedex.store.schema_head import SCHEMA_VERSION

TYPE_CHECKING = False  # no `typing` import on the query path; mypy honours the name
if TYPE_CHECKING:
    import sqlite3

    from notedex.error_kinds import IndexRepairing, IndexUnavailable

    StrPath = str | os.PathLike[str]
else:
    import sys

    def _import_sqlite() -> object:
        """The ``_sqlite3`` C module itself: the ``sqlite3`` package only adds dbapi2's datetime
        adapters on top (about 1.5 ms of imports per query, never used here); the objects are
        the same.

        Its initialisation imports ``functools`` for one name, ``lru_cache``, which every
        connection's statement cache is built with, and ``functools`` brings ``collections``,
        ``operator``, ``reprlib``, ``types``...: about 2.5 ms, a sixth of interpreter start-up,
        on every query. When nothing has loaded ``functools`` yet, the import sees a stand-in
        whose ``lru_cache`` builds the very cache ``functools.lru_cache`` builds (the C
        ``_functools._lru_cache_wrapper``), and the stand-in leaves ``sys.modules`` at once.
        """
        if "functools" in sys.modules:
            import _sqlite3
        else:
            import _functools

            def lru_cache(maxsize: int | None = 128, typed: bool = False) -> object:
                return lambda user_function: _functools._lru_cache_wrapper(
                    user_function, maxsize, typed, tuple
                )

            # A bare module object stands in (a class would cost a class's making, about
            # 0.07M instructions of every query).
            stand_in = type(sys)("functools")
            stand_in.lru_cache = lru_cache  # type: ignore[attr-defined]
            sys.modules["functools"] = stand_in
            try:
                import _sqlite3
            finally:
                if sys.modules.get("functools") is stand_in:
                    del sys.modules["functools"]
        return _sqlite3

    try:
        sqlite3 = _import_sqlite()
    except ImportError:  # an interpreter that ships only the package
        import sqlite3


REBUILDING = "rebuilding"
"""The daemon's state in the lock record while it repairs or rebuilds the index in place."""
REBUILDING_MESSAGE = "the daemon is rebuilding the index; try again in a moment"
BUSY_TIMEOUT_MS = 10_000
READER_MMAP_BYTES = 1 << 30
SQLITE_CORRUPT = 11
SQLITE_NOTADB = 26


def sqlite_code(exc: BaseException) -> int | None:
    """SQLite's primary result code of ``exc`` (the low byte), None when it is no SQLite error."""
    code = getattr(exc, "sqlite_errorcode", None)
    return None if code is None else int(code) & 0xFF


def is_corrupt(exc: BaseException) -> bool:
    """SQLITE_CORRUPT ("database disk image is malformed") or SQLITE_NOTADB: the one rule."""
    from notedex.error_kinds import IndexCorrupt  # a failure's path: not loaded by every query

    return isinstance(exc, IndexCorrupt) or sqlite_code(exc) in (SQLITE_CORRUPT, SQLITE_NOTADB)


def apply_pragmas(conn: "sqlite3.Connection") -> None:
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys = OFF")


def _uri_path(path: str) -> str:
    """Escape what a SQLite URI would misread (urllib.parse costs more than this)."""
    return path.replace("%", "%25").replace("?", "%3f").replace("#", "%23")


def connect_readonly(db_path: "StrPath", *, rebuilding_ok: bool = False) -> "sqlite3.Connection":
    """A read-only connection to a current index, or IndexUnavailable with what to do.

    While a daemon repairs or rebuilds the index in place (its lock record says so, or the
    file is missing under it), IndexRepairing (exit 75), unless ``rebuilding_ok`` (``status``
    shows it; ``index`` waits for the daemon's rescan)."""
    db_path = os.fspath(db_path)
    if not os.path.exists(db_path):
        repairing = _daemon_repairing(db_path, missing=True)
        if repairing is not None:
            raise repairing
        from notedex.error_kinds import IndexUnavailable  # each failure imports its class

        raise IndexUnavailable(f"no index at {db_path}; run `notedex index` first")
    uri = f"file:{_uri_path(os.path.abspath(db_path))}?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
    except sqlite3.DatabaseError as exc:
        from notedex.error_kinds import IndexUnavailable

        raise IndexUnavailable(f"cannot read the index {db_path}: {exc}") from exc
    try:
        # No apply_pragmas: connect's timeout is the busy timeout (BUSY_TIMEOUT_MS) and a
        # read-only connection checks no foreign key; two statements fewer on every query.
        # Every query is a new process with a cold page cache: map the file instead of
        # copying pages through read() (a third off a large lookup at 100k notes).
        conn.execute(f"PRAGMA mmap_size = {READER_MMAP_BYTES}")
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise _unreadable(db_path, exc) from exc
    version = int(row[0]) if row and str(row[0]).isdigit() else None
    if version != SCHEMA_VERSION:
        conn.close()
        repairing = _daemon_repairing(db_path)  # a daemon rebuilds it for this version
        if repairing is not None:
            raise repairing
        from notedex.error_kinds import IndexUnavailable

        raise IndexUnavailable(
            f"the index {db_path} has schema version {version}, this notedex needs "
            f"{SCHEMA_VERSION}; run `notedex index --full` to rebuild it"
        )
    if not rebuilding_ok:
        repairing = _daemon_repairing(db_path)
        if repairing is not None:
            conn.close()
            raise repairing
    conn.row_factory = sqlite3.Row
    return conn


def _daemon_repairing(
    db_path: str, *, missing: bool = False, cause: str = ""
) -> "IndexRepairing | None":
    """IndexRepairing when a daemon holds the lock and repairs or rebuilds the index (its
    record says so; or ``missing``: the file is gone under it, and it makes a new one within a
    second), else None. Readers are never told to run `notedex index`, which would compete
    with the daemon (issue 31.9)."""
    holder = lock_holder(f"{db_path}.lock")
    if holder is None or holder.role != "daemon":
        return None
    if not (missing or cause or holder.state == REBUILDING):
        return None
    from notedex.error_kinds import IndexRepairing

    why = f"no index at {db_path}" if missing else cause or f"the index {db_path} is being rebuilt"
    return IndexRepairing(f"{REBUILDING_MESSAGE} ({why}; daemon pid {holder.pid})")


def _unreadable(db_path: str, exc: BaseException) -> "IndexUnavailable":
    """Why a reader could not open the index, in words that say what to do."""
    from notedex.error_kinds import IndexCorrupt, IndexUnavailable

    code = sqlite_code(exc)
    if code in (SQLITE_CORRUPT, SQLITE_NOTADB):
        corrupt = IndexCorrupt(db_path, str(exc), not_a_database=code == SQLITE_NOTADB)
        repairing = _daemon_repairing(db_path)
        return corrupt if repairing is None else repairing
    if "no such table" in str(exc):
        cause = f"the index {db_path} has no notedex tables ({_tables_gone_cause(db_path)})"
        repairing = _daemon_repairing(db_path, cause=cause)
        if repairing is not None:
            return repairing
        return IndexUnavailable(f"{cause}; run `notedex index --full` to rebuild it")
    return IndexUnavailable(f"cannot read the index {db_path}: {exc}")


def _tables_gone_cause(db_path: str) -> str:
    """Why an index file has no tables, from what is on disk: an empty (truncated) file is
    not blamed on a deleted -wal (issue 31.9)."""
    try:
        size = os.stat(db_path).st_size
    except OSError:
        return "the file is gone"
    if size == 0:
        return "the file is empty: truncated, or made anew"
    if not os.path.exists(f"{db_path}-wal"):
        return "its -wal file is missing: deleted while a writer had it open?"
    return "the file was truncated or replaced"


def read_transaction(conn: "sqlite3.Connection") -> "sqlite3.Connection":
    """One consistent snapshot for a multi-query answer, short by design: ``with
    read_transaction(conn) as conn:`` begins it, and the connection's own context manager ends
    it (a commit, or a rollback when the block raised: a read transaction changed nothing).

    A function, not a class of our own nor ``contextlib.contextmanager``: this module is on
    every query's path, where making a class costs about 0.1M instructions."""
    conn.execute("BEGIN")
    return conn


class LockHolder:
    """Who holds the writer lock: ``role`` is "daemon" or "index"; ``state`` is "" or
    ``REBUILDING`` (a daemon repairing or rebuilding the index in place)."""

    __slots__ = ("pid", "role", "since", "state")

    def __init__(self, role: str, pid: int, since: float, state: str = "") -> None:
        self.role = role
        self.pid = pid
        self.since = since
        self.state = state

    def __repr__(self) -> str:
        return (
            f"LockHolder(role={self.role!r}, pid={self.pid}, since={self.since}, "
            f"state={self.state!r})"
        )


_PROBE_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


def lock_holder(path: "StrPath") -> LockHolder | None:
    """Who holds the writer lock, without taking it (a probe must never block a starting daemon).

    Only a regular file is read, never through a symlink: anything else says no holder (and the
    writer that then tries the lock refuses it with the reason)."""
    try:
        fd = os.open(path, _PROBE_FLAGS)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        fields = os.read(fd, 4096).decode("utf-8").split()
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)
    if len(fields) not in (3, 4):
        return None
    try:
        pid, since = int(fields[1]), float(fields[2])
        os.kill(pid, 0)
    except (ValueError, ProcessLookupError):
        return None  # stale record: the holder died (its flock died with it)
    except PermissionError:
        pass  # alive, owned by someone else
    return LockHolder(fields[0], pid, since, fields[3] if len(fields) == 4 else "")
