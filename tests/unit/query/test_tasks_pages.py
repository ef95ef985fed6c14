"""query.tasks_page on a vault with many tasks: a page is the same whether SQLite bounds it by the
due dates (ties at the page's last date, pages that run into the tasks without a date, too few
dated tasks, an excluded note's tasks) or not, and a first page does not read every task."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from notedex.query.filters import NoteFilter
from notedex.query.output import compact_json
from notedex.query.paging import paginate
from notedex.query.tasks import TaskFilter, tasks, tasks_page
from notedex.store.connect import connect_readonly
from tests.indexcheck import indexed_vault, vm_steps

DAYS = ("2026-01-05", "2026-01-05", "2026-02-01", None, "2025-12-31", None, "2026-01-05")
STATUSES = (" ", "x", " ", "/", "-", " ", "?")


def _note(k: int) -> str:
    lines = []
    for j in range(12):
        day = DAYS[(k + j) % len(DAYS)]
        due = f" 📅 {day}" if day else ""
        lines.append(f"- [{STATUSES[(k * 3 + j) % len(STATUSES)]}] task {k}.{j}{due}")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    files = {f"{('Hidden/', 'a/', 'b/c/', '')[k % 4]}n{k:02}.md": _note(k) for k in range(40)}
    files["Hidden/early.md"] = "- [ ] hidden 📅 2020-01-01\n"
    return indexed_vault(tmp_path_factory, "pages", files, '{"userIgnoreFilters": ["Hidden/"]}')


SELECTIONS = [
    {},
    {"states": ["open"]},
    {"states": ["done"]},
    {"statuses": ["?"]},  # no dated task: every page past them falls back
    {"states": ["open"], "due_before": "2026-02-01"},
    {"due_after": "2026-01-01"},
    {"states": ["open"], "note_filter": NoteFilter(folders=("b",))},
]


@pytest.mark.parametrize("selected", SELECTIONS, ids=repr)
def test_every_page_is_the_page_cut_in_python(db: Path, selected: dict[str, object]) -> None:
    wanted = TaskFilter(**selected)  # type: ignore[arg-type]
    conn = connect_readonly(db)
    try:
        whole = tasks(conn, wanted)
        assert whole["taskCount"] > 20
        for offset in (0, 1, 5, 19, 20, 57, whole["taskCount"] - 3, whole["taskCount"] + 2):
            for limit in (1, 3, 20, 100):
                page = tasks_page(conn, wanted, offset, limit)
                expected = paginate(dict(whole), ("tasks",), offset, limit)
                assert compact_json(page) == compact_json(expected), (offset, limit)
    finally:
        conn.close()


def test_the_excluded_notes_tasks_are_not_counted(db: Path) -> None:
    conn = connect_readonly(db)
    try:
        page = tasks_page(conn, TaskFilter(states=["open"]), 0, 1)
    finally:
        conn.close()
    assert page["tasks"][0]["due"] == "2025-12-31"  # not Hidden/early.md's 2020-01-01
    assert all(not task["path"].startswith("Hidden/") for task in page["tasks"])
    shown = [k for k in range(40) if k % 4]  # Hidden/ holds the others
    statuses = [STATUSES[(k * 3 + j) % len(STATUSES)] for k in shown for j in range(12)]
    opened = sum(status not in "x-" for status in statuses)  # done and cancelled are not open
    assert page["taskCount"] == page["counts"]["open"] == opened


@pytest.fixture(scope="module")
def dated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """400 open tasks in 10 notes, due on 400 days."""
    first = date(2026, 1, 1).toordinal()
    files = {}
    for k in range(10):
        days = [date.fromordinal(first + k + 10 * j).isoformat() for j in range(40)]
        files[f"n{k}.md"] = "".join(f"- [ ] t 📅 {day}\n" for day in days)
    return indexed_vault(tmp_path_factory, "dated", files)


def test_a_first_page_does_not_sort_every_task(dated: Path) -> None:
    wanted = TaskFilter(states=["open"])
    conn = connect_readonly(dated)
    try:
        whole = vm_steps(conn, lambda: tasks(conn, wanted))
        page = vm_steps(conn, lambda: tasks_page(conn, wanted, 0, 3))
    finally:
        conn.close()
    # Both count every task of the state (the totals), from an index; only the whole answer
    # reads and sorts them (before the bound, the page did too: 197 against 208).
    assert page * 3 < whole, (page, whole)


def test_due_before_reads_the_due_dates_from_the_earliest(dated: Path) -> None:
    conn = connect_readonly(dated)
    try:
        whole = vm_steps(conn, lambda: tasks(conn, TaskFilter(states=["open"])))
        early = TaskFilter(states=["open"], due_before="2026-01-11")
        steps = vm_steps(conn, lambda: tasks(conn, early))
        assert tasks(conn, early)["taskCount"] == 10
    finally:
        conn.close()
    # Before: every open task looked up for its date (32 against 208).
    assert steps * 10 < whole, (steps, whole)
