"""Fix suggestions for broken links (SEMANTICS 8.3), stored with them in ``broken_links``:
`alias`, `folder`, `renamed` (store/renames.py holds the history) and `typo`, and which
suggestions a created, moved or deleted note name can change. All their SQL.

A change that can change only suggestions (an alias, a name or a rename history entry came or
went) does not make the notes with those broken links dirty: it files the links' name keys in
``temp.refix_keys`` (``refix``), and ``suggest_link_fixes`` computes the suggestion of every
broken link under those keys again, in the same transaction, leaving the rest of those notes'
findings and search rows alone (issue 17: a folder rename touches thousands of such links).

Over 500 lines on purpose: the four suggestion rules and the re-fix of their keys read the same
candidate probes, and all of their SQL stays in one place."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from notedex.store import renames
from notedex.vault.files import is_note_name
from notedex.vault.fixes import (
    TYPO_MIN_LENGTH,
    is_one_edit_variant,
    link_to,
    one_edit_apart,
    one_edit_variants,
    same_name,
)
from notedex.vault.resolve import file_keys, file_stem_key, lookup_key
from notedex.vault.text import fold

if TYPE_CHECKING:
    from notedex.store.links import LinkTargets


RENAMED = "renamed"
TYPO_BULK_KEYS = 64
"""From this many distinct `typo` keys in one refresh (a first index, a large move), and one key
for every ``TYPO_FILES_PER_KEY`` keys the files are filed under, every note stem is compared with all
of them at once (``_Fixer._near_stems``) instead of each key's few thousand variants being
looked up."""
TYPO_FILES_PER_KEY = 1024
"""The look-ups of one key's variants (an index probe each, ``LinkTargets.stems_filed``) cost
about what ``near_stems`` spends on a thousand filed keys (measured at 40k notes with binary
searches of a key index: 3.2 ms for a 22-character key, 2.8 us an entry; the probes cost the
same CPU). So a refresh reads every note stem only where that
costs less than the keys' own look-ups: a small apply's cost stays bounded by its keys at any
vault size (issue 35)."""
PROBE_NAMES = 256
"""Up to this many created, moved or deleted note names, the broken keys one edit from them are
found by index probes (``_broken_keys_near``); from it (a folder rename, a first index), the
vault's distinct broken keys are read once and compared with all the names at once."""
_REFIX = "CREATE TEMP TABLE IF NOT EXISTS refix_keys(key TEXT PRIMARY KEY)"
# The stored broken links whose suggestion is computed again: every one filed under a refix
# key (the dirty notes' new ones are handed over, ``suggest_link_fixes``).
_BROKEN_TO_FIX = """
SELECT b.source, b.line, b.col, b.seq, l.linkpath, l.display, l.name_key, b.suggestion, b.reason
FROM temp.refix_keys r CROSS JOIN links l ON l.name_key = r.key
CROSS JOIN files f ON f.id = l.source_id
CROSS JOIN broken_links b ON b.source = f.path AND b.seq = l.seq
"""
NewBrokenLink = tuple[str, int, int, int, str, str, str, "str | None", str, int]
"""A broken link without a row yet: (source, line, col, seq, text, target) as ``broken_links``
stores them, then the link's linkpath, display and name key, and whether it is inside a
comment (``findings.refresh_findings``)."""


def refix(conn: sqlite3.Connection, keys: Iterable[str]) -> None:
    """Inside a transaction: the broken links filed under these ``links.name_key`` values get
    their suggestion computed again by the next ``suggest_link_fixes`` (``refresh_fts``)."""
    encoded = json.dumps(sorted(set(keys)), ensure_ascii=False)
    if encoded == "[]":
        return
    conn.execute(_REFIX)
    conn.execute(
        "INSERT OR IGNORE INTO temp.refix_keys(key) SELECT value FROM json_each(?)", (encoded,)
    )


def refix_aliases_of(conn: sqlite3.Connection, ids: Iterable[int]) -> None:
    """The broken links whose key is an alias of these notes (their `alias` suggestion depends
    on them); before the aliases' rows change."""
    encoded = json.dumps(sorted(set(ids)))
    if encoded == "[]":
        return
    conn.execute(_REFIX)
    conn.execute(
        "INSERT OR IGNORE INTO temp.refix_keys(key) SELECT alias_key FROM aliases "
        "WHERE file_id IN (SELECT value FROM json_each(?))",
        (encoded,),
    )


def refix_fixes_naming(conn: sqlite3.Connection, links: LinkTargets, paths: Iterable[str]) -> None:
    """A fix names its file the shortest way (``link_to``): a file created, moved or deleted
    under the name of an alias owner or of a renamed file changes their `alias` and `renamed`
    fixes (`folder` and `typo` look at those names themselves). Nothing to do while no link
    is broken."""
    if conn.execute("SELECT 1 FROM links WHERE name_key IS NOT NULL LIMIT 1").fetchone() is None:
        return
    keys = {key for path in paths for key in file_keys(path) if key is not None}
    if not keys:
        return
    ids = sorted({file_id for found in links.ids_of(keys).values() for file_id in found})
    refix_aliases_of(conn, ids)
    refix(
        conn,
        (
            key
            for (stored,) in conn.execute(
                "SELECT DISTINCT old_key FROM renames "
                "WHERE file_id IN (SELECT value FROM json_each(?))",
                (json.dumps(ids),),
            )
            for key in renames.link_keys(stored)
        ),
    )


def refix_sources(conn: sqlite3.Connection) -> set[int]:
    """The sources of the broken links under the refix keys, which are then forgotten: an
    apply that defers the findings to a later transaction (a private index) makes them dirty
    instead, since ``temp.refix_keys`` does not outlive a crash."""
    conn.execute(_REFIX)
    sources = {
        row[0]
        for row in conn.execute(
            "SELECT DISTINCT l.source_id FROM temp.refix_keys r "
            "CROSS JOIN links l ON l.name_key = r.key"
        )
    }
    conn.execute("DELETE FROM temp.refix_keys")
    return sources


def near_stems_ahead(
    conn: sqlite3.Connection, offload: Callable[..., Future[Any]]
) -> Future[dict[str, set[str]]] | None:
    """The `typo` search of a refresh with many keys (a first index), started before the fixes
    are wanted, in ``offload``'s process: ``near_stems`` over the `typo` keys of every broken
    link (a superset of those the refresh's fixes look up) and every note's path. None when
    there are too few keys for the bulk search (``_Fixer._variants_filed``)."""
    keys = {
        key
        for (linkpath,) in conn.execute(
            "SELECT DISTINCT linkpath FROM links WHERE name_key IS NOT NULL"
        )
        if len(key := _typo_key(linkpath)) >= TYPO_MIN_LENGTH
    }
    if len(keys) < TYPO_BULK_KEYS:
        return None
    # One UTF-8 string, the paths separated by NULs (no file name holds one): half the memory
    # of a list of a million strings, here, in the pickle and in the helper (a str would take
    # four bytes a character for all of them once one name holds an emoji).
    paths = conn.execute(
        "SELECT CAST(group_concat(path, char(0)) AS BLOB) FROM files WHERE is_note = 1"
    ).fetchone()[0]
    return offload(near_stems, keys, paths or b"")


def near_stems(keys: Iterable[str], paths: Iterable[str] | bytes) -> dict[str, set[str]]:
    """Every note stem (of ``paths``: paths, or their UTF-8 separated by NULs) that is a
    ``one_edit_variants`` of a `typo` key, by key: the keys are filed by their deletes
    (``_deletes``: two strings one edit apart share one), and each stem's deletes are looked
    up once. A few look-ups per stem instead of a few thousand variants per key (issue 12: the
    typo search was most of the findings' cold-index cost). Pure: runs in another process at
    a large build's end (``near_stems_ahead``).

    A delete is filed by its hash, not its text, to the key's number (a list of numbers only
    where keys share one): about 75 bytes a delete instead of 170, where the deletes of every
    broken key of a 1M-note vault (about 15 a key) held about 400 MB in the helper (issue 35).
    A hash that is not the delete's own finds a key that ``is_one_edit_variant`` then refuses.
    """
    keys = sorted(set(keys))
    filed: dict[int, int] = {}  # a delete's hash -> its key's number, or -1: see ``shared``
    shared: dict[int, list[int]] = {}
    for number, key in enumerate(keys):
        for variant in _deletes(key):
            cell = hash(variant)
            found = filed.get(cell)
            if found is None:
                filed[cell] = number
            elif found >= 0:
                if found != number:
                    filed[cell] = -1
                    shared[cell] = [found, number]
            elif number not in shared[cell]:
                shared[cell].append(number)
    look = filed.get
    near: dict[str, set[str]] = {}
    for path in _split(paths) if isinstance(paths, bytes) else paths:
        stem = file_stem_key(path)
        if stem is None or len(stem) + 1 < TYPO_MIN_LENGTH:
            continue
        # ``_deletes(stem)`` without the set: the stem itself (at len(stem)), then each string
        # one shorter; a repeated one is looked up again, harmlessly.
        for cut in range(len(stem) + 1):
            cell = hash(stem[:cut] + stem[cut + 1 :])
            found = look(cell)
            if found is None:
                continue
            for number in (found,) if found >= 0 else shared[cell]:
                key = keys[number]
                if is_one_edit_variant(key, stem):
                    near.setdefault(key, set()).add(stem)
    return near


def _split(paths: bytes) -> Iterator[str]:
    """The NUL-separated UTF-8 paths of ``paths``, one at a time."""
    start, end = 0, len(paths)
    while start < end:
        cut = paths.find(b"\0", start)
        if cut < 0:
            cut = end
        yield paths[start:cut].decode("utf-8")
        start = cut + 1


def suggest_link_fixes(
    conn: sqlite3.Connection,
    links: LinkTargets,
    new: Sequence[NewBrokenLink] = (),
    *,
    near: Future[dict[str, set[str]]] | None = None,
) -> None:
    """SEMANTICS 8.3: a fix for each new broken link of the dirty notes (``new``, written here
    with it: one write of each row and of its stored document, not a row waiting for its
    suggestion and updated) and for each stored one under the refix keys (updated where it
    changes): `alias` (the key is another note's alias), else `folder` (a file of that name
    exists elsewhere), else `renamed` (a file was seen leaving that name), else `typo` (a
    note's name is one edit away). ``near``: the `typo` search already under way for every
    broken link's key (``near_stems_ahead``)."""
    conn.execute(_REFIX)
    broken = conn.execute(_BROKEN_TO_FIX).fetchall()
    if conn.execute("SELECT 1 FROM temp.refix_keys LIMIT 1").fetchone() is not None:
        conn.execute("DELETE FROM temp.refix_keys")
    fixer = _Fixer(
        conn,
        links,
        {row[6] for row in broken} | {row[8] for row in new},
        {row[4] for row in broken} | {row[6] for row in new},
        near,
    )
    updates = []
    for source, line, col, seq, linkpath, display, key, suggestion, reason in broken:
        fix = fixer.fix(source, linkpath, display, key)
        if fix != (suggestion, reason):
            updates.append((*fix, source, line, col, seq))
    inserts = [
        (*row[:6], suggestion, reason, reason, row[5], row[9])
        for row in new
        for suggestion, reason in (fixer.fix(row[0], row[6], row[7], row[8]),)
    ]
    # The confidence by the writer's SQL function, the one rule (SEMANTICS 8.10): NULL when
    # the suggestion is not offered, which health reads from the row (schema.BROKEN_LINK_DOC).
    conn.executemany(
        "INSERT INTO broken_links(source, line, col, seq, text, target, suggestion, reason, "
        "confidence, in_comment) VALUES (?, ?, ?, ?, ?, ?, ?, ?, nx_link_confidence(?, ?), ?)",
        inserts,
    )
    conn.executemany(
        "UPDATE broken_links SET suggestion = ?, reason = ?, "
        "confidence = nx_link_confidence(?, target) "
        "WHERE source = ? AND line = ? AND col = ? AND seq = ?",
        [(suggestion, reason, reason, *key) for suggestion, reason, *key in updates],
    )


class _Fixer:
    """The fixes of one refresh, each computed once: many broken links share a linkpath (a
    folder rename breaks every link into it by path), and only `alias` depends on the source
    (a note is no fix for itself)."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        links: LinkTargets,
        keys: set[str],
        linkpaths: set[str],
        near: Future[dict[str, set[str]]] | None = None,
    ) -> None:
        self.conn, self.links = conn, links
        # The keys that are some note's alias: one query, not one per broken link.
        self.alias_keys = {
            row[0]
            for row in conn.execute(
                "SELECT DISTINCT alias_key FROM aliases "
                "WHERE alias_key IN (SELECT value FROM json_each(?))",
                (json.dumps(sorted(keys), ensure_ascii=False),),
            )
        }
        self.owners: dict[str, list[str]] = {}
        self.aliases: dict[tuple[str, str], tuple[str, str]] = {}  # (owner, shown)
        self.others: dict[tuple[str, str | None], tuple[str, str] | None] = {}
        self.typos: dict[str, str | None] = {}  # per key: many broken links share one
        # The `typo` keys this refresh may look up; with many, all are matched in one pass.
        self.typo_keys = {
            key for linkpath in linkpaths if len(key := _typo_key(linkpath)) >= TYPO_MIN_LENGTH
        }
        self.near: dict[str, set[str]] | None = None
        self.near_ahead = near
        # The files of each linkpath's name, read at once when first needed (`folder` fixes,
        # SEMANTICS 8.3).
        self.linkpaths = linkpaths
        self.named: dict[str, list[str]] | None = None

    def files_named(self, key: str) -> list[str]:
        """``LinkTargets.files_named``, from the names read at once when there."""
        if self.named is None:
            self.named = self.links.files_named_many(lookup_key(path) for path in self.linkpaths)
        named = self.named.get(key)
        return self.links.files_named(key) if named is None else named

    def fix(
        self, source: str, linkpath: str, display: str | None, key: str
    ) -> tuple[str | None, str | None]:
        fix = self._alias_fix(source, linkpath, display, key) if key in self.alias_keys else None
        if fix is not None:
            return fix
        memo = (linkpath, display)
        if memo not in self.others:
            # SEMANTICS 8.3: a name several files share, or an alias, exists as written: a
            # note one edit from it is another note, never a typo's fix.
            exact = key in self.alias_keys or len(_same_named(self.files_named, linkpath)) > 1
            self.others[memo] = (
                _folder_fix(self.files_named, linkpath, display)
                or _renamed_fix(self.conn, self.files_named, linkpath, display)
                or (None if exact else self._typo_fix(linkpath, display))
            )
        return self.others[memo] or (None, None)

    def _typo_fix(self, linkpath: str, display: str | None) -> tuple[str, str] | None:
        """The first note by path whose name is one edit from the link's (``one_edit_variants``:
        bounded, a few hundred look-ups per name, whatever the vault)."""
        key = _typo_key(linkpath)
        if len(key) < TYPO_MIN_LENGTH:
            return None
        if key not in self.typos:
            digits = _DIGITS.findall(key)
            named = [
                path
                for variant in self._variants_filed(key)
                for path in self.files_named(variant)
                if file_stem_key(path) == variant and _DIGITS.findall(variant) == digits
            ]
            self.typos[key] = min(named) if named else None
        path = self.typos[key]
        if path is None:
            return None
        return link_to(path, self.files_named(lookup_key(path)), display), "typo"

    def _variants_filed(self, key: str) -> Iterable[str]:
        """The ``one_edit_variants`` of ``key`` some note's stem is filed under."""
        if self.near is None and (
            self.near_ahead is not None
            or len(self.typo_keys)
            >= max(TYPO_BULK_KEYS, self.links.keys_filed() // TYPO_FILES_PER_KEY)
        ):
            self.near = self._near_stems() if self.near_ahead is None else self.near_ahead.result()
        if self.near is not None:
            return self.near.get(key, ())
        # An index probe per variant: never a set of every filed key (that was 2M hashes at
        # 1M notes for one edit, issue 35), nor a key index over every file.
        return self.links.stems_filed(one_edit_variants(key))

    def _near_stems(self) -> dict[str, set[str]]:
        """``near_stems`` of this refresh's `typo` keys."""
        paths = (row[0] for row in self.conn.execute("SELECT path FROM files WHERE is_note = 1"))
        return near_stems(self.typo_keys, paths)

    def _alias_fix(
        self, source: str, linkpath: str, display: str | None, key: str
    ) -> tuple[str, str] | None:
        if linkpath not in self.owners:
            wanted = fold(linkpath)
            self.owners[linkpath] = sorted(
                path
                for path, alias in self.conn.execute(
                    "SELECT f.path, a.alias FROM aliases a CROSS JOIN files f "
                    "ON f.id = a.file_id WHERE a.alias_key = ?",
                    (key,),
                )
                if fold(alias) == wanted
            )
        owners = [path for path in self.owners[linkpath] if path != source]
        if len(owners) != 1:
            return None  # SEMANTICS 8.3: an alias of several notes names none of them
        owner = owners[0]
        # The reader keeps seeing what was written: the display text, else the alias itself
        # (`[[Go notes|my go]]` -> `[[Golang|my go]]`, `[[Go notes]]` -> `[[Golang|Go notes]]`).
        shown = linkpath if display is None else display
        if (owner, shown) not in self.aliases:
            others = self.files_named(lookup_key(owner))
            self.aliases[owner, shown] = (link_to(owner, others, shown), "alias")
        return self.aliases[owner, shown]


_DIGITS = re.compile(r"\d+")
"""SEMANTICS 8.3: a `typo` keeps the name's numbers (`Plan 10` is not `Plan 12`, nor
`2023-05-25` a typo of `2023-05-26`: numbered notes of a series)."""


def _same_named(files_named: Callable[[str], list[str]], linkpath: str) -> list[str]:
    """The files filed under the name of ``linkpath`` (7.2)."""
    key = lookup_key(linkpath)
    return [path for path in files_named(key) if same_name(path, key)]


def _folder_fix(
    files_named: Callable[[str], list[str]], linkpath: str, display: str | None
) -> tuple[str, str] | None:
    named = _same_named(files_named, linkpath)
    if len(named) != 1:
        return None  # SEMANTICS 8.3: a name several files share, the first by path is a guess
    return link_to(named[0], named, display), "folder"


def _renamed_fix(
    conn: sqlite3.Connection,
    files_named: Callable[[str], list[str]],
    linkpath: str,
    display: str | None,
) -> tuple[str, str] | None:
    key = lookup_key(linkpath)
    path = renames.renamed_to(conn, key[:-3] if key.endswith(".md") else key)
    if path is None:
        return None
    return link_to(path, files_named(lookup_key(path)), display), RENAMED


def _typo_key(linkpath: str) -> str:
    key = lookup_key(linkpath)
    return key[:-3] if key.endswith(".md") else key


def typo_neighbours(conn: sqlite3.Connection, paths: Iterable[str]) -> None:
    """The broken links one edit from the name of a note among ``paths`` (created, moved or
    deleted): their `typo` suggestion may change (``refix``). Compares the names with the
    distinct broken keys, so it costs nothing while no link is broken (a first index); a folder
    rename keeps its names, each looked at once."""
    if conn.execute("SELECT 1 FROM links WHERE name_key IS NOT NULL LIMIT 1").fetchone() is None:
        return
    stems = {file_stem_key(path) for path in paths if is_note_name(path.rpartition("/")[2])}
    near = _broken_keys_near(conn, {stem for stem in stems if stem is not None})
    if near is not None:
        refix(conn, near)
        return
    names: dict[str, set[str]] = {}  # each name by its deletes: a folder of 12k names is
    # compared with each broken key in a few look-ups, not one by one (issue 17)
    for stem in stems:
        if stem is not None and len(stem) + 1 >= TYPO_MIN_LENGTH:
            for variant in _deletes(stem):
                names.setdefault(variant, set()).add(stem)
    if not names:
        return
    broken = [
        raw
        for (raw,) in conn.execute("SELECT DISTINCT name_key FROM links WHERE name_key IS NOT NULL")
    ]
    refix(conn, (raw for raw in broken if _one_edit_from_any(_typo_key(raw), names)))


def typo_neighbours_moved(conn: sqlite3.Connection, moves: Iterable[tuple[str, str]]) -> None:
    """``typo_neighbours`` for files moved (old path, new path). A move that keeps a note's stem
    (a folder rename) neither gives nor takes a `typo` neighbour by stem: a broken link with no
    suggestion, or with a better one (SEMANTICS 8.3's order; their own refixes follow those),
    keeps it. Only the `typo` fixes can change, by the path they name (the first by path, and
    the folder ``link_to`` adds to a shared name): of the notes' stems, only the few keys with a
    `typo` row are compared, not the vault's distinct broken keys (issue 17)."""
    changed: set[str] = set()
    names: set[str] = set()  # the names that stay, each looked at once
    for old, new in moves:
        name = old.rpartition("/")[2]
        if name == new.rpartition("/")[2]:
            names.add(name)
        else:
            changed.update((old, new))
    typo_neighbours(conn, changed)
    kept = {stem for name in names if (stem := file_stem_key(name)) is not None}
    if kept:
        # A few names: every broken key one edit from them (a superset of the `typo` ones,
        # whose refix changes nothing), by index probes.
        near = _broken_keys_near(conn, kept)
        refix(conn, _typo_keys_near(conn, kept) if near is None else near)


def _typo_keys_near(conn: sqlite3.Connection, stems: set[str]) -> list[str]:
    """The ``links.name_key`` of the broken links whose fix is a `typo` one edit from one of
    these note stems."""
    kept = stems
    # The name keys of the broken links whose fix is a `typo`, from the rows themselves.
    typo_keys: dict[str, list[str]] = {}
    for (raw,) in conn.execute(
        "SELECT DISTINCT l.name_key FROM broken_links b CROSS JOIN files f ON f.path = b.source "
        "CROSS JOIN links l ON l.source_id = f.id AND l.seq = b.seq "
        "WHERE b.reason = 'typo' AND l.name_key IS NOT NULL"
    ):
        if len(key := _typo_key(raw)) >= TYPO_MIN_LENGTH:
            typo_keys.setdefault(key, []).append(raw)
    if len(typo_keys) < TYPO_BULK_KEYS:  # a few: each key's variants (the fix's own test)
        near = [key for key in typo_keys if not kept.isdisjoint(one_edit_variants(key))]
    else:  # many: the keys filed by their deletes, each name's deletes looked up
        filed: dict[str, set[str]] = {}
        for key in typo_keys:
            for variant in _deletes(key):
                filed.setdefault(variant, set()).add(key)
        near = list(
            {
                key
                for stem in kept
                for variant in _deletes(stem)
                for key in filed.get(variant, ())
                if one_edit_apart(key, stem)
            }
        )
    return [raw for key in near for raw in typo_keys[key]]


_BROKEN_KEYS = "SELECT DISTINCT name_key FROM links WHERE name_key IS NOT NULL AND {column} >= ?"
_KEY, _KEY_REVERSED = "name_key", "nx_reverse(name_key)"  # links_unresolved(_reversed)


def _broken_keys_near(conn: sqlite3.Connection, stems: set[str]) -> set[str] | None:
    """The ``links.name_key`` of the broken links whose `typo` key is one edit from one of
    ``stems`` (``one_edit_apart``, as ``_one_edit_from_any``), by index probes: None when
    there are too many names for probes to pay (``PROBE_NAMES``).

    One edit at position ``i`` of a stem of ``n`` characters leaves its first ``n // 2``
    characters in place when ``i >= n // 2``, and its characters after ``n // 2`` at the key's
    end otherwise (a swap of ``i`` and ``i + 1`` included). So the candidates are the broken
    keys that start with the stem's first half (``links_unresolved``) or end with the rest
    after one character, with or without ``.md`` (``links_unresolved_reversed``): the keys
    sharing half a name, never every broken link of the vault (issue 35)."""
    stems = {stem for stem in stems if len(stem) + 1 >= TYPO_MIN_LENGTH}
    if len(stems) > PROBE_NAMES:
        return None
    try:
        for stem in stems:
            stem.encode()
    except UnicodeEncodeError:  # a name SQLite cannot take (a lone surrogate): the scan
        return None
    near: set[str] = set()
    for stem in stems:
        half = len(stem) // 2
        tail = stem[half + 1 :]
        candidates = _starting(conn, _KEY, stem[:half])
        for ending in (tail, tail + ".md"):
            candidates |= _starting(conn, _KEY_REVERSED, ending[::-1])
        near.update(
            raw
            for raw in candidates
            if len(key := _typo_key(raw)) >= TYPO_MIN_LENGTH and one_edit_apart(key, stem)
        )
    return near


def _starting(conn: sqlite3.Connection, column: str, prefix: str) -> set[str]:
    """The broken keys whose ``column`` starts with ``prefix``: one range of its index, up to
    the first string after every string that starts with it (``_after``)."""
    query, upper = _BROKEN_KEYS.format(column=column), _after(prefix)
    if upper is None:
        return {row[0] for row in conn.execute(query, (prefix,))}
    return {row[0] for row in conn.execute(f"{query} AND {column} < ?", (prefix, upper))}


def _after(prefix: str) -> str | None:
    """The least string greater than every string that starts with ``prefix`` (SQLite
    compares UTF-8 bytes, in code point order); None if there is none."""
    while prefix:
        last = ord(prefix[-1]) + 1
        if 0xD800 <= last < 0xE000:
            last = 0xE000  # surrogates are no characters of UTF-8
        if last <= 0x10FFFF:
            return prefix[:-1] + chr(last)
        prefix = prefix[:-1]
    return None


def _deletes(word: str) -> set[str]:
    """``word`` and each string one character shorter. Two strings one edit apart (dropped,
    added, replaced, two neighbours swapped: ``one_edit_apart``) share one of these."""
    return {word, *(word[:i] + word[i + 1 :] for i in range(len(word)))}


def _one_edit_from_any(key: str, names: dict[str, set[str]]) -> bool:
    if len(key) < TYPO_MIN_LENGTH:
        return False
    return any(
        one_edit_apart(key, name) for variant in _deletes(key) for name in names.get(variant, ())
    )
