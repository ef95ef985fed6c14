"""Broken anchors (SEMANTICS 10.7), one finding of health's: which links with a subpath a
refresh re-checks, their verdicts (a pure step, offloaded at a large build's end) and their
rows. Split out of store/findings.py (issue 33), which calls it from ``refresh_findings``."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from concurrent.futures import Future
from operator import itemgetter

from notedex.store.findings_base import OUTLINE_KEPT, Offload, Refresh, has_rows
from notedex.store.outline import decode_outline
from notedex.store.schema import ANCHOR_DOC_INSERT, EVERY_ANCHOR_DOC, trigger_ddl
from notedex.vault.anchors import TargetOutline, anchor_confidence, anchor_kind
from notedex.vault.fixes import offered

# The links with a subpath whose verdict can change, from reported sources, with the target's
# outline (SEMANTICS 10.6: attachments have no notes row). A dirty note is in `temp.outline_kept`
# when only its links' targets or the links into it changed (a re-resolution: not parsed
# again); of the others ("full"), every link out of and into them. Of a kept note, only the links
# into a dirty note that have no row left after _STALE_ANCHORS: a link whose target changed has
# both its old and new target dirty (LinkTargets._reresolve_rows) and its row, if any, gone (it
# named the old target), and an unchanged link to a note whose outline is the same has the same
# verdict, so its row (a broken anchor) stays as it is, not deleted and written again (issue
# 17: a folder rename marks ~6,000 notes and rewrote ~1,100 such rows each way); a link into a
# kept note from elsewhere is unchanged (its source would be dirty otherwise).
_FULL = "SELECT d.id FROM temp.dirty_notes d WHERE d.id NOT IN (SELECT id FROM temp.outline_kept)"
_ANCHORED_LINKS = f"""
SELECT c.source_id, c.seq, c.target, c.subpath, t.outline FROM (
    SELECT l.source_id, l.seq, coalesce(l.target_id, l.source_id) AS target, l.subpath
    FROM ({_FULL}) d CROSS JOIN links l ON l.source_id = d.id
    WHERE l.subpath IS NOT NULL AND (l.target_id IS NOT NULL OR l.linkpath = '')
    UNION
    SELECT l.source_id, l.seq, l.target_id, l.subpath
    FROM ({_FULL}) d CROSS JOIN links l ON l.target_id = d.id
    WHERE l.subpath IS NOT NULL
    UNION
    SELECT l.source_id, l.seq, coalesce(l.target_id, l.source_id) AS target, l.subpath
    FROM temp.outline_kept d CROSS JOIN links l ON l.source_id = d.id
    WHERE l.subpath IS NOT NULL AND (l.target_id IS NOT NULL OR l.linkpath = '')
      AND coalesce(l.target_id, l.source_id) IN (SELECT id FROM temp.dirty_notes)
      AND NOT EXISTS (
          SELECT 1 FROM broken_anchors b WHERE b.source_id = l.source_id AND b.seq = l.seq)
) c CROSS JOIN notes s ON s.file_id = c.source_id CROSS JOIN notes t ON t.file_id = c.target
WHERE s.excluded = 0
ORDER BY c.target
"""
# The same rows when every note is dirty and none kept (a first index's end): every link with a
# subpath into a note, read in one pass (0.1 s at 100k notes, against 0.6 s for the union).
_EVERY_ANCHORED_LINK = """
SELECT l.source_id, l.seq, coalesce(l.target_id, l.source_id) AS target, l.subpath, t.outline
FROM links l CROSS JOIN notes s ON s.file_id = l.source_id
CROSS JOIN notes t ON t.file_id = coalesce(l.target_id, l.source_id)
WHERE l.subpath IS NOT NULL AND (l.target_id IS NOT NULL OR l.linkpath = '') AND s.excluded = 0
"""
_EVERY_NOTE_FULL = f"""
SELECT NOT EXISTS (SELECT 1 FROM notes WHERE file_id NOT IN ({_FULL}))
"""
# The rows of those links, by the targets they had, and of a kept note's links whose target
# changed or went (a deleted target is not dirty: it has no row left). A kept note's row whose
# link still has that target, not a full note, keeps its verdict and stays. A link's target is
# its source only for a self link (`[[#H]]`, no linkpath), as in _ANCHORED_LINKS: a path link to
# the note itself that no longer resolves (its folder renamed) has no target, and its row goes.
_STALE_ANCHORS = f"""
DELETE FROM broken_anchors WHERE source_id IN ({_FULL}) OR target_id IN ({_FULL}) OR (
    source_id IN (SELECT id FROM temp.outline_kept) AND NOT EXISTS (
        SELECT 1 FROM links l WHERE l.source_id = broken_anchors.source_id
          AND l.seq = broken_anchors.seq
          AND coalesce(l.target_id, CASE WHEN l.linkpath = '' THEN l.source_id END)
              = broken_anchors.target_id))
"""


AnchorRow = tuple[int, int, int, str, "str | None", "str | None", "float | None"]
"""A broken anchor: (source_id, seq, target_id, kind, suggestion, reason, confidence), as
stored."""


def check_anchors(conn: sqlite3.Connection, offload: Offload) -> Future[list[AnchorRow]]:
    """SEMANTICS 10: re-check the links out of or into a dirty note whose verdict can change
    (their links, their targets or their outline changed: ``_ANCHORED_LINKS``); the cost
    follows the links with a subpath there, not the vault. Their stale rows go now; the
    verdicts are ``offload``ed, and ``write_broken_anchors`` writes them. A refresh of every
    note (a first index's end) reads them all in one pass."""
    conn.execute(OUTLINE_KEPT)  # empty unless refresh_fts filled it
    if has_rows(conn, "broken_anchors"):
        conn.execute(_STALE_ANCHORS)
    every = conn.execute(_EVERY_NOTE_FULL).fetchone()[0]
    candidates = conn.execute(_EVERY_ANCHORED_LINK if every else _ANCHORED_LINKS).fetchall()
    return offload(anchor_verdicts, candidates)


def anchor_verdicts(
    candidates: Sequence[tuple[int, int, int, str, str | None]],
) -> list[AnchorRow]:
    """The broken anchors among ``_ANCHORED_LINKS``' rows (source_id, seq, target_id, subpath,
    the target's outline), with their suggestions, in the order of the table's key (its B-tree
    is then written from left to right: 0.2 s less at 100k notes). Pure: runs in another
    process at a large build's end (``Offload``)."""
    rows: list[AnchorRow] = []
    last_target, outline = None, TargetOutline(*decode_outline(None))
    fixes: dict[str, tuple[str | None, str | None, float | None]] = {}  # of one target
    # By target (the union's rows come so already): each outline is decoded and folded once.
    for source_id, seq, target_id, subpath, encoded in sorted(candidates, key=itemgetter(2)):
        if target_id != last_target:
            last_target, outline = target_id, TargetOutline(*decode_outline(encoded))
            fixes.clear()
        if outline.is_broken(subpath):
            if subpath not in fixes:
                fixes[subpath] = _offered(subpath, outline.suggest(subpath))
            suggestion, reason, confidence = fixes[subpath]
            rows.append(
                (source_id, seq, target_id, anchor_kind(subpath), suggestion, reason, confidence)
            )
    rows.sort()
    return rows


def _offered(
    subpath: str, suggested: tuple[str, str] | None
) -> tuple[str | None, str | None, float | None]:
    """A suggestion with its confidence (SEMANTICS 10.8: ``anchor_confidence``, the one rule
    ``fix`` reads too), or three Nones when there is none or it is not offered (issue 33)."""
    if suggested is None:
        return None, None, None
    suggestion, reason = suggested
    confidence = anchor_confidence(subpath, suggestion, reason)
    return (suggestion, reason, confidence) if offered(confidence) else (None, None, None)


_INSERT_BROKEN_ANCHOR = (
    "INSERT OR REPLACE INTO broken_anchors"
    "(source_id, seq, target_id, kind, suggestion, reason, confidence) "
    "VALUES (?, ?, ?, ?, ?, ?, ?)"
)


def write_broken_anchors(conn: sqlite3.Connection, rows: Sequence[AnchorRow]) -> None:
    """The new rows; their stored documents by trigger, or all at once when none was stored
    (a first index: ``EVERY_ANCHOR_DOC``)."""
    if not rows or has_rows(conn, "broken_anchors"):
        conn.executemany(_INSERT_BROKEN_ANCHOR, rows)
        return
    conn.execute(f"DROP TRIGGER IF EXISTS temp.{ANCHOR_DOC_INSERT}")
    try:
        conn.executemany(_INSERT_BROKEN_ANCHOR, rows)
        conn.execute(EVERY_ANCHOR_DOC)
    finally:
        conn.execute(trigger_ddl(ANCHOR_DOC_INSERT))


def refresh(conn: sqlite3.Connection, run: Refresh) -> None:
    """The upkeep the broken anchors' declaration names (``Finding.upkeep``): the verdicts of
    ``check_anchors``, under way since the refresh began, written."""
    write_broken_anchors(conn, run.anchors.result())
