"""The pending structure rows and findings refreshed a slice of notes at a time (issue 35: a
cold build's memory).

After a first index every note is pending (``fts_pending``), and one ``findings.refresh_fts``
of them all held, in Python, a row per note or per link of the whole vault at once: every
note's link texts (computed in the helper process and sent back), every link with a subpath
and its target's outline, every new broken link, every (note, tag) pair and its counts. At 1M
notes that end step was most of the build's 2.3 GB peak. Here the pending notes are refreshed
in slices of ``SLICE`` by id, inside the caller's one transaction, so what a slice holds is
bounded by the slice, not the vault.

A refresh is exact for any set of dirty notes (an ordinary apply's is a few): each slice
computes its notes' rows from the tables (links, outlines, files, tags), not from other notes'
findings, and a link between two slices is re-checked at the second (its row, if any, is taken
out and written again, the same). The slices go in id order, as one refresh walks its dirty
notes, so rows land in the same order. The `typo` search over every broken link's key
(``linkfixes.near_stems_ahead``) covers every slice's keys: it runs once, for all of them.
"""

from __future__ import annotations

import sqlite3

from notedex.store import findings, linkfixes
from notedex.store.findings_base import Offload, run_here
from notedex.store.links import LinkTargets

SLICE = 25_000
"""Notes per slice: at 100k notes a whole refresh held about 120 MB in the writer and as
much in the helper; a slice of 25,000 holds about a quarter of that at any vault size."""

_LATER = "CREATE TEMP TABLE IF NOT EXISTS pending_later(id INTEGER PRIMARY KEY)"
_TAGGED_LATER = "CREATE TEMP TABLE IF NOT EXISTS tagged_later(file_id INTEGER PRIMARY KEY)"


def refresh_pending(
    conn: sqlite3.Connection,
    links: LinkTargets,
    offload: Offload = run_here,
    size: int | None = None,
) -> int:
    """Inside a transaction: ``findings.refresh_fts`` of every pending note, ``size`` notes at
    a time (the notes' tag marks with them); returns how many slices it took. The pending
    notes wait in temp tables meanwhile: a crash rolls the transaction back, ``fts_pending``
    with it. ``size``: ``SLICE`` by default."""
    size = size or SLICE
    conn.execute(_LATER)
    conn.execute(_TAGGED_LATER)
    conn.execute("INSERT OR IGNORE INTO temp.pending_later(id) SELECT id FROM fts_pending")
    if conn.execute("SELECT count(*) FROM temp.pending_later").fetchone()[0] <= size:
        conn.execute("DELETE FROM temp.pending_later")
        findings.refresh_fts(conn, set(), links, offload)
        return 1
    conn.execute("DELETE FROM fts_pending")
    conn.execute(
        "INSERT OR IGNORE INTO temp.tagged_later(file_id) SELECT file_id FROM tagged_dirty"
    )
    conn.execute("DELETE FROM tagged_dirty")
    # Once for every slice, in this process too: a slice's own search would pass over every
    # note's stem again.
    near = linkfixes.near_stems_ahead(conn, offload)
    slices = 0
    while True:
        last = conn.execute(
            "SELECT max(id) FROM (SELECT id FROM temp.pending_later ORDER BY id LIMIT ?)", (size,)
        ).fetchone()[0]
        if last is None:
            break
        conn.execute(
            "INSERT INTO fts_pending(id) SELECT id FROM temp.pending_later WHERE id <= ?", (last,)
        )
        conn.execute("DELETE FROM temp.pending_later WHERE id <= ?", (last,))
        final = conn.execute("SELECT 1 FROM temp.pending_later LIMIT 1").fetchone() is None
        # The tag marks of this slice's notes (the last slice takes any left: a mark of a
        # file that is not pending, counted once as before).
        bound = "" if final else "WHERE file_id <= ?"
        params = () if final else (last,)
        conn.execute(
            f"INSERT INTO tagged_dirty(file_id) SELECT file_id FROM temp.tagged_later {bound}",
            params,
        )
        conn.execute(f"DELETE FROM temp.tagged_later {bound}", params)
        findings.refresh_fts(conn, set(), links, offload, near=near)
        slices += 1
    return slices
