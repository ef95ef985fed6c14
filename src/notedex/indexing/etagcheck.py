"""The stdlib etag walk behind ``ensure_fresh()``: is the index current for this vault?

It compares every file's (size, mtime_ns, inode) with the index. Anything new, gone, changed,
racy (see store.etags), a note that could not be read last time, or a changed "Excluded files"
list means "not current". Stdlib only: every query without a daemon runs it.
"""

from __future__ import annotations

import json
import os
import sqlite3

from notedex.errors import NotedexError
from notedex.store import read
from notedex.store.connect import connect_readonly
from notedex.store.etags import RACY_WINDOW_NS
from notedex.vault.walk import load_excluded_filters, walk_vault


def index_is_current(
    vault: str | os.PathLike[str], db: str | os.PathLike[str], *, follow_symlinks: bool = False
) -> bool:
    return current_file_count(vault, db, follow_symlinks=follow_symlinks) is not None


def current_file_count(
    vault: str | os.PathLike[str], db: str | os.PathLike[str], *, follow_symlinks: bool = False
) -> int | None:
    """The number of vault files when the index is current, else None (the writer's walk:
    ``follow_symlinks`` as in the config)."""
    if not os.path.exists(db):
        return None
    try:
        conn = connect_readonly(db)
    except NotedexError:
        return None
    try:
        if read.has_unreadable_notes(conn):
            return None  # a chmod changes no etag: let the writer try those notes again
        indexed = {r["path"]: r for r in read.file_etags(conn)}
        excluded_filters = read.meta(conn).get("excluded_filters")
    except sqlite3.DatabaseError:
        return None
    finally:
        conn.close()
    walk = walk_vault(vault, follow_outside=follow_symlinks)
    if len(walk.files) != len(indexed):
        return None
    for vf in walk.files:
        row = indexed.get(vf.path)
        if row is None or (row["size"], row["mtime_ns"], row["inode"]) != (
            vf.size,
            vf.mtime_ns,
            vf.inode,
        ):
            return None
        if vf.mtime_ns + RACY_WINDOW_NS >= row["indexed_ns"]:
            return None  # racy: let the writer compare content
    if excluded_filters != json.dumps(list(load_excluded_filters(vault))):
        return None
    return len(walk.files)
