"""The note filter, `recent` and `properties` as a user runs them: a subprocess, exit codes, one
JSON document on stdout, the message on stderr (issue 32)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from tests.helpers import Result, run_cli, write


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("filters-cli")
    root, db = base / "vault", base / "index.db"
    (root / ".obsidian").mkdir(parents=True)
    notes = {
        "Projects/a.md": ("---\nstatus: draft\npriority: 3\ndue: 2026-11-01\n---\ncobra\n", 3),
        "Projects/b.md": ("---\nstatus: done\npriority: 1\nreviewed: true\n---\ncobra\n", 1),
        "Area/c.md": ("---\nstatus: draft\ntags: [p, q]\n---\ncobra\n", 2),
    }
    for rel, (text, days) in notes.items():
        write(root / rel, text)
        when = time.time() - days * 86400
        os.utime(root / rel, (when, when))
    assert run_cli("index", "--vault", root, "--db", db).code == 0
    return root, db


def run(vault: tuple[Path, Path], *args: str) -> Result:
    root, db = vault
    return run_cli(*args, "--vault", root, "--db", db)


def one_json(result: Result) -> dict[str, object]:
    assert result.code == 0, result.stderr
    data: dict[str, object] = json.loads(result.stdout)  # exactly one document
    return data


def test_recent_newest_first_with_limit_and_filters(vault: tuple[Path, Path]) -> None:
    data = one_json(run(vault, "recent", "--json"))
    notes = data["notes"]
    assert isinstance(notes, list)
    assert [n["path"] for n in notes] == ["Projects/b.md", "Area/c.md", "Projects/a.md"]
    assert all(n["modified"].endswith("Z") for n in notes)
    data = one_json(run(vault, "recent", "--limit", "1", "--folder", "Projects", "--json"))
    assert [n["path"] for n in data["notes"]] == ["Projects/b.md"]  # type: ignore[attr-defined]
    oldest = run(vault, "recent", "--reverse", "--paths")
    assert oldest.stdout.split() == ["Projects/a.md", "Area/c.md", "Projects/b.md"]
    text = run(vault, "recent", "--where", "status=draft")
    assert text.code == 0 and "MODIFIED" in text.stdout and "2 notes" in text.stdout


def test_properties_json_and_one_property(vault: tuple[Path, Path]) -> None:
    data = one_json(run(vault, "properties", "--json"))
    assert data["properties"] == [
        {"name": "due", "type": "date", "declared": False, "count": 1},
        {"name": "priority", "type": "number", "declared": False, "count": 2},
        {"name": "reviewed", "type": "checkbox", "declared": False, "count": 1},
        {"name": "status", "type": "text", "declared": False, "count": 3},
        {"name": "tags", "type": "list", "declared": False, "count": 1},
    ]
    data = one_json(run(vault, "properties", "STATUS", "--json"))
    assert data["values"] == [
        {"value": "draft", "type": "text", "count": 2},
        {"value": "done", "type": "text", "count": 1},
    ]
    text = run(vault, "properties")
    assert text.code == 0 and "5 properties" in text.stdout


def test_a_filtered_scan_is_one_json_document(vault: tuple[Path, Path]) -> None:
    data = one_json(run(vault, "scan", "--where", "priority>=2", "--folder", "Projects", "--json"))
    assert data["noteCount"] == 1
    paths = run(vault, "scan", "--where", "!reviewed", "-0")
    assert paths.stdout == "Area/c.md\0Projects/a.md\0"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("scan", "--where", "priority>"), "expected a value after >"),
        (("scan", "--where", "=2"), "expected NAME=VALUE"),
        (("recent", "--modified-since", "last week"), "expected a date"),
        (("properties", "--created-before", "x"), "expected a date"),
        (("search", "cobra", "--sort", "path"), "give it with --paths or -0"),
        (("graph", "--around", "a", "--folder", "Projects"), "--around or a note filter"),
        (("scan", "--sort", " "), "--sort: expected modified"),
    ],
)
def test_bad_filters_exit_2_with_the_reason(
    vault: tuple[Path, Path], args: tuple[str, ...], message: str
) -> None:
    result = run(vault, *args, "--json")
    assert result.code == 2
    assert message in result.stderr
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
