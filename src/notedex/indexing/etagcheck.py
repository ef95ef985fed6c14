"""The stdlib etag walk behind ``ensure_fresh()``: is the index current for this vault?

It compares every file's (size, mtime_ns, inode, ctime_ns) with the index (the change time:
an edit that keeps the size and puts the mtime back still moves it, issue 31.7). Anything new, gone, changed,
racy (see store.etags), a note that could not be read last time, or a changed "Excluded files"
list means "not current". Stdlib only: every query without a daemon runs it.

The common vault (plain folders and files, no symlinks) is listed by ``_plain_listing``: one
``os.scandir`` per folder, the ``DirEntry`` type from the listing, one ``fstatat`` per file
relative to its open folder, no path objects, and the sorted list compared with the rows (read in path order) as a whole list
(issue 15: a sixth of the earlier walk's cost). It applies SEMANTICS 1's hidden-name and NFC
rules through ``vault.files`` and gives up on anything else (a symlink, a FIFO, a name that is
not UTF-8, two names with one NFC form, a folder seen twice, an error); the full ``vault.walk``
then decides, so the two can never disagree on what the vault is.
"""

from __future__ import annotations

import os
import unicodedata
from bisect import bisect_left

from notedex.errors import NotedexError
from notedex.store import read
from notedex.store.connect import connect_readonly, sqlite3
from notedex.store.etags import Etag, etag_rows, has_racy_rows
from notedex.vault.files import excluded_filters_key, is_hidden_name, load_excluded_filters


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
        if has_racy_rows(conn):
            return None  # racy: let the writer compare content
        indexed = etag_rows(conn)
        excluded_filters = read.meta(conn).get("excluded_filters")
    except sqlite3.DatabaseError:
        return None
    finally:
        conn.close()
    disk = _plain_listing(os.path.abspath(os.fspath(vault)))
    if disk is None:  # not the plain case: the one walk rule decides (raises VaultNotFound)
        from notedex.vault.walk import walk_vault  # dataclasses, typing, re: only when needed

        walk = walk_vault(vault, follow_outside=follow_symlinks)
        disk = [(f.path, f.size, f.mtime_ns, f.inode, f.ctime_ns) for f in walk.files]
    if disk != indexed:
        return None
    if excluded_filters != excluded_filters_key(load_excluded_filters(vault)):
        return None
    return len(disk)


_ROOT_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)  # the vault path may be a symlink
_FOLDER_FLAGS = _ROOT_FLAGS | getattr(os, "O_NOFOLLOW", 0)  # a folder met as a folder stays one
_BY_FD = os.stat in os.supports_dir_fd and os.scandir in os.supports_fd


def _plain_listing(root: str) -> list[Etag] | None:
    """Every file's etag in path order, or None when the vault is not the plain case.

    Each folder is opened once and its files are stat'ed by name relative to it (``fstatat``):
    no full path string per file and no path walk in the kernel per file, about a tenth of
    the listing's cost at 100k notes (issue 15). Where ``dir_fd`` is not supported, the full
    walk decides."""
    if not _BY_FD:
        return None
    out: list[Etag] = []
    folders: set[tuple[int, int]] = set()
    renamed: list[str] = []  # paths whose name NFC changed: two disk names might share one
    stack = [(root, "")]
    append = out.append
    stat = os.stat
    try:
        while stack:
            disk, prefix = stack.pop()
            fd = os.open(disk, _FOLDER_FLAGS if prefix else _ROOT_FLAGS)
            try:
                folder = os.fstat(fd)
                if (folder.st_dev, folder.st_ino) in folders:
                    return None  # a bind mount of a folder already listed
                folders.add((folder.st_dev, folder.st_ino))
                with os.scandir(fd) as listing:
                    for entry in listing:
                        name = entry.name
                        if is_hidden_name(name):
                            continue
                        info: os.stat_result | None
                        if entry.is_file(follow_symlinks=False):
                            info = stat(name, dir_fd=fd, follow_symlinks=False)
                        elif entry.is_dir(follow_symlinks=False):
                            info = None
                        else:
                            return None  # a symlink, FIFO, socket or device
                        if not name.isascii():
                            name.encode("utf-8")  # UnicodeEncodeError: not UTF-8 on disk
                            nfc = unicodedata.normalize("NFC", name)
                            if nfc != name:
                                renamed.append(prefix + nfc + ("/" if info is None else ""))
                            name = nfc
                        if info is None:
                            stack.append((disk + "/" + entry.name, prefix + name + "/"))
                        else:
                            append(
                                (
                                    prefix + name,
                                    info.st_size,
                                    info.st_mtime_ns,
                                    info.st_ino,
                                    info.st_ctime_ns,
                                )
                            )
            finally:
                os.close(fd)
    except (OSError, UnicodeEncodeError):
        return None
    out.sort()
    return None if _twins(out, renamed) else out


def _twins(out: list[Etag], renamed: list[str]) -> bool:
    """Whether a path is listed twice (two disk names with one NFC form), given the sorted
    listing and the paths whose names NFC changed."""
    for path in renamed:  # sorted: a path listed twice is two neighbours
        if path.endswith("/"):  # a folder: its files may meet those of a twin anywhere below
            return len({etag[0] for etag in out}) != len(out)
        at = bisect_left(out, (path,))
        if at + 1 < len(out) and out[at + 1][0] == path:
            return True
    return False
