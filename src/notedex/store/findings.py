"""Findings upkeep: the structure-search rows (note_fts, name_fts, link_fts), ``fts_pending`` and
``refresh_findings``, which runs every finding of health's registry (notedex.codes.FINDINGS):
the declared ones (orphans, unlinked notes, dead ends, unused attachments, self-links) through
the generic upkeep of store/linkfindings.py, and those that name their own ``upkeep``: broken
links here (``refresh_broken_links``; the suggestions' SQL is store/linkfixes.py's and the
rename history's store/renames.py's), broken anchors in store/findings_anchors.py.

Over 400 lines on purpose: the structure rows and the findings are refreshed together, from the
same dirty notes in the same temp tables (``refresh_fts``), and the writer, store/notes.py and
the tests reach both through this one module; the pure steps a helper process runs at a large
build's end (``Offload``) stand beside the SQL that reads their inputs."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Container, Iterable, Sequence
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from notedex.codes import FINDINGS
from notedex.store import findings_anchors, linkfindings, linkfixes, renames, tagcounts
from notedex.store.findings_anchors import AnchorRow, check_anchors
from notedex.store.findings_base import (  # run_here and Offload: also store.notes'
    OUTLINE_KEPT,
    Offload,
    Refresh,
    has_rows,
    run_here,
)
from notedex.store.findings_unused import (  # noqa: F401 (re-exported: the writer, moves)
    attachments_changed,
    attachments_moved,
)
from notedex.store.schema import BROKEN_KEY, LINK_ANCHOR, LINK_TEXT
from notedex.vault.text import segment

if TYPE_CHECKING:
    from notedex.store.links import LinkTargets

_LINKS_PENDING = (
    "CREATE TEMP TABLE IF NOT EXISTS links_pending(id INTEGER PRIMARY KEY, sides INTEGER NOT NULL)"
)
"""Notes whose link_fts row alone is marked (``withdraw_links``), inside one transaction, and
which of its texts can have changed: ``INCOMING`` (the links into it: anchors), ``OUTGOING``
(its own links: unresolved keys), or both."""
INCOMING = 1
OUTGOING = 2
BOTH_SIDES = INCOMING | OUTGOING
_FTS_ROWS = (
    "CREATE TEMP TABLE IF NOT EXISTS fts_rows("
    "file_id INTEGER PRIMARY KEY, title TEXT, tags TEXT, aliases TEXT)"
)
"""note_fts_text's rows of the notes a refresh inserts, read once for note_fts and name_fts;
a build aside's batches stage theirs here as they write them (``stage_fts_rows``)."""


def withdraw(
    conn: sqlite3.Connection, ids: Iterable[int], *, keep_links_only: bool = False
) -> None:
    """Take these notes' note_fts rows out before any of their inputs change, and mark them
    for ``refresh_fts``.

    note_fts is external content over the view note_fts_text: FTS5 deletes a row by
    tokenizing what the view gives for it, which must still be what was indexed. A
    withdrawn note waits in fts_pending (crash-safe) until refresh_fts inserts it again;
    withdrawing it twice is a no-op. Ids of attachments and of notes not written yet are
    only recorded. Its link_fts row stays in until then: link_fts's content is stored as
    indexed (``link_texts``), and refresh_fts rewrites it only if its text changed.
    ``keep_links_only``: a note marked by ``withdraw_links`` stays so (its note_fts row
    stays in; its findings are recomputed all the same).
    """
    wanted = json.dumps(sorted(ids))
    if wanted == "[]":
        return
    conn.execute(_LINKS_PENDING)
    skip = "AND n.file_id NOT IN (SELECT id FROM temp.links_pending)"
    # The rows in both tables, found once; most withdrawals of a first index find none (the
    # notes are new or already pending) and then touch neither FTS5 table.
    indexed = conn.execute(
        f"""
        SELECT n.file_id FROM notes n
        WHERE n.file_id IN (SELECT value FROM json_each(?))
          AND n.file_id NOT IN (SELECT id FROM fts_pending)
          {skip if keep_links_only else ""}
        """,
        (wanted,),
    ).fetchall()
    if indexed:
        rowids = json.dumps([row[0] for row in indexed])
        for table in ("note_fts", "name_fts"):  # both over note_fts_text
            conn.execute(
                f"DELETE FROM {table} WHERE rowid IN (SELECT value FROM json_each(?))", (rowids,)
            )
    if keep_links_only:
        conn.execute(
            "INSERT OR IGNORE INTO fts_pending(id) SELECT value FROM json_each(?) "
            "WHERE value NOT IN (SELECT id FROM temp.links_pending)",
            (wanted,),
        )
        return
    conn.execute("INSERT OR IGNORE INTO fts_pending(id) SELECT value FROM json_each(?)", (wanted,))
    conn.execute(
        "DELETE FROM temp.links_pending WHERE id IN (SELECT value FROM json_each(?))", (wanted,)
    )


def withdraw_links(
    conn: sqlite3.Connection, ids: Iterable[int], *, sides: int = BOTH_SIDES
) -> None:
    """Mark these notes' link_fts rows (anchors, unresolved) for ``refresh_fts``: their links or
    the links into them change, nothing note_fts reads (a re-resolution, a target deleted).
    Nothing is deleted here (the row's text is stored, ``link_texts``): such a note waits in
    ``temp.links_pending``, in the transaction only; ``refresh_fts`` rewrites its row if its
    text changed, and ``settle`` withdraws what is left at a commit the usual way.

    ``sides``: what changes, ``INCOMING`` and/or ``OUTGOING`` (the default: both). A side no
    mark of the transaction names keeps its stored text (``dirty_link_texts``): the source of
    a link that changes target keeps its anchors, the target its unresolved keys."""
    wanted = json.dumps(sorted(ids))
    if wanted == "[]":
        return
    conn.execute(_LINKS_PENDING)
    conn.execute(
        "INSERT INTO temp.links_pending(id, sides) SELECT value, ? FROM json_each(?) "
        "WHERE value NOT IN (SELECT id FROM fts_pending) "
        "ON CONFLICT(id) DO UPDATE SET sides = sides | excluded.sides",
        (sides, wanted),
    )


def settle(conn: sqlite3.Connection) -> None:
    """Before a commit: a note marked by ``withdraw_links`` (no ``refresh_fts`` since) is
    withdrawn whole, into the crash-safe ``fts_pending``."""
    conn.execute(_LINKS_PENDING)
    left = [row[0] for row in conn.execute("SELECT id FROM temp.links_pending")]
    if left:
        withdraw(conn, left)


# The stored rows of the dirty notes that are no note any more (deleted, or an attachment).
_GONE_LINK_TEXTS = """
SELECT t.file_id, t.anchors, t.unresolved
FROM temp.dirty_notes d CROSS JOIN link_texts t ON t.file_id = d.id
WHERE NOT EXISTS (SELECT 1 FROM notes n WHERE n.file_id = d.id)
"""


# The dirty notes (an attachment has no row) and the texts each needs derived: both for a
# note withdrawn whole or new (no stored row), else the sides its marks name.
_TEXTS_WANTED = (
    "CREATE TEMP TABLE IF NOT EXISTS texts_wanted(id INTEGER PRIMARY KEY, sides INTEGER NOT NULL)"
)
_FILL_TEXTS_WANTED = f"""
INSERT INTO temp.texts_wanted(id, sides)
SELECT d.id, CASE WHEN t.file_id IS NULL THEN {BOTH_SIDES} ELSE coalesce(p.sides, {BOTH_SIDES}) END
FROM temp.dirty_notes d CROSS JOIN notes n ON n.file_id = d.id
LEFT JOIN temp.links_pending p ON p.id = d.id LEFT JOIN link_texts t ON t.file_id = d.id
"""
# What link_texts_now reads for them, in one pass each: the links into them (their anchors)
# and their own broken links (their unresolved keys). The anchors come as two JSON arrays
# (targets, texts), built by SQLite: a first index reads 300,000 of them at 100k notes, and
# as rows they cost the writer 0.18 s to fetch and 0.16 s to pickle for the helper (its GIL),
# as two strings 0.09 s in all.
_DIRTY_ANCHORS = f"""
SELECT json_group_array(l.target_id), json_group_array({LINK_ANCHOR}) FROM temp.texts_wanted w
CROSS JOIN links l ON l.target_id = w.id WHERE w.sides & {INCOMING} AND l.source_id <> w.id
"""
_DIRTY_UNRESOLVED = f"""
SELECT l.source_id, l.linkpath FROM temp.texts_wanted w
CROSS JOIN links l ON l.source_id = w.id
WHERE w.sides & {OUTGOING} AND l.target_id IS NULL AND l.linkpath <> ''
"""
# The same anchors when every note wants them (a first index's end): every link into another
# file, read in key order (at 100k notes 0.09 s, against 0.4 s through links_target, which the
# planner picks for the bare `target_id <> source_id`: the range on the key keeps it on the
# table). Links into attachments come too; link_texts_of reads the wanted notes' alone.
_EVERY_ANCHOR = f"""
SELECT json_group_array(target_id), json_group_array({LINK_ANCHOR}) FROM links
WHERE source_id >= 0 AND +target_id <> source_id
"""
_EVERY_NOTE_ANCHORED = f"""
SELECT NOT EXISTS (SELECT 1 FROM notes WHERE file_id NOT IN (
    SELECT id FROM temp.texts_wanted WHERE sides & {INCOMING}))
"""


def dirty_link_texts(conn: sqlite3.Connection) -> list[tuple[int, str, str]]:
    """``link_texts_now`` for the notes in ``temp.dirty_notes``: (file id, anchors,
    unresolved). The same texts as the view, which a first index and ``rebuild`` read for
    every note (``tests/unit/store/test_findings_link_texts.py`` pins the two equal): the
    view sorts each note's links in two subqueries of their own and segments in two calls
    per note, which was most of a folder rename's link_fts refresh (6,000 notes at 100k);
    here two statements read them all, and Python sorts (code-point order, which is UTF-8's
    byte order: SQLite's BINARY) and segments a text only when there is one. A side that no
    mark names (``withdraw_links``) is the stored text, not derived (issue 17: a folder
    rename marks about 3,000 sources whose anchors stay)."""
    return [row[:3] for row in _texts_now_and_stored(conn)]


LinkTexts = tuple[int, str, str, "str | None", "str | None"]
"""A note's link_fts texts now (file id, anchors, unresolved) and as stored (None: no row)."""


def _texts_now_and_stored(conn: sqlite3.Connection) -> list[LinkTexts]:
    """``dirty_link_texts``, each with its stored texts (None, None: no row yet)."""
    return link_texts_of(*_link_text_inputs(conn))


def _link_text_inputs(
    conn: sqlite3.Connection,
) -> tuple[
    tuple[str, str],
    list[tuple[int, str]],
    list[tuple[int, int, str | None, str | None]],
]:
    """What ``link_texts_of`` derives the dirty notes' texts from, read in one pass each: the
    links into them (their anchors), their own broken links (their unresolved keys), and each
    note with the sides it needs derived and its stored texts."""
    conn.execute(_TEXTS_WANTED)
    conn.execute("DELETE FROM temp.texts_wanted")
    conn.execute(_LINKS_PENDING)
    conn.execute(_FILL_TEXTS_WANTED)
    every = conn.execute(_EVERY_NOTE_ANCHORED).fetchone()[0]
    inputs = (
        conn.execute(_EVERY_ANCHOR if every else _DIRTY_ANCHORS).fetchone(),
        conn.execute(_DIRTY_UNRESOLVED).fetchall(),
        conn.execute(
            "SELECT w.id, w.sides, t.anchors, t.unresolved FROM temp.texts_wanted w "
            "LEFT JOIN link_texts t ON t.file_id = w.id"
        ).fetchall(),
    )
    conn.execute("DELETE FROM temp.texts_wanted")
    return inputs


def link_texts_of(
    into: tuple[str, str],
    unresolved_out: Iterable[tuple[int, str]],
    wanted: Iterable[tuple[int, int, Any, Any]],
) -> list[LinkTexts]:
    """``_link_text_inputs``' rows to the notes' texts now and stored (a side not derived is
    stored: such a note has a row). ``into``: the links into them, as a JSON array of their
    targets and one of their anchor texts. Pure: runs in another process at a large build's
    end (``Offload``)."""
    anchors: dict[int, set[str]] = {}
    for target, anchor in zip(json.loads(into[0]), json.loads(into[1]), strict=True):
        anchors.setdefault(target, set()).add(anchor)
    unresolved: dict[int, set[str]] = {}
    for source, linkpath in unresolved_out:
        unresolved.setdefault(source, set()).add(linkpath)
    return [
        (
            file_id,
            _joined(anchors.get(file_id)) if sides & INCOMING else stored_anchors,
            _joined(unresolved.get(file_id)) if sides & OUTGOING else stored_unresolved,
            stored_anchors,
            stored_unresolved,
        )
        for file_id, sides, stored_anchors, stored_unresolved in wanted
    ]


def _joined(texts: set[str] | None) -> str:
    """``nx_segment(group_concat(...))`` over the sorted distinct texts: '' for none."""
    text = " ".join(sorted(texts)) if texts else ""
    return segment(text) if text else ""


def refresh_link_texts(
    conn: sqlite3.Connection, texts: Future[list[LinkTexts]] | None = None
) -> tuple[int, int]:
    """The link_fts rows of the notes in ``temp.dirty_notes``: each one's text now
    (``dirty_link_texts``) against the stored one (``link_texts``, what link_fts indexed); only
    a row whose text changed is deleted from link_fts (with its stored text) and inserted
    again, its stored row updated in place. A re-resolution marks every note its links touch,
    and some keep their text (a link that changes target between two notes leaves its
    source's row as it was; another link holds the same anchor). Returns how many link_fts
    rows were deleted and how many inserted. ``texts``: ``_texts_now_and_stored``, already
    under way (``refresh_fts``)."""
    now = _texts_now_and_stored(conn) if texts is None else texts.result()
    changed = [row for row in now if row[3] is None or row[1] != row[3] or row[2] != row[4]]
    gone = conn.execute(_GONE_LINK_TEXTS).fetchall()
    stale = [(file_id, old[0], old[1]) for file_id, _, _, *old in changed if old[0] is not None]
    if stale or gone:
        conn.executemany(
            "INSERT INTO link_fts(link_fts, rowid, anchors, unresolved) VALUES ('delete', ?, ?, ?)",
            [*stale, *gone],
        )
    conn.executemany("DELETE FROM link_texts WHERE file_id = ?", [(row[0],) for row in gone])
    conn.executemany(
        "UPDATE link_texts SET anchors = ?, unresolved = ? WHERE file_id = ?",
        [
            (anchors, unresolved, file_id)
            for file_id, anchors, unresolved, old, _ in changed
            if old is not None
        ],
    )
    conn.executemany(
        "INSERT INTO link_texts(file_id, anchors, unresolved) VALUES (?, ?, ?)",
        [row[:3] for row in changed if row[3] is None],
    )
    conn.executemany(
        "INSERT INTO link_fts(rowid, anchors, unresolved) VALUES (?, ?, ?)",
        [row[:3] for row in changed],
    )
    return len(stale) + len(gone), len(changed)


def has_pending(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM fts_pending LIMIT 1").fetchone() is not None


def refresh_fts(
    conn: sqlite3.Connection,
    dirty: set[int],
    links: LinkTargets,
    offload: Offload = run_here,
    *,
    near: Future[dict[str, set[str]]] | None = None,
) -> None:
    """Insert the structure-search rows of every withdrawn note (and of ``dirty``) again,
    from the tables, and recompute their health findings.

    The withdrawn notes are moved from ``fts_pending`` in SQL: after a first index that is
    every note, which as Python ints and tuples cost about 15 MB. The link texts, the anchor
    verdicts, the `typo` search and the tag counts are pure work on what is read first:
    ``offload`` runs them, in another process while this one writes the search rows at the
    end of a large build (``indexing.pool.findings_helper``; issue 12, wall), else here.
    ``near``: the `typo` search over every broken link's key, already under way (a refresh
    in slices, ``store.findings_slices``).
    """
    # Notes new to the index, or dirty without a change of inputs; at the end of an apply (its
    # notes written) the sources whose `renamed` suggestion a recreated note changes.
    linkfixes.refix(conn, renames.pair_recreated(conn))
    conn.execute(_LINKS_PENDING)
    withdraw(conn, dirty, keep_links_only=True)
    set_dirty(conn, ())
    conn.execute("INSERT OR IGNORE INTO temp.dirty_notes(id) SELECT id FROM fts_pending")
    conn.execute("INSERT OR IGNORE INTO temp.dirty_notes(id) SELECT id FROM temp.links_pending")
    if conn.execute("SELECT 1 FROM temp.dirty_notes LIMIT 1").fetchone() is None:
        linkfixes.suggest_link_fixes(conn, links)  # the refix keys alone
        return
    # The notes whose link_fts row alone was out kept their outline and links' text: only
    # their links whose target changed need an anchor re-check (_check_anchors).
    conn.execute(OUTLINE_KEPT)
    conn.execute(
        "INSERT OR IGNORE INTO temp.outline_kept(id) SELECT id FROM temp.links_pending "
        "WHERE id NOT IN (SELECT id FROM fts_pending)"
    )
    # Nothing below changes a link, an outline, a file or a tag: what the offloaded work reads
    # now is what it would read at its turn. Started in the order the results are wanted.
    texts = offload(link_texts_of, *_link_text_inputs(conn))
    if near is None and offload is not run_here:
        near = linkfixes.near_stems_ahead(conn, offload)
    anchors = check_anchors(conn, offload)
    tagged = None if offload is run_here else tagcounts.read_marked(conn)
    counted = None if tagged is None else offload(tagcounts.count, tagged)
    # A note marked by withdraw_links alone keeps its note_fts row. The view's texts are
    # segmented once for both tables (name_fts has the same title and aliases).
    conn.execute(_FTS_ROWS)
    conn.execute(
        "INSERT INTO temp.fts_rows(file_id, title, tags, aliases) "
        "SELECT file_id, title, tags, aliases FROM note_fts_text "
        "WHERE file_id IN (SELECT id FROM fts_pending) "
        "AND file_id NOT IN (SELECT file_id FROM temp.fts_rows)"
    )
    # Only the pending notes' rows: a build aside stages every note's, and a refresh in slices
    # (store.findings_slices) inserts each slice's alone, the rest left for their slice.
    pending = "WHERE file_id IN (SELECT id FROM fts_pending)"
    conn.execute(
        "INSERT INTO note_fts(rowid, title, tags, aliases) "
        f"SELECT file_id, title, tags, aliases FROM temp.fts_rows {pending}"
    )
    conn.execute(
        "INSERT INTO name_fts(rowid, title, aliases) "
        f"SELECT file_id, title, aliases FROM temp.fts_rows {pending}"
    )
    conn.execute(f"DELETE FROM temp.fts_rows {pending}")
    refresh_link_texts(conn, texts)
    conn.execute("DELETE FROM fts_pending")
    conn.execute("DELETE FROM temp.links_pending")
    refresh_findings(conn, links, anchors=anchors, near=near, counted=counted)
    conn.execute("DELETE FROM temp.outline_kept")


def stage_fts_rows(conn: sqlite3.Connection, rows: Sequence[tuple[int, str, str, str]]) -> None:
    """A build aside's batch stages its notes' ``note_fts_text`` rows (``store.notes.
    note_fts_texts``, segmented in the parse workers) for the end's ``refresh_fts``, which
    reads the view for the pending notes without one. In a build aside alone: a file no
    reader sees, whose connection ends with the build, and whose notes are written once each
    (a staged row could not go stale)."""
    conn.execute(_FTS_ROWS)
    conn.executemany(
        "INSERT OR REPLACE INTO temp.fts_rows(file_id, title, tags, aliases) VALUES (?, ?, ?, ?)",
        rows,
    )


def set_dirty(conn: sqlite3.Connection, ids: Iterable[int]) -> None:
    """Fill ``temp.dirty_notes``, the notes whose findings refresh_findings recomputes."""
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS dirty_notes(id INTEGER PRIMARY KEY)")
    conn.execute("DELETE FROM temp.dirty_notes")
    conn.executemany("INSERT OR IGNORE INTO temp.dirty_notes(id) VALUES (?)", [(i,) for i in ids])


def set_every_note_dirty(conn: sqlite3.Connection) -> None:
    """Every note's findings are recomputed, the suggestions too (none is kept as it was)."""
    conn.execute("DELETE FROM broken_links")
    set_dirty(conn, (row[0] for row in conn.execute("SELECT file_id FROM notes").fetchall()))


def clear_pending(conn: sqlite3.Connection) -> None:
    conn.execute("DELETE FROM fts_pending")


def drop_findings_of(conn: sqlite3.Connection, path: str) -> None:
    """A note's rows are cleared: its own findings go with them."""
    conn.execute("DELETE FROM broken_links WHERE source = ?", (path,))
    conn.execute(
        "DELETE FROM broken_anchors WHERE source_id = (SELECT id FROM files WHERE path = ?)",
        (path,),
    )
    linkfindings.drop_of(conn, path)


def rename_findings(conn: sqlite3.Connection) -> None:
    """Inside a move (store.moves): the broken links of moved notes take the new paths of
    ``temp.moved_paths`` in place (a note that is recomputed afterwards is harmless here);
    the declared file findings take them too (``linkfindings.moved``); the declared link
    findings hold ids, and the broken anchors' documents follow by trigger."""
    linkfindings.moved(conn)
    conn.execute(
        "UPDATE broken_links SET source = "
        "(SELECT new FROM temp.moved_paths WHERE old = broken_links.source) "
        "WHERE source IN (SELECT old FROM temp.moved_paths)"
    )


def refresh_findings(
    conn: sqlite3.Connection,
    links: LinkTargets,
    *,
    anchors: Future[list[AnchorRow]] | None = None,
    near: Future[dict[str, set[str]]] | None = None,
    counted: Future[tagcounts.Counted] | None = None,
) -> None:
    """Recompute health's findings (SEMANTICS 8) of the notes in ``temp.dirty_notes``: each
    finding that names its own ``upkeep`` in the registry (notedex.codes.FINDINGS), in the
    registry's order, then the generic upkeep of every declared one (store.linkfindings).

    Every note whose backlinks or outgoing references can have changed is dirty (the same
    notes whose anchors or unresolved keys change; a change of the Excluded files adds the
    targets of notes whose exclusion changed), so the tables stay exact. ``anchors``,
    ``near`` and ``counted``: that work already under way (``refresh_fts``).
    """
    run = Refresh(links, check_anchors(conn, run_here) if anchors is None else anchors, near)
    for finding in FINDINGS:
        if finding.upkeep is not None:
            UPKEEP[finding.upkeep](conn, run)
    linkfindings.refresh(conn)  # the findings declared by their rows (issue 33)
    tagcounts.refresh(conn, counted)  # the tag pane's counts (issue 12, speed)


def refresh_broken_links(conn: sqlite3.Connection, run: Refresh) -> None:
    """SEMANTICS 8: the broken links of the dirty notes, each with its suggestion (8.3)."""
    # Every statement is driven by the dirty notes (CROSS JOIN fixes the order: the planner
    # knows nothing of the temp table and would walk all notes, files or broken links).
    dirty_paths = "SELECT (SELECT path FROM files WHERE id = d.id) FROM temp.dirty_notes d"
    # A broken link of a dirty note that is still there as it was (the same place, text and
    # key) keeps its row and suggestion: what can change a suggestion refixes its key instead
    # (store.linkfixes). `renamed` ones are computed again (the history is trimmed unrefixed).
    # With no row stored (a new index), the statement that compares with stored rows is
    # skipped: its IN list of every dirty path costs 0.15 s at 100k notes.
    if has_rows(conn, "broken_links"):
        conn.execute(
            f"""
        DELETE FROM broken_links WHERE source IN ({dirty_paths}) AND (
            reason IS '{linkfixes.RENAMED}' OR NOT EXISTS (
            SELECT 1 FROM files f CROSS JOIN notes n ON n.file_id = f.id
            CROSS JOIN links l ON l.source_id = f.id AND l.seq = broken_links.seq
            WHERE f.path = broken_links.source AND n.excluded = 0 AND l.name_key IS NOT NULL
              AND l.line = broken_links.line AND l.col = broken_links.col
              AND {LINK_TEXT} = broken_links.text AND {BROKEN_KEY} = broken_links.target
              -- issue 33: a link that went into or out of a comment is written again
              AND l.in_comment = broken_links.in_comment))
        """
        )
    # links.name_key is set exactly on the unresolved links that are not self-links. A new
    # row is written with its suggestion (linkfixes.suggest_link_fixes).
    new = conn.execute(
        f"""
        SELECT f.path, l.line, l.col, l.seq, {LINK_TEXT}, {BROKEN_KEY},
               l.linkpath, l.display, l.name_key, l.in_comment
        FROM temp.dirty_notes d CROSS JOIN notes n ON n.file_id = d.id
        CROSS JOIN files f ON f.id = d.id CROSS JOIN links l ON l.source_id = d.id
        WHERE n.excluded = 0 AND l.name_key IS NOT NULL AND NOT EXISTS (
            SELECT 1 FROM broken_links b WHERE b.source = f.path AND b.line = l.line
              AND b.col = l.col AND b.seq = l.seq)
        """
    ).fetchall()
    linkfixes.suggest_link_fixes(conn, run.links, new, near=run.near)


UPKEEP = {
    "findings.refresh_broken_links": refresh_broken_links,
    "findings_anchors.refresh": findings_anchors.refresh,
}
"""The findings' own upkeep hooks, by the name their declaration gives (``Finding.upkeep``)."""


def record_renames(
    conn: sqlite3.Connection, renamed: Sequence[tuple[str, int]], kept_names: Container[int]
) -> None:
    """Moves applied in place (store.moves): (old path, file id), and the ids of the files
    that kept their name. The broken links whose suggestions change (store.renames) are
    refixed."""
    linkfixes.refix(conn, renames.record(conn, renamed, kept_names=kept_names))
