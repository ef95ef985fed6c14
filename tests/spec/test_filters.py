"""SEMANTICS 14: the note filter (``--where``, ``--folder``, the dates, ``--sort``) and Obsidian's
property types, on a vault built in each test and answered through the CLI."""

from __future__ import annotations

import json
import os
import time

import pytest

from tests.helpers import SpecVault, run_inprocess


def kept(v: SpecVault, *args: str) -> list[str]:
    """The paths scan lists, in its order."""
    return [note["path"] for note in v.scan(*args)["notes"]]


@pytest.fixture
def typed(v: SpecVault) -> SpecVault:
    v.write(
        "a.md",
        "---\nstatus: draft\npriority: 3\ndue: 2026-11-01\ntags: [project, x]\n"
        "reviewed: true\nscore: 2.5\n---\nA\n",
    )
    v.write(
        "b.md",
        "---\nStatus: Done\npriority: 1\ndue: 2027-01-05T10:00\nreviewed: false\n"
        "tags: [other]\n---\nB\n",
    )
    v.write("c.md", '---\nstatus: DRAFT\npriority: "2"\nreviewed:\ndue: soon\n---\nC\n')
    v.write("d.md", "no properties\n")
    v.write("e.md", "---\npriority: high\ndue: 2026-12-31\nid: '007'\ntags: []\n---\nE\n")
    return v


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        # 15.5: text without case; != keeps notes without the property
        ("status=draft", ["a.md", "c.md"]),
        ("status=DONE", ["b.md"]),
        ("status!=done", ["a.md", "c.md", "d.md", "e.md"]),
        # numbers as numbers; "2" (quoted) and "high" are text: mismatched, so false
        ("priority>=2", ["a.md"]),
        ("priority<=1", ["b.md"]),
        ("priority>1", ["a.md"]),
        ("priority<3", ["b.md"]),
        ("priority=3", ["a.md"]),
        ("priority=3.0", ["a.md"]),
        ("score>2", ["a.md"]),
        # = on a text property compares the operand as text
        ("priority=2", ["c.md"]),
        ("priority=high", ["e.md"]),
        ("id=007", ["e.md"]),
        # dates and datetimes together, a date its midnight; "soon" is text: no match
        ("due<2026-12-31", ["a.md"]),
        ("due<=2026-12-31", ["a.md", "e.md"]),
        ("due>2026-12-31", ["b.md"]),
        ("due>=2027-01-05T10:00", ["b.md"]),
        ("due=2027-01-05T10:00:00", ["b.md"]),
        ("due=2026-11-01", ["a.md"]),
        # lists: ~= asks for an item, = is never true of a list
        ("tags~=project", ["a.md"]),
        ("tags~=PROJECT", ["a.md"]),
        ("tags=project", []),
        ("status~=draft", ["a.md", "c.md"]),
        # checkboxes: = true/false; the order operators never
        ("reviewed=true", ["a.md"]),
        ("reviewed=false", ["b.md"]),
        ("reviewed>false", []),
        # set / not set: an empty value and a false checkbox are not set
        ("reviewed", ["a.md"]),
        ("!reviewed", ["b.md", "c.md", "d.md", "e.md"]),
        ("tags", ["a.md", "b.md"]),
        ("!tags", ["c.md", "d.md", "e.md"]),
        ("nothing", []),
        ("!nothing", ["a.md", "b.md", "c.md", "d.md", "e.md"]),
    ],
)
def test_every_operator_and_type_rule(typed: SpecVault, where: str, expected: list[str]) -> None:
    assert kept(typed, "--where", where) == expected


def test_conditions_are_anded_and_names_fold(typed: SpecVault) -> None:
    assert kept(typed, "--where", "STATUS=draft", "--where", "priority>=2") == ["a.md"]
    assert kept(typed, "--where", "status=draft", "--where", "!reviewed") == ["c.md"]


def test_declared_types_win_over_the_shape(typed: SpecVault) -> None:
    """15.4: types.json makes "2" a number, numbers text, and the text "true" a checkbox."""
    assert kept(typed, "--where", "priority>=2") == ["a.md"]
    typed.write(
        ".obsidian/types.json",
        json.dumps({"types": {"priority": "number", "score": "text", "flag": "checkbox"}}),
    )
    typed.write("f.md", "---\nflag: 'true'\nscore: 3\n---\nF\n")
    assert kept(typed, "--where", "priority>=2") == ["a.md", "c.md"]
    assert kept(typed, "--where", "score>2") == []  # text now: a number operand mismatches
    assert kept(typed, "--where", "score=2.5") == ["a.md"]  # = compares it as text
    assert kept(typed, "--where", "flag=true") == ["f.md"]
    assert kept(typed, "--where", "tags~=project") == ["a.md"]


def test_a_declared_list_equals_nothing(typed: SpecVault) -> None:
    typed.write(".obsidian/types.json", json.dumps({"types": {"status": "multitext"}}))
    assert kept(typed, "--where", "status=draft") == []
    assert kept(typed, "--where", "status~=draft") == ["a.md", "c.md"]


def test_unreadable_types_json_is_ignored(typed: SpecVault) -> None:
    typed.write(".obsidian/types.json", "{not json")
    assert kept(typed, "--where", "priority>=2") == ["a.md"]


def test_folders_and_below_repeated_is_or(v: SpecVault) -> None:
    for rel in ("Projects/a.md", "Projects/x/b.md", "Projects2/c.md", "Other/d.md", "e.md"):
        v.write(rel, "text\n")
    assert kept(v, "--folder", "Projects") == ["Projects/a.md", "Projects/x/b.md"]
    assert kept(v, "--folder", "/Projects/x/") == ["Projects/x/b.md"]
    assert kept(v, "--folder", "Projects/x", "--folder", "Other") == [
        "Other/d.md",
        "Projects/x/b.md",
    ]
    assert len(kept(v, "--folder", "/")) == 5
    assert kept(v, "--folder", "Nowhere") == []


def _age(v: SpecVault, rel: str, days: float) -> None:
    when = time.time() - days * 86400
    os.utime(v.root / rel, (when, when))


def test_modified_dates_and_days(v: SpecVault) -> None:
    for rel, days in (("old.md", 30), ("week.md", 6), ("new.md", 0)):
        v.write(rel, f"{rel}\n")
        _age(v, rel, days)
    assert kept(v, "--modified-since", "7d") == ["new.md", "week.md"]
    assert kept(v, "--modified-before", "7d") == ["old.md"]
    day = time.strftime("%Y-%m-%d", time.localtime(time.time() - 10 * 86400))
    assert kept(v, "--modified-since", day) == ["new.md", "week.md"]
    assert kept(v, "--modified-since", day + "T00:00") == ["new.md", "week.md"]
    assert kept(v, "--modified-since", "7d", "--modified-before", "1d") == ["week.md"]


def test_created_uses_the_stored_change_time(v: SpecVault) -> None:
    """15.7: created is the file's change time (utime does not set it back)."""
    v.write("a.md", "a\n")
    _age(v, "a.md", 30)
    assert kept(v, "--created-since", "1d") == ["a.md"]
    assert kept(v, "--created-before", "1d") == []


def test_sort_and_reverse(typed: SpecVault) -> None:
    for rel, days in (("a.md", 3), ("b.md", 1), ("c.md", 5), ("d.md", 2), ("e.md", 4)):
        _age(typed, rel, days)
    assert kept(typed, "--sort", "modified") == ["c.md", "e.md", "a.md", "d.md", "b.md"]
    assert kept(typed, "--sort", "modified", "--reverse")[0] == "b.md"
    assert kept(typed, "--sort", "path", "--reverse") == ["e.md", "d.md", "c.md", "b.md", "a.md"]
    # a property: numbers before text, notes without it last, ties by path
    assert kept(typed, "--sort", "priority") == ["b.md", "c.md", "a.md", "e.md", "d.md"]
    assert kept(typed, "--sort", "Priority", "--reverse")[:3] == ["e.md", "a.md", "c.md"]
    assert kept(typed, "--sort", "title") == ["a.md", "b.md", "c.md", "d.md", "e.md"]


def test_tag_is_repeatable_and_anded(v: SpecVault) -> None:
    v.write("a.md", "#x #y\n")
    v.write("b.md", "#x\n")
    assert kept(v, "--tag", "x") == ["a.md", "b.md"]
    assert kept(v, "--tag", "x", "--tag", "y") == ["a.md"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--where", "=x"), "expected NAME=VALUE"),
        (("--where", "a<"), "expected a value after <"),
        (("--where", "!a=b"), "expected NAME=VALUE"),
        (("--where", "a<>b"), "expected NAME=VALUE"),
        (("--where", ""), "expected NAME=VALUE"),
        (("--modified-since", "yesterday"), "expected a date (2026-12-31)"),
        (("--created-before", "7w"), "expected a date"),
    ],
)
def test_bad_filters_are_usage_errors(v: SpecVault, args: tuple[str, ...], message: str) -> None:
    v.write("a.md", "a\n")
    result = v.run("scan", *args)
    assert result.code == 2
    assert message in result.stderr
    assert result.stdout == ""


def test_search_health_tags_graph_export_take_the_filter(v: SpecVault) -> None:
    v.write("P/a.md", "---\nstatus: draft\n---\ncobra [[gone]] #t1\n")
    v.write("P/b.md", "---\nstatus: done\n---\ncobra [[gone2]] #t2\n")
    v.write("Q/c.md", "cobra [[P/a]] #t1\n")
    search = v.json("search", "cobra", "--where", "status=draft")
    assert [hit["path"] for hit in search["hits"]] == ["P/a.md"] and search["total"] == 1
    paths = run_inprocess(
        "search",
        "cobra",
        "--folder",
        "P",
        "--paths",
        "--sort",
        "path",
        "--vault",
        v.root,
        "--db",
        v.db,
    ).stdout
    assert paths.split() == ["P/a.md", "P/b.md"]
    health = v.json("health", "--folder", "P", "--where", "status=done", ok=(1,))
    assert [b["source"] for b in health["brokenLinks"]] == ["P/b.md"]
    assert health["brokenLinkCount"] == 1
    tags = v.json("tags", "--folder", "P")
    assert [(t["tag"], t["count"]) for t in tags["tags"]] == [("t1", 1), ("t2", 1)]
    assert tags["taggedNoteCount"] == 2
    graph = v.json("graph", "--folder", "Q")
    assert [(e["source"], e["target"]) for e in graph["edges"]] == [("Q/c.md", "P/a.md")]
    export = v.json("export", "--where", "status=draft")
    assert [r["sourceMetadata"]["relativePath"] for r in export["records"]] == ["P/a.md"]


def test_lookup_takes_the_filter(v: SpecVault) -> None:
    v.write("P/Roadmap.md", "---\nstatus: draft\n---\nx\n")
    v.write("Q/Roadmap plan.md", "---\nstatus: done\n---\nx\n")
    v.write("P/Roadmap old.md", "---\nstatus: done\n---\nx\n")

    def found(*args: str) -> list[str]:
        return sorted(c["path"] for c in v.json("lookup", "roadmap", *args)["candidates"])

    assert found() == ["P/Roadmap old.md", "P/Roadmap.md", "Q/Roadmap plan.md"]
    assert found("--folder", "P") == ["P/Roadmap old.md", "P/Roadmap.md"]
    assert found("--where", "status=done") == ["P/Roadmap old.md", "Q/Roadmap plan.md"]
    assert found("--folder", "P", "--where", "status!=done") == ["P/Roadmap.md"]
