"""The one writer: applies parsed notes to the index and keeps link resolution exact.

Everything that changes the index goes through :class:`IndexWriter`. It is used by
``notedex index``, by the CLI's refresh-before-query, and by the daemon's writer thread.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import gc
import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from notedex.errors import IndexUnavailable
from notedex.store.connect import apply_pragmas
from notedex.store.etags import RACY_WINDOW_NS
from notedex.store.keyindex import FileKeyIndex, key_hash
from notedex.store.schema import (
    BROKEN_KEY,
    DDL,
    EXTERNAL_FTS,
    FTS_TABLES,
    LINK_KINDS,
    LINK_TEXT,
    LONELY_NO,
    LONELY_ORPHAN,
    LONELY_UNLINKED,
    NOTE_TITLE,
    SCHEMA_VERSION,
    TABLES,
    content_key,
    link_text,
)
from notedex.vault.model import Note, VaultFile
from notedex.vault.parse import read_note
from notedex.vault.resolve import Resolver, affected_name_keys, lookup_key, name_key
from notedex.vault.text import fold, segment
from notedex.vault.walk import is_excluded, load_excluded_filters

if TYPE_CHECKING:
    import sqlite_utils

BATCH_SIZE = 1000
# A large apply (a first index, a git checkout of thousands of notes) runs in bulk mode: bigger
# transactions, a big page cache, fewer WAL checkpoints and no FTS segment merging until the
# end. At 100k notes this halves the cold index; commits and merges were the larger half.
BULK_NOTES = 5000
BULK_BATCH_SIZE = 5000
BULK_CACHE_KIB = 256 * 1024  # `notedex index`; the long-lived daemon asks for less
LOOKUP_CHUNK = 5000  # paths looked up (or re-resolved) per query: bounds what is held at once
FTS_AUTOMERGE = 4  # SQLite's default
PENDING_SIZE = -1  # files.size of a note registered but not yet written
UNREADABLE_KIND = "read"  # vault.parse's problem kind for a note it could not open or read
PARALLEL_THRESHOLD = 400  # below this, a process pool costs more than it saves

Progress = Callable[[int, int], None]


@dataclass
class ApplyReport:
    added: int = 0
    changed: int = 0
    removed: int = 0
    unchanged: int = 0
    errors: int = 0
    seconds: float = 0.0
    paths: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    """Reasons why rows that looked stale were kept (missing vault, unreadable folders)."""

    def merge(self, other: ApplyReport) -> None:
        self.added += other.added
        self.changed += other.changed
        self.removed += other.removed
        self.unchanged += other.unchanged
        self.errors += other.errors
        self.paths.extend(other.paths)
        self.kept.extend(other.kept)

    def as_dict(self) -> dict[str, object]:
        return {
            "added": self.added,
            "changed": self.changed,
            "removed": self.removed,
            "unchanged": self.unchanged,
            "errors": self.errors,
            "seconds": round(self.seconds, 3),
            "kept": self.kept,
        }


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

    def same_etag(self, vf: VaultFile) -> bool:
        return (self.size, self.mtime_ns, self.inode, self.is_note) == (
            vf.size,
            vf.mtime_ns,
            vf.inode,
            vf.is_note,
        )

    @property
    def racy(self) -> bool:
        return self.mtime_ns + RACY_WINDOW_NS >= self.indexed_ns


_NO_CANDIDATES: tuple[Resolver, dict[str, int]] = (Resolver(), {})
_FILE_COLUMNS = "id, path, disk_rel, is_note, size, mtime_ns, inode, indexed_ns"
_FILES_BY_PATHS = (
    f"SELECT {_FILE_COLUMNS} FROM files WHERE path IN (SELECT value FROM json_each(?))"
)
_FILES_IN_PATH_ORDER = f"SELECT {_FILE_COLUMNS} FROM files ORDER BY path"
# folder, folder + "/", folder + "0": "0" follows "/", so the range is exactly "folder/..."
_FILES_UNDER = f"SELECT {_FILE_COLUMNS} FROM files WHERE path = ? OR (path >= ? AND path < ?)"
_IDS_OF_PATHS = "SELECT id, path FROM files WHERE path IN (SELECT value FROM json_each(?))"
_PATHS_OF_IDS = "SELECT id, path FROM files WHERE id IN (SELECT value FROM json_each(?))"
# SQLite sorts the key hashes (in its own, bounded memory) for FileKeyIndex.from_sorted.
_KEY_HASHES_IN_ORDER = """
SELECT h, id FROM (
    SELECT nx_key_hash(path, 0) AS h, id FROM files
    UNION ALL
    SELECT nx_key_hash(path, 1) AS h, id FROM files WHERE is_note = 1
) WHERE h IS NOT NULL ORDER BY h
"""


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Suspend the cyclic garbage collector during bulk work.

    Indexing creates hundreds of thousands of acyclic objects; every full collection would
    walk the whole growing heap, which made a 100k-note index take about twice as long.
    Reference counting still frees everything; one collection runs at the end.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect()


def _parse_chunk(
    items: Sequence[tuple[str, str]], max_bytes: int, body_index: bool
) -> list[tuple[Note, str]]:
    """Worker-process entry point: parse (disk_path, path) pairs, segment each body for FTS.

    The CPU work happens here so the writer process only runs SQL. The raw body is dropped
    from the Note (the segmented text replaces it) to halve what crosses the process boundary.
    """
    out: list[tuple[Note, str]] = []
    for disk, path in items:
        note = read_note(disk, path, max_bytes=max_bytes)
        body = segment(note.body) if body_index and note.body else ""
        out.append((dataclasses.replace(note, body=""), body))
    return out


def open_writer_db(db_path: Path) -> sqlite_utils.Database:
    """Open (creating) the index for writing, wrapped in a ``sqlite_utils.Database``."""
    import sqlite_utils

    return sqlite_utils.Database(open_writer_connection(db_path), execute_plugins=False)


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
            # full index) can then be given back, see release_free_pages().
            conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        add_sql_functions(conn)
        if _schema_version(conn) != SCHEMA_VERSION:
            _rebuild_schema(conn, db_path)
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


def _rebuild_schema(conn: sqlite3.Connection, db_path: Path) -> None:
    """STYLE 3: the index is a cache; the vault is the truth. Rebuild on any version mismatch.

    A database without our ``meta`` table that holds other tables is someone else's file
    (``--db`` pointed at the wrong thing): it is refused, never altered.
    """
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    ours = (*TABLES, *EXTERNAL_FTS, "sqlite_")  # FTS5 shadow tables are note_fts_data etc.
    if "meta" not in tables and any(not name.startswith(ours) for name in tables):
        raise IndexUnavailable(
            f"{db_path} is an SQLite database but not a notedex index; pass another --db"
        )
    for table in (*EXTERNAL_FTS, *TABLES, "meta"):
        conn.execute(f"DROP TABLE IF EXISTS {table}")
    conn.execute("DROP VIEW IF EXISTS note_fts_text")
    conn.executescript(DDL)
    conn.execute(
        "INSERT INTO meta(key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
    )


_KIND_CODES = {kind: code for code, kind in enumerate(LINK_KINDS)}


def _unresolved_key(linkpath: str, target_id: int | None) -> str | None:
    """links.name_key: set only on an unresolved link (a self-link has no target to find)."""
    return name_key(linkpath) if target_id is None and linkpath else None


def _segment_or_empty(text: str | None) -> str:
    return segment(text) if text else ""


def _schema_version(conn: sqlite3.Connection) -> int | None:
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.DatabaseError:
        return None
    return int(row[0]) if row and str(row[0]).isdigit() else None


class IndexWriter:
    """Applies vault changes to the index, one ``BEGIN IMMEDIATE`` transaction per batch."""

    def __init__(
        self,
        db_path: Path,
        vault: Path,
        *,
        max_bytes: int = 5_000_000,
        body_index: bool = True,
        workers: int | None = None,
        bulk_cache_kib: int = BULK_CACHE_KIB,
        bulk_batch_size: int | None = None,
    ) -> None:
        self.db_path = db_path
        self.vault = vault
        self.max_bytes = max_bytes
        self.body_index = body_index
        self.workers = workers if workers is not None else (os.cpu_count() or 1)
        self._vault_prefix = os.path.join(str(vault), "")
        self.conn: sqlite3.Connection = open_writer_connection(db_path)
        self._db: sqlite_utils.Database | None = None
        self.filters: tuple[str, ...] = ()
        # No per-file state in memory: etags and link candidates are read from the index for
        # the paths at hand (issue 6: a 100k-file map cost the daemon about 70 MB).
        self._keys: FileKeyIndex | None = None  # built when first needed
        self._candidates = _NO_CANDIDATES
        self.bulk_cache_kib = bulk_cache_kib
        # None: BULK_BATCH_SIZE. Also what bounds the parsed notes held in memory.
        self.bulk_batch_size = bulk_batch_size
        self._batch_size = BATCH_SIZE
        # A large apply that was killed: undo its bulk setting, finish its FTS rows.
        merge = self.conn.execute("SELECT v FROM body_fts_config WHERE k = 'automerge'").fetchone()
        if merge is not None and merge[0] != FTS_AUTOMERGE:
            self._set_automerge(FTS_AUTOMERGE)
        if self.conn.execute("SELECT 1 FROM fts_pending LIMIT 1").fetchone():
            self.flush_pending_fts()

    @property
    def db(self) -> sqlite_utils.Database:
        """The connection as a ``sqlite_utils.Database``, made on first use (a lazy import:
        sqlite-utils and what it pulls in cost the daemon tens of MB it never used)."""
        if self._db is None:
            import sqlite_utils

            self._db = sqlite_utils.Database(self.conn, execute_plugins=False)
        return self._db

    # -- file rows (etags) --------------------------------------------------------------------

    def file_rows(self, paths: Iterable[str]) -> dict[str, IndexedFile]:
        """The indexed rows of ``paths`` (those that have one), by path."""
        wanted = list(dict.fromkeys(paths))
        rows: dict[str, IndexedFile] = {}
        for start in range(0, len(wanted), LOOKUP_CHUNK):
            chunk = json.dumps(wanted[start : start + LOOKUP_CHUNK])
            rows.update((row.path, row) for row in self._select_files(_FILES_BY_PATHS, (chunk,)))
        return rows

    def iter_files(self) -> Iterator[IndexedFile]:
        """Every indexed row in path order (the order ``VaultStream`` walks the real tree in).

        Consume it before writing: it reads from the connection the writes go through.
        """
        return self._select_files(_FILES_IN_PATH_ORDER, ())

    def files_under(self, folder: str) -> list[IndexedFile]:
        """The rows of ``folder`` itself and of every path below it."""
        return list(self._select_files(_FILES_UNDER, (folder, folder + "/", folder + "0")))

    def has_files(self) -> bool:
        return self.conn.execute("SELECT 1 FROM files LIMIT 1").fetchone() is not None

    def indexed_paths(self) -> dict[str, IndexedFile]:
        """Every indexed row by path (tests, small vaults: the daemon streams ``iter_files``)."""
        return {row.path: row for row in self.iter_files()}

    def _select_files(self, sql: str, args: tuple[object, ...]) -> Iterator[IndexedFile]:
        return map(IndexedFile._make, self.conn.execute(sql, args))

    # -- link candidates -----------------------------------------------------------------------
    # SEMANTICS 7 compares a link only with the files filed under its lookup key; each batch
    # builds a Resolver over just those files, found through a compact hash -> id index.

    def prepare_links(self) -> None:
        """Build the link-candidate index now, not on the first write that needs it."""
        self._key_index()

    def _key_index(self) -> FileKeyIndex:
        if self._keys is None:
            self.conn.create_function("nx_key_hash", 2, key_hash, deterministic=True)
            self._keys = FileKeyIndex.from_sorted(self.conn.execute(_KEY_HASHES_IN_ORDER))
        return self._keys

    def _load_link_candidates(self, keys: Iterable[str]) -> None:
        """Until the next load, ``_resolve`` sees every file filed under ``keys``: it resolves
        any linkpath whose ``lookup_key`` is in ``keys`` exactly as over the whole vault."""
        keys = set(keys)
        wanted: set[int] = set()
        if keys:
            index = self._key_index()
            for key in keys:
                wanted.update(index.ids(key))
        resolver = Resolver()
        ids: dict[str, int] = {}
        if wanted:
            for file_id, path in self.conn.execute(_PATHS_OF_IDS, (json.dumps(sorted(wanted)),)):
                resolver.add(path)
                ids[path] = file_id
        self._candidates = (resolver, ids)

    def _resolve(self, linkpath: str, source: str) -> tuple[int | None, bool]:
        """A link's target id (None: unresolved) and whether the tie-break of 7.7 chose."""
        if not linkpath:
            return None, False  # SEMANTICS 6: [[#Heading]] is a self-link, not an edge
        resolver, ids = self._candidates
        resolution = resolver.resolve(linkpath, source)
        if resolution.target is None:
            return None, False
        return ids.get(resolution.target), resolution.ambiguous

    def close(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self.conn.close()

    def __enter__(self) -> IndexWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """The one transaction helper: BEGIN IMMEDIATE takes the write lock up front."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            # The key index may hold rows that were just rolled back: rebuilt when next needed.
            self._keys = None
            raise
        else:
            self.conn.execute("COMMIT")

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    # -- excluded files ----------------------------------------------------------------------

    def refresh_filters(self) -> None:
        """Re-read Obsidian's "Excluded files"; re-flag notes when the list changed."""
        filters = load_excluded_filters(self.vault)
        stored = self.conn.execute(
            "SELECT value FROM meta WHERE key = 'excluded_filters'"
        ).fetchone()
        encoded = json.dumps(list(filters))
        self.filters = filters
        if stored and stored[0] == encoded:
            return
        with self.transaction() as conn:
            changed = []
            for file_id, path, was_excluded in conn.execute(
                "SELECT n.file_id, f.path, n.excluded FROM notes n JOIN files f ON f.id = n.file_id"
            ).fetchall():
                excluded = int(is_excluded(path, filters))
                if excluded != was_excluded:
                    changed.append(file_id)
                    conn.execute(
                        "UPDATE notes SET excluded = ? WHERE file_id = ?", (excluded, file_id)
                    )
            if changed:
                # Findings exist for reported notes only, and a link from an excluded note
                # counts as no backlink: the notes and the targets of their links change.
                targets = conn.execute(
                    "SELECT DISTINCT target_id FROM links WHERE target_id IS NOT NULL "
                    "AND source_id IN (SELECT value FROM json_each(?))",
                    (json.dumps(changed),),
                ).fetchall()
                self._set_dirty([*changed, *(row[0] for row in targets)])
                self._refresh_findings()
            self.set_meta("excluded_filters", encoded)

    # -- applying changes ----------------------------------------------------------------------

    def apply(
        self,
        upserts: Sequence[VaultFile],
        deletes: Iterable[str],
        *,
        progress: Progress | None = None,
    ) -> ApplyReport:
        """Index ``upserts`` (already known to differ from the index) and drop ``deletes``.

        Order: deletions; then every new file is registered at once (real row ids, and for
        notes a pending etag, so links anywhere in this apply resolve immediately and a crash
        leaves them "changed" for the next reconcile); then notes are parsed (in worker
        processes when there are many) and written in batches. Structure-search rows are
        recomputed once per apply: inside the single transaction of a small apply, or at the
        end of a large one through the ``fts_pending`` table, which survives a crash.
        """
        bulk = sum(1 for vf in upserts if vf.is_note) >= BULK_NOTES
        with paused_gc(), self._bulk_mode(bulk):
            return self._apply(upserts, deletes, progress)

    @contextlib.contextmanager
    def _bulk_mode(self, enabled: bool) -> Iterator[None]:
        if not enabled:
            yield
            return
        cache = self.conn.execute("PRAGMA cache_size").fetchone()[0]
        checkpoint = self.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0]
        self.conn.execute(f"PRAGMA cache_size = -{self.bulk_cache_kib}")
        self.conn.execute("PRAGMA wal_autocheckpoint = 10000")
        self._set_automerge(0)
        self._batch_size = self.bulk_batch_size or BULK_BATCH_SIZE
        try:
            yield
        finally:
            self._batch_size = BATCH_SIZE
            self._set_automerge(FTS_AUTOMERGE)
            with self.transaction():
                for table in ("note_fts", "body_fts"):
                    self.conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
            self.conn.execute(f"PRAGMA cache_size = {cache}")  # gives the pages back
            self.conn.execute(f"PRAGMA wal_autocheckpoint = {checkpoint}")
            self.release_free_pages()
            self.checkpoint()

    def _set_automerge(self, value: int) -> None:
        with self.transaction():
            for table in ("note_fts", "body_fts"):
                self.conn.execute(
                    f"INSERT INTO {table}({table}, rank) VALUES ('automerge', ?)", (value,)
                )

    def _apply(
        self,
        upserts: Sequence[VaultFile],
        deletes: Iterable[str],
        progress: Progress | None,
    ) -> ApplyReport:
        started = time.perf_counter()
        report = ApplyReport()
        deletes = list(dict.fromkeys(deletes))
        known = self.file_rows([*deletes, *(vf.path for vf in upserts)])
        deletes = [path for path in deletes if path in known]
        notes = [vf for vf in upserts if vf.is_note]
        attachments = [vf for vf in upserts if not vf.is_note]
        total = len(notes) + len(attachments) + len(deletes)
        done = 0
        single = len(notes) <= self._batch_size
        for vf in upserts:
            if vf.path in known:
                report.changed += 1
            else:
                report.added += 1
        existing = set(known).difference(deletes)  # a deleted path that is upserted is new
        del known  # a large first index would otherwise hold every new row twice

        with self.transaction():
            dirty: set[int] = set()
            if deletes:
                dirty |= self._delete_files(deletes)
                self._reresolve_for(set(deletes), dirty)
                report.removed += len(deletes)
                report.paths.extend(deletes)
            created = self._register(attachments, notes, existing)
            self._reresolve_for(created, dirty)
            del created
            if single and not notes:
                self._refresh_fts(dirty)
            else:
                self._defer_fts(dirty)
        done += len(deletes) + len(attachments)
        if progress and (deletes or attachments):
            progress(done, total)

        del existing
        written = 0
        for parsed in self._parse_all(notes):
            # Batches come in the order of ``notes``: map just this batch's paths.
            by_path = {vf.path: vf for vf in notes[written : written + len(parsed)]}
            written += len(parsed)
            with self.transaction():
                dirty = self._write_notes(parsed, by_path)
                report.errors += sum(1 for note, _ in parsed if note.errors)
                if single:
                    self._refresh_fts(dirty)
                else:
                    self._defer_fts(dirty)
            done += len(parsed)
            if progress:
                progress(done, total)
        if not single:
            self.flush_pending_fts()

        report.paths.extend(vf.path for vf in upserts)
        if upserts or deletes:
            with self.transaction():
                self.set_meta("last_indexed", repr(time.time()))
        report.seconds = time.perf_counter() - started
        return report

    def _parse_all(self, notes: Sequence[VaultFile]) -> Iterator[list[tuple[Note, str]]]:
        """Yield parsed notes in batches, in the order of ``notes``; parse in worker processes
        for large sets."""

        def items(start: int, stop: int) -> list[tuple[str, str]]:
            return [(vf.disk_path, vf.path) for vf in notes[start:stop]]

        if len(notes) < PARALLEL_THRESHOLD or self.workers <= 1:
            size = self._batch_size
            for start in range(0, len(notes), size):
                yield _parse_chunk(items(start, start + size), self.max_bytes, self.body_index)
            return
        chunk = 100
        chunks = range(0, len(notes), chunk)  # each chunk's items are made when it is submitted
        pending: list[tuple[Note, str]] = []
        # A bounded window of chunks in flight, in order: about one batch ahead, so workers keep
        # parsing while a batch is written, yet parsed notes never pile up in memory when the
        # writer is the slower side (pool.map would submit every chunk at once).
        window = self._batch_size // chunk + 2 * self.workers
        with ProcessPoolExecutor(max_workers=self.workers) as pool:
            in_flight: collections.deque[Future[list[tuple[Note, str]]]] = collections.deque()
            next_chunk = 0
            while next_chunk < len(chunks) or in_flight:
                while next_chunk < len(chunks) and len(in_flight) < window:
                    start = chunks[next_chunk]
                    in_flight.append(
                        pool.submit(
                            _parse_chunk,
                            items(start, start + chunk),
                            self.max_bytes,
                            self.body_index,
                        )
                    )
                    next_chunk += 1
                pending.extend(in_flight.popleft().result())
                if len(pending) >= self._batch_size:
                    yield pending
                    pending = []
        if pending:
            yield pending

    def _disk_rel(self, vf: VaultFile) -> str | None:
        """The on-disk relative name when it differs from the NFC path (macOS NFD names)."""
        if vf.disk_path.startswith(self._vault_prefix):
            disk_rel = vf.disk_path[len(self._vault_prefix) :].replace(os.sep, "/")
        else:
            disk_rel = os.path.relpath(vf.disk_path, self.vault).replace(os.sep, "/")
        return None if disk_rel == vf.path else disk_rel

    def _register(
        self, attachments: Sequence[VaultFile], notes: Sequence[VaultFile], existing: set[str]
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
            rows.append((vf.path, self._disk_rel(vf), 0, vf.size, vf.mtime_ns, vf.inode, now))
        for vf in notes:
            if vf.path not in existing:
                created.add(vf.path)
                # A pending etag never equals the disk: a crash before the note's batch
                # commits means it is parsed again by the next reconcile.
                rows.append((vf.path, self._disk_rel(vf), 1, PENDING_SIZE, 0, 0, 0))
        self.conn.executemany(
            """
            INSERT INTO files(path, disk_rel, is_note, size, mtime_ns, inode, indexed_ns)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(path) DO UPDATE SET
                disk_rel = excluded.disk_rel, is_note = excluded.is_note, size = excluded.size,
                mtime_ns = excluded.mtime_ns, inode = excluded.inode, indexed_ns = excluded.indexed_ns
            """,
            rows,
        )
        if created and self._keys is not None:
            self._keys.add(self.conn.execute(_IDS_OF_PATHS, (json.dumps(sorted(created)),)))
        return created

    def _clear_note_rows(self, file_id: int, path: str) -> set[int]:
        """Remove a note's derived rows; return the notes whose anchors depended on its links."""
        dirty = {
            row[0]
            for row in self.conn.execute(
                "SELECT DISTINCT target_id FROM links WHERE source_id = ? AND target_id IS NOT NULL",
                (file_id,),
            )
        }
        self._withdraw({file_id, *dirty})
        # title_grams reads its text from notes (external content): remove it while the
        # notes row still holds the values it was indexed with.
        self.conn.execute(
            "INSERT INTO title_grams(title_grams, rowid, stem, frontmatter_title) "
            "SELECT 'delete', file_id, stem, frontmatter_title FROM notes WHERE file_id = ?",
            (file_id,),
        )
        self.conn.execute(
            f"DELETE FROM lonely_notes WHERE lonely IN ({LONELY_ORPHAN}, {LONELY_UNLINKED}) AND path = ?",
            (path,),
        )
        self.conn.execute("DELETE FROM broken_links WHERE source = ?", (path,))
        for sql in (
            "DELETE FROM links WHERE source_id = ?",
            "DELETE FROM tags WHERE file_id = ?",
            "DELETE FROM aliases WHERE file_id = ?",
            "DELETE FROM notes WHERE file_id = ?",
            "DELETE FROM body_fts WHERE rowid = ?",
        ):
            self.conn.execute(sql, (file_id,))
        self.conn.execute("DELETE FROM problems WHERE path = ? AND kind <> 'walk'", (path,))
        return dirty

    def _write_notes(
        self, parsed: Sequence[tuple[Note, str]], by_path: dict[str, VaultFile]
    ) -> set[int]:
        """Replace a batch of notes' rows. Returns the note ids whose FTS rows must change."""
        now = time.time_ns()
        dirty: set[int] = set()
        etags: list[tuple[Any, ...]] = []
        notes: list[tuple[Any, ...]] = []
        grams: list[tuple[int, str, str | None]] = []
        tags: list[tuple[Any, ...]] = []
        aliases: list[tuple[int, int, str]] = []
        links: list[tuple[Any, ...]] = []
        problems: list[tuple[str, str, str, str]] = []
        bodies: list[tuple[int, str]] = []
        rows = self.file_rows(note.path for note, _ in parsed)
        self._load_link_candidates(
            lookup_key(link.linkpath) for note, _ in parsed for link in note.links if link.linkpath
        )
        for note, body in parsed:
            vf = by_path[note.path]
            known = rows[note.path]
            file_id = known.id
            if known.size != PENDING_SIZE:
                # Indexed before this apply: its old rows go first.
                dirty |= self._clear_note_rows(file_id, note.path)
            dirty.add(file_id)
            disk_rel = self._disk_rel(vf)
            etags.append((disk_rel, vf.size, vf.mtime_ns, vf.inode, now, file_id))
            notes.append(
                (
                    file_id,
                    note.stem,
                    note.frontmatter_title,
                    note.first_h1,
                    note.id,
                    note.type,
                    note.status,
                    int(is_excluded(note.path, self.filters)),
                    content_key(note.content_hash),
                    json.dumps(note.properties, ensure_ascii=False, default=str)
                    if note.properties
                    else None,
                )
            )
            grams.append((file_id, note.stem, note.frontmatter_title))
            tags.extend(
                (file_id, i, tag.name, tag.key, int(tag.source == "inline"))
                for i, tag in enumerate(note.tags)
            )
            aliases.extend((file_id, i, alias) for i, alias in enumerate(note.aliases))
            for seq, link in enumerate(note.links):
                target_id, ambiguous = self._resolve(link.linkpath, note.path)
                if target_id is not None:
                    dirty.add(target_id)
                kind = _KIND_CODES[link.kind]
                usual = link_text(kind, link.linkpath, link.subpath, link.display)
                links.append(
                    (
                        file_id,
                        seq,
                        kind,
                        link.linkpath,
                        link.subpath,
                        link.display,
                        None if link.raw == usual else link.raw,
                        link.line,
                        link.column,
                        target_id,
                        int(ambiguous),
                        _unresolved_key(link.linkpath, target_id),
                    )
                )
            problems.extend((note.path, "error", p.kind, p.message) for p in note.errors)
            problems.extend((note.path, "warning", p.kind, p.message) for p in note.warnings)
            if body:
                bodies.append((file_id, body))
        self._candidates = _NO_CANDIDATES
        self._withdraw(dirty)  # the targets of new links get anchors
        sql = self.conn.executemany
        sql(
            "UPDATE files SET disk_rel = ?, is_note = 1, size = ?, mtime_ns = ?, inode = ?, "
            "indexed_ns = ? WHERE id = ?",
            etags,
        )
        sql(
            """
            INSERT INTO notes(file_id, stem, frontmatter_title, first_h1, note_id, type,
                              status, excluded, content_hash, properties)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            notes,
        )
        sql("INSERT INTO title_grams(rowid, stem, frontmatter_title) VALUES (?, ?, ?)", grams)
        tag_ids = self._tag_ids({row[2]: row[3] for row in tags})
        sql(
            "INSERT INTO tags(file_id, position, tag_id, inline) VALUES (?, ?, ?, ?)",
            [
                (file_id, position, tag_ids[name], inline)
                for file_id, position, name, _, inline in tags
            ],
        )
        sql("INSERT INTO aliases(file_id, position, alias) VALUES (?, ?, ?)", aliases)
        sql(
            """
            INSERT INTO links(source_id, seq, kind, linkpath, subpath, display, raw, line, col,
                              target_id, ambiguous, name_key)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            links,
        )
        sql("INSERT INTO problems(path, severity, kind, message) VALUES (?, ?, ?, ?)", problems)
        sql("INSERT INTO body_fts(rowid, body) VALUES (?, ?)", bodies)
        return dirty

    def _tag_ids(self, names: dict[str, str]) -> dict[str, int]:
        """tag_names ids of these spellings (name -> key), adding the new ones."""
        if not names:
            return {}
        self.conn.executemany(
            "INSERT OR IGNORE INTO tag_names(tag, tag_key) VALUES (?, ?)", list(names.items())
        )
        return {
            tag: tag_id
            for tag_id, tag in self.conn.execute(
                "SELECT id, tag FROM tag_names WHERE tag IN (SELECT value FROM json_each(?))",
                (json.dumps(list(names), ensure_ascii=False),),
            )
        }

    def _withdraw(self, ids: Iterable[int]) -> None:
        """Take these notes' structure-search rows out before any of their inputs change.

        note_fts is external content over the view note_fts_text: FTS5 deletes a row by
        tokenizing what the view gives for it, which must still be what was indexed. A
        withdrawn note waits in fts_pending (crash-safe) until _refresh_fts inserts it again;
        withdrawing it twice is a no-op. Ids of attachments and of notes not written yet are
        only recorded.
        """
        wanted = json.dumps(sorted(ids))
        if wanted == "[]":
            return
        self.conn.execute(
            """
            DELETE FROM note_fts WHERE rowid IN (
                SELECT n.file_id FROM notes n
                WHERE n.file_id IN (SELECT value FROM json_each(?))
                  AND n.file_id NOT IN (SELECT id FROM fts_pending))
            """,
            (wanted,),
        )
        self.conn.execute(
            "INSERT OR IGNORE INTO fts_pending(id) SELECT value FROM json_each(?)", (wanted,)
        )

    def _defer_fts(self, dirty: set[int]) -> None:
        self._withdraw(dirty)

    def flush_pending_fts(self) -> None:
        """Recompute the structure rows recorded as pending (also after a crash)."""
        with self.transaction():
            self._refresh_fts(set())

    def _move_pending_to_dirty(self) -> None:
        self.conn.execute("INSERT OR IGNORE INTO temp.dirty_notes(id) SELECT id FROM fts_pending")
        self.conn.execute("DELETE FROM fts_pending")

    def _delete_files(self, paths: Iterable[str]) -> set[int]:
        dirty: set[int] = set()
        for known in self.file_rows(paths).values():
            path = known.path
            if self._keys is not None:
                self._keys.remove(known.id, path)
            dirty |= self._clear_note_rows(known.id, path)
            # Links that pointed here become unresolved; their sources' FTS rows change.
            sources = {
                row[0]
                for row in self.conn.execute(
                    "SELECT DISTINCT source_id FROM links WHERE target_id = ?", (known.id,)
                )
            }
            self._withdraw(sources)
            dirty |= sources
            self.conn.execute(
                "UPDATE links SET target_id = NULL, ambiguous = 0, name_key = nx_name_key(linkpath) "
                "WHERE target_id = ?",
                (known.id,),
            )
            self.conn.execute("DELETE FROM files WHERE id = ?", (known.id,))
            self.conn.execute("DELETE FROM problems WHERE path = ?", (path,))
            dirty.discard(known.id)
        return dirty

    def _reresolve_for(self, changed_paths: set[str], dirty: set[int]) -> None:
        """SEMANTICS 7: re-resolve exactly the links whose resolution these files can change."""
        # In slices: a first index creates 100k files, whose keys and links would otherwise
        # all be held at once (tens of MB). A link re-resolved twice gets the same answer.
        ordered = sorted(changed_paths)
        for start in range(0, len(ordered), LOOKUP_CHUNK):
            self._reresolve_slice(ordered[start : start + LOOKUP_CHUNK], dirty)

    def _reresolve_slice(self, changed_paths: Iterable[str], dirty: set[int]) -> None:
        keys: set[str] = set()
        for path in changed_paths:
            keys.update(affected_name_keys(path))
        if not keys:
            return
        # json_each, not one placeholder per key: a first index of 100k files has 100k keys,
        # beyond SQLite's default limit on bound parameters.
        select = (
            "SELECT l.source_id, l.seq, f.path, l.linkpath, l.target_id, l.ambiguous "
            "FROM links l JOIN files f ON f.id = l.source_id "
        )
        rows = self.conn.execute(
            select + "WHERE l.name_key IN (SELECT value FROM json_each(?))",
            (json.dumps(sorted(keys), ensure_ascii=False),),
        ).fetchall()
        # A resolved link has a name_key among its target's affected_name_keys: the links
        # these files can take from (or give to) another file point at a file sharing a key.
        # (The key index may name a file whose key only collides: the filter below drops its
        # links, whose name_key is not among ``keys``. A first index registers every file
        # before it writes any link: then there is nothing to find.)
        sharing: set[int] = set()
        if self.conn.execute("SELECT 1 FROM links LIMIT 1").fetchone() is not None:
            index = self._key_index()
            sharing = {file_id for key in keys for file_id in index.ids(key)}
        if sharing:
            rows += [
                row
                for row in self.conn.execute(
                    select + "WHERE l.target_id IN (SELECT value FROM json_each(?))",
                    (json.dumps(sorted(sharing)),),
                )
                if name_key(row[3]) in keys
            ]
        updates = []
        self._load_link_candidates(lookup_key(row[3]) for row in rows)
        touched: set[int] = set()
        for source_id, seq, source, linkpath, old_target, old_ambiguous in rows:
            new_target, ambiguous = self._resolve(linkpath, source)
            if new_target != old_target or int(ambiguous) != old_ambiguous:
                updates.append(
                    (
                        new_target,
                        int(ambiguous),
                        _unresolved_key(linkpath, new_target),
                        source_id,
                        seq,
                    )
                )
                touched.add(source_id)
                for target in (old_target, new_target):
                    if target is not None:
                        touched.add(target)
        self._candidates = _NO_CANDIDATES
        self._withdraw(touched)  # their anchors or unresolved keys change
        dirty |= touched
        self.conn.executemany(
            "UPDATE links SET target_id = ?, ambiguous = ?, name_key = ? WHERE source_id = ? AND seq = ?",
            updates,
        )

    def _refresh_fts(self, dirty: set[int]) -> None:
        """Insert the structure-search rows of every withdrawn note (and of ``dirty``) again,
        from the tables, and recompute their health findings.

        The withdrawn notes are moved from ``fts_pending`` in SQL: after a first index that is
        every note, which as Python ints and tuples cost about 15 MB.
        """
        self._withdraw(dirty)  # notes new to the index, or dirty without a change of inputs
        self._set_dirty(())
        self._move_pending_to_dirty()
        if self.conn.execute("SELECT 1 FROM temp.dirty_notes LIMIT 1").fetchone() is None:
            return
        self.conn.execute(
            """
            INSERT INTO note_fts(rowid, title, tags, aliases, anchors, unresolved)
            SELECT file_id, title, tags, aliases, anchors, unresolved FROM note_fts_text
            WHERE file_id IN (SELECT id FROM temp.dirty_notes)
            """
        )
        self._refresh_findings()

    def _set_dirty(self, ids: Iterable[int]) -> None:
        self.conn.execute("CREATE TEMP TABLE IF NOT EXISTS dirty_notes(id INTEGER PRIMARY KEY)")
        self.conn.execute("DELETE FROM temp.dirty_notes")
        self.conn.executemany(
            "INSERT OR IGNORE INTO temp.dirty_notes(id) VALUES (?)", [(i,) for i in ids]
        )

    def _refresh_findings(self) -> None:
        """Recompute health's findings (SEMANTICS 8) of the notes in ``temp.dirty_notes``.

        Every note whose backlinks or outgoing references can have changed is dirty (the same
        notes whose anchors or unresolved keys change; refresh_filters adds the targets of
        notes whose exclusion changed), so the tables stay exact.
        """
        # Every statement is driven by the dirty notes (CROSS JOIN fixes the order: the planner
        # knows nothing of the temp table and would walk all notes, files or broken links).
        dirty_paths = "SELECT (SELECT path FROM files WHERE id = d.id) FROM temp.dirty_notes d"
        self.conn.execute(
            f"DELETE FROM lonely_notes WHERE lonely IN ({LONELY_ORPHAN}, {LONELY_UNLINKED}) "
            f"AND path IN ({dirty_paths})"
        )
        self.conn.execute(f"DELETE FROM broken_links WHERE source IN ({dirty_paths})")
        self.conn.execute(
            f"""
            INSERT INTO lonely_notes(lonely, path, title)
            SELECT s.lonely, f.path, s.title FROM (
                SELECT n.file_id, {NOTE_TITLE} AS title, CASE
                    -- SEMANTICS 1/8: a link from an excluded note is no incoming link
                    -- (Obsidian's graph hides excluded files, edges included).
                    WHEN EXISTS (SELECT 1 FROM links l
                                 WHERE l.target_id = n.file_id AND l.source_id <> n.file_id
                                   AND l.source_id NOT IN (SELECT file_id FROM notes WHERE excluded = 1))
                        THEN {LONELY_NO}
                    WHEN EXISTS (SELECT 1 FROM links l
                                 WHERE l.source_id = n.file_id AND l.linkpath <> ''
                                   AND (l.target_id IS NULL OR l.target_id <> l.source_id))
                        THEN {LONELY_UNLINKED}
                    ELSE {LONELY_ORPHAN} END AS lonely
                FROM temp.dirty_notes d CROSS JOIN notes n ON n.file_id = d.id
                WHERE n.excluded = 0
            ) s CROSS JOIN files f ON f.id = s.file_id
            WHERE s.lonely <> {LONELY_NO}
            """
        )
        # links.name_key is set exactly on the unresolved links that are not self-links.
        self.conn.execute(
            f"""
            INSERT INTO broken_links(source, line, col, seq, text, target)
            SELECT f.path, l.line, l.col, l.seq, {LINK_TEXT}, {BROKEN_KEY}
            FROM temp.dirty_notes d CROSS JOIN notes n ON n.file_id = d.id
            CROSS JOIN files f ON f.id = d.id CROSS JOIN links l ON l.source_id = d.id
            WHERE n.excluded = 0 AND l.name_key IS NOT NULL
            """
        )

    # -- maintenance ---------------------------------------------------------------------------

    def record_walk_problems(self, problems: Iterable[tuple[str, str]]) -> None:
        with self.transaction():
            self.conn.execute("DELETE FROM problems WHERE kind = 'walk'")
            self.conn.executemany(
                "INSERT INTO problems(path, severity, kind, message) VALUES (?, 'error', 'walk', ?)",
                list(problems),
            )

    def touch_indexed(self, paths: Iterable[str]) -> None:
        """Mark racy-but-unchanged files as checked now."""
        now = time.time_ns()
        rows = [(now, path) for path in paths]
        if rows:
            with self.transaction():
                self.conn.executemany("UPDATE files SET indexed_ns = ? WHERE path = ?", rows)

    def unreadable_paths(self) -> set[str]:
        """Notes the parser could not read: retried on every reconcile, since making a file
        readable again (chmod) changes none of size, mtime_ns and inode."""
        return {
            row[0]
            for row in self.conn.execute(
                "SELECT path FROM problems WHERE kind = ? AND severity = 'error'",
                (UNREADABLE_KIND,),
            )
        }

    def same_content(self, path: str, content_hash: str) -> bool:
        """Whether the note indexed at ``path`` had this content (a sha256 hex digest)."""
        row = self.conn.execute(
            "SELECT n.content_hash FROM notes n JOIN files f ON f.id = n.file_id WHERE f.path = ?",
            (path,),
        ).fetchone()
        return row is not None and row[0] == content_key(content_hash)

    def clear(self) -> None:
        """Drop every row (``index --full``); the schema stays."""
        with self.transaction() as conn:
            for table in EXTERNAL_FTS:
                conn.execute(f"INSERT INTO {table}({table}) VALUES ('delete-all')")
            for table in TABLES:
                conn.execute(f"DELETE FROM {table}")
            conn.execute("DELETE FROM meta WHERE key <> 'schema_version'")
        self._keys = None

    def integrity_check(self) -> bool:
        """FTS5 integrity-check (rank 1 also compares with the content); True when sound."""
        try:
            for table in FTS_TABLES:
                self.conn.execute(
                    f"INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 1)"
                )
        except sqlite3.DatabaseError:
            return False
        return True

    def rebuild_fts(self) -> None:
        """Repair the FTS indexes from their content (after a failed integrity-check).

        A DELETE cannot repair an index that disagrees with its content (it removes the tokens
        of the content, not the indexed ones): FTS5's 'rebuild' re-derives each index from its
        content (for note_fts, the view over the tables), and the findings are recomputed.
        """
        with self.transaction():
            for table in FTS_TABLES:
                self.conn.execute(f"INSERT INTO {table}({table}) VALUES ('rebuild')")
            self.conn.execute("DELETE FROM fts_pending")
            self._set_dirty(
                row[0] for row in self.conn.execute("SELECT file_id FROM notes").fetchall()
            )
            self._refresh_findings()

    def optimize(self) -> None:
        for table in FTS_TABLES:
            self.conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
        # Spellings no note uses any more (kept until now: a vault has few, and a save is cheaper).
        self.conn.execute(
            "DELETE FROM tag_names WHERE NOT EXISTS (SELECT 1 FROM tags WHERE tag_id = tag_names.id)"
        )
        self.release_free_pages()

    def release_free_pages(self) -> None:
        """Give free pages back (an index created with auto_vacuum = INCREMENTAL; else a no-op).

        executescript, not execute: the sqlite3 module steps this pragma once, one page.
        Never inside a transaction (executescript would commit it).
        """
        self.conn.executescript("PRAGMA incremental_vacuum;")

    def checkpoint(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


__all__ = [
    "ApplyReport",
    "IndexWriter",
    "IndexedFile",
    "add_sql_functions",
    "open_writer_db",
    "paused_gc",
]
