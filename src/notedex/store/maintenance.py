"""Maintenance of the index file: FTS integrity-check, rebuild, optimize and automerge,
bulk-mode pragmas, free pages, WAL checkpoint and clearing every row (``index --full``)."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

from notedex.store import findings
from notedex.store.schema import EXTERNAL_FTS, FTS_TABLES, TABLES

if TYPE_CHECKING:
    from notedex.store.links import LinkTargets

FTS_AUTOMERGE = 4  # SQLite's default
_MERGED_FTS = ("note_fts", "name_fts", "link_fts", "body_fts")


def automerge(conn: sqlite3.Connection) -> int | None:
    """The automerge setting body_fts holds (None: the default, never set)."""
    row = conn.execute("SELECT v FROM body_fts_config WHERE k = 'automerge'").fetchone()
    return None if row is None else int(row[0])


_BULK_FTS = (("crisismerge", 200, 16), ("hashsize", 16 * 1024 * 1024, 1024 * 1024))
"""FTS5 settings while merging is paused (key, bulk value, SQLite's default), issue 35
(build35b): with automerge 0 a level still merges once it holds ``crisismerge`` segments
(16), so a cold build's body index was merged level after level while it was inserted, then
once more by the 'optimize' at the end; and each flush of the pending terms (``hashsize``,
1 MB) made a segment. 100,000 of the bench vault's bodies inserted 5,000 a transaction,
then optimized: 5.09 s of CPU with the defaults, 3.88 s with these, the same index."""


def set_automerge(conn: sqlite3.Connection, value: int) -> None:
    """Inside a transaction: FTS segment merging (0 pauses it during a bulk apply, with the
    crisis merges and the flushes of pending terms made rare: ``_BULK_FTS``; any other value
    gives both their defaults back, with no row of theirs left in the config tables)."""
    for table in _MERGED_FTS:
        conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('automerge', ?)", (value,))
        for key, bulk, default in _BULK_FTS:
            conn.execute(
                f"INSERT INTO {table}({table}, rank) VALUES (?, ?)",
                (key, bulk if value == 0 else default),
            )
            if value != 0:  # the connection keeps the default it was just given
                conn.execute(f"DELETE FROM {table}_config WHERE k = ?", (key,))


@contextlib.contextmanager
def bulk_pragmas(conn: sqlite3.Connection, cache_kib: int) -> Iterator[None]:
    """A big page cache and fewer WAL checkpoints for a large apply; restored after."""
    cache = conn.execute("PRAGMA cache_size").fetchone()[0]
    checkpoint_pages = conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0]
    conn.execute(f"PRAGMA cache_size = -{cache_kib}")
    conn.execute("PRAGMA wal_autocheckpoint = 10000")
    try:
        yield
    finally:
        conn.execute(f"PRAGMA cache_size = {cache}")  # gives the pages back
        conn.execute(f"PRAGMA wal_autocheckpoint = {checkpoint_pages}")


@contextlib.contextmanager
def unjournaled(conn: sqlite3.Connection) -> Iterator[None]:
    """While a file no reader opens is built (``store.swap``'s ``<db>.rebuild``): a rollback
    journal instead of the WAL, and no syncs; then WAL again, the whole file synced once.

    Nothing needs the WAL or the syncs meanwhile: a build that fails or is killed is discarded
    whole (``indexing.rebuild``), and a rollback still works from the journal. A new page (most
    of what a build writes: the file grows) is then written once, into the file, not into the
    WAL with a checksum per frame and again at each checkpoint; only the pages a transaction
    changes that an earlier one wrote go to the journal first (a cold index: about 2% less
    CPU, docs/benchmarks.md). The journal is a file (TRUNCATE), not memory, so a large build's
    memory does not grow with its transactions. The switch back to WAL rewrites the header in
    one transaction, which ``synchronous = NORMAL`` syncs: the file is durable before it is
    installed, as a WAL checkpoint made it before. Call it outside a transaction; on an
    exception nothing is restored (the file is thrown away)."""
    conn.execute("PRAGMA journal_mode = TRUNCATE")
    conn.execute("PRAGMA synchronous = OFF")
    yield
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA journal_mode = WAL")


@contextlib.contextmanager
def without_indexes(conn: sqlite3.Connection, names: Iterable[str]) -> Iterator[None]:
    """These indexes dropped meanwhile and created again from their own SQL at the end (also
    on the way out of an exception): a bulk load that sorts each index once instead of
    inserting every entry at a random place. Reads meanwhile are right, only slower. Call it
    outside a transaction (each step is one of its own)."""
    stored = conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' "
        "AND name IN (SELECT value FROM json_each(?))",
        (json.dumps(sorted(names)),),
    ).fetchall()
    _each_in_one_transaction(conn, [f"DROP INDEX {name}" for name, _ in stored])
    try:
        yield
    finally:
        _each_in_one_transaction(
            conn,
            [sql.replace("CREATE INDEX", "CREATE INDEX IF NOT EXISTS", 1) for _, sql in stored],
        )


def _each_in_one_transaction(conn: sqlite3.Connection, statements: Sequence[str]) -> None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        for statement in statements:
            conn.execute(statement)
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def merge_segments(conn: sqlite3.Connection) -> None:
    """Inside a transaction: merge the FTS segments a bulk apply left unmerged."""
    for table in _MERGED_FTS:
        conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")


def clear(conn: sqlite3.Connection) -> None:
    """Inside a transaction: drop every row (``index --full``); the schema stays."""
    for table in EXTERNAL_FTS:
        conn.execute(f"INSERT INTO {table}({table}) VALUES ('delete-all')")
    for table in TABLES:
        conn.execute(f"DELETE FROM {table}")
    conn.execute("DELETE FROM meta WHERE key <> 'schema_version'")


def integrity_check(conn: sqlite3.Connection) -> bool:
    """FTS5 integrity-check (rank 1 also compares with the content); True when sound."""
    try:
        for table in FTS_TABLES:
            conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 1)")
    except sqlite3.DatabaseError:
        return False
    return True


def rebuild_fts(conn: sqlite3.Connection, links: LinkTargets) -> None:
    """Inside a transaction: repair the FTS indexes from their content.

    A DELETE cannot repair an index that disagrees with its content (it removes the tokens
    of the content, not the indexed ones): FTS5's 'rebuild' re-derives each index from its
    content (for note_fts, the view over the tables; for link_fts, ``link_texts``, first
    derived again from the tables), and the findings are recomputed.
    """
    conn.execute("DELETE FROM link_texts")
    conn.execute(
        "INSERT INTO link_texts(file_id, anchors, unresolved) "
        "SELECT file_id, anchors, unresolved FROM link_texts_now"
    )
    for table in FTS_TABLES:
        conn.execute(f"INSERT INTO {table}({table}) VALUES ('rebuild')")
    findings.clear_pending(conn)
    findings.set_every_note_dirty(conn)
    findings.refresh_findings(conn, links)


def optimize(conn: sqlite3.Connection) -> None:
    for table in FTS_TABLES:
        conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
    prune_tag_names(conn)
    release_free_pages(conn)


def prune_tag_names(conn: sqlite3.Connection) -> None:
    """Spellings no note uses any more (kept until now: a vault has few, and a save is
    cheaper), nor any count: tagcounts derives what a note added from the spellings it was
    counted with (a count can still be pending when an apply deferred its findings)."""
    conn.execute(
        "DELETE FROM tag_names WHERE NOT EXISTS (SELECT 1 FROM tags WHERE tag_id = tag_names.id)"
        " AND NOT EXISTS (SELECT 1 FROM tag_uses WHERE tag_id = tag_names.id)"
    )


def release_free_pages(conn: sqlite3.Connection) -> None:
    """Give free pages back (an index created with auto_vacuum = INCREMENTAL; else a no-op).

    executescript, not execute: the sqlite3 module steps this pragma once, one page.
    Never inside a transaction (executescript would commit it).
    """
    conn.executescript("PRAGMA incremental_vacuum;")


def checkpoint(conn: sqlite3.Connection) -> None:
    with contextlib.suppress(sqlite3.Error):
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
