"""Disk versus index: find what changed by etag and hand it to the writer (STYLE 4).

Safety rules (ARCHITECTURE "Freshness"): a missing vault, a walk that finds no files, or a
folder that cannot be listed never deletes rows; only a file confirmed gone by ``lstat`` is
removed. About 600 lines on purpose: the whole-vault reconcile (with the merge a clean start
of a million files goes through, issue 35) and the daemon's path hints (``apply_paths``, with
the rows memo its batch reads through) apply the same safety rules and must be read side by
side.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from notedex.error_kinds import VaultNotFound
from notedex.indexing.apply import ApplyReport, Progress, RowsOf, apply, apply_walked
from notedex.indexing.pairing import hold, pair_moves
from notedex.indexing.pool import hash_notes, paused_gc
from notedex.store.files import LOOKUP_CHUNK, IndexedFile
from notedex.store.writer import IndexWriter
from notedex.vault.files import is_hidden_path, is_note_name
from notedex.vault.model import VaultFile
from notedex.vault.text import nfc
from notedex.vault.walk import Entry, FolderHook, VaultStream, entry_file, walk_vault


def reconcile(
    writer: IndexWriter,
    *,
    full: bool = False,
    progress: Progress | None = None,
    hinted: frozenset[str] = frozenset(),
    on_folder: FolderHook | None = None,
) -> ApplyReport:
    """Bring the index in line with the whole vault; incremental unless ``full``. ``hinted``:
    paths an event named, compared by content even when their etag did not move (issue 13.6).
    ``on_folder``: told of each folder before the incremental walk lists it (``FolderHook``).

    An index with no files yet (the daemon's first index) has no state to keep consistent for
    readers: it is filled the fast way, as a private build is (``indexing.apply``).
    """
    first = not writer.private and not writer.has_files()
    writer.private |= first
    try:
        with paused_gc():
            report = _reconcile(
                writer, full=full, progress=progress, hinted=hinted, on_folder=on_folder
            )
        report.errors = writer.error_count()  # what health lists (issue 34: one error count)
        return report
    finally:
        if first:
            writer.private = False


def _reconcile(
    writer: IndexWriter,
    *,
    full: bool,
    progress: Progress | None,
    hinted: frozenset[str],
    on_folder: FolderHook | None = None,
) -> ApplyReport:
    if not writer.vault.is_dir():
        raise VaultNotFound(writer.vault, "the index was left unchanged")
    if full and not writer.has_files():
        return _first_index(writer, progress)
    report = ApplyReport()
    walk: VaultStream | None = None
    if full:
        listed = walk_vault(
            writer.vault, follow_outside=writer.follow_symlinks, on_folder=on_folder
        )
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
        walk = VaultStream(writer.vault, follow_outside=writer.follow_symlinks, on_folder=on_folder)
        files = ()
    writer.refresh_filters()
    if walk is not None:
        diff = diff_entries(writer, walk.entries, hinted)
    else:
        diff = diff_against_index(writer, files, hinted)
    if walk is not None:
        problems, unreadable_dirs = walk.problems, walk.unreadable_dirs

    stale = diff.stale
    if stale and not diff.walked:
        report.kept.append(
            f"the vault scan found no files; kept {len(stale)} indexed files "
            "(is the vault unmounted or still syncing?)"
        )
        stale = {}
    refused = (p.path for p in problems)
    deletes = _confirmed_gone(writer.vault, stale, unreadable_dirs, report, refused)
    settle_by_hash(writer, diff)
    paired = pair_moves(writer, diff.upserts, deletes, hashes=diff.hashes, hinted=hinted)
    moves, upserts = paired.moves, paired.upserts
    applied = apply(writer, upserts, paired.deletes, moves=moves, progress=progress)
    # After the deletes: a path that is a walk problem now (a FIFO, a loop) lost its row there.
    writer.record_walk_problems(problems)
    _record_unchanged(writer, diff)
    applied.kept.extend(report.kept)
    applied.unreadable.extend(unreadable_dirs)
    applied.unchanged = diff.walked - len(upserts) - len(moves)
    applied.rehashed = len(diff.rehashed)
    return applied


def _first_index(writer: IndexWriter, progress: Progress | None) -> ApplyReport:
    """``--full`` into an index with no files (a rebuild aside): every walked file is new.
    The walk goes into the index's temp table as it comes (``IndexWriter.add_walked``), not
    into a list of the whole vault (issue 35: about 560 MB at 1M files), and the apply reads
    it back a page at a time (``apply_walked``): the same rows as ``apply`` of every file."""
    writer.clear()
    writer.refresh_filters()
    walk = VaultStream(writer.vault, follow_outside=writer.follow_symlinks)
    writer.add_walked(walk.files)
    applied = apply_walked(writer, progress)
    writer.record_walk_problems(walk.problems)
    applied.unreadable.extend(walk.unreadable_dirs)
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
    """Notes under a new etag or change time whose content hash matched the index: unchanged,
    not parsed."""
    relinked: list[Renewed] = field(default_factory=list)
    hashes: dict[str, str] = field(default_factory=dict)
    """Content hashes of upserted notes read by ``settle_by_hash`` (move pairing reuses them)."""
    """Attachments under a new inode, same size and mtime: the index holds nothing else of
    an attachment, so it is unchanged (a restored or copied vault)."""


def diff_against_index(
    writer: IndexWriter, files: Iterable[VaultFile], hinted: frozenset[str] = frozenset()
) -> Diff:
    """Diff walked files against the ``files`` rows by a merge-join in path order
    (``diff_entries``)."""
    entries = ((f.path, f.size, f.mtime_ns, f.inode, f.ctime_ns, f.disk_path) for f in files)
    return diff_entries(writer, entries, hinted)


def diff_entries(
    writer: IndexWriter, entries: Iterable[Entry], hinted: frozenset[str] = frozenset()
) -> Diff:
    """Diff the walk's ``Entry`` tuples against the ``files`` rows by a merge-join in path
    order.

    Neither side is held in memory: both arrive sorted by path (``VaultStream`` walks the real
    tree in code-point order, SQLite's BINARY collation sorts UTF-8 the same way), so a
    walked file meets its row at the head of the index stream. Rows the walk moved past go to
    ``stale``; a file that arrives out of order (under a symlinked folder, walked last) is
    looked up there, so the result never depends on the order, only the memory does.

    The merge reads each row's etag only (``IndexWriter.iter_etags``). A file whose size,
    mtime, inode and change time are its row's, not racy (a racy row's size is one no file
    has), not hinted and not unreadable is unchanged (what ``_compare`` concludes for it) and is
    passed over after one compare of two tuples (issue 35: a clean start of 1M notes is a
    million of these); its kind is its row's, as both follow the path's suffix. The rows of
    the other files are read whole a chunk at a time (what a ``cp -a`` restore holds at once
    stays what ``to_hash`` holds), the stale paths' at the end, and each file goes through
    ``_compare``.
    """
    diff = Diff()
    unreadable = writer.unreadable_paths()
    special = unreadable | hinted  # compared by content or parsed again, whatever the etag
    rows = writer.iter_etags()
    head = next(rows, None)
    passed: set[str] = set()  # rows the walk moved past: stale unless met later
    differ: list[Entry] = []  # files whose row differs, or that met a passed row
    walked = 0
    for entry in entries:
        walked += 1
        if entry[:5] == head:  # the row's etag, settled: unchanged unless special
            head = next(rows, None)
            if not special or entry[0] not in special:
                continue
            differ.append(entry)
        else:
            path = entry[0]
            while head is not None and head[0] < path:
                passed.add(head[0])
                head = next(rows, None)
            if head is not None and head[0] == path:  # the etag differs, or the row is racy
                head = next(rows, None)
                differ.append(entry)
            elif path in passed:
                passed.discard(path)
                differ.append(entry)
            else:  # no row: new to the index
                _compare(entry_file(entry), None, unreadable, diff, forced=path in hinted)
                continue
        if len(differ) >= LOOKUP_CHUNK:
            _compare_rows(writer, differ, unreadable, diff, hinted)
            differ = []
    while head is not None:
        passed.add(head[0])
        head = next(rows, None)
    _compare_rows(writer, differ, unreadable, diff, hinted)
    known = writer.file_rows(sorted(passed))
    diff.stale.update((path, known[path]) for path in sorted(passed) if path in known)
    diff.walked = walked
    return diff


def _compare_rows(
    writer: IndexWriter,
    entries: list[Entry],
    unreadable: set[str],
    diff: Diff,
    hinted: frozenset[str],
) -> None:
    """``_compare`` each of ``entries`` with its row, read whole now."""
    if not entries:
        return
    known = writer.file_rows(entry[0] for entry in entries)
    for entry in entries:
        path = entry[0]
        _compare(entry_file(entry), known.get(path), unreadable, diff, forced=path in hinted)


def _compare(
    vf: VaultFile,
    known: IndexedFile | None,
    unreadable: set[str],
    diff: Diff,
    *,
    forced: bool = False,
) -> None:
    if known is None or vf.path in unreadable or known.is_note != vf.is_note:
        diff.upserts.append(vf)
    elif known.same_etag(vf):
        if known.is_note and (known.racy or forced or not known.same_ctime(vf)):
            # Same (size, mtime, inode) but written within the file system's timestamp
            # granularity of our last read, or an event said it changed, or the change time
            # moved (a same-size rewrite whose mtime was put back, a recreate that reused the
            # inode; ARCHITECTURE "Freshness", its change time): only the content can tell.
            diff.to_hash.append((vf, known))
        elif not known.same_ctime(vf):
            diff.relinked.append((vf, known))  # an attachment: its row is its etag
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
            if content_hash is not None:
                diff.hashes[vf.path] = content_hash
        elif known.same_etag(vf) and known.same_ctime(vf):
            diff.racy.append(vf.path)
        else:
            diff.rehashed.append((vf, known))


def _record_unchanged(writer: IndexWriter, diff: Diff) -> None:
    writer.touch_indexed(diff.racy)
    writer.refresh_etags([*diff.rehashed, *diff.relinked])


def _changed(
    writer: IndexWriter, files: Iterable[VaultFile], hinted: set[str], rows_of: RowsOf
) -> Diff:
    """The diff of a few files, settled by hash: their rows are looked up by path.

    ``hinted`` are the files an event named: their content is checked even when the etag
    matches (issue 13).
    """
    files = list(files)
    indexed = rows_of(vf.path for vf in files)
    unreadable = writer.unreadable_paths()
    diff = Diff()
    for vf in files:
        _compare(vf, indexed.get(vf.path), unreadable, diff, forced=vf.path in hinted)
    settle_by_hash(writer, diff)
    return diff


def _confirmed_gone(
    vault: Path,
    stale: Mapping[str, IndexedFile],
    unreadable: Iterable[str],
    report: ApplyReport,
    refused: Iterable[str] = (),
) -> list[str]:
    """The stale rows to delete: files confirmed gone, or no longer vault files.

    ``unreadable`` are paths the walk could not look at: rows at or under them are kept.
    ``refused`` are paths the walk saw and refused (a loop, a repeated folder, a FIFO, a dangling
    symlink: its problems): rows at or under them go, although ``lstat`` still finds them, and
    so does a row whose path is now a folder or anything but a (link to a) regular file.
    "Still lstats" is not "still a note" (issue 13).
    """
    unreadable = set(unreadable)
    if "" in unreadable or "." in unreadable:
        report.kept.append("the vault root could not be listed; nothing was removed")
        return []
    refused = set(refused)
    gone: list[str] = []
    kept_unreadable = 0
    for path, known in stale.items():
        if _at_or_under(path, unreadable):
            kept_unreadable += 1
            continue
        disk_rel = known.disk_rel or path
        try:
            info = os.stat(vault / disk_rel)
        except (FileNotFoundError, NotADirectoryError):
            gone.append(path)  # gone, a dangling symlink, or a folder above became a file
            continue
        except OSError:
            kept_unreadable += 1
            continue
        if not stat.S_ISREG(info.st_mode) or _at_or_under(path, refused):
            gone.append(path)
        else:
            # Still there under its recorded name (e.g. created again since the walk).
            kept_unreadable += 1
    if kept_unreadable:
        report.kept.append(
            f"kept {kept_unreadable} indexed files under folders that could not be read"
        )
    return gone


def _at_or_under(path: str, tops: set[str]) -> bool:
    """Whether ``path`` or one of its parent folders is in ``tops``."""
    if not tops:
        return False
    if path in tops:
        return True
    cut = path.rfind("/")
    while cut > 0:
        if path[:cut] in tops:
            return True
        cut = path.rfind("/", 0, cut)
    return False


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
        ctime_ns=st.st_ctime_ns,
    )


def apply_paths(
    writer: IndexWriter,
    hints: Iterable[str],
    *,
    progress: Progress | None = None,
    hold_unpaired: set[str] | None = None,
) -> ApplyReport:
    """Re-check the disk for each hinted vault-relative path and bring the index in line.

    Events are hints (ARCHITECTURE "Freshness"): whatever the event said, we look at the disk.
    A path that is gone, or is no longer a regular file or folder, removes its row and every row
    under it; a folder is re-scanned; a file is re-indexed when its etag or (if racy) its
    content changed. A hint that meets a symlinked folder (the path is one, lies under one, or
    a folder holds one), or anything the walk reports as a problem (a FIFO, a dangling
    symlink), is settled by a reconcile of the whole vault: only the vault-wide walk can tell a
    loop or a folder already in the vault (SEMANTICS 1.6), and it records the walk problems.
    ``progress`` runs between the apply's chunks (``indexing.apply``). With ``hold_unpaired``
    (the daemon's, the paths held a moment ago), the unpaired ends of a move-like batch are left
    for the next batch (``indexing.pairing.hold``): ``report.held``.
    """
    vault = writer.vault
    if not vault.is_dir():
        report = ApplyReport()
        report.kept.append(f"the vault {vault} is not there; the index was left unchanged")
        return report
    with paused_gc():  # a folder rename makes tens of thousands of rows and files at once
        return _apply_paths(writer, hints, progress, hold_unpaired)


def _apply_paths(
    writer: IndexWriter,
    hints: Iterable[str],
    progress: Progress | None,
    hold_unpaired: set[str] | None,
) -> ApplyReport:
    found = _Found(_Rows(writer))
    links = _LinkedFolders(writer.vault)
    hints = list(dict.fromkeys(h.strip("/") for h in hints))
    # A folder's hint covers the hints under it (a folder rename brings one event per file):
    # its walk, or its rows when it is gone, settles them all, so they are not looked at one
    # by one (issue 17); the files among them are still compared by content.
    looked: set[str] = set()
    covered: list[str] = []
    for hint in sorted(hints, key=lambda h: h.count("/")):
        if is_hidden_path(hint):
            continue
        if "/" in hint and _at_or_under(hint.rpartition("/")[0], looked):
            covered.append(hint)
            continue
        if hint == "" or links.through_link(hint) or not _look(writer, hint, found):
            return reconcile(writer, hinted=frozenset(nfc(h) for h in hints), progress=progress)
        looked.add(hint)
    found.hinted.update(path for path in map(nfc, covered) if path in found.upserts)
    rows_of = found.rows
    diff = _changed(writer, found.upserts.values(), found.hinted, rows_of)
    gone = sorted(found.deletes - set(found.upserts))
    paired = pair_moves(
        writer,
        diff.upserts,
        gone,
        hashes=diff.hashes,
        rows_of=rows_of,
        hinted=frozenset(map(nfc, hints)),
    )
    held = (
        []
        if hold_unpaired is None
        else hold(writer, paired, diff.hashes, not_again=hold_unpaired, rows_of=rows_of)
    )
    report = apply(
        writer,
        paired.upserts,
        paired.deletes,
        moves=paired.moves,
        progress=progress,
        rows_of=rows_of,
    )
    report.held = held
    _record_unchanged(writer, diff)
    report.rehashed = len(diff.rehashed)
    report.kept.extend(found.kept.kept)
    report.unreadable.extend(found.kept.unreadable)
    return report


class _Rows:
    """The ``files`` rows of the paths at hand, each read once per batch (issue 17: a folder
    rename read the same 24k paths seven times). A looked-at folder's rows come with its look
    (``files_under``): a path at or under it that the look did not return has no row. Valid
    until the batch writes (``apply`` reads through it before its first write)."""

    def __init__(self, writer: IndexWriter) -> None:
        self._writer = writer
        self.rows: dict[str, IndexedFile] = {}
        self._absent: set[str] = set()
        self._folders: set[str] = set()

    def under(self, folder: str) -> list[IndexedFile]:
        """The rows at or under ``folder`` (``IndexWriter.files_under``), remembered."""
        rows = self._writer.files_under(folder)
        self._folders.add(folder)
        self.rows.update((row.path, row) for row in rows)
        return rows

    def __call__(self, paths: Iterable[str]) -> dict[str, IndexedFile]:
        wanted = list(dict.fromkeys(paths))
        rows, absent, folders = self.rows, self._absent, self._folders
        unknown = [
            path
            for path in wanted
            if path not in rows and path not in absent and not _at_or_under(path, folders)
        ]
        if unknown:
            rows.update(self._writer.file_rows(unknown))
            absent.update(path for path in unknown if path not in rows)
        return {path: rows[path] for path in wanted if path in rows}


@dataclass
class _Found:
    rows: _Rows
    upserts: dict[str, VaultFile] = field(default_factory=dict)
    deletes: set[str] = field(default_factory=set)
    hinted: set[str] = field(default_factory=set)
    """Files named by a hint themselves (not found by walking a hinted folder)."""
    kept: ApplyReport = field(default_factory=ApplyReport)


def _look(writer: IndexWriter, hint: str, found: _Found) -> bool:
    """Look at one hinted path; False when only the vault-wide walk can settle it."""
    vault = writer.vault
    disk_path = vault / hint
    path = nfc(hint)
    try:
        st = os.stat(disk_path)
    except (FileNotFoundError, NotADirectoryError):
        if os.path.lexists(disk_path):
            return False  # a dangling symlink: a walk problem (SEMANTICS 1.6)
        # Gone, or a folder above it became a file: not a vault file any more.
        return _gone(writer, hint, path, found)
    except OSError:
        found.kept.unreadable.append(path)  # unreadable for now: keep what we have, look again
        return True
    if stat.S_ISREG(st.st_mode):
        vf = _stat_file(vault, hint)
        if vf is not None:
            found.upserts[vf.path] = vf
            found.hinted.add(vf.path)
        # A folder replaced by a file of the same name: what was under it is gone.
        found.deletes.update(row.path for row in found.rows.under(path) if row.path != path)
        return True
    if not stat.S_ISDIR(st.st_mode) or os.path.islink(disk_path):
        return False  # a FIFO, socket or device (SEMANTICS 1.5), or a symlinked folder (1.6)
    sub = walk_vault(disk_path, base=path)
    if sub.linked_dirs or sub.problems:
        return False  # loops, repeats and walk problems are the vault-wide walk's to tell
    seen: set[str] = set()
    for vf in sub.files:
        seen.add(vf.path)
        found.upserts[vf.path] = vf
    stale = {row.path: row for row in found.rows.under(path) if row.path not in seen}
    if path in stale:
        found.deletes.add(path)  # a note replaced by a folder of the same name
        del stale[path]
    found.deletes.update(_confirmed_gone(vault, stale, (), found.kept))
    return True


def _gone(writer: IndexWriter, hint: str, path: str, found: _Found) -> bool:
    """``hint`` is gone from the disk: remove the rows it held, not an NFC twin's (SEMANTICS 1.4).

    A row is held by its on-disk name. When the hint is another spelling of its NFC path and
    that name is still there, the twins' walk problem changes too: False, for the vault walk.
    """
    inside = hint + "/"
    for row in found.rows.under(path):
        disk = row.disk_rel or row.path
        if disk == hint or disk.startswith(inside):
            found.deletes.add(row.path)
    return path == hint or not os.path.lexists(writer.vault / path)


class _LinkedFolders:
    """Whether a hinted path lies under a symlinked folder, one ``lstat`` per folder."""

    def __init__(self, vault: Path) -> None:
        self._vault = vault
        self._known: dict[str, bool] = {"": False}

    def through_link(self, rel: str) -> bool:
        parent = rel.rpartition("/")[0]
        known = self._known.get(parent)
        if known is None:
            known = self.through_link(parent) or os.path.islink(self._vault / parent)
            self._known[parent] = known
        return known
