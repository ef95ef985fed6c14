"""Writer side: the ``bases`` rows, each ``.base`` file's YAML as JSON (issue 32), and the
error of a file that is no base, recorded as a problem of its path as bad notes are."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

BASE_PROBLEM = "base"
"""problems.kind of a ``.base`` file that cannot be read as a base."""


def write_base_docs(
    conn: sqlite3.Connection, docs: Sequence[tuple[str, str | None, str | None]]
) -> None:
    """(path, the base as JSON or None, error or None) of registered ``.base`` files."""
    for path, doc, error in docs:
        row = conn.execute("SELECT id FROM files WHERE path = ?", (path,)).fetchone()
        if row is None:
            continue
        conn.execute(
            "INSERT OR REPLACE INTO bases(file_id, doc, error) VALUES (?, ?, ?)",
            (row[0], doc, error),
        )
        conn.execute("DELETE FROM problems WHERE path = ? AND kind = ?", (path, BASE_PROBLEM))
        if error is not None:
            conn.execute(
                "INSERT INTO problems(path, message, severity, kind) VALUES (?, ?, 'error', ?)",
                (path, error, BASE_PROBLEM),
            )
