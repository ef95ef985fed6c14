"""Read side: the SQL of ``notedex tasks`` over the ``tasks`` table (SEMANTICS 13). Stdlib only.

The writer keeps the rows with each note's other rows (``store.notes``); this module only
selects them: by state, status character, due date and the note filters, in the documented
order (due date, tasks without one last, then path, line and column).
"""

from notedex.store.schema import TASK_DATES, TASK_STATES

TYPE_CHECKING = False  # no `typing` on the tasks path (ARCHITECTURE "Tasks"); mypy honours it
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Sequence
    from typing import Any

    from notedex.store.filters import NoteFilter  # query.filters.NoteFilter, as store reads it

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
    conn: "sqlite3.Connection", nf: "NoteFilter | None", params: "list[Any]"
) -> list[str]:
    """The note filter (``query.filters.NoteFilter``, SEMANTICS 14) as SQL conditions on ``n``
    and ``f``, the notes and files rows: the one place ``tasks`` turns a note filter into SQL."""
    if nf is None or not nf.active:
        return []
    from notedex.store.filters import note_conditions as filter_conditions

    return filter_conditions(conn, nf, params)


def _where(
    conn: "sqlite3.Connection",
    steered: bool = False,
    unjoined: bool = False,
    states: "Sequence[str]" = (),
    statuses: "Sequence[str]" = (),
    due_before: str | None = None,
    due_after: str | None = None,
    note_filter: "NoteFilter | None" = None,
) -> "tuple[str, list[Any]]":
    """The WHERE clause of the tasks selected, and its parameters (see ``tasks``).
    ``steered``: ``+t.state``/``+t.status``, which keep the planner off ``tasks_status`` (for
    a walk in ``tasks_due``'s order; always with ``due_before``). ``unjoined``: for a FROM without ``notes``/``files``,
    only without a note filter."""
    # Every task has its note's row (store.notes writes and deletes them together), so the
    # few excluded notes' tasks can be left out by their partial index, without a notes row
    # looked up per task.
    excluded = "t.file_id NOT IN (SELECT file_id FROM notes WHERE excluded = 1)"
    where = [excluded if unjoined else "n.excluded = 0"]
    params: list[Any] = []
    chosen = []
    # --due-before: the due dates' index from the earliest, a range of the vault's tasks,
    # rather than every task of the state looked up for its date (issue 32).
    plus = "+" if steered or due_before is not None else ""
    if states:
        chosen.append(f"{plus}t.state IN ({', '.join('?' * len(states))})")
        params.extend(TASK_STATES.index(state) for state in states)
    if statuses:
        chosen.append(f"{plus}t.status IN ({', '.join('?' * len(statuses))})")
        params.extend(statuses)
    if chosen:
        where.append("(" + " OR ".join(chosen) + ")")
    if due_before is not None:
        where.append("t.due < ?")
        params.append(due_before)
    if due_after is not None:
        where.append("t.due > ?")
        params.append(due_after)
    where += note_conditions(conn, note_filter, params)
    return " WHERE " + " AND ".join(where), params


def tasks(
    conn: "sqlite3.Connection", offset: int = 0, limit: int | None = None, **wanted: "Any"
) -> "list[tuple[Any, ...]]":
    """The tasks of the notes not excluded (SEMANTICS 1.9), as ``TASK_COLUMNS`` tuples with
    ``state`` as its name and ``tags`` as stored (a JSON array, or None). ``wanted``: the
    ``states`` and ``statuses`` that select together (a task in any of them; none given:
    every task), ``due_before`` and ``due_after`` (``YYYY-MM-DD``, strict; either leaves out
    the tasks without a due date) and the ``note_filter`` (``note_conditions``). ``offset``
    and ``limit``: only that page of them, cut in SQL."""
    where, params = _where(conn, **wanted)
    page = ""
    if offset or limit is not None:
        page = " LIMIT ? OFFSET ?"
        if limit is not None:
            where, params = _bounded(conn, where, params, offset + limit, wanted)
        params += [-1 if limit is None else limit, offset]
    cursor = conn.cursor()
    cursor.row_factory = None  # plain tuples: one row object less per task
    rows = cursor.execute(_SELECT + where + _ORDER + page, params).fetchall()
    return [(*row[:4], TASK_STATES[row[4]], *row[5:]) for row in rows]


def _bounded(
    conn: "sqlite3.Connection", where: str, params: "list[Any]", end: int, wanted: "Any"
) -> "tuple[str, list[Any]]":
    """``where`` narrowed to the tasks a page ending at the ``end``-th task can hold, when
    that many have a due date: those due on or before the ``end``-th due date, walked in
    ``tasks_due``'s order (a few rows, not every task of the state sorted through the
    files' paths). The order puts due tasks first, so they are a prefix of it and the page is
    the same; with fewer due tasks, ``where`` as it was. ``+t.state``/``+t.status`` keep the
    planner off ``tasks_status``, which would read every task of the state (issue 32)."""
    steered, params = _where(conn, steered=True, **wanted)
    cursor = conn.cursor()
    cursor.row_factory = None
    found = cursor.execute(
        "SELECT t.due FROM tasks t CROSS JOIN notes n ON n.file_id = t.file_id"
        f" CROSS JOIN files f ON f.id = t.file_id{steered} AND t.due IS NOT NULL"
        " ORDER BY t.due LIMIT 1 OFFSET ?",
        [*params, end - 1],
    ).fetchone()
    if found is None:
        return where, params
    return steered + " AND t.due <= ?", [*params, found[0]]


_NOTES = " CROSS JOIN notes n ON n.file_id = t.file_id"
_FILES = " CROSS JOIN files f ON f.id = t.file_id"


def _unjoined(wanted: "dict[str, Any]") -> bool:
    """Whether no note filter is active: the selection then needs no ``notes`` row per task
    (``_where``'s ``unjoined``), a tenth of a whole list's query at 100k notes (issue 32)."""
    nf = wanted.get("note_filter")
    return nf is None or not nf.active


def state_counts(conn: "sqlite3.Connection", **wanted: "Any") -> list[int]:
    """How many of the tasks ``tasks`` selects are in each state, in ``TASK_STATES`` order."""
    where, params = _where(conn, unjoined=_unjoined(wanted), **wanted)
    tables = "" if _unjoined(wanted) else _NOTES + _FILES  # no note filter: no rows per task
    counts = [0] * len(TASK_STATES)
    for state, count in conn.execute(
        f"SELECT t.state, count(*) FROM tasks t{tables}{where} GROUP BY t.state", params
    ):
        counts[state] = count
    return counts


def task_lines(conn: "sqlite3.Connection", **wanted: "Any") -> "list[tuple[Any, ...]]":
    """``tasks`` for the text output: (path, line, column, status, text, state code) per
    task, in the same order. The text prints neither tags nor dates, and reading five columns
    instead of fourteen (no tag list parsed, no dict made) is most of a large answer's cost."""
    where, params = _where(conn, unjoined=_unjoined(wanted), **wanted)
    notes = "" if _unjoined(wanted) else _NOTES
    cursor = conn.cursor()
    cursor.row_factory = None
    return cursor.execute(
        "SELECT f.path, t.line, t.col, t.status, t.text, t.state FROM tasks t"
        + notes
        + _FILES
        + where
        + _ORDER,
        params,
    ).fetchall()


# One task as the JSON object query.tasks.task_entry makes of its row (a test holds the two
# equal, byte for byte, through the compact writer).
_TASK_OBJECT = (
    "json_object('path', f.path, 'line', t.line, 'column', t.col, 'status', t.status, "
    "'state', CASE t.state "
    + " ".join(f"WHEN {code} THEN '{name}'" for code, name in enumerate(TASK_STATES))
    + " END, 'text', t.text, 'tags', json(coalesce(t.tags, '[]')), "
    + ", ".join(f"'{name}', t.{name}" for name in TASK_DATES)
    + ")"
)


def tasks_json(conn: "sqlite3.Connection", **wanted: "Any") -> "tuple[list[int], bytes]":
    """``tasks`` as compact JSON built by SQLite: the count of each state (in
    ``TASK_STATES`` order) and the tasks' JSON objects joined by commas (UTF-8), in order.
    group_concat takes the rows in the subquery's order (as ``read._json_list`` explains)."""
    where, params = _where(conn, unjoined=_unjoined(wanted), **wanted)
    notes = "" if _unjoined(wanted) else _NOTES
    counts = ", ".join(f"sum(state = {code})" for code in range(len(TASK_STATES)))
    cursor = conn.cursor()
    cursor.row_factory = None
    row = cursor.execute(
        f"SELECT {counts}, CAST(coalesce(group_concat(j, ','), '') AS BLOB) FROM ("
        f"SELECT {_TASK_OBJECT} AS j, t.state AS state FROM tasks t{notes}{_FILES}"
        f"{where}{_ORDER})",
        params,
    ).fetchone()
    return [int(count or 0) for count in row[:-1]], bytes(row[-1])
