"""Link candidates and re-resolution (SEMANTICS 7): which files a link may land on, and the
links whose target a new, moved or deleted file can change. All the SQL of link targets."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from typing import Protocol

from notedex.store import linkfixes
from notedex.store.files import LOOKUP_CHUNK
from notedex.store.findings import INCOMING, OUTGOING
from notedex.vault.resolve import (
    Resolver,
    affected_name_keys,
    candidate_names,
    file_keys,
    file_stem_key,
    key_crc,
    lookup_key,
    name_key,
)

Withdraw = Callable[[Iterable[int]], None]


class MarkLinks(Protocol):
    """``findings.withdraw_links`` as a writer hands it over: which notes' link texts change,
    and which sides (``findings.INCOMING``, ``OUTGOING``; both by default)."""

    def __call__(self, ids: Iterable[int], *, sides: int = ...) -> None: ...


_PATHS_OF_IDS = "SELECT id, path FROM files WHERE id IN (SELECT value FROM json_each(?))"
# The files filed under some names, by the index files_name_key (the crc of a file's name key;
# a note's stem key k is its name key k + ".md"; a colliding crc is filtered out by file_keys):
# a probe per name, not a key per file of the vault (issue 33).
_FILES_OF_NAME_KEYS = (
    "SELECT id, path FROM files WHERE nx_file_name_crc(path) IN (SELECT value FROM json_each(?))"
)
# A link whose target a path can decide (SEMANTICS 7.5-7.7): a folder in its linkpath, or a
# tie-break among several candidates.
_PATH_DEPENDENT = "(l.ambiguous = 1 OR instr(l.linkpath, '/') > 0)"
# Of those, a link whose target its source's folder can decide: relative to it (7.5: `./x`,
# `../x`, as Resolver.resolve tests the folded linkpath), or a tie-break (7.7). A path with a
# `/` otherwise (7.6, 7.7's suffix) finds the same candidates from any folder.
_SOURCE_DEPENDENT = (
    "(l.ambiguous = 1 OR substr(l.linkpath, 1, 2) = './' OR substr(l.linkpath, 1, 3) = '../')"
)
_LINKS_SELECT = (
    "SELECT l.source_id, l.seq, f.path, l.linkpath, l.target_id, l.ambiguous "
    "FROM links l JOIN files f ON f.id = l.source_id "
)


def unresolved_key(linkpath: str, target_id: int | None) -> str | None:
    """links.name_key: set only on an unresolved link (a self-link has no target to find)."""
    return name_key(linkpath) if target_id is None and linkpath else None


class LinkTargets:
    """Resolves links against the files in the index, holding no per-file state: the files
    of a name are probed by the index files_name_key (no 100k-file map: issue 6 measured about
    70 MB in the daemon; nor a key index over every file: 32 MB and seconds to build at 1M
    notes, issue 35)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self._resolver = Resolver()
        self._ids: dict[str, int] = {}

    def ids_of(self, keys: Iterable[str]) -> dict[str, list[int]]:
        """The ids of the files filed under each of ``keys`` (``file_keys``), by probing the
        index files_name_key, a few rows a key: a save, or a one-shot writer (`mv`), does not
        key every file of the vault for the few names it touches (issues 33 and 35)."""
        keys = set(keys)
        found: dict[str, list[int]] = {key: [] for key in keys}
        for file_id, _path, filed in self._filed(keys):
            for key in filed:
                if key in found:
                    found[key].append(file_id)
        return found

    def _filed(
        self, keys: set[str], names_of: Callable[[str], tuple[str, ...]] | None = None
    ) -> Iterator[tuple[int, str, tuple[str, str | None]]]:
        """(id, path, ``file_keys(path)``) of each file filed under some of ``keys``, found by
        the index files_name_key (a crc that is another name's is filtered out here).
        ``names_of``: the file names probed for a key (by default the key, and the key with
        ``.md``: every file filed under it)."""
        names_of = names_of or (lambda key: (key, key + ".md"))
        return self._filed_by_crc(keys, {key_crc(name) for key in keys for name in names_of(key)})

    def _filed_by_crc(
        self, keys: set[str], crcs: Iterable[int]
    ) -> Iterator[tuple[int, str, tuple[str, str | None]]]:
        """``_filed`` of the files filed under the names of these ``key_crc``s."""
        names = sorted(crcs)
        for start in range(0, len(names), LOOKUP_CHUNK):
            chunk = json.dumps(names[start : start + LOOKUP_CHUNK])
            for file_id, path in self.conn.execute(_FILES_OF_NAME_KEYS, (chunk,)):
                filed = file_keys(path)
                if filed[0] in keys or filed[1] in keys:
                    yield file_id, path, filed

    def stems_filed(self, keys: Iterable[str]) -> set[str]:
        """Those of ``keys`` that are some note's stem key (``file_stem_key``): a probe of the
        index files_name_key per key (a note's stem key k is its name key k.md), a few
        milliseconds for the few thousand `typo` variants of a name at any vault size, where
        a key index over every file cost the daemon 32 MB and seconds to build at 1M notes
        (issue 35)."""
        keys = set(keys)
        filed: set[str] = set()
        names = sorted({key_crc(key + ".md") for key in keys})
        for start in range(0, len(names), LOOKUP_CHUNK):
            chunk = json.dumps(names[start : start + LOOKUP_CHUNK])
            for _file_id, path in self.conn.execute(_FILES_OF_NAME_KEYS, (chunk,)):
                stem = file_stem_key(path)
                if stem in keys:
                    filed.add(stem)
        return filed

    def keys_filed(self) -> int:
        """About how many keys the files are filed under (a note two, an attachment one),
        read in constant time: the largest file id, twice."""
        row = self.conn.execute("SELECT max(id) FROM files").fetchone()
        return 2 * int(row[0] or 0)

    def load_candidates(self, keys: Iterable[str], crcs: Iterable[int] | None = None) -> None:
        """Until the next load, ``resolve`` sees every file filed under ``keys``: it resolves
        any linkpath whose ``lookup_key`` is in ``keys`` exactly as over the whole vault.
        One probe of files_name_key, each file's path keyed once (issue 35, build35b: a
        second read of the files by id, keyed again by ``Resolver.add``, was a third of
        this step, itself a third of a cold build's batches on the writer's thread).
        ``crcs``: the ``key_crc`` of every ``candidate_names`` of ``keys``, when the caller
        has them (``noterows.probes``: hashed in the parse workers)."""
        resolver = Resolver()
        ids: dict[str, int] = {}
        # Only the names ``Resolver.resolve`` may answer with: a key without an extension
        # is looked up by stem alone, so its own name is not probed (issue 35, build35b:
        # most link keys, half the probes).
        keys = set(keys)
        found = (
            self._filed(keys, candidate_names) if crcs is None else self._filed_by_crc(keys, crcs)
        )
        for file_id, path, filed in found:
            resolver.add(path, filed)
            ids[path] = file_id
        self._resolver, self._ids = resolver, ids

    def drop_candidates(self) -> None:
        self._resolver, self._ids = Resolver(), {}

    def resolve(
        self, linkpath: str, source: str, folded: str | None = None
    ) -> tuple[int | None, bool]:
        """A link's target id (None: unresolved) and whether the tie-break of 7.7 chose.
        ``folded``: ``fold(linkpath)``, when the caller has it (``noterows.LinkRow``)."""
        if not linkpath:
            return None, False  # SEMANTICS 6: [[#Heading]] is a self-link, not an edge
        resolution = self._resolver.resolve(linkpath, source, folded)
        if resolution.target is None:
            return None, False
        return self._ids.get(resolution.target), resolution.ambiguous

    def files_named(self, key: str) -> list[str]:
        """Paths of the files filed under the link key ``key`` (``lookup_key``), in path order."""
        ids = self.ids_of((key,))[key]
        if not ids:
            return []
        rows = self.conn.execute(_PATHS_OF_IDS, (json.dumps(list(ids)),)).fetchall()
        return sorted(path for _id, path in rows if key in file_keys(path))

    def files_named_many(self, keys: Iterable[str]) -> dict[str, list[str]]:
        """``files_named`` of each of ``keys``, in one read of the files' paths (a folder
        rename's suggestions look up thousands of names: one statement each was most of it)."""
        ids_of = self.ids_of(keys)
        wanted = sorted({file_id for ids in ids_of.values() for file_id in ids})
        paths: dict[int, str] = {}
        for start in range(0, len(wanted), LOOKUP_CHUNK):
            paths.update(
                self.conn.execute(
                    _PATHS_OF_IDS, (json.dumps(wanted[start : start + LOOKUP_CHUNK]),)
                )
            )
        named: dict[str, list[str]] = {}
        for key, ids in ids_of.items():
            found = (paths.get(file_id) for file_id in ids)
            named[key] = sorted(path for path in found if path and key in file_keys(path))
        return named

    def unresolve_links_to(self, file_id: int, withdraw: Withdraw) -> set[int]:
        """A file goes: links that pointed at it become unresolved. Returns their sources,
        whose FTS rows change (withdrawn before the links do)."""
        sources = {
            row[0]
            for row in self.conn.execute(
                "SELECT DISTINCT source_id FROM links WHERE target_id = ?", (file_id,)
            )
        }
        withdraw(sources)
        self.conn.execute(
            "UPDATE links SET target_id = NULL, ambiguous = 0, name_key = nx_name_key(linkpath) "
            "WHERE target_id = ?",
            (file_id,),
        )
        return sources

    def reresolve_for(self, changed_paths: set[str], dirty: set[int], withdraw: MarkLinks) -> None:
        """SEMANTICS 7: re-resolve exactly the links whose resolution these files can change."""
        if self.conn.execute("SELECT 1 FROM links LIMIT 1").fetchone() is None:
            # None to re-resolve: a first index registers every file before it writes a
            # link, and keying its paths for nothing cost 0.02 s at 3k notes.
            return
        # In slices: a first index creates 100k files, whose keys and links would otherwise
        # all be held at once (tens of MB). A link re-resolved twice gets the same answer.
        ordered = sorted(changed_paths)
        for start in range(0, len(ordered), LOOKUP_CHUNK):
            self._reresolve_slice(ordered[start : start + LOOKUP_CHUNK], dirty, withdraw)

    def _affected_links(self, keys: set[str]) -> list[tuple[int, int, str, str, int | None, int]]:
        # json_each, not one placeholder per key: a first index of 100k files has 100k keys,
        # beyond SQLite's default limit on bound parameters.
        rows: list[tuple[int, int, str, str, int | None, int]] = self.conn.execute(
            _LINKS_SELECT + "WHERE l.name_key IN (SELECT value FROM json_each(?))",
            (json.dumps(sorted(keys), ensure_ascii=False),),
        ).fetchall()
        # A resolved link has a name_key among its target's affected_name_keys: the links
        # these files can take from (or give to) another file point at a file sharing a key.
        sharing = {file_id for ids in self.ids_of(keys).values() for file_id in ids}
        if sharing:
            rows += [
                row
                for row in self.conn.execute(
                    _LINKS_SELECT + "WHERE l.target_id IN (SELECT value FROM json_each(?))",
                    (json.dumps(sorted(sharing)),),
                )
                if name_key(row[3]) in keys
            ]
        return rows

    def _reresolve_slice(
        self, changed_paths: Iterable[str], dirty: set[int], withdraw: MarkLinks
    ) -> None:
        keys: set[str] = set()
        for path in changed_paths:
            keys.update(affected_name_keys(path))
        if not keys:
            return
        self._reresolve_rows(self._affected_links(keys), dirty, withdraw)

    def reresolve_moved(
        self, source_ids: Iterable[int], keys: set[str], dirty: set[int], withdraw: MarkLinks
    ) -> None:
        """Files moved under the same names (a folder rename: their keys, and this key index,
        stay): re-resolve the links a path can decide. SEMANTICS 7 reads a path only for a
        linkpath with a folder (7.5, 7.6, 7.7's suffix) and for a tie-break among several
        candidates (7.7, marked ``ambiguous``); a bare name with one candidate (7.4) lands on
        the same file wherever either end is, and a bare name with none stays broken. So these
        are read: of the links filed under ``keys`` (to or naming a file of those names), those
        with a ``/`` or a tie-break, not the bare links to unique names that make up most of a
        vault; of the moved notes' own links (``source_ids``), only those whose source's folder
        decides: relative ones (7.5) and tie-breaks (7.7). Any other one finds the same
        candidates wherever its source is (7.6's full path, 7.7's suffix), and if a candidate
        moved, the link is filed under ``keys`` (by its target, or unresolved by its name) and
        read above.

        A broken link filed under ``keys`` with two files or more is refixed: its `folder` fix
        names the first by path, in the path form (SEMANTICS 8.3). Under a key of one file it
        is that file's bare name, which a move under the same name keeps."""
        rows = self.conn.execute(
            _LINKS_SELECT + f"WHERE l.source_id IN (SELECT value FROM json_each(?)) "
            f"AND l.linkpath <> '' AND {_SOURCE_DEPENDENT}",
            (json.dumps(sorted(source_ids)),),
        ).fetchall()
        wanted = json.dumps(sorted(keys), ensure_ascii=False)
        rows += self.conn.execute(
            _LINKS_SELECT + "WHERE l.name_key IN (SELECT value FROM json_each(?)) "
            "AND instr(l.linkpath, '/') > 0",
            (wanted,),
        ).fetchall()
        sharing: set[int] = set()
        shared: list[str] = []  # the keys of two files or more
        for key, ids in self.ids_of(keys).items():
            sharing.update(ids)
            if len(ids) > 1:
                shared.append(key)
        rows += [
            row
            for row in self.conn.execute(
                _LINKS_SELECT + "WHERE l.target_id IN (SELECT value FROM json_each(?)) "
                f"AND {_PATH_DEPENDENT}",
                (json.dumps(sorted(sharing)),),
            )
            if name_key(row[3]) in keys
        ]
        unique = list({(row[0], row[1]): row for row in rows}.values())
        self._reresolve_rows(unique, dirty, withdraw)
        linkfixes.refix(self.conn, shared)

    def _reresolve_rows(
        self,
        rows: list[tuple[int, int, str, str, int | None, int]],
        dirty: set[int],
        withdraw: MarkLinks,
    ) -> None:
        updates = []
        self.load_candidates(lookup_key(row[3]) for row in rows)
        sources: set[int] = set()  # their own links change: their unresolved keys
        targets: set[int] = set()  # the links into them change: their anchors
        still_broken: set[str] = set()
        for source_id, seq, source, linkpath, old_target, old_ambiguous in rows:
            new_target, ambiguous = self.resolve(linkpath, source)
            if new_target != old_target or int(ambiguous) != old_ambiguous:
                # The flag alone (the same target, still or no longer a tie) is read by the
                # queries straight from `links`: no structure-search row or finding has it.
                if new_target != old_target:
                    sources.add(source_id)
                    targets.update(t for t in (old_target, new_target) if t is not None)
                updates.append(
                    (
                        new_target,
                        int(ambiguous),
                        unresolved_key(linkpath, new_target),
                        source_id,
                        seq,
                    )
                )
            elif new_target is None and linkpath:
                still_broken.add(name_key(linkpath))  # its `folder` suggestion may change
        self.drop_candidates()
        linkfixes.refix(self.conn, still_broken)
        withdraw(sources, sides=OUTGOING)
        withdraw(targets, sides=INCOMING)
        dirty |= sources | targets
        self.conn.executemany(
            "UPDATE links SET target_id = ?, ambiguous = ?, name_key = ? WHERE source_id = ? AND seq = ?",
            updates,
        )
