"""Build-and-swap (issue 13): a full index is built into a file of its own, ``<db>.rebuild``,
then installed under the writer lock in one step, so readers never see an empty or half-built
index (ARCHITECTURE "Freshness").

Installing into an existing index copies the built file into it with SQLite's backup API, one
write transaction on the live connection: the live file keeps its inode, its WAL and its
shared-memory index stay SQLite's own (a file renamed over a live WAL database would meet the
old ``-wal``/``-shm``, whose frames belong to another file), and a reader holding the old state
keeps its snapshot until its transaction ends, then sees the new one. With no live index yet the
built file is renamed into place. Anything that stops the build leaves the live file untouched.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path

from notedex.store.connect import BUSY_TIMEOUT_MS
from notedex.store.database import note_live_change
from notedex.store.schema import REBUILD_SUFFIX, SCHEMA_VERSION

SIDE_FILES = ("-wal", "-shm", "-journal")


def build_path(live: Path) -> Path:
    """Where the index that will replace ``live`` is built (``status`` looks for it)."""
    return live.with_name(live.name + REBUILD_SUFFIX)


def discard(path: Path) -> None:
    """Remove a built (or abandoned) index file and its side files."""
    for name in (path.name, *(path.name + side for side in SIDE_FILES)):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path.with_name(name))


def remove_leftovers(live: Path) -> list[Path]:
    """Remove the build file (and its side files) that a stopped build left beside ``live``: an
    `index --full` killed with SIGKILL, or stopped by a second signal (issue 31.11). Call with
    the writer lock held: without it the file may be another writer's build in progress.
    Returns what was there."""
    built = build_path(live)
    found = [
        built.with_name(name)
        for name in (built.name, *(built.name + side for side in SIDE_FILES))
        if os.path.lexists(built.with_name(name))
    ]
    if found:
        discard(built)
    return found


def needs_build(live: Path) -> bool:
    """True when ``live`` has no index to keep serving while a new one is built: missing,
    empty, or a notedex index of another schema version (readers are refused it anyway). A file
    that is not a readable notedex index is left to the writer's own checks."""
    try:
        if live.stat().st_size == 0:
            return True
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return other_version(live)


def other_version(live: Path) -> bool:
    """``live`` is a notedex index of another schema version (a rebuild must replace it)."""
    try:
        conn = sqlite3.connect(f"file:{live}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
    except sqlite3.Error:
        return False
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.Error:
        return False
    finally:
        conn.close()
    return row is not None and row[0] != str(SCHEMA_VERSION)


def install(built: Path, live: Path) -> None:
    """Put the finished index at ``built`` in place of ``live``, atomically for readers.

    Call with the writer lock held and the built file's writer closed (its WAL checkpointed).
    """
    try:
        fresh = live.stat().st_size == 0
    except FileNotFoundError:
        fresh = True
    if fresh:
        # No reader can hold a file that is not there; side files left by a deleted index
        # would be read as this one's.
        for side in SIDE_FILES:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(live.with_name(live.name + side))
            with contextlib.suppress(FileNotFoundError):
                os.unlink(built.with_name(built.name + side))
        os.replace(built, live)
        note_live_change("installed")
        _sync_dir(live.parent)
        return
    source = sqlite3.connect(f"file:{built}?mode=ro", uri=True)
    target = sqlite3.connect(str(live), isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
    try:
        target.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        source.backup(target)  # one step: one write transaction on the live file
        note_live_change("installed")
        with contextlib.suppress(sqlite3.Error):
            target.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        source.close()
        target.close()
    discard(built)


def _sync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
