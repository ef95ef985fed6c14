"""The one writer: a thin facade that owns the writer connection, the one transaction helper
and the link-candidate index, and exposes each step of an apply; the SQL of each job is in
store/files.py, notes.py, links.py, findings.py and maintenance.py; indexing/ drives it.

Over 400 lines on purpose: a short method per step of an apply, around one ``transaction()``.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

from notedex.store import (
    basedocs,
    files,
    findings,
    findings_slices,
    linkfixes,
    maintenance,
    moves,
    notes,
    renames,
    schema,
    walked,
)
from notedex.store.database import (
    add_sql_functions,
    note_live_change,
    open_writer_connection,
    set_meta,
    writer_errors,
)
from notedex.store.files import IndexedFile
from notedex.store.links import LinkTargets
from notedex.store.maintenance import FTS_AUTOMERGE
from notedex.store.schema import content_key
from notedex.vault.files import DEFAULT_MAX_BYTES, excluded_filters_key, note_stem
from notedex.vault.model import Note, VaultFile, WalkProblem
from notedex.vault.walk import load_excluded_filters

BULK_CACHE_KIB = 64 * 1024  # `notedex index`; the long-lived daemon asks for less
"""The page cache of a large apply, which also bounds SQLite's in-memory sorts (each deferred
index of a build is one sort: SQLite spills a sort past the cache's size to a temp file).
256 MB until issue 35: the writer of a 100k build peaked at 430 MB, 241 MB with 64 MB, in
the same wall and CPU time (the file's pages are in the system's cache either way)."""


class IndexWriter:
    """Applies vault changes to the index, one ``BEGIN IMMEDIATE`` transaction per batch."""

    def __init__(
        self,
        db_path: Path,
        vault: Path,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        body_index: bool = True,
        workers: int | None = None,
        bulk_cache_kib: int = BULK_CACHE_KIB,
        bulk_batch_size: int | None = None,
        verify: bool = False,
        follow_symlinks: bool = False,
    ) -> None:
        """``verify``: a quick integrity check first (`open_writer_connection`)."""
        self.db_path = db_path
        self.vault = vault
        self.follow_symlinks = follow_symlinks
        """Walk symlinks whose target is outside the vault (SEMANTICS 1.6, the setting)."""
        self.max_bytes = max_bytes
        self.body_index = body_index
        self.workers = workers if workers is not None else (os.cpu_count() or 1)
        # The walk names files under the absolute root (vault.walk._root): a vault given as a
        # relative path would otherwise send every disk_rel through os.path.relpath.
        self._vault_prefixes = (
            os.path.join(str(vault), ""),
            os.path.join(os.path.abspath(str(vault)), ""),
        )
        self.conn: sqlite3.Connection = open_writer_connection(db_path, verify=verify)
        self.filters: tuple[str, ...] = ()
        # No per-file state in memory: etags and link candidates are read from the index for
        # the paths at hand (issue 6: a 100k-file map cost the daemon about 70 MB).
        self.links = LinkTargets(self.conn)
        self.bulk_cache_kib = bulk_cache_kib
        # None: indexing.apply's BULK_BATCH_SIZE. Also what bounds the parsed notes in memory.
        self.bulk_batch_size = bulk_batch_size
        self.stop: Callable[[], bool] | None = None
        """Set by the daemon: true once it must stop (``interruptible`` aborts SQL then)."""
        self.private = False
        """True while this writer builds an index no reader sees yet (``store.swap``): applies
        may then defer the structure-search rows to the end (``indexing.apply``)."""
        self.aside = False
        """Inside ``building``: the file is not the live index (a daemon's first index is
        private on the live file)."""
        self._names_staged = False
        """Inside ``indexes_deferred`` of a build aside: ``exact_names`` is filled at its end."""
        self.parsed = 0
        """Notes parsed by this writer's applies (tests assert on it, not on time)."""
        self.hashed = 0
        """Notes read and hashed, not parsed, to confirm their content (racy or new etag)."""
        # A large apply that was killed: undo its bulk setting, finish its FTS rows.
        try:
            with writer_errors(db_path):
                merge = maintenance.automerge(self.conn)
                if merge is not None and merge != FTS_AUTOMERGE:
                    self._set_automerge(FTS_AUTOMERGE)
                if findings.has_pending(self.conn):
                    self.flush_pending_fts()
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self.conn.close()

    def __enter__(self) -> IndexWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """The one transaction helper: BEGIN IMMEDIATE takes the write lock up front.

        Not sqlite-utils' ``atomic()``: it begins a deferred transaction, whose first write
        can fail with SQLITE_BUSY while a reader's snapshot is upgraded.
        """
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
            findings.settle(self.conn)
        except BaseException:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise
        else:
            self.conn.execute("COMMIT")
            if not self.aside:
                note_live_change()

    @contextlib.contextmanager
    def interruptible(self) -> Iterator[None]:
        """While the body runs, SQLite asks ``self.stop`` every few thousand steps and aborts
        the running statement once it is true (``sqlite3.OperationalError``, "interrupted"): the
        transaction helper rolls the chunk back, the last committed one stays."""
        stop = self.stop
        if stop is None:
            yield
            return
        self.conn.set_progress_handler(lambda: 1 if stop() else 0, 20_000)
        try:
            yield
        finally:
            self.conn.set_progress_handler(None, 0)

    def set_meta(self, key: str, value: str) -> None:
        set_meta(self.conn, key, value)

    # -- file rows (etags) --------------------------------------------------------------------

    def file_rows(self, paths: Iterable[str]) -> dict[str, IndexedFile]:
        """The indexed rows of ``paths`` (those that have one), by path."""
        return files.file_rows(self.conn, paths)

    def iter_files(self) -> Iterator[IndexedFile]:
        """Every indexed row in path order (the order ``VaultStream`` walks the real tree in).

        Consume it before writing: it reads from the connection the writes go through.
        """
        return files.iter_files(self.conn)

    def iter_etags(self) -> Iterator[tuple[str, int, int, int, int]]:
        """(path, size, mtime_ns, inode, ctime_ns) of every row in path order, a racy row's
        size ``RACY_SIZE`` (``store.files.iter_etags``: many are read by a child process).
        Consume it before writing."""
        return files.iter_etags(self.conn, self.db_path)

    def files_under(self, folder: str) -> list[IndexedFile]:
        return files.files_under(self.conn, folder)

    def has_files(self) -> bool:
        return files.has_files(self.conn)

    def unreadable_paths(self) -> set[str]:
        return files.unreadable_paths(self.conn)

    def other_names(self, paths: Iterable[str]) -> list[str]:
        """Disk names of the other indexed files on the inodes of ``paths`` (hard links and
        symlinks to one file): an event names only the one that was used."""
        rows = self.file_rows(paths)
        return files.paths_sharing_inodes(
            self.conn, (row.inode for row in rows.values()), rows.keys()
        )

    def error_count(self) -> int:
        """The errors the index holds, as `health` lists them (``read.error_count``)."""
        from notedex.store import read

        return read.error_count(self.conn)

    def walk_problems(self) -> dict[str, str]:
        return files.walk_problems(self.conn)

    def attachments_of_sizes(self, sizes: Iterable[int]) -> list[tuple[str, int]]:
        return files.attachments_of_sizes(self.conn, sizes)

    def same_content(self, path: str, content_hash: str) -> bool:
        return notes.same_content(self.conn, path, content_hash)

    def same_contents(self, hashes: Sequence[tuple[int, str]]) -> set[int]:
        """The file ids among (file_id, sha256 hex) whose indexed note has this content."""
        return notes.same_contents(self.conn, hashes)

    def content_keys(self, ids: Sequence[int]) -> dict[int, int]:
        """The stored content key (``content_key`` of the sha256) of these notes, by file id."""
        return moves.content_keys(self.conn, ids)

    def indexed_contents(self, keys: Iterable[int]) -> set[int]:
        """The content keys among ``keys`` that an indexed note has."""
        return moves.indexed_contents(self.conn, keys)

    @staticmethod
    def content_key(content_hash: str) -> int:
        return content_key(content_hash)

    def refresh_etags(self, unchanged: Sequence[tuple[VaultFile, IndexedFile]]) -> None:
        """Files whose content is known to be unchanged under a new etag (a restored or copied
        vault, a ``touch``): their rows take the disk's etag in place."""
        now = time.time_ns()
        rows = [
            (self.disk_rel(vf), vf.size, vf.mtime_ns, vf.inode, now, vf.ctime_ns, known.id)
            for vf, known in unchanged
        ]
        if rows:
            with self.transaction():
                files.refresh_etags(self.conn, rows)

    def record_walk_problems(self, problems: Iterable[WalkProblem]) -> None:
        with self.transaction():
            files.record_walk_problems(
                self.conn, ((p.path, p.message, p.severity) for p in problems)
            )

    def touch_indexed(self, paths: Iterable[str]) -> None:
        """Mark racy-but-unchanged files as checked now."""
        now = time.time_ns()
        rows = [(now, path) for path in paths]
        if rows:
            with self.transaction():
                files.touch_indexed(self.conn, rows)

    # -- excluded files ----------------------------------------------------------------------

    def refresh_filters(self) -> None:
        """Re-read Obsidian's "Excluded files"; re-flag notes when the list changed."""
        filters = load_excluded_filters(self.vault)
        stored = self.conn.execute(
            "SELECT value FROM meta WHERE key = 'excluded_filters'"
        ).fetchone()
        encoded = excluded_filters_key(filters)
        self.filters = filters
        if stored and stored[0] == encoded:
            return
        with self.transaction() as conn:
            dirty = notes.reflag_excluded(conn, filters)
            if dirty:
                findings.set_dirty(conn, dirty)
                findings.refresh_findings(conn, self.links)
            set_meta(conn, "excluded_filters", encoded)

    # -- the steps of an apply (indexing.apply orders them) ----------------------------------

    def disk_rel(self, vf: VaultFile) -> str | None:
        """The on-disk relative name when it differs from the NFC path (macOS NFD names)."""
        for prefix in self._vault_prefixes:
            if vf.disk_path.startswith(prefix):
                disk_rel = vf.disk_path[len(prefix) :].replace(os.sep, "/")
                break
        else:
            disk_rel = os.path.relpath(vf.disk_path, self.vault).replace(os.sep, "/")
        return None if disk_rel == vf.path else disk_rel

    def delete_files(self, paths: Iterable[str]) -> set[int]:
        """Inside a transaction: drop these files; returns the notes whose FTS rows change."""
        paths = list(paths)
        linkfixes.refix(self.conn, renames.forget_files(self.conn, paths))  # SEMANTICS 8.3
        return notes.delete_files(self.conn, paths, self.links)

    def register(
        self, attachments: Sequence[VaultFile], new_notes: Sequence[VaultFile], existing: set[str]
    ) -> set[str]:
        """Inside a transaction: file rows for attachments and new notes (see files.register)."""
        created = files.register(self.conn, attachments, new_notes, existing, self.disk_rel)
        renames.note_created(self.conn, created)
        return created

    # -- a first index's walk, held in a temp table (store.walked) --------------------------

    def add_walked(self, files: Iterable[VaultFile], page: int = 5000) -> None:
        """Put the walk of a first index aside in ``temp.walked``, ``page`` files per
        transaction, as the walk yields them: none is held here."""
        walked.start(self.conn)
        chunk: list[VaultFile] = []
        for vf in files:
            chunk.append(vf)
            if len(chunk) >= page:
                with self.transaction():
                    walked.add(self.conn, chunk, self.disk_rel)
                chunk = []
        with self.transaction():
            walked.add(self.conn, chunk, self.disk_rel)

    def walked_counts(self) -> tuple[int, int]:
        """(notes, attachments) put aside by ``add_walked``."""
        return walked.counts(self.conn)

    def register_walked(self, dirty: set[int]) -> None:
        """Inside a transaction, on an index with no files: ``register`` every walked file
        (the same rows, in the same order), then ``reresolve_for`` them, a page at a time."""
        walked.register(self.conn)
        for paths in walked.paths(self.conn):
            renames.note_created(self.conn, paths)
            self.reresolve_for(set(paths), dirty)

    def walked_files(self, *, notes: bool) -> Iterator[VaultFile]:
        """The walked notes (or attachments) in path order, as the walk made them, read a
        page at a time."""
        prefix = os.path.join(os.path.abspath(str(self.vault)), "")
        for page in walked.pages(self.conn, notes=notes, prefix=prefix):
            yield from page

    def walked_done(self) -> None:
        walked.finish(self.conn)

    def write_base_docs(self, docs: Sequence[tuple[str, str | None, str | None]]) -> None:
        """Inside a transaction: the parsed ``.base`` files (store.basedocs), after register."""
        basedocs.write_base_docs(self.conn, docs)

    def move_files(self, moved: Sequence[moves.Move]) -> set[int]:
        """Inside a transaction: moved files take their new paths in place (store.moves);
        returns the dirty note ids. A note whose stem changed gets its title keys again."""
        dirty = moves.move_files(
            self.conn, moved, links=self.links, filters=self.filters, disk_rel=self.disk_rel
        )
        renamed = [
            (k.id, note_stem(k.path))
            for k, vf in moved
            if k.is_note
            and k.path.rpartition("/")[2] != vf.path.rpartition("/")[2]  # a stem is the name's
            and note_stem(k.path) != note_stem(vf.path)
        ]
        notes.rekey_titles(self.conn, renamed)
        return dirty

    def reresolve_for(self, changed_paths: set[str], dirty: set[int]) -> None:
        """SEMANTICS 7: re-resolve exactly the links whose resolution these files can change;
        the `typo` suggestions (8.3) and unused attachments (8.9) they can change are dirty."""
        self.links.reresolve_for(changed_paths, dirty, self._withdraw_links)
        linkfixes.typo_neighbours(self.conn, changed_paths)
        linkfixes.refix_fixes_naming(self.conn, self.links, changed_paths)
        dirty |= findings.attachments_changed(self.conn, changed_paths)

    def write_notes(
        self, parsed: Sequence[tuple[Note, str, notes.Derived]], by_path: dict[str, VaultFile]
    ) -> set[int]:
        """Inside a transaction: replace a batch of notes' rows; returns the dirty note ids."""
        return notes.write_notes(
            self.conn,
            parsed,
            by_path,
            links=self.links,
            filters=self.filters,
            disk_rel=self.disk_rel,
            stage_fts=self.aside,
            stage_names=self._names_staged,
        )

    def refresh_fts(self, dirty: set[int]) -> None:
        findings.refresh_fts(self.conn, dirty, self.links)

    def defer_fts(self, dirty: set[int]) -> None:
        """Leave the structure rows and findings of ``dirty`` and of the sources of the refix
        keys to ``flush_pending_fts`` (withdrawn into ``fts_pending``). ``write_notes``
        withdraws its own dirty notes: after it, pass only what else changed."""
        self._withdraw(dirty | linkfixes.refix_sources(self.conn))

    def flush_pending_fts(self, offload: findings.Offload = findings.run_here) -> None:
        """Recompute the structure rows recorded as pending (also after a crash); ``offload``
        runs the findings' pure work (``findings.refresh_fts``). A slice of the pending notes
        at a time (``findings_slices``: a first index's end held the whole vault's rows)."""
        with self.transaction():
            findings_slices.refresh_pending(self.conn, self.links, offload)

    def _withdraw(self, ids: Iterable[int]) -> None:
        findings.withdraw(self.conn, ids)

    def _withdraw_links(self, ids: Iterable[int], *, sides: int = findings.BOTH_SIDES) -> None:
        findings.withdraw_links(self.conn, ids, sides=sides)

    @contextlib.contextmanager
    def bulk_mode(self) -> Iterator[None]:
        """A large apply: a big page cache, fewer checkpoints, no FTS merging until the end."""
        try:
            with maintenance.bulk_pragmas(self.conn, self.bulk_cache_kib):
                self._set_automerge(0)
                try:
                    yield
                except BaseException:
                    # Stopped (SIGTERM between chunks): no long merge now, automerge resumes.
                    self._set_automerge(FTS_AUTOMERGE)
                    raise
                self._set_automerge(FTS_AUTOMERGE)
                with self.transaction():
                    maintenance.merge_segments(self.conn)
        finally:
            self.release_free_pages()
            self.checkpoint()

    @contextlib.contextmanager
    def building(self) -> Iterator[None]:
        """This writer builds a file no reader sees until it is swapped in (``store.swap``):
        applies take the fast, deferred way (``private``) and the file has a rollback journal
        instead of the WAL, and no syncs, until the end (``maintenance.unjournaled``)."""
        self.private = True
        self.aside = True
        try:
            with maintenance.unjournaled(self.conn):
                yield
        finally:
            self.aside = False

    @contextlib.contextmanager
    def indexes_deferred(self) -> Iterator[None]:
        """While a build aside (``building``) writes its batches: the indexes that no batch
        reads are created after them, each sorted once (``schema.BUILD_DEFERRED_INDEXES``;
        0.4 s less on the writer's thread at 100k notes). Elsewhere, nothing."""
        if not self.aside:
            yield
            return
        with maintenance.without_indexes(self.conn, schema.BUILD_DEFERRED_INDEXES):
            # exact_names too, sorted once (``notes.insert_staged_names``); a build that
            # fails is thrown away whole (``indexing.rebuild``).
            self._names_staged = True
            try:
                yield
            finally:
                self._names_staged = False
            with self.transaction():
                notes.insert_staged_names(self.conn)

    def _set_automerge(self, value: int) -> None:
        with self.transaction():
            maintenance.set_automerge(self.conn, value)

    # -- maintenance ---------------------------------------------------------------------------

    def clear(self) -> None:
        """Drop every row (``index --full``); the schema stays."""
        with self.transaction() as conn:
            maintenance.clear(conn)

    def integrity_check(self) -> bool:
        return maintenance.integrity_check(self.conn)

    def rebuild_fts(self) -> None:
        with self.transaction():
            maintenance.rebuild_fts(self.conn, self.links)

    def optimize(self) -> None:
        maintenance.optimize(self.conn)

    def release_free_pages(self) -> None:
        maintenance.release_free_pages(self.conn)

    def checkpoint(self) -> None:
        maintenance.checkpoint(self.conn)

    def set_checkpoint_pages(self, pages: int) -> None:
        """The WAL size, in pages, at which a commit checkpoints on its own (SQLite's
        ``wal_autocheckpoint``; its default is 1,000)."""
        self.conn.execute(f"PRAGMA wal_autocheckpoint = {int(pages)}")

    def checkpoint_passive(self) -> None:
        """Copy what the WAL holds into the index without waiting for any reader (PASSIVE)."""
        with contextlib.suppress(sqlite3.Error):
            self.conn.execute("PRAGMA wal_checkpoint(PASSIVE)")


__all__ = ["IndexWriter", "IndexedFile", "add_sql_functions"]
