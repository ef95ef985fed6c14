"""SEMANTICS 14.4 in Bases (15.3): a base reads property types as the note filter does, from the
vault's ``.obsidian/types.json`` first and the value's shape after (one rule,
``vault.properties.declared_value``). Spec cases where types.json changes a base's answer, and
a grid where ``scan --where`` and a base filter saying the same thing keep the same notes under
every declared type."""

from __future__ import annotations

import datetime as dt
import json
import time

import pytest

from tests.helpers import SpecVault, wait_until


def base_paths(v: SpecVault, *filters: str, view: str | None = None) -> list[str]:
    """The notes a base with these global filters keeps, in path order."""
    doc = {"filters": {"and": list(filters)}, "views": [{"type": "table", "name": "All"}]}
    v.write("q.base", json.dumps(doc))
    data = v.json("base", "q.base", *(["--view", view] if view else []))
    return [row["path"] for row in data["rows"]]


def declare(vault: SpecVault, **types: str) -> None:
    vault.write(".obsidian/types.json", json.dumps({"types": types}))


@pytest.fixture
def notes(v: SpecVault) -> SpecVault:
    v.write("a.md", '---\ncode: "42"\nref: 2026-01-01\nscore: 3\nflag: "TRUE"\n---\nA\n')
    v.write("b.md", "---\ncode: 7\nref: soon\nscore: 1.5\nflag: true\nstatus: draft\n---\nB\n")
    v.write("c.md", "---\nstatus: [draft, x]\ndue: 2026-02-01T09:30\n---\nC\n")
    return v


def test_a_quoted_number_declared_number_compares_as_one(notes: SpecVault) -> None:
    assert base_paths(notes, "code > 10") == []  # "42" is text: mismatched, false
    declare(notes, code="number")
    assert base_paths(notes, "code > 10") == ["a.md"]
    assert base_paths(notes, 'code.isType("number")') == ["a.md", "b.md"]


def test_a_date_shaped_text_declared_text_stays_text(notes: SpecVault) -> None:
    assert base_paths(notes, 'ref < date("2026-06-01")') == ["a.md"]
    declare(notes, ref="text", score="text")
    assert base_paths(notes, 'ref < date("2026-06-01")') == []
    assert base_paths(notes, 'ref == "2026-01-01"') == ["a.md"]
    assert base_paths(notes, 'ref.isType("string")') == ["a.md", "b.md"]
    assert base_paths(notes, 'score == "3"') == ["a.md"]  # a number under text is its text
    assert base_paths(notes, "score > 2") == []


def test_a_declared_date_compares_dates_and_reads_nothing_else(notes: SpecVault) -> None:
    assert base_paths(notes, 'ref == "soon"') == ["b.md"]
    declare(notes, ref="date", due="date")
    assert base_paths(notes, 'ref < date("2026-06-01")') == ["a.md"]
    assert base_paths(notes, 'ref == "soon"') == []  # "soon" is no date: it compares as nothing
    assert base_paths(notes, 'due > date("2026-02-01")') == ["c.md"]  # a datetime stays one


def test_a_declared_checkbox_reads_the_text_true(notes: SpecVault) -> None:
    assert base_paths(notes, "flag == true") == ["b.md"]
    declare(notes, flag="checkbox")
    assert base_paths(notes, "flag == true") == ["a.md", "b.md"]


def test_a_declared_list_makes_one_value_a_list(notes: SpecVault) -> None:
    assert base_paths(notes, 'status == "draft"') == ["b.md"]
    declare(notes, status="multitext")
    assert base_paths(notes, 'status == "draft"') == []  # a list equals nothing
    assert base_paths(notes, 'status.contains("draft")') == ["b.md", "c.md"]


# Each value a note holds, as YAML writes it; every shape the type rules tell apart.
VALUES = [
    "3",
    "1",
    '"3"',
    '"2.5"',
    "high",
    "draft",
    "true",
    '"true"',
    "2026-01-01",
    '"2026-03-01T10:00"',
    "soon",
    "[draft, x]",
    '["3", 1]',
    "[]",
    "",
]
# (--where, the base filter that says the same): the comparisons both type strictly (the
# filter's `=` with a number, date or checkbox operand also compares a text value as text).
SAME = [
    ("v>=2", "v >= 2"),
    ("v<2", "v < 2"),
    ("v<2026-02-01", 'v < date("2026-02-01")'),
    ("v>2026-02-01", 'v > date("2026-02-01")'),
    ("v=draft", 'v == "draft"'),
    ("v~=draft", 'list(v).contains("draft")'),
]


@pytest.mark.parametrize("declared", [None, "text", "number", "checkbox", "date", "multitext"])
def test_filter_and_base_keep_the_same_notes(v: SpecVault, declared: str | None) -> None:
    for number, value in enumerate(VALUES):
        v.write(f"n{number:02}.md", f"---\nv: {value}\n---\nN\n")
    v.write("none.md", "no properties\n")
    if declared:
        declare(v, v=declared)
    # Every base written first, so that the vault stays as it is through the questions: each
    # answer is read from one index, refreshed once (not once per base written).
    for k, (_where, expression) in enumerate(SAME):
        doc = {"filters": {"and": [expression]}, "views": [{"type": "table", "name": "All"}]}
        v.write(f"q{k}.base", json.dumps(doc))
    disagree = []
    for k, (where, _expression) in enumerate(SAME):
        by_filter = [n["path"] for n in v.scan("--where", where)["notes"]]
        by_base = [row["path"] for row in v.json("base", f"q{k}.base")["rows"]]
        if by_filter != by_base:
            disagree.append((where, by_filter, by_base))
    assert not disagree


def test_file_ctime_is_the_filters_created_time(v: SpecVault) -> None:
    """SEMANTICS 14.7 and 15.5: ``file.ctime`` is the time ``--created-since`` reads, the
    file's ``st_ctime`` (local, to the second), and the two keep the same notes."""
    first = v.write("a.md", "A\n")
    second = int(first.stat().st_ctime) + 1
    wait_until(lambda: time.time() >= second + 0.05, timeout=5)
    later = v.write("b.md", "B\n")
    doc = {"views": [{"type": "table", "name": "All", "order": ["file.ctime"]}]}
    v.write("q.base", json.dumps(doc))
    rows = {row["path"]: row["file.ctime"] for row in v.json("base", "q.base")["rows"]}
    for path in (first, later):
        stamp = dt.datetime.fromtimestamp(path.stat().st_ctime_ns // 10**9)
        assert rows[path.name] == stamp.isoformat()
    since = dt.datetime.fromtimestamp(second).isoformat()
    created = [n["path"] for n in v.scan("--created-since", since)["notes"]]
    assert created == ["b.md"]
    assert base_paths(v, f'file.ctime >= date("{since}")', 'file.ext == "md"') == created
