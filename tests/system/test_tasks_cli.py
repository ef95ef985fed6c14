"""`notedex tasks` as a subprocess: one JSON document on stdout, exit codes, text and paths;
and a task saved into a note under a running daemon (a real watchdog observer) is listed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import run_cli, wait_until, write
from tests.system.daemons import Daemons


@pytest.fixture
def task_vault(vault: Path) -> Path:
    write(vault / "a.md", "# A\n\n- [ ] write it 📅 2026-12-01 #work\n- [x] done it\n")
    write(vault / "Sub" / "b c.md", "1. [/] 進行中 [due:: 2026-06-01]\n```\n- [ ] code\n```\n")
    return vault


def test_json_is_one_document_and_exit_0(task_vault: Path, db_path: Path) -> None:
    result = run_cli("tasks", "--vault", task_vault, "--db", db_path, "--json")
    assert result.code == 0, result.stderr
    data = json.loads(result.stdout)  # exactly one document: a second would not parse
    assert result.stdout.endswith("}\n") or result.stdout.endswith("}")
    assert [(t["path"], t["line"], t["status"], t["due"]) for t in data["tasks"]] == [
        ("Sub/b c.md", 1, "/", "2026-06-01"),
        ("a.md", 3, " ", "2026-12-01"),
        ("a.md", 4, "x", None),
    ]
    assert data["counts"] == {"open": 2, "done": 1, "cancelled": 0}


def test_text_paths_and_usage_errors(task_vault: Path, db_path: Path) -> None:
    base = ("--vault", task_vault, "--db", db_path)
    text = run_cli("tasks", "--open", *base)
    assert text.code == 0, text.stderr
    assert text.stdout.splitlines() == [
        "Sub/b c.md:1:4: [/] 進行中 [due:: 2026-06-01]",
        "a.md:3:3: [ ] write it 📅 2026-12-01 #work",
        "",
        "2 tasks: 2 open, 0 done, 0 cancelled",
    ]
    paths = run_cli("tasks", "-0", *base)
    assert (paths.code, paths.stdout) == (0, "Sub/b c.md\0a.md\0")
    for bad in (("--due-before", "friday"), ("--status", "xx"), ("--limit", "0")):
        result = run_cli("tasks", *bad, "--json", *base)
        assert result.code == 2, (bad, result.stderr)
        assert result.stdout == ""
        assert "error" in result.stderr
    both = run_cli("tasks", "--json", "--paths", *base)
    assert both.code == 2 and both.stdout == ""


def test_a_task_saved_under_the_daemon_is_listed(
    daemons: Daemons, task_vault: Path, db_path: Path
) -> None:
    daemons.start()

    def listed() -> list[str]:
        result = run_cli(
            "tasks", "--open", "--vault", task_vault, "--db", db_path, "--json", "--no-refresh"
        )
        assert result.code == 0, result.stderr
        return [t["text"] for t in json.loads(result.stdout)["tasks"]]

    assert listed() == ["進行中 [due:: 2026-06-01]", "write it 📅 2026-12-01 #work"]
    with open(task_vault / "a.md", "a", encoding="utf-8") as note:
        note.write("- [ ] call the bank ⏳ 2026-01-15\n")
    wait_until(lambda: "call the bank ⏳ 2026-01-15" in listed(), message="the new task")
    (task_vault / "Sub" / "b c.md").rename(task_vault / "moved.md")
    wait_until(
        lambda: (
            "moved.md"
            in run_cli(
                "tasks", "--paths", "--vault", task_vault, "--db", db_path, "--no-refresh"
            ).stdout
        ),
        message="the moved note's task",
    )
