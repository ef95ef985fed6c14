"""Disk versus index: find what changed by etag and hand it to the writer (STYLE 4).

Safety rules (ARCHITECTURE "Freshness"): a missing vault, a walk that finds no files, or a
folder that cannot be listed never deletes rows; only a file confirmed gone by ``lstat`` is
removed.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path

from notedex.errors import VaultNotFound
from notedex.store.writer import ApplyReport, IndexedFile, IndexWriter, Progress, paused_gc
from notedex.vault.model import VaultFile
from notedex.vault.parse import read_note
from notedex.vault.text import nfc
from notedex.vault.walk import walk_vault


def reconcile(
    writer: IndexWriter, *, full: bool = False, progress: Progress | None = None
) -> ApplyReport:
    """Bring the index in line with the whole vault; incremental unless ``full``."""
    with paused_gc():
        return _reconcile(writer, full=full, progress=progress)


def _reconcile(writer: IndexWriter, *, full: bool, progress: Progress | None) -> ApplyReport:
    if not writer.vault.is_dir():
        raise VaultNotFound(writer.vault, "the index was left unchanged")
    walk = walk_vault(writer.vault)
    report = ApplyReport()
    if full:
        if writer.indexed_paths() and (not walk.files or walk.unreadable_dirs):
            # A rebuild would drop the rows the safety rules below exist to keep.
            report.kept.append(
                "did not rebuild from scratch: the vault scan found no files or could not "
                "read some folders; updated incrementally instead"
            )
        else:
            writer.clear()
    writer.refresh_filters()
    writer.record_walk_problems((p.path, p.message) for p in walk.problems)
    indexed = writer.indexed_paths()
    on_disk = {vf.path: vf for vf in walk.files}

    upserts, racy = _changed(writer, walk.files)
    stale = [path for path in indexed if path not in on_disk]
    if stale and not walk.files:
        report.kept.append(
            f"the vault scan found no files; kept {len(indexed)} indexed files "
            "(is the vault unmounted or still syncing?)"
        )
        stale = []
    deletes = _confirmed_gone(writer.vault, indexed, stale, walk.unreadable_dirs, report)
    applied = writer.apply(upserts, deletes, progress=progress)
    writer.touch_indexed(racy)
    applied.kept.extend(report.kept)
    applied.unchanged = len(walk.files) - len(upserts)
    return applied


def _changed(writer: IndexWriter, files: Iterable[VaultFile]) -> tuple[list[VaultFile], list[str]]:
    """Files whose etag differs, plus racy-clean notes whose content hash differs.

    Returns (to index, racy but unchanged).
    """
    indexed = writer.indexed_paths()
    unreadable = writer.unreadable_paths()
    upserts: list[VaultFile] = []
    racy_same: list[str] = []
    for vf in files:
        known = indexed.get(vf.path)
        if known is None or not known.same_etag(vf) or vf.path in unreadable:
            upserts.append(vf)
        elif known.is_note and known.racy:
            # Same (size, mtime, inode) but written within the file system's timestamp
            # granularity of our last read: only the content can tell.
            note = read_note(vf.disk_path, vf.path, max_bytes=writer.max_bytes)
            if note.content_hash != writer.content_hash(vf.path):
                upserts.append(vf)
            else:
                racy_same.append(vf.path)
    return upserts, racy_same


def _confirmed_gone(
    vault: Path,
    indexed: Mapping[str, IndexedFile],
    stale: Iterable[str],
    unreadable_dirs: Iterable[str],
    report: ApplyReport,
) -> list[str]:
    blocked = tuple(d.rstrip("/") + "/" for d in unreadable_dirs if d)
    if "" in unreadable_dirs or "." in unreadable_dirs:
        report.kept.append("the vault root could not be listed; nothing was removed")
        return []
    gone: list[str] = []
    kept_unreadable = 0
    for path in stale:
        if blocked and path.startswith(blocked):
            kept_unreadable += 1
            continue
        known = indexed.get(path)
        disk_rel = (known.disk_rel if known else None) or path
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
        report.kept.append(f"kept {kept_unreadable} indexed files under folders that could not be read")
    return gone


def _is_hidden(rel: str) -> bool:
    return any(part.startswith(".") for part in rel.split("/") if part)


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
        is_note=path.lower().endswith(".md"),
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
    indexed = writer.indexed_paths()
    upserts: dict[str, VaultFile] = {}
    deletes: set[str] = set()
    kept = ApplyReport()
    for hint in dict.fromkeys(h.strip("/") for h in hints):
        if _is_hidden(hint):
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
                prefix = path + "/"
                gone = [p for p in indexed if p == path or p.startswith(prefix)]
                deletes.update(gone)
            continue  # a dangling symlink: leave the index as it is
        if stat.S_ISDIR(st.st_mode):
            sub = walk_vault(disk_path)
            prefix = path + "/"
            seen: set[str] = set()
            for vf in sub.files:
                full = VaultFile(prefix + vf.path, vf.disk_path, vf.is_note, vf.size, vf.mtime_ns, vf.inode)
                seen.add(full.path)
                upserts[full.path] = full
            blocked = tuple(prefix + d.rstrip("/") + "/" for d in sub.unreadable_dirs)
            stale = [
                p
                for p in indexed
                if p.startswith(prefix) and p not in seen and not (blocked and p.startswith(blocked))
            ]
            deletes.update(_confirmed_gone(vault, indexed, stale, (), kept))
        elif stat.S_ISREG(st.st_mode):
            found = _stat_file(vault, hint)
            if found is not None:
                upserts[found.path] = found
    changed, racy = _changed(writer, upserts.values())
    report = writer.apply(changed, sorted(deletes - set(upserts)))
    writer.touch_indexed(racy)
    report.kept.extend(kept.kept)
    return report
