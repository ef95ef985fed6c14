"""The note rows: notes, title_grams, exact_names, tags, aliases, links, tasks, problems and the
body index of each note, written from parsed notes and cleared before a note is written again or
deleted.

Over 400 lines on purpose: what clears a note's rows and what writes them, side by side.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from notedex.store import bodyzip, files, findings, linkfixes
from notedex.store.links import LinkTargets
from notedex.store.noterows import Derived, Prepared, name_keys_of
from notedex.store.schema import content_key
from notedex.vault.model import Note, VaultFile
from notedex.vault.walk import is_excluded


@dataclass
class _Rows:
    """The rows of one batch of notes, inserted with one executemany per table."""

    etags: list[tuple[Any, ...]] = field(default_factory=list)
    notes: list[tuple[Any, ...]] = field(default_factory=list)
    grams: list[tuple[int, str, str | None]] = field(default_factory=list)
    tags: list[tuple[Any, ...]] = field(default_factory=list)
    aliases: list[tuple[int, int, str, str]] = field(default_factory=list)
    names: list[tuple[str, int, int]] = field(default_factory=list)
    links: list[tuple[Any, ...]] = field(default_factory=list)
    problems: list[tuple[str, str, str, str]] = field(default_factory=list)
    bodies: list[tuple[int, str]] = field(default_factory=list)
    fts: list[tuple[int, str, str, str]] = field(default_factory=list)
    tasks: list[tuple[Any, ...]] = field(default_factory=list)
    properties: list[tuple[Any, ...]] = field(default_factory=list)


def clear_note_rows(conn: sqlite3.Connection, file_id: int, path: str) -> set[int]:
    """Remove a note's derived rows; return the notes whose anchors depended on its links."""
    dirty = {
        row[0]
        for row in conn.execute(
            "SELECT DISTINCT target_id FROM links WHERE source_id = ? AND target_id IS NOT NULL",
            (file_id,),
        )
    }
    # A broken link whose key was one of its aliases loses its `alias` suggestion.
    linkfixes.refix_aliases_of(conn, [file_id])
    findings.withdraw(conn, {file_id, *dirty})
    # title_grams reads its text from notes (external content): remove it while the
    # notes row still holds the values it was indexed with.
    conn.execute(
        "INSERT INTO title_grams(title_grams, rowid, stem, frontmatter_title) "
        "SELECT 'delete', file_id, stem, frontmatter_title FROM notes WHERE file_id = ?",
        (file_id,),
    )
    findings.drop_findings_of(conn, path)
    # Its exact names by their keys, derived again from the rows they were derived from
    # (while the notes and aliases rows still hold them): exact_names has no index by note.
    conn.executemany(_DELETE_EXACT_NAMES, _stored_exact_names(conn, file_id))
    for sql in (
        "DELETE FROM links WHERE source_id = ?",
        "DELETE FROM tags WHERE file_id = ?",
        "DELETE FROM properties WHERE file_id = ?",
        "DELETE FROM aliases WHERE file_id = ?",
        "DELETE FROM tasks WHERE file_id = ?",
        "DELETE FROM notes WHERE file_id = ?",
        # body_fts reads the old text from body_store (external content): that row goes last.
        "DELETE FROM body_fts WHERE rowid = ?",
        "DELETE FROM body_store WHERE file_id = ?",
    ):
        conn.execute(sql, (file_id,))
    conn.execute("DELETE FROM problems WHERE path = ? AND kind <> 'walk'", (path,))
    return dirty


def delete_files(conn: sqlite3.Connection, paths: Iterable[str], links: LinkTargets) -> set[int]:
    """Remove these files and their rows. Returns the notes whose FTS rows must change."""
    dirty: set[int] = set()
    for known in files.file_rows(conn, paths).values():
        dirty |= clear_note_rows(conn, known.id, known.path)
        # Links that pointed here become unresolved; their sources' FTS rows change.
        dirty |= links.unresolve_links_to(known.id, lambda ids: findings.withdraw_links(conn, ids))
        files.delete_file_row(conn, known.id, known.path)
        dirty.discard(known.id)
    return dirty


def write_notes(
    conn: sqlite3.Connection,
    parsed: Sequence[tuple[Note, str, Derived]],
    by_path: dict[str, VaultFile],
    *,
    links: LinkTargets,
    filters: tuple[str, ...],
    disk_rel: Callable[[VaultFile], str | None],
    stage_fts: bool = False,
    stage_names: bool = False,
) -> set[int]:
    """Replace a batch of notes' rows. Returns the note ids whose FTS rows must change.
    ``stage_fts``: their search texts are staged for the end's refresh (a build aside).
    ``stage_names``: their ``exact_names`` rows wait in a temp table (``insert_staged_names``)."""
    now = time.time_ns()
    dirty: set[int] = set()
    rows = _Rows()
    known_rows = files.file_rows(conn, (note.path for note, _, _ in parsed))
    # In rowid order (see below), the bodies too: ``deflated`` follows ``parsed``.
    parsed = sorted(parsed, key=lambda item: known_rows[item[0].path].id)
    # The bodies' compression runs beside the rest of the batch: zlib lets go of the GIL, and
    # in a cold index it was a sixth of the writer's time, the critical path (issue 12, wall).
    with _deflating(conn, [body for _, body, _ in parsed if body]) as deflated:
        # The links' lookup keys and the hashes of the names they probe came from the
        # workers (``noterows.probes``).
        keys: set[str] = set()
        crcs: set[int] = set()
        for _, _, derived in parsed:
            keys.update(derived[4][7][0])
            crcs.update(derived[4][7][1])
        links.load_candidates(keys, crcs)
        # Notes indexed before go out of note_fts and name_fts in one statement, in rowid order,
        # and are cleared in that order: FTS5 writes a segment (and merges) whenever a delete's
        # rowid is not above the last one's, which note after note in path order did for
        # nearly every note (issue 33: a folder `mv` rewriting 2,000 notes at 100k).
        findings.withdraw(conn, [k.id for k in known_rows.values() if k.size != files.PENDING_SIZE])
        for note, body, derived in parsed:
            vf = by_path[note.path]
            known = known_rows[note.path]
            if known.size != files.PENDING_SIZE:
                # Indexed before this apply: its old rows go first.
                dirty |= clear_note_rows(conn, known.id, note.path)
            dirty.add(known.id)
            rows.etags.append(
                (disk_rel(vf), vf.size, vf.mtime_ns, vf.inode, now, vf.ctime_ns, known.id)
            )
            excluded = int(is_excluded(note.path, filters))
            _add_note(rows, known.id, note, body, derived, excluded, stage_fts)
            dirty |= _add_links(rows, known.id, note.path, derived[4], links)
        links.drop_candidates()
        findings.withdraw(conn, dirty)  # the targets of new links get anchors
        _insert(conn, rows, deflated, stage_names)
        # A broken link whose key is one of the new aliases gains an `alias` suggestion.
        linkfixes.refix_aliases_of(conn, [r[0] for r in rows.notes])
        return dirty


def _add_note(
    rows: _Rows,
    file_id: int,
    note: Note,
    body: str,
    derived: Derived,
    excluded: int,
    stage_fts: bool,
) -> None:
    titles, aliases, outline, fts_texts, prepared = derived
    head, properties, tags, alias_rows, problems, tasks, _, _ = prepared
    rows.notes.append((file_id, *head[:6], excluded, *head[6:], outline))
    rows.grams.append((file_id, note.stem, note.frontmatter_title))
    # Most notes have none of some of these: no generator made for an empty list.
    if properties:
        rows.properties.extend((file_id, *row) for row in properties)
    if tags:
        rows.tags.extend((file_id, *row) for row in tags)
    if alias_rows:
        rows.aliases.extend((file_id, *row) for row in alias_rows)
    rows.names.extend((key, file_id, 0) for key in titles)
    if aliases:
        rows.names.extend((key, file_id, 1) for key in aliases)
    if problems:
        rows.problems.extend((note.path, *row) for row in problems)
    if body:
        rows.bodies.append((file_id, body))
    if tasks:
        rows.tasks.extend((file_id, *row) for row in tasks)
    if stage_fts:
        rows.fts.append((file_id, *fts_texts))


def _exact_names(
    file_id: int, names: Iterable[str | None], alias: int = 0
) -> set[tuple[str, int, int]]:
    """The ``exact_names`` rows of a note's titles (alias 0) or aliases (alias 1): one per
    distinct non-empty key."""
    return {(key, file_id, alias) for key in name_keys_of(names)}


_INSERT_EXACT_NAMES = "INSERT OR IGNORE INTO exact_names(key, file_id, alias) VALUES (?, ?, ?)"
_DELETE_EXACT_NAMES = "DELETE FROM exact_names WHERE key = ? AND file_id = ? AND alias = ?"


_STAGED_NAMES = (
    "CREATE TEMP TABLE IF NOT EXISTS staged_names("
    "key TEXT NOT NULL, file_id INTEGER NOT NULL, alias INTEGER NOT NULL)"
)


def insert_staged_names(conn: sqlite3.Connection) -> None:
    """Inside a transaction: the ``exact_names`` rows a build's batches staged
    (``write_notes``' ``stage_names``) go in, sorted once by their key, and the stage goes.

    Issue 35 (build35b): each batch's few thousand keys, each a random place in a table by
    key, touched nearly every page of it once the table outgrew the page cache (about 4M
    rows at 1M notes), and each such page went to the rollback journal first; no batch
    of a first build reads the table (lookup does, and a note deleted or moved again)."""
    conn.execute(_STAGED_NAMES)
    conn.execute(
        f"{_INSERT_EXACT_NAMES.partition(' VALUES')[0]} "
        "SELECT key, file_id, alias FROM temp.staged_names ORDER BY key, file_id, alias"
    )
    conn.execute("DROP TABLE temp.staged_names")


def _stored_exact_names(conn: sqlite3.Connection, file_id: int) -> set[tuple[str, int, int]]:
    """The ``exact_names`` rows of a written note, derived again from its notes and aliases
    rows, which hold what ``derive`` keyed (its stem, title, first H1 and aliases, as parsed):
    a note's rows are found by their keys, so the table keeps no index by note (issue 35,
    size: 3.8 MB at 100k notes). A test holds them equal to the stored rows."""
    names: set[tuple[str, int, int]] = set()
    for titles in conn.execute(
        "SELECT stem, frontmatter_title, first_h1 FROM notes WHERE file_id = ?", (file_id,)
    ):
        names |= _exact_names(file_id, titles)
    aliases = [
        row[0]
        for row in conn.execute(
            "SELECT alias FROM aliases WHERE file_id = ? ORDER BY position", (file_id,)
        )
    ]
    return names | _exact_names(file_id, aliases, 1)


def rekey_titles(conn: sqlite3.Connection, moved: Sequence[tuple[int, str]]) -> None:
    """The title rows of ``exact_names`` again from the notes rows (a move changed the stem):
    ``moved`` is (file id, its stem before the move), whose title keys go."""
    if not moved:
        return
    old_stems = dict(moved)
    rows = conn.execute(
        "SELECT file_id, stem, frontmatter_title, first_h1 FROM notes "
        "WHERE file_id IN (SELECT value FROM json_each(?))",
        (json.dumps(list(old_stems)),),
    ).fetchall()
    conn.executemany(
        _DELETE_EXACT_NAMES,
        [
            name
            for file_id, _, *titles in rows
            for name in _exact_names(file_id, (old_stems[file_id], *titles))
        ],
    )
    conn.executemany(
        _INSERT_EXACT_NAMES,
        [name for file_id, *titles in rows for name in _exact_names(file_id, titles)],
    )


def _add_links(
    rows: _Rows, file_id: int, path: str, prepared: Prepared, links: LinkTargets
) -> set[int]:
    """The note's link rows (``noterows.LinkRow``, resolved here); returns their targets
    (whose anchors change)."""
    targets: set[int] = set()
    append = rows.links.append
    # A row: (file id, seq, kind, linkpath, subpath, display, raw, line, col, target id,
    # ambiguous, name_key while unresolved: store.links.unresolved_key, in_comment).
    for row in prepared[6]:
        target_id, ambiguous = links.resolve(row[2], path, row[9])
        if target_id is None:
            append((file_id, *row[:8], None, 0, row[10], row[8]))
        else:
            targets.add(target_id)
            append((file_id, *row[:8], target_id, int(ambiguous), None, row[8]))
    return targets


_DEFLATE_BESIDE = 64
"""From this many bodies in a batch, they are compressed in a thread of their own."""


@contextlib.contextmanager
def _deflating(conn: sqlite3.Connection, bodies: list[str]) -> Iterator[Future[list[bytes]]]:
    """Each body compressed for ``body_store`` (``bodyzip.compressor``): for a large batch in
    a thread that lives as long as the batch's write (ended, and waited for, on the way out),
    else now."""
    deflate = bodyzip.compressor(conn, bodies)
    if len(bodies) < _DEFLATE_BESIDE:
        yield findings.run_here(_deflate_all, deflate, bodies)
        return
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="notedex-deflate") as deflater:
        yield deflater.submit(_deflate_all, deflate, bodies)


def _deflate_all(deflate: Callable[[str], bytes], bodies: list[str]) -> list[bytes]:
    return [deflate(body) for body in bodies]


def _insert(
    conn: sqlite3.Connection, rows: _Rows, deflated: Future[list[bytes]], stage_names: bool
) -> None:
    # Raw executemany, not sqlite-utils' insert_all: the hot write path. Measured on 50k link
    # rows (about 10k notes), insert_all took 2.9 times as long, before building its dicts.
    sql = conn.executemany
    files.update_etags(conn, rows.etags)
    sql(
        """
        INSERT INTO notes(file_id, stem, frontmatter_title, first_h1, note_id, type,
                          status, excluded, content_hash, properties, outline)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """,
        rows.notes,
    )
    sql("INSERT INTO title_grams(rowid, stem, frontmatter_title) VALUES (?, ?, ?)", rows.grams)
    tag_ids = _tag_ids(conn, {row[2]: row[3] for row in rows.tags})
    sql(
        "INSERT INTO tags(file_id, position, tag_id, inline) VALUES (?, ?, ?, ?)",
        [(file_id, pos, tag_ids[name], inline) for file_id, pos, name, _, inline in rows.tags],
    )
    # Their notes' counts change (store/tagcounts.py; the schema's triggers mark the rest).
    sql(
        "INSERT OR IGNORE INTO tagged_dirty(file_id) VALUES (?)",
        [(file_id,) for file_id in dict.fromkeys(row[0] for row in rows.tags)],
    )
    sql(
        "INSERT INTO properties(file_id, key, position, is_list, kind, value, fold, num) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        rows.properties,
    )
    sql(
        "INSERT INTO aliases(file_id, position, alias, alias_key) VALUES (?, ?, ?, ?)",
        rows.aliases,
    )
    if stage_names:
        conn.execute(_STAGED_NAMES)
        sql("INSERT INTO temp.staged_names(key, file_id, alias) VALUES (?, ?, ?)", rows.names)
    else:
        sql(_INSERT_EXACT_NAMES, sorted(rows.names))  # in key order: the B-tree left to right
    sql(
        """
        INSERT INTO links(source_id, seq, kind, linkpath, subpath, display, raw, line, col,
                          target_id, ambiguous, name_key, in_comment)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """,
        rows.links,
    )
    sql("INSERT INTO problems(path, severity, kind, message) VALUES (?, ?, ?, ?)", rows.problems)
    if rows.tasks:
        sql(
            """
            INSERT INTO tasks(file_id, seq, line, col, status, state, text, tags,
                              due, scheduled, start, created, done, cancelled)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            rows.tasks,
        )
    sql("INSERT INTO body_fts(rowid, body) VALUES (?, ?)", rows.bodies)
    sql(
        "INSERT INTO body_store(file_id, z) VALUES (?, ?)",
        zip((file_id for file_id, _ in rows.bodies), deflated.result(), strict=True),
    )
    if rows.fts:
        findings.stage_fts_rows(conn, rows.fts)


def _tag_ids(conn: sqlite3.Connection, names: dict[str, str]) -> dict[str, int]:
    """tag_names ids of these spellings (name -> key), adding the new ones."""
    if not names:
        return {}
    conn.executemany(
        "INSERT OR IGNORE INTO tag_names(tag, tag_key) VALUES (?, ?)", list(names.items())
    )
    return {
        tag: tag_id
        for tag_id, tag in conn.execute(
            "SELECT id, tag FROM tag_names WHERE tag IN (SELECT value FROM json_each(?))",
            (json.dumps(list(names), ensure_ascii=False),),
        )
    }


def same_content(conn: sqlite3.Connection, path: str, content_hash: str) -> bool:
    """Whether the note indexed at ``path`` had this content (a sha256 hex digest)."""
    row = conn.execute(
        "SELECT n.content_hash FROM notes n JOIN files f ON f.id = n.file_id WHERE f.path = ?",
        (path,),
    ).fetchone()
    return row is not None and row[0] == content_key(content_hash)


def same_contents(conn: sqlite3.Connection, hashes: Sequence[tuple[int, str]]) -> set[int]:
    """The file ids among (file_id, sha256 hex) whose indexed note has this content."""
    found: set[int] = set()
    for start in range(0, len(hashes), files.LOOKUP_CHUNK):
        chunk = hashes[start : start + files.LOOKUP_CHUNK]
        wanted = {file_id: content_key(content_hash) for file_id, content_hash in chunk}
        for file_id, key in conn.execute(
            "SELECT file_id, content_hash FROM notes "
            "WHERE file_id IN (SELECT value FROM json_each(?))",
            (json.dumps(list(wanted)),),
        ):
            if wanted[file_id] == key:
                found.add(file_id)
    return found


def reflag_excluded(conn: sqlite3.Connection, filters: tuple[str, ...]) -> list[int]:
    """Set notes.excluded from Obsidian's "Excluded files" list; returns the notes that
    changed plus the targets of their links (SEMANTICS 1/8: their findings change)."""
    changed = []
    for file_id, path, was_excluded in conn.execute(
        "SELECT n.file_id, f.path, n.excluded FROM notes n JOIN files f ON f.id = n.file_id"
    ).fetchall():
        excluded = int(is_excluded(path, filters))
        if excluded != was_excluded:
            changed.append(file_id)
            conn.execute("UPDATE notes SET excluded = ? WHERE file_id = ?", (excluded, file_id))
    if not changed:
        return []
    # Findings exist for reported notes only, and a link from an excluded note counts as no
    # backlink: the notes and the targets of their links change.
    targets = conn.execute(
        "SELECT DISTINCT target_id FROM links WHERE target_id IS NOT NULL "
        "AND source_id IN (SELECT value FROM json_each(?))",
        (json.dumps(changed),),
    ).fetchall()
    return [*changed, *(row[0] for row in targets)]
