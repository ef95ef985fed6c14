"""``tasks``: the vault's Markdown tasks (SEMANTICS 13), filtered and in order, with counts.

``TaskFilter`` is what the command line or an MCP call asks for, checked before the index is
opened (a bad date is exit 2); ``tasks`` answers it in one read transaction. Stdlib only.
"""

from notedex.errors import UsageError
from notedex.store import tasks as sql
from notedex.store.connect import read_transaction
from notedex.store.schema import TASK_STATES

TYPE_CHECKING = False  # no `typing` on the tasks path (ARCHITECTURE "Tasks"); mypy honours it
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Sequence
    from typing import Any

    from notedex.query.filters import NoteFilter

DATE_HELP = "YYYY-MM-DD, today, Nd (N days from today) or -Nd (N days ago)"


class TaskFilter:
    """Which tasks to list: states (``open``, ``done``, ``cancelled``), status characters,
    due-date bounds (ISO dates) and the note filters, as ``scan`` takes them."""

    __slots__ = ("due_after", "due_before", "note_filter", "states", "statuses")

    def __init__(
        self,
        *,
        states: "Sequence[str]" = (),
        statuses: "Sequence[str]" = (),
        due_before: str | None = None,
        due_after: str | None = None,
        note_filter: "NoteFilter | None" = None,
        today: str | None = None,
    ) -> None:
        unknown = [state for state in states if state not in TASK_STATES]
        if unknown:
            raise UsageError(f"unknown task state {unknown[0]!r}: use {', '.join(TASK_STATES)}")
        for status in statuses:
            if len(status) != 1 or status in "\r\n":
                raise UsageError(
                    f"--status takes one character, the one between the brackets: not {status!r}"
                )
        self.states = tuple(states)
        self.statuses = tuple(dict.fromkeys(statuses))
        self.due_before = None if due_before is None else parse_day(due_before, today)
        self.due_after = None if due_after is None else parse_day(due_after, today)
        self.note_filter = note_filter

    def selection(self) -> "dict[str, Any]":
        """The keywords of ``store.tasks.tasks`` and ``tasks_json``."""
        return {name: getattr(self, name) for name in self.__slots__}


def parse_day(text: str, today: str | None = None) -> str:
    """``text`` as an ISO date (``DATE_HELP``); ``today`` (ISO) stands in for the local date."""
    import datetime

    text = text.strip()
    try:
        base = datetime.date.fromisoformat(today) if today else datetime.date.today()
        if text.lower() == "today":
            return base.isoformat()
        if text.lower().endswith("d") and text[:-1].lstrip("+-").isdigit():
            return (base + datetime.timedelta(days=int(text[:-1]))).isoformat()
        if len(text) == 10:
            return datetime.date.fromisoformat(text).isoformat()
    except (ValueError, OverflowError):
        pass
    raise UsageError(f"not a date: {text!r} (give {DATE_HELP})")


def tasks(conn: "sqlite3.Connection", wanted: TaskFilter) -> "dict[str, Any]":
    """The tasks ``wanted`` selects, in SEMANTICS 13.6's order, and how many in each state."""
    with read_transaction(conn):
        rows = sql.tasks(conn, **wanted.selection())
    listed = [task_entry(row) for row in rows]
    counts = dict.fromkeys(TASK_STATES, 0)
    for task in listed:
        counts[task["state"]] += 1
    return {"tasks": listed, "taskCount": len(listed), "counts": counts}


def tasks_page(
    conn: "sqlite3.Connection", wanted: TaskFilter, offset: int, limit: int | None
) -> "dict[str, Any]":
    """``paginate(tasks(conn, wanted), ("tasks",), offset, limit)``, the page cut in SQL: the
    20 first of thousands of tasks make 20 objects, not thousands (a test holds the two
    equal)."""
    from notedex.query.paging import paginate

    with read_transaction(conn):
        rows = sql.tasks(conn, offset, limit, **wanted.selection())
        tally = sql.state_counts(conn, **wanted.selection())
    total = sum(tally)
    data = {
        "tasks": [task_entry(row) for row in rows],
        "taskCount": total,
        "counts": dict(zip(TASK_STATES, tally, strict=True)),
    }
    return paginate(data, ("tasks",), offset, limit, totals={"tasks": total})


def task_lines(conn: "sqlite3.Connection", wanted: TaskFilter) -> "dict[str, Any]":
    """``tasks`` as the text output reads it: ``lines`` holds (path, line, column, status,
    text) tuples in place of ``tasks``' objects (``render.render_tasks`` prints either), with
    the same ``taskCount`` and ``counts``."""
    with read_transaction(conn):
        rows = sql.task_lines(conn, **wanted.selection())
    tally = [0] * len(TASK_STATES)
    for row in rows:
        tally[row[5]] += 1
    return {
        "lines": rows,
        "taskCount": len(rows),
        "counts": dict(zip(TASK_STATES, tally, strict=True)),
    }


def tasks_json(conn: "sqlite3.Connection", wanted: TaskFilter) -> "tuple[bytes, int]":
    """``tasks(conn, wanted)`` as compact JSON in UTF-8, exactly as ``render.emit_json`` writes
    it to a pipe, built by SQLite: a large answer makes no dict per task (and no findings, so
    the exit code is 0)."""
    with read_transaction(conn):
        counts, objects = sql.tasks_json(conn, **wanted.selection())
    by_state = ",".join(f'"{name}":{count}' for name, count in zip(TASK_STATES, counts))
    tail = f'],"taskCount":{sum(counts)},"counts":{{{by_state}}}}}'
    return b'{"tasks":[' + objects + tail.encode(), 0


def task_entry(row: "Sequence[Any]") -> "dict[str, Any]":
    """One task of the answer: ``store.tasks.TASK_COLUMNS``, its tags as a list."""
    entry = dict(zip(sql.TASK_COLUMNS, row, strict=True))
    entry["tags"] = _tags(entry["tags"])
    return entry


def _tags(stored: str | None) -> list[str]:
    if stored is None:
        return []
    from notedex.vault.files import _json_loads  # json's C scanner, without importing json

    return list(_json_loads(stored))  # type: ignore[call-overload]


def task_paths(data: "dict[str, Any]") -> list[str]:
    """``--paths``: each note with a listed task once, in the order of its first task."""
    return list(dict.fromkeys(task["path"] for task in data["tasks"]))
