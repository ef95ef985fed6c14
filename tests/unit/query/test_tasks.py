"""query.tasks: the piped document SQLite builds is byte for byte the compact writer's output of
the Python answer (text, paging and MCP), for every filter; the text output's lighter answer
(``task_lines``) prints the same bytes as the full one; and the date words."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from notedex.errors import UsageError
from notedex.query.filters import NoteFilter
from notedex.query.output import Renderer, compact_json
from notedex.query.paging import paginate
from notedex.query.render import render_tasks
from notedex.query.tasks import TaskFilter, parse_day, task_lines, tasks, tasks_json, tasks_page
from notedex.store.connect import connect_readonly
from tests.indexcheck import indexed_vault

NOTES = {
    "a.md": '---\ntags: [p]\ntype: adr\n---\n- [ ] a "quoted" \\ back #x/y #日本 📅 2026-03-01\n'
    "- [x] b\ttab \u0001ctl \u2028 ✅ 2026-01-01\n- [/] c [due:: 2026-03-01]\n",
    "b/b.md": "1. [-] d ❌ 2026-01-02 (start:: 2026-01-01)\n  * [?] 進行中 #タグ\n- [ ]\n",
    "c.md": "no tasks #p\n",
    "d.md": "- [ ] no\u00a0break space (printed as it is)\n",
    "hidden/h.md": "- [ ] in an excluded note 📅 2026-01-01\n- [x] done there\n",
}
FILTERS = [
    {},
    {"states": ["open"]},
    {"states": ["done"], "statuses": ["-"]},
    {"statuses": ["?", "/"]},
    {"due_before": "2026-03-01"},
    {"due_after": "2026-01-01", "due_before": "2026-12-31"},
    {"note_filter": NoteFilter(tags=("p",))},
    {"note_filter": NoteFilter(note_type="ADR"), "states": ["open"]},
    {"note_filter": NoteFilter(folders=("b",)), "states": ["open"]},
    {"statuses": ["z"]},  # nothing
]


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return indexed_vault(tmp_path_factory, "tasks", NOTES, app='{"userIgnoreFilters": ["hidden/"]}')


@pytest.mark.parametrize("selected", FILTERS, ids=repr)
def test_sqlite_builds_the_compact_document(db: Path, selected: dict[str, object]) -> None:
    wanted = TaskFilter(**selected)  # type: ignore[arg-type]
    conn = connect_readonly(db)
    try:
        answer = tasks(conn, wanted)
        document, found = tasks_json(conn, wanted)
    finally:
        conn.close()
    assert found == 0
    assert document.decode("utf-8") == compact_json(answer)
    if not selected:
        assert answer["taskCount"] == 7  # not the excluded note's two
        assert answer["tasks"][0]["tags"] == ["x/y", "日本"]


@pytest.mark.parametrize("selected", FILTERS, ids=repr)
@pytest.mark.parametrize("color", ["never", "always"])
def test_text_from_lines_equals_text_from_tasks(
    db: Path, selected: dict[str, object], color: str
) -> None:
    wanted = TaskFilter(**selected)  # type: ignore[arg-type]
    conn = connect_readonly(db)
    try:
        full, light = tasks(conn, wanted), task_lines(conn, wanted)
    finally:
        conn.close()
    printed = []
    for data in (full, light):
        out = io.StringIO()
        render_tasks(Renderer(db.parent / "vault", out, color=color), data)
        printed.append(out.getvalue())
    assert printed[0] == printed[1]
    assert light["counts"] == full["counts"] and light["taskCount"] == full["taskCount"]
    if not selected:
        assert "\\x01ctl" in printed[1] and printed[1].count("\n") == 9
        assert "excluded" not in printed[1] and "no\u00a0break" in printed[1]


@pytest.mark.parametrize("selected", FILTERS, ids=repr)
def test_plain_text_is_each_line_as_the_renderer_writes_it(
    db: Path, selected: dict[str, object]
) -> None:
    """Without hyperlinks the lines are built at once (issue 32); each is what
    ``Renderer.path`` and ``Renderer.name`` make of its task, escapes included."""
    wanted = TaskFilter(**selected)  # type: ignore[arg-type]
    conn = connect_readonly(db)
    try:
        data = task_lines(conn, wanted)
    finally:
        conn.close()
    out = io.StringIO()
    r = Renderer(db.parent / "vault", out, color="never")
    render_tasks(r, data)
    expected = [
        f"{r.path(path, line, column)}: [{r.name(status)}] {r.name(text)}".rstrip()
        for path, line, column, status, text, _state in data["lines"]
    ]
    assert out.getvalue().split("\n")[: len(expected)] == expected


def test_a_whole_list_reads_no_notes_row_per_task(db: Path) -> None:
    """Without a note filter the excluded notes' tasks are left out by their partial index
    (as the counts are), not by a ``notes`` row looked up per task (issue 32)."""
    conn = connect_readonly(db)
    statements: list[str] = []
    try:
        conn.set_trace_callback(statements.append)
        lines = task_lines(conn, TaskFilter(states=["open"]))["lines"]
        tasks_json(conn, TaskFilter(states=["open"]))
        conn.set_trace_callback(None)
        plans = [
            " ".join(str(row[3]) for row in conn.execute("EXPLAIN QUERY PLAN " + sql))
            for sql in statements
            if sql.lstrip().upper().startswith("SELECT")
        ]
    finally:
        conn.close()
    assert len(lines) == 5 and len(plans) == 2
    for plan in plans:
        assert "SEARCH n USING INTEGER PRIMARY KEY" not in plan, plan
        assert "notes_excluded" in plan, plan


@pytest.mark.parametrize("selected", FILTERS, ids=repr)
@pytest.mark.parametrize(("offset", "limit"), [(0, 2), (1, 2), (2, None), (5, 1), (9, 3), (0, 0)])
def test_a_page_cut_in_sql_is_the_page_cut_in_python(
    db: Path, selected: dict[str, object], offset: int, limit: int | None
) -> None:
    wanted = TaskFilter(**selected)  # type: ignore[arg-type]
    conn = connect_readonly(db)
    try:
        whole = paginate(tasks(conn, wanted), ("tasks",), offset, limit)
        page = tasks_page(conn, wanted, offset, limit)
    finally:
        conn.close()
    assert page == whole
    assert compact_json(page) == compact_json(whole)  # the same keys in the same order


def test_date_words() -> None:
    today = "2026-12-06"
    assert parse_day("today", today) == today
    assert parse_day(" TODAY ", today) == today
    assert parse_day("7d", today) == "2026-12-13"
    assert parse_day("+1d", today) == "2026-12-07"
    assert parse_day("-6d", today) == "2026-11-30"
    assert parse_day("0d", today) == today
    assert parse_day("2026-02-28", today) == "2026-02-28"
    for bad in ("2026-02-30", "tomorrow", "d", "--1d", "7", "2026-2-3", "7 d", ""):
        with pytest.raises(UsageError, match="not a date"):
            parse_day(bad, today)
