"""Read side: the SQL of ``notedex tasks`` over the ``tasks`` table (SEMANTICS 13). Stdlib only.

The writer keeps the rows with each note's other rows (``store.notes``); this module only
selects them: by state, status character, due date and the note filters, in the documented
order (due date, tasks without one last, then path, line and column).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from notedex.store.schema import TASK_DATES, TASK_STATES

if TYPE_CHECKING:
    import sqlite3

TASK_COLUMNS = ("path", "line", "column", "status", "state", "text", "tags", *TASK_DATES)
"""The columns of a row of ``tasks``, in order."""

_SELECT = (
    "SELECT f.path, t.line, t.col, t.status, t.state, t.text, t.tags, "
    + ", ".join(f"t.{name}" for name in TASK_DATES)
    + " FROM tasks t CROSS JOIN notes n ON n.file_id = t.file_id"
    " CROSS JOIN files f ON f.id = t.file_id"
)
# SEMANTICS 13.6: by due date (none last), then where the task is.
_ORDER = " ORDER BY t.due IS NULL, t.due, f.path, t.line, t.col"


def note_conditions(
    conn: sqlite3.Connection, note_filter: dict[str, Any], params: list[Any]
) -> list[str]:
    """The note filters (``tag``, ``note_type``, as ``scan`` takes them) as SQL conditions on
    ``n``, the notes row: the one place ``tasks`` turns a note filter into SQL."""
    from notedex.store.read import _tag_filter, _type_filter

    where = []
    if note_filter.get("tag"):
        where.append(_tag_filter("n.file_id", note_filter["tag"], params))
    if note_filter.get("note_type"):
        where.append(_type_filter(conn, note_filter["note_type"], params))
    return where


def tasks(
    conn: sqlite3.Connection,
    *,
    states: Sequence[str] = (),
    statuses: Sequence[str] = (),
    due_before: str | None = None,
    due_after: str | None = None,
    note_filter: dict[str, Any] | None = None,
) -> list[tuple[Any, ...]]:
    """The tasks of the notes not excluded (SEMANTICS 1.9), as ``TASK_COLUMNS`` tuples with
    ``state`` as its name. ``states`` and ``statuses`` together select: a task in any of
    them (none given: every task). Dates compare as ``YYYY-MM-DD`` strings, both bounds
    strict; either bound leaves out the tasks without a due date."""
    where = ["n.excluded = 0"]
    params: list[Any] = []
    chosen = []
    if states:
        chosen.append(f"t.state IN ({', '.join('?' * len(states))})")
        params.extend(TASK_STATES.index(state) for state in states)
    if statuses:
        chosen.append(f"t.status IN ({', '.join('?' * len(statuses))})")
        params.extend(statuses)
    if chosen:
        where.append("(" + " OR ".join(chosen) + ")")
    if due_before is not None:
        where.append("t.due < ?")
        params.append(due_before)
    if due_after is not None:
        where.append("t.due > ?")
        params.append(due_after)
    where += note_conditions(conn, note_filter or {}, params)
    sql = _SELECT + " WHERE " + " AND ".join(where) + _ORDER
    return [
        (*row[:4], TASK_STATES[row[4]], *row[5:]) for row in conn.execute(sql, params).fetchall()
    ]
