"""The generic upkeep of health's findings about single links (issue 33): every finding
declared in ``notedex.codes.FINDINGS`` with a ``link_where`` is kept here, none by hand.

A declared finding's rows are ``link_findings(code, source_id, seq)``: the links of reported
notes that meet its condition. They hold ids, not paths, so a move changes nothing here; the
writer's dirty notes (``temp.dirty_notes``: every note whose links, or their targets,
changed) are recomputed at each findings refresh, and a note's rows go with its links
(``drop_of``). health joins them to their links and files when it reads them
(``store.read.health_json_sql``), so no stored document can go stale.
"""

from __future__ import annotations

import sqlite3

from notedex.codes import LINK_FINDINGS


def refresh(conn: sqlite3.Connection) -> None:
    """Recompute every declared link finding of the notes in ``temp.dirty_notes``."""
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


def drop_of(conn: sqlite3.Connection, path: str) -> None:
    """A note's rows are cleared (its links go): its findings go with them."""
    conn.execute(
        "DELETE FROM link_findings WHERE source_id = (SELECT id FROM files WHERE path = ?)",
        (path,),
    )
