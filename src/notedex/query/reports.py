"""`health`: orphans, unlinked notes, broken links, warnings and errors (SEMANTICS 8)."""

from __future__ import annotations

from notedex.store import read
from notedex.store.connect import read_transaction
from notedex.vault.resolve import broken_key

TYPE_CHECKING = False  # no `typing` import on the query path; mypy honours the name
if TYPE_CHECKING:
    import sqlite3
    from typing import Any


def health(conn: sqlite3.Connection) -> dict[str, Any]:
    with read_transaction(conn):
        lonely = read.notes_without_backlinks(conn)
        broken_rows = read.broken_links(conn)
        warning_rows = read.problems(conn, "warning")
        ambiguous_rows = read.ambiguous_links(conn)
        error_rows = read.problems(conn, "error")
    orphan_rows = [r for r in lonely if not r["has_outgoing"]]
    unlinked_rows = [r for r in lonely if r["has_outgoing"]]
    warnings = [{"path": r["path"], "message": r["message"]} for r in warning_rows]
    warnings += [
        {
            "path": r["source"],
            "message": f"line {r['line']}: {r['text']} is ambiguous; resolved to {r['target']} "
            "by Obsidian's tie-break (same folder first, then shortest path)",
        }
        for r in ambiguous_rows
    ]
    warnings.sort(key=lambda w: w["path"])
    return {
        "orphanNotes": [{"path": r["path"], "title": r["title"]} for r in orphan_rows],
        "unlinkedNotes": [{"path": r["path"], "title": r["title"]} for r in unlinked_rows],
        "brokenLinks": [
            {
                "source": r["source"],
                "line": r["line"],
                "column": r["column"],
                "text": r["text"],
                "target": broken_key(r["linkpath"]),
            }
            for r in broken_rows
        ],
        "warnings": warnings,
        "errors": [{"path": r["path"], "message": r["message"]} for r in error_rows],
        "orphanCount": len(orphan_rows),
        "brokenLinkCount": len(broken_rows),
    }
