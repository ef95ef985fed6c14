"""SEMANTICS 13: Markdown tasks, their statuses, dates, tags and what is no task.

The rules about parsing alone go through the pure parser (``parse_note``); the command's
filters, order, counts and the incremental index through the CLI in-process
(``SpecVault``), on a real vault and a real index under ``tmp_path``.
"""

from __future__ import annotations

import datetime
import unicodedata
from typing import Any

import pytest

from notedex.vault.model import Task
from notedex.vault.parse import parse_note
from tests.helpers import SpecVault


def tasks_of(text: str) -> tuple[Task, ...]:
    return parse_note(text.encode("utf-8"), "n.md").tasks


def one(text: str) -> Task:
    found = tasks_of(text)
    assert len(found) == 1, found
    return found[0]


# -- 13.1 what a task is ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "state"),
    [
        (" ", "open"),
        ("x", "done"),
        ("X", "done"),
        ("-", "cancelled"),
        ("/", "open"),
        (">", "open"),
        ("?", "open"),
        ("!", "open"),
        ("á", "open"),
        ("🔥", "open"),
    ],
)
def test_every_status_character_and_its_state(status: str, state: str) -> None:
    task = one(f"- [{status}] do it\n")
    assert (task.status, task.state, task.text) == (status, state, "do it")


@pytest.mark.parametrize(
    ("line", "column"),
    [
        ("- [ ] t", 3),
        ("* [ ] t", 3),
        ("+ [ ] t", 3),
        ("1. [ ] t", 4),
        ("12) [ ] t", 5),
        ("-\t[ ] t", 3),
        ("-   [ ] t", 5),
        ("> - [ ] t", 5),
        ("> [!todo] Callout\n> - [ ] t", 5),
        ("> > * [ ] t", 7),
    ],
)
def test_list_markers_quotes_and_callouts(line: str, column: int) -> None:
    task = tasks_of(line + "\n")[-1]
    assert (task.text, task.column) == ("t", column)


def test_nested_tasks_each_on_its_own_line_with_its_own_text() -> None:
    text = "- [ ] parent\n  - [x] child\n    1. [/] grandchild\n\t- [ ] tabbed\n"
    found = tasks_of(text)
    assert [(t.line, t.column, t.status, t.text) for t in found] == [
        (1, 3, " ", "parent"),
        (2, 5, "x", "child"),
        (3, 8, "/", "grandchild"),
        (4, 4, " ", "tabbed"),
    ]


@pytest.mark.parametrize(
    "line",
    [
        "- [x]done",  # no space after the box
        "- [] empty box",
        "- [ab] two characters",
        "-[ ] no space after the marker",
        "[ ] no list marker",
        "- \\[ \\] escaped",
        "text - [ ] mid-line",
        "1.5 [ ] not a marker",
    ],
)
def test_not_tasks(line: str) -> None:
    assert tasks_of(line + "\n") == ()


def test_an_empty_task_has_empty_text() -> None:
    assert [(t.status, t.text) for t in tasks_of("- [ ]\n- [x]   \n")] == [(" ", ""), ("x", "")]


# -- 13.2 what is no task ---------------------------------------------------------------------

EXCLUDED = {
    "frontmatter": "---\ntodo: |\n  - [ ] in frontmatter\n---\n",
    "fenced": "```\n- [ ] in code\n```\n",
    "tilde fence": "~~~md\n- [ ] in code\n~~~\n",
    "fence in a list": "- item\n  ```\n  - [ ] in code\n  ```\n",
    "fence in a callout": "> [!note]\n> ```\n> - [ ] in code\n> ```\n",
    "indented code": "text\n\n    - [ ] in code\n",
    "math block": "$$\n- [ ] in math\n$$\n",
    "comment block": "%%\n- [ ] in a comment\n%%\n",
    "comment in a paragraph": "text %% starts\n- [ ] in a comment\nends %%\n",
    "unclosed comment": "%%\n- [ ] hidden to the end\n\n- [ ] still hidden\n",
    "html comment": "<!--\n- [ ] in a comment\n-->\n",
    "html comment after text": "text <!-- starts\n- [ ] in a comment\n-->\n",
    "html block": "<div>\n- [ ] in html\n</div>\n",
}


@pytest.mark.parametrize("name", sorted(EXCLUDED))
def test_code_comments_math_html_and_frontmatter_hold_no_tasks(name: str) -> None:
    assert tasks_of(EXCLUDED[name]) == ()
    # The same text followed by a real task: that one is found, on its true line.
    text = EXCLUDED[name]
    if name == "unclosed comment":
        return
    task = one(text + "\n- [ ] real\n")
    assert (task.line, task.text) == (text.count("\n") + 2, "real")


def test_a_comment_on_the_task_line_keeps_the_task() -> None:
    task = one("- [ ] call Bob %% about the invoice %%\n")
    assert task.text == "call Bob %% about the invoice %%"


def test_a_task_after_a_closed_comment_counts() -> None:
    found = tasks_of("%% note %%\n- [ ] a\n<!-- c -->\n- [ ] b\n")
    assert [t.text for t in found] == ["a", "b"]


# -- 13.4 dates -------------------------------------------------------------------------------

EMOJI = [
    ("📅", "due"),
    ("📆", "due"),
    ("🗓", "due"),
    ("🗓\ufe0f", "due"),
    ("⏳", "scheduled"),
    ("⌛", "scheduled"),
    ("🛫", "start"),
    ("➕", "created"),
    ("✅", "done"),
    ("❌", "cancelled"),
]
DATE_FIELDS = ("due", "scheduled", "start", "created", "done", "cancelled")


def dates(task: Task) -> dict[str, str]:
    return {name: getattr(task, name) for name in DATE_FIELDS if getattr(task, name)}


@pytest.mark.parametrize(("emoji", "field"), EMOJI)
def test_every_tasks_plugin_date_signifier(emoji: str, field: str) -> None:
    assert dates(one(f"- [ ] t {emoji} 2026-12-01\n")) == {field: "2026-12-01"}
    assert dates(one(f"- [ ] t {emoji}2026-12-01 more\n")) == {field: "2026-12-01"}


@pytest.mark.parametrize(
    ("written", "field"),
    [
        ("[due:: 2026-12-01]", "due"),
        ("(due:: 2026-12-01)", "due"),
        ("[scheduled::2026-12-01]", "scheduled"),
        ("[start:: 2026-12-01]", "start"),
        ("[created:: 2026-12-01]", "created"),
        ("[completion:: 2026-12-01]", "done"),
        ("[cancelled:: 2026-12-01]", "cancelled"),
        ("[ Due :: 2026-12-01 ]", "due"),
        ("[due:: 2026-12-01T10:30]", "due"),
        ("(due:: 2026-12-01 10:30:00)", "due"),
    ],
)
def test_every_dataview_field_form(written: str, field: str) -> None:
    assert dates(one(f"- [ ] t {written}\n")) == {field: "2026-12-01"}


@pytest.mark.parametrize(
    "written",
    [
        "📅 2026-02-30",  # no such day
        "📅 2026-12-1",
        "📅 26-12-01",
        "[due:: 2026-12-01)",  # brackets that do not pair
        "[due:: tomorrow]",
        "[priority:: 2026-12-01]",  # not a date field
        "`📅 2026-12-01`",  # inline code
        "due 2026-12-01",
    ],
)
def test_what_is_no_date(written: str) -> None:
    assert dates(one(f"- [ ] t {written}\n")) == {}


def test_all_dates_of_one_task_and_the_first_of_a_field_wins() -> None:
    task = one(
        "- [x] ship ➕ 2026-01-01 🛫 2026-01-02 ⏳ 2026-01-03 📅 2026-01-04 ✅ 2026-01-05 "
        "[due:: 2026-09-09] ❌ 2026-01-06\n"
    )
    assert dates(task) == {
        "created": "2026-01-01",
        "start": "2026-01-02",
        "scheduled": "2026-01-03",
        "due": "2026-01-04",
        "done": "2026-01-05",
        "cancelled": "2026-01-06",
    }
    assert one("- [ ] a [due:: 2026-02-02] 📅 2026-03-03\n").due == "2026-02-02"


# -- 13.5 text, tags, positions -------------------------------------------------------------


def test_tags_are_those_on_the_task_line() -> None:
    found = tasks_of("#before\n- [ ] a #work #a/b `#code` [[#Heading]]\n  - [ ] b #child\n#after\n")
    assert [(t.text.split()[0], t.tags) for t in found] == [
        ("a", ("work", "a/b")),
        ("b", ("child",)),
    ]


def test_cjk_text_and_tags_nfc() -> None:
    task = one(unicodedata.normalize("NFD", "- [ ] 買牛奶 #買物 café 📅 2026-12-01\n"))
    assert task.text == "買牛奶 #買物 café 📅 2026-12-01"
    assert task.tags == ("買物",)
    assert task.due == "2026-12-01"
    assert one("- [ ] 日本語のタスク ⏳ 2026-01-01\n").column == 3


def test_lines_count_the_frontmatter() -> None:
    task = one("---\ntitle: T\n---\n\n- [ ] t\n")
    assert (task.line, task.column) == (5, 3)


def test_crlf_gives_what_lf_gives() -> None:
    text = (
        "---\ntags: [a]\n---\n- [ ] one #x 📅 2026-12-01\n  - [x] two [due:: 2026-01-01]\n"
        "```\n- [ ] code\n```\n> - [/] quoted\n- [ ]\n"
    )
    lf = tasks_of(text)
    assert len(lf) == 4
    assert tasks_of(text.replace("\n", "\r\n")) == lf


# -- the command: filters, order, counts ---------------------------------------------------------


def listed(v: SpecVault, *args: str) -> list[tuple[str, int, str, str | None]]:
    data = v.json("tasks", *args)
    return [(t["path"], t["line"], t["status"], t["due"]) for t in data["tasks"]]


@pytest.fixture
def tv(v: SpecVault) -> SpecVault:
    v.write("b.md", "- [ ] b1 📅 2026-03-01\n- [x] b2 📅 2026-01-01\n- [-] b3\n- [/] b4\n")
    v.write(
        "a.md",
        "---\ntype: Project\ntags: [proj]\n---\n- [ ] a1 [due:: 2026-03-01]\n- [?] a2 📅 2026-02-01\n",
    )
    v.write("c/c.md", "- [X] c1\n- [ ] c2 #later\n")
    v.write(".obsidian/app.json", '{"userIgnoreFilters": ["hidden/"]}')
    v.write("hidden/h.md", "- [ ] in an excluded note\n")
    return v


def test_every_task_by_due_date_then_path_and_line(tv: SpecVault) -> None:
    data = tv.json("tasks")
    assert [(t["path"], t["line"]) for t in data["tasks"]] == [
        ("b.md", 2),  # 2026-01-01
        ("a.md", 6),  # 2026-02-01
        ("a.md", 5),  # 2026-03-01, a.md before b.md
        ("b.md", 1),
        ("b.md", 3),  # no due date: by path, then line
        ("b.md", 4),
        ("c/c.md", 1),
        ("c/c.md", 2),
    ]
    assert data["taskCount"] == 8
    assert data["counts"] == {"open": 5, "done": 2, "cancelled": 1}
    first = data["tasks"][0]
    assert first == {
        "path": "b.md",
        "line": 2,
        "column": 3,
        "status": "x",
        "state": "done",
        "text": "b2 📅 2026-01-01",
        "tags": [],
        "due": "2026-01-01",
        "scheduled": None,
        "start": None,
        "created": None,
        "done": None,
        "cancelled": None,
    }


def test_open_done_and_status_select_and_combine(tv: SpecVault) -> None:
    assert {s for _, _, s, _ in listed(tv, "--open")} == {" ", "?", "/"}
    assert {s for _, _, s, _ in listed(tv, "--done")} == {"x", "X"}
    assert listed(tv, "--status", "-") == [("b.md", 3, "-", None)]
    assert {s for _, _, s, _ in listed(tv, "--done", "--status", "-")} == {"x", "X", "-"}
    assert {s for _, _, s, _ in listed(tv, "--status", "/", "--status", "?")} == {"/", "?"}
    assert len(listed(tv, "--open", "--done")) == 7


def test_due_bounds_are_strict_and_leave_out_undated_tasks(tv: SpecVault) -> None:
    assert listed(tv, "--due-before", "2026-03-01") == [
        ("b.md", 2, "x", "2026-01-01"),
        ("a.md", 6, "?", "2026-02-01"),
    ]
    assert listed(tv, "--due-after", "2026-01-01", "--due-before", "2026-03-02", "--open") == [
        ("a.md", 6, "?", "2026-02-01"),
        ("a.md", 5, " ", "2026-03-01"),
        ("b.md", 1, " ", "2026-03-01"),
    ]


def test_relative_dates(v: SpecVault) -> None:
    today = datetime.date.today()
    for days in (-3, 0, 2, 10):
        day = (today + datetime.timedelta(days=days)).isoformat()
        v.write(f"d{days}.md", f"- [ ] in {days} days 📅 {day}\n")

    def due(*args: str) -> list[str]:
        return [t["path"] for t in v.json("tasks", *args)["tasks"]]

    assert due("--due-before", "7d") == ["d-3.md", "d0.md", "d2.md"]
    assert due("--due-before", "today") == ["d-3.md"]
    assert due("--due-after=-4d", "--due-before", "0d") == ["d-3.md"]
    assert due("--due-after", "today") == ["d2.md", "d10.md"]


@pytest.mark.parametrize(
    "args",
    [
        ("--due-before", "soon"),
        ("--due-before", "2026-13-01"),
        ("--due-after", "7 days"),
        ("--status", "ab"),
    ],
)
def test_bad_options_are_exit_2(v: SpecVault, args: tuple[str, ...]) -> None:
    result = v.run("tasks", *args)
    assert result.code == 2
    assert result.stdout == ""
    assert args[-1] in result.stderr


def test_note_filters_as_scan_takes_them(tv: SpecVault) -> None:
    assert {p for p, _, _, _ in listed(tv, "--tag", "proj")} == {"a.md"}
    assert {p for p, _, _, _ in listed(tv, "--type", "project")} == {"a.md"}
    assert listed(tv, "--tag", "proj", "--type", "other") == []
    # --tag selects notes: an inline tag on one task makes the note's every task listed
    assert listed(tv, "--tag", "later") == [("c/c.md", 1, "X", None), ("c/c.md", 2, " ", None)]
    # every note filter (issue 32's NoteFilter): folders and dates too
    assert {p for p, _, _, _ in listed(tv, "--folder", "c")} == {"c/c.md"}
    assert listed(tv, "--modified-since", "1d", "--folder", "c") != []


def test_paging_keeps_the_counts(tv: SpecVault) -> None:
    data = tv.json("tasks", "--limit", "2", "--offset", "1")
    assert [(t["path"], t["line"]) for t in data["tasks"]] == [("a.md", 6), ("a.md", 5)]
    assert (data["taskCount"], data["total"], data["hasMore"]) == (8, 8, True)


def test_paths_lists_each_note_once(tv: SpecVault) -> None:
    result = tv.run("tasks", "--paths")
    assert result.code == 2  # --json (SpecVault's) and --paths do not go together
    from tests.helpers import run_inprocess

    out = run_inprocess("tasks", "--vault", tv.root, "--db", tv.db, "--paths")
    assert out.code == 0
    assert out.stdout.splitlines() == ["b.md", "a.md", "c/c.md"]


# -- 13.7 incremental --------------------------------------------------------------------------


def texts(v: SpecVault) -> list[tuple[str, str]]:
    data: dict[str, Any] = v.json("tasks")
    return sorted((t["path"], t["text"]) for t in data["tasks"])


def test_edits_moves_and_deletions_carry_the_tasks(v: SpecVault) -> None:
    v.write("n.md", "- [ ] one\n")
    v.write("keep.md", "- [ ] kept\n")
    assert texts(v) == [("keep.md", "kept"), ("n.md", "one")]
    v.write("n.md", "- [x] one\n- [ ] two\n")
    assert texts(v) == [("keep.md", "kept"), ("n.md", "one"), ("n.md", "two")]
    (v.root / "n.md").rename(v.root / "moved.md")
    assert texts(v) == [("keep.md", "kept"), ("moved.md", "one"), ("moved.md", "two")]
    (v.root / "moved.md").unlink()
    assert texts(v) == [("keep.md", "kept")]
    v.write("keep.md", "no tasks left\n")
    assert texts(v) == []


def test_text_output_escapes_names_and_text(v: SpecVault) -> None:
    from tests.helpers import run_inprocess

    v.write("bell\u0007.md", "- [ ] ring \u0007 twice \u2028 now\n")
    out = run_inprocess("tasks", "--vault", v.root, "--db", v.db)
    assert out.code == 0, out.stderr
    assert out.stdout.splitlines()[0] == "bell\\x07.md:1:3: [ ] ring \\x07 twice \\u2028 now"
    data = v.json("tasks")  # --json keeps them as they are
    assert data["tasks"][0]["text"] == "ring \u0007 twice \u2028 now"
