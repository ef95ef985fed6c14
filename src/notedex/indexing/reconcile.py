"""Disk versus index: find what changed by etag and hand it to the writer (STYLE 4).

Safety rules (ARCHITECTURE "Freshness"): a missing vault, a walk that finds no files, or a
folder that cannot be listed never deletes rows; only a file confirmed gone by ``lstat`` is
removed.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from notedex.errors import VaultNotFound
from notedex.indexing.apply import ApplyReport, Progress, apply
from notedex.indexing.pool import hash_notes, paused_gc
from notedex.store.files import IndexedFile
from notedex.store.moves import Move
from notedex.store.writer import IndexWriter
from notedex.vault.files import is_hidden_path, is_note_name
from notedex.vault.model import VaultFile
from notedex.vault.text import nfc
from notedex.vault.walk import VaultStream, walk_vault


def reconcile(
    writer: IndexWriter, *, full: bool = False, progress: Progress | None = None
) -> ApplyReport:
    """Bring the index in line with the whole vault; incremental unless ``full``."""
    with paused_gc():
        return _reconcile(writer, full=full, progress=progress)


def _reconcile(writer: IndexWriter, *, full: bool, progress: Progress | None) -> ApplyReport:
    if not writer.vault.is_dir():
        raise VaultNotFound(writer.vault, "the index was left unchanged")
    report = ApplyReport()
    walk: VaultStream | None = None
    if full:
        listed = walk_vault(writer.vault)
        if writer.has_files() and (not listed.files or listed.unreadable_dirs):
            # A rebuild would drop the rows the safety rules below exist to keep.
            report.kept.append(
                "did not rebuild from scratch: the vault scan found no files or could not "
                "read some folders; updated incrementally instead"
            )
        else:
            writer.clear()
        files: Iterable[VaultFile] = listed.files
        problems, unreadable_dirs = listed.problems, listed.unreadable_dirs
    else:
        walk = VaultStream(writer.vault)
        files = walk.files
    writer.refresh_filters()
    diff = diff_against_index(writer, files)
    if walk is not None:
        problems, unreadable_dirs = walk.problems, walk.unreadable_dirs
    writer.record_walk_problems((p.path, p.message) for p in problems)

    stale = diff.stale
    if stale and not diff.walked:
        report.kept.append(
            f"the vault scan found no files; kept {len(stale)} indexed files "
            "(is the vault unmounted or still syncing?)"
        )
        stale = {}
    deletes = _confirmed_gone(writer.vault, stale, unreadable_dirs, report)
    settle_by_hash(writer, diff)
    moves, upserts, deletes = pair_moves(writer, diff.upserts, deletes)
    applied = apply(writer, upserts, deletes, moves=moves, progress=progress)
    _record_unchanged(writer, diff)
    applied.kept.extend(report.kept)
    applied.unchanged = diff.walked - len(upserts) - len(moves)
    applied.rehashed = len(diff.rehashed)
    return applied


Renewed = tuple[VaultFile, IndexedFile]
"""A file on disk and its indexed row, whose etags differ."""


@dataclass
class Diff:
    """Disk versus index, as ``diff_against_index`` finds it."""

    upserts: list[VaultFile] = field(default_factory=list)
    """Files new to the index, or whose etag (or, when racy, content) differs."""
    racy: list[str] = field(default_factory=list)
    """Racy but unchanged notes: their ``indexed_ns`` is moved on."""
    stale: dict[str, IndexedFile] = field(default_factory=dict)
    """Indexed rows the walk did not see: deleted only once ``lstat`` confirms it."""
    walked: int = 0
    to_hash: list[Renewed] = field(default_factory=list)
    """Notes whose content decides (``settle_by_hash``): racy, or a new etag of the same size."""
    rehashed: list[Renewed] = field(default_factory=list)
    """Notes under a new etag whose content hash matched the index: unchanged, not parsed."""
    relinked: list[Renewed] = field(default_factory=list)
    """Attachments under a new inode, same size and mtime: the index holds nothing else of
    an attachment, so it is unchanged (a restored or copied vault)."""


def diff_against_index(writer: IndexWriter, files: Iterable[VaultFile]) -> Diff:
    """Diff walked files against the ``files`` rows by a merge-join in path order.

    Neither side is held in memory: both arrive sorted by path (``VaultStream`` walks the real
    tree in code-point order, SQLite's BINARY collation sorts UTF-8 the same way), so a
    walked file meets its row at the head of the index stream. Rows the walk moved past go to
    ``stale``; a file that arrives out of order (under a symlinked folder, walked last) is
    looked up there, so the result never depends on the order, only the memory does.
    """
    diff = Diff()
    unreadable = writer.unreadable_paths()
    rows = writer.iter_files()
    head = next(rows, None)
    passed = diff.stale
    for vf in files:
        diff.walked += 1
        path = vf.path
        while head is not None and head.path < path:
            passed[head.path] = head
            head = next(rows, None)
        if head is not None and head.path == path:
            known: IndexedFile | None = head
            head = next(rows, None)
        else:
            known = passed.pop(path, None)
        _compare(vf, known, unreadable, diff)
    while head is not None:
        passed[head.path] = head
        head = next(rows, None)
    return diff


def _compare(vf: VaultFile, known: IndexedFile | None, unreadable: set[str], diff: Diff) -> None:
    if known is None or vf.path in unreadable or known.is_note != vf.is_note:
        diff.upserts.append(vf)
    elif known.same_etag(vf):
        if known.is_note and known.racy:
            # Same (size, mtime, inode) but written within the file system's timestamp
            # granularity of our last read: only the content can tell.
            diff.to_hash.append((vf, known))
    elif known.size != vf.size:  # a pending row's size (-1) never matches the disk
        diff.upserts.append(vf)
    elif known.is_note:
        # A new inode (restored, copied) or mtime (touch, a sync tool) with the same size.
        diff.to_hash.append((vf, known))
    elif known.mtime_ns == vf.mtime_ns:
        diff.relinked.append((vf, known))
    else:
        diff.upserts.append(vf)


def settle_by_hash(writer: IndexWriter, diff: Diff) -> None:
    """Read and hash (never parse) ``diff.to_hash``, on every core for many: a note whose
    hash matches the index is unchanged (``racy`` or ``rehashed``), any other is upserted."""
    pending, diff.to_hash = diff.to_hash, []
    if not pending:
        return
    hashes = hash_notes(
        [vf for vf, _ in pending], workers=writer.workers, max_bytes=writer.max_bytes
    )
    writer.hashed += len(pending)
    same = writer.same_contents(
        [(known.id, h) for (_, known), h in zip(pending, hashes) if h is not None]
    )
    for (vf, known), content_hash in zip(pending, hashes):
        if content_hash is None or known.id not in same:
            diff.upserts.append(vf)
        elif known.same_etag(vf):
            diff.racy.append(vf.path)
        else:
            diff.rehashed.append((vf, known))


def pair_moves(
    writer: IndexWriter, upserts: list[VaultFile], deletes: list[str]
) -> tuple[list[Move], list[VaultFile], list[str]]:
    """Pair files new to the index with gone ones of the same etag (size, mtime_ns, inode:
    a move within the file system keeps them): (moves, the other upserts, the other deletes).

    A gone row is paired only when its etag is unique among the gone rows and not racy."""
    if not deletes or not upserts:
        return [], upserts, deletes
    by_etag: dict[tuple[int, int, int, int], IndexedFile | None] = {}
    for gone in writer.file_rows(deletes).values():
        if gone.inode and not gone.racy:
            key = (gone.is_note, gone.size, gone.mtime_ns, gone.inode)
            by_etag[key] = None if key in by_etag else gone
    if not by_etag:
        return [], upserts, deletes
    indexed = writer.file_rows(vf.path for vf in upserts)
    moves: list[Move] = []
    rest: list[VaultFile] = []
    for vf in upserts:
        key = (int(vf.is_note), vf.size, vf.mtime_ns, vf.inode)
        row = None if vf.path in indexed else by_etag.pop(key, None)
        if row is None:
            rest.append(vf)
        else:
            moves.append((row, vf))
    moved_from = {row.path for row, _ in moves}
    return moves, rest, [path for path in deletes if path not in moved_from]


def _record_unchanged(writer: IndexWriter, diff: Diff) -> None:
    writer.touch_indexed(diff.racy)
    writer.refresh_etags([*diff.rehashed, *diff.relinked])


def _changed(writer: IndexWriter, files: Iterable[VaultFile]) -> Diff:
    """The diff of a few files, settled by hash: their rows are looked up by path."""
    files = list(files)
    indexed = writer.file_rows(vf.path for vf in files)
    unreadable = writer.unreadable_paths()
    diff = Diff()
    for vf in files:
        _compare(vf, indexed.get(vf.path), unreadable, diff)
    settle_by_hash(writer, diff)
    return diff


def _confirmed_gone(
    vault: Path,
    stale: Mapping[str, IndexedFile],
    unreadable_dirs: Iterable[str],
    report: ApplyReport,
) -> list[str]:
    blocked = tuple(d.rstrip("/") + "/" for d in unreadable_dirs if d)
    if "" in unreadable_dirs or "." in unreadable_dirs:
        report.kept.append("the vault root could not be listed; nothing was removed")
        return []
    gone: list[str] = []
    kept_unreadable = 0
    for path, known in stale.items():
        if blocked and path.startswith(blocked):
            kept_unreadable += 1
            continue
        disk_rel = known.disk_rel or path
        try:
            os.lstat(vault / disk_rel)
        except FileNotFoundError:
            gone.append(path)
        except NotADirectoryError:
            gone.append(path)
        except OSError:
            kept_unreadable += 1
        else:
            # Still there under its recorded name (e.g. it became unreadable to the walk).
            kept_unreadable += 1
    if kept_unreadable:
        report.kept.append(
            f"kept {kept_unreadable} indexed files under folders that could not be read"
        )
    return gone


def _stat_file(vault: Path, disk_rel: str) -> VaultFile | None:
    disk_path = vault / disk_rel
    try:
        st = os.stat(disk_path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    path = nfc(disk_rel)
    return VaultFile(
        path=path,
        disk_path=str(disk_path),
        is_note=is_note_name(path),
        size=st.st_size,
        mtime_ns=st.st_mtime_ns,
        inode=st.st_ino,
    )


def apply_paths(writer: IndexWriter, hints: Iterable[str]) -> ApplyReport:
    """Re-check the disk for each hinted vault-relative path and bring the index in line.

    Events are hints (ARCHITECTURE "Freshness"): whatever the event said, we look at the disk.
    A path that is gone removes its row and every row under it; a folder is re-scanned; a
    file is re-indexed when its etag or (if racy) its content changed.
    """
    vault = writer.vault
    if not vault.is_dir():
        report = ApplyReport()
        report.kept.append(f"the vault {vault} is not there; the index was left unchanged")
        return report
    upserts: dict[str, VaultFile] = {}
    deletes: set[str] = set()
    kept = ApplyReport()
    for hint in dict.fromkeys(h.strip("/") for h in hints):
        if is_hidden_path(hint):
            continue
        if hint == "":
            return reconcile(writer)
        disk_path = vault / hint
        path = nfc(hint)
        try:
            st = os.stat(disk_path)
        except FileNotFoundError:
            st = None
        except OSError:
            continue  # unreadable for now: keep what we have
        if st is None:
            try:
                os.lstat(disk_path)
            except FileNotFoundError:
                deletes.update(row.path for row in writer.files_under(path))
            continue  # a dangling symlink: leave the index as it is
        if stat.S_ISDIR(st.st_mode):
            sub = walk_vault(disk_path)
            prefix = path + "/"
            seen: set[str] = set()
            for vf in sub.files:
                full = VaultFile(
                    prefix + vf.path, vf.disk_path, vf.is_note, vf.size, vf.mtime_ns, vf.inode
                )
                seen.add(full.path)
                upserts[full.path] = full
            blocked = tuple(prefix + d.rstrip("/") + "/" for d in sub.unreadable_dirs)
            stale = {
                row.path: row
                for row in writer.files_under(path)
                if row.path.startswith(prefix)
                and row.path not in seen
                and not (blocked and row.path.startswith(blocked))
            }
            deletes.update(_confirmed_gone(vault, stale, (), kept))
        elif stat.S_ISREG(st.st_mode):
            found = _stat_file(vault, hint)
            if found is not None:
                upserts[found.path] = found
    diff = _changed(writer, upserts.values())
    moves, changed, gone = pair_moves(writer, diff.upserts, sorted(deletes - set(upserts)))
    report = apply(writer, changed, gone, moves=moves)
    _record_unchanged(writer, diff)
    report.rehashed = len(diff.rehashed)
    report.kept.extend(kept.kept)
    return report
