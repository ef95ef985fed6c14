"""The generic upkeep of health's declared findings (issue 33): every finding declared in
``notedex.codes.FINDINGS`` with a ``link_where`` (about single links) or a ``file_where``
(about whole files: orphans, unlinked notes, dead ends, unused attachments) is kept here, none
by hand. The findings that name their own ``upkeep`` (broken links and anchors) are run by
``store.findings.refresh_findings``.

A declared finding's rows are ``link_findings(code, source_id, seq)`` (the links of reported
notes that meet its condition: ids, so a move changes nothing, and health joins them to their
links and files when it reads them) or ``file_findings(code, path, file_id, title)`` (the files
that do, with what health prints of them: it renders ``Finding.file_fields`` with
``json_object`` as it reads, in key order, ``store.health_lists.health_json_sql``; a move gives them
their new path in place: ``moved``; a file's rows are found by its path and the codes,
``_CODES``). The writer's dirty notes (``temp.dirty_notes``: every file whose
links, or the links into it, or their targets changed) are recomputed at each findings
refresh, and a file's rows go with it (``drop_of``).
"""

from __future__ import annotations

import sqlite3

from notedex.codes import FILE_FINDINGS, LINK_FINDINGS
from notedex.store.findings_base import has_rows
from notedex.store.schema import FILE_FIELDS

_FILE_FINDINGS_NOW = (
    "CREATE TEMP TABLE IF NOT EXISTS file_findings_now("
    "code TEXT, path TEXT, file_id INTEGER, PRIMARY KEY (code, path)) WITHOUT ROWID"
)
_CODES = ", ".join(f"'{finding.code}'" for finding in FILE_FINDINGS)
"""Every declared file finding's code, as SQL: a file's rows are ``code IN (_CODES) AND path =
...``, one probe of the key per code (file_findings keeps no index by file: issue 35, size)."""
# Of the dirty files, the stored rows that are not findings any more, then the rows that are
# new, with their documents: a dirty file whose finding stays (issue 17: most of a folder
# rename's ~6,000 dirty notes) is neither deleted nor written again. (A note parsed again, or
# renamed to another stem, has lost its rows first: its title is written afresh.)
_DELETE_GONE = f"""
DELETE FROM file_findings WHERE code IN ({_CODES}) AND path IN (
    SELECT f.path FROM temp.dirty_notes d CROSS JOIN files f ON f.id = d.id)
  AND NOT EXISTS (SELECT 1 FROM temp.file_findings_now w
                  WHERE w.code = file_findings.code AND w.path = file_findings.path)
"""


def _insert_new(fields: tuple[str, ...]) -> str:
    titled = "title" in fields
    note = "CROSS JOIN notes n ON n.file_id = w.file_id" if titled else ""
    return f"""
    INSERT INTO file_findings(code, path, title)
    SELECT w.code, w.path, {FILE_FIELDS["title"] if titled else "NULL"}
    FROM temp.file_findings_now w {note}
    WHERE w.code = ? AND NOT EXISTS (
        SELECT 1 FROM file_findings o WHERE o.code = w.code AND o.path = w.path)
    """


def refresh(conn: sqlite3.Connection) -> None:
    """Recompute every declared finding of the files in ``temp.dirty_notes``."""
    for finding in LINK_FINDINGS:
        conn.execute(
            "DELETE FROM link_findings WHERE code = ? "
            "AND source_id IN (SELECT id FROM temp.dirty_notes)",
            (finding.code,),
        )
        # Driven by the dirty notes (CROSS JOIN fixes the order), as store.findings does.
        conn.execute(
            f"""
            INSERT INTO link_findings(code, source_id, seq)
            SELECT ?, l.source_id, l.seq
            FROM temp.dirty_notes d CROSS JOIN notes n ON n.file_id = d.id
            CROSS JOIN links l ON l.source_id = d.id
            WHERE n.excluded = 0 AND ({finding.link_where})
            """,
            (finding.code,),
        )
    conn.execute(_FILE_FINDINGS_NOW)
    conn.execute("DELETE FROM temp.file_findings_now")
    for finding in FILE_FINDINGS:
        # A finding about notes (it shows their title) reads its note `n`; driven by the dirty
        # notes all the same (a LEFT JOIN the WHERE makes inner lets the planner scan notes).
        note = "CROSS JOIN notes n ON n.file_id = d.id" if "title" in finding.file_fields else ""
        conn.execute(
            f"""
            INSERT INTO temp.file_findings_now(code, path, file_id)
            SELECT ?, f.path, d.id FROM temp.dirty_notes d CROSS JOIN files f ON f.id = d.id {note}
            WHERE {finding.file_where}
            """,
            (finding.code,),
        )
    if has_rows(conn, "file_findings"):  # none stored (a first index): nothing to compare
        conn.execute(_DELETE_GONE)
    for finding in FILE_FINDINGS:
        conn.execute(_insert_new(finding.file_fields), (finding.code,))
    conn.execute("DELETE FROM temp.file_findings_now")


def moved(conn: sqlite3.Connection) -> None:
    """Inside a move (store.moves), once ``temp.moved_paths`` holds the moves: the moved
    files' rows take their new paths."""
    conn.execute(
        f"""
        UPDATE file_findings SET path = (
            SELECT m.new FROM temp.moved_paths m WHERE m.old = file_findings.path)
        WHERE code IN ({_CODES}) AND path IN (SELECT old FROM temp.moved_paths)
        """
    )


def drop_of(conn: sqlite3.Connection, path: str) -> None:
    """A file's rows are cleared (its links go, or the file): its findings go with them."""
    conn.execute(
        "DELETE FROM link_findings WHERE source_id = (SELECT id FROM files WHERE path = ?)", (path,)
    )
    conn.execute(f"DELETE FROM file_findings WHERE code IN ({_CODES}) AND path = ?", (path,))
