"""The CLI contract (ARCHITECTURE "CLI contract"), checked on a real vault through a subprocess.

For scan, health, graph, show, status, capture and index: the JSON shape field by field, stdout
that is exactly one JSON document, the exit codes, text output that carries the same facts, and
bad usage that exits 2 with an empty stdout under ``--json``.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from notedex.store.schema import SCHEMA_VERSION
from tests.helpers import Result, run_cli, wait_until, write
from tests.indexcheck import fts_sound_after, make_vault

__all__ = ["fts_sound_after"]  # autouse: FTS integrity-check after every test

SUMMARY = re.compile(
    r"^added (\d+), changed (\d+), removed (\d+), moved (\d+), unchanged (\d+) "
    r"\(rehashed (\d+)\), "
    r"errors (\d+), \d+\.\d\ds$"
)
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$")


@pytest.fixture
def demo(demo_copy: tuple[Path, Path]) -> tuple[Path, Path]:
    """These tests change the vault: each gets its own copy (conftest's `demo_copy`)."""
    return demo_copy


def cli(demo: tuple[Path, Path], *args: str | Path, input: str | None = None) -> Result:
    vault, db = demo
    return run_cli(*args, "--vault", vault, "--db", db, input=input)


def json_only(result: Result) -> Any:
    """stdout holds exactly one JSON document and nothing else; no traceback anywhere."""
    assert "Traceback" not in result.stderr, result.stderr
    text = result.stdout
    assert text, f"empty stdout (exit {result.code}); stderr: {result.stderr}"
    data = json.loads(text)  # raises on anything before or after the document
    assert text.endswith("}\n") and text.lstrip().startswith("{")
    return data


def vault_notes(vault: Path) -> set[str]:
    return {
        p.relative_to(vault).as_posix() for p in vault.rglob("*.md") if ".obsidian" not in p.parts
    }


# -- scan -------------------------------------------------------------------------------------


def test_scan_json_shape_field_by_field(demo: tuple[Path, Path]) -> None:
    vault, _db = demo
    result = cli(demo, "scan", "--json")
    assert result.code == 0
    data = json_only(result)
    assert set(data) == {"notes", "errors", "noteCount", "errorCount"}
    assert data["noteCount"] == len(data["notes"]) == len(vault_notes(vault)) == 26
    assert data["errorCount"] == len(data["errors"]) == 1
    for note in data["notes"]:
        assert set(note) == {"id", "title", "type", "status", "path", "tags", "aliases"}
        for key in ("id", "type", "status"):
            assert note[key] is None or isinstance(note[key], str)
        assert isinstance(note["title"], str) and note["title"]
        assert isinstance(note["tags"], list) and all(isinstance(t, str) for t in note["tags"])
        assert isinstance(note["aliases"], list) and all(
            isinstance(a, str) for a in note["aliases"]
        )
    paths = [n["path"] for n in data["notes"]]
    assert set(paths) == vault_notes(vault)
    assert paths == sorted(paths)
    by_path = {n["path"]: n for n in data["notes"]}
    assert by_path["Areas/Go 學習路線.md"] == {
        "id": "20261105-130000",
        "title": "Go 學習路線",
        "type": "roadmap",
        "status": "growing",
        "path": "Areas/Go 學習路線.md",
        "tags": ["golang", "learning"],
        "aliases": [],
    }
    assert by_path["Projects/Cobra CLI 框架.md"]["aliases"] == ["spf13/cobra"]
    assert by_path["Areas/PARA 方法.md"]["aliases"] == ["PARA method"]
    assert by_path["Areas/PARA 方法.md"]["tags"] == ["productivity", "知識管理"]
    assert by_path["README.md"]["id"] is None
    [error] = data["errors"]
    assert set(error) == {"path", "message"}
    assert error["path"] == "Archive/broken-yaml.md"
    assert "YAML" in error["message"]


def test_scan_tag_filter_counts_nested_tags(demo: tuple[Path, Path]) -> None:
    data = json_only(cli(demo, "scan", "--json", "--tag", "golang"))
    paths = {n["path"] for n in data["notes"]}
    # SEMANTICS 4: golang/errors counts for golang.
    assert "Areas/Go 錯誤處理.md" in paths
    assert "Projects/Cobra CLI 框架.md" in paths
    assert "README.md" not in paths
    assert data["noteCount"] == len(paths)
    data = json_only(cli(demo, "scan", "--json", "--type", "method"))
    assert {n["path"] for n in data["notes"]} == {
        "Areas/PARA 方法.md",
        "Reading/Zettelkasten 卡片盒筆記法.md",
        "Areas/ひらがなの練習.md",
        "Areas/ふりかえり.md",
        "Areas/데일리 노트.md",
    }


def test_scan_text_carries_every_fact_of_the_json(demo: tuple[Path, Path]) -> None:
    data = json_only(cli(demo, "scan", "--json"))
    result = cli(demo, "scan")
    assert result.code == 0
    text = result.stdout
    assert "\x1b" not in text  # not a TTY: no escape codes
    for note in data["notes"]:
        line = next(line for line in text.splitlines() if line.startswith(note["path"] + " "))
        for value in (
            note["title"],
            note["id"],
            note["type"],
            note["status"],
            *note["tags"],
            *note["aliases"],
        ):
            if value is not None:
                assert value in line, (value, line)
    for error in data["errors"]:
        assert error["path"] in text and error["message"] in text
    assert f"{data['noteCount']} notes, {data['errorCount']} error" in text  # demo: 15 and 1


def test_scan_text_columns_are_aligned(demo: tuple[Path, Path]) -> None:
    import unicodedata

    def width(s: str) -> int:
        return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)

    text = cli(demo, "scan").stdout
    lines = text.splitlines()
    header = lines[0]
    assert header.startswith("PATH")
    title_col = header.index("TITLE")
    rows = [line for line in lines[1:] if line.endswith(".md") or ".md " in line][:15]
    assert len(rows) == 15
    for row in rows:
        path_part = row.split(".md", 1)[0] + ".md"
        rest = row[len(path_part) :]
        # The title column starts at the same display column on every row.
        assert width(path_part) + (len(rest) - len(rest.lstrip(" "))) == title_col, row


# -- health -----------------------------------------------------------------------------------


def test_health_json_shape_and_exit_1_for_broken_links(demo: tuple[Path, Path]) -> None:
    result = cli(demo, "health", "--json")
    assert result.code == 1, result.stderr
    data = json_only(result)
    assert set(data) == {
        "orphanNotes",
        "unlinkedNotes",
        "brokenLinks",
        "brokenAnchors",
        "deadEnds",
        "unusedAttachments",
        "warnings",
        "errors",
        "orphanCount",
        "brokenLinkCount",
        "brokenAnchorCount",
        "deadEndCount",
        "unusedAttachmentCount",
        # issue 33: added, every key above kept
        "selfLinks",
        "selfLinkCount",
        "counts",
    }
    assert data["brokenLinks"] == [
        {
            "source": "Areas/Go 學習路線.md",
            "line": 13,
            "column": 29,
            "text": "[[Concurrency patterns]]",
            "target": "Concurrency patterns",
            "suggestion": None,
            "reason": None,
            "confidence": None,
        },
        {
            "source": "Projects/Cobra 子命令設計.md",
            "line": 8,
            "column": 48,
            "text": "[[Cobra shell completon]]",
            "target": "Cobra shell completon",
            "suggestion": "[[Cobra shell completion]]",
            "reason": "typo",
            "confidence": 0.9,
        },
    ]
    assert data["brokenLinkCount"] == 2
    assert data["brokenAnchors"] == [
        {
            "source": "Projects/Cobra 子命令設計.md",
            "line": 9,
            "column": 9,
            "text": "[[Cobra CLI 框架#Comands|Commands]]",
            "target": "Projects/Cobra CLI 框架.md",
            "subpath": "#Comands",
            "kind": "heading",
            "suggestion": "#Commands",
            "reason": "typo",
            "confidence": 0.93,
        }
    ]
    assert data["brokenAnchorCount"] == 1
    assert {o["path"] for o in data["orphanNotes"]} == {
        "00_Inbox/20261120-093000 讀書會想法.md",
        "Archive/Orphan idea.md",
        "Archive/舊的會議紀錄.md",
    }
    assert data["orphanCount"] == len(data["orphanNotes"]) == 3
    for entry in data["orphanNotes"] + data["unlinkedNotes"]:
        assert set(entry) == {"path", "title"} and isinstance(entry["title"], str)
    assert {u["path"] for u in data["unlinkedNotes"]} == {
        "Archive/broken-yaml.md",
        "Projects/ADR-001 選用 Cobra 作為 CLI 框架.md",
        "README.md",
    }
    assert data["warnings"] == []
    assert [e["path"] for e in data["errors"]] == ["Archive/broken-yaml.md"]
    assert all(set(e) == {"path", "message", "code"} for e in data["errors"])  # code: issue 33


def test_health_text_exits_1_too_and_carries_the_same_facts(demo: tuple[Path, Path]) -> None:
    data = json_only(cli(demo, "health", "--json"))
    result = cli(demo, "health")
    assert result.code == 1
    text = result.stdout
    for b in data["brokenLinks"]:
        assert f"{b['source']}:{b['line']}:{b['column']}" in text
        assert b["text"] in text and b["target"] in text
    for key in ("orphanNotes", "unlinkedNotes", "warnings", "errors"):
        for entry in data[key]:
            assert entry["path"] in text
    for entry in data["warnings"] + data["errors"]:
        assert entry["message"] in text
    assert (data["brokenAnchorCount"], data["orphanCount"]) == (1, 3)  # the demo: one and many
    assert "1 broken anchor, " in text and "3 orphans" in text  # plural forms
    assert f"{data['brokenLinkCount']} broken links, " in text
    assert f"{len(data['unlinkedNotes'])} unlinked" in text
    assert f"Orphans: no links in or out ({data['orphanCount']})" in text


@pytest.mark.slow
def test_health_exits_0_without_broken_links_in_both_modes(tmp_path: Path) -> None:
    vault = make_vault(
        tmp_path / "v", {"a.md": "[[b]] #tag\n", "b.md": "[[a]]\n", "lone.md": "alone\n"}
    )
    db = tmp_path / "i.db"
    result = run_cli("health", "--json", "--vault", vault, "--db", db)
    assert result.code == 0, result.stderr
    data = json_only(result)
    assert data["brokenLinkCount"] == 0 and data["brokenLinks"] == []
    assert data["orphanNotes"] == [{"path": "lone.md", "title": "lone"}]
    text = run_cli("health", "--vault", vault, "--db", db)
    assert text.code == 0
    assert "0 broken links" in text.stdout and "no broken links" in text.stdout
    # And back to 1 once a link breaks (the refresh picks the edit up).
    write(vault / "b.md", "[[a]] [[gone]]\n")
    assert run_cli("health", "--json", "--vault", vault, "--db", db).code == 1
    assert run_cli("health", "--vault", vault, "--db", db).code == 1


def test_health_suggests_fixes_for_broken_links_in_both_modes(tmp_path: Path) -> None:
    vault = make_vault(
        tmp_path / "v",
        {
            "Golang.md": "---\naliases: [Go notes]\n---\n",
            "Archive/Plan.md": "",
            "a.md": "[[Go notes]]\n[[Old/Plan]]\n",
        },
    )
    db = tmp_path / "i.db"
    result = run_cli("health", "--json", "--vault", vault, "--db", db)
    assert result.code == 1, result.stderr
    assert [(b["suggestion"], b["reason"]) for b in json_only(result)["brokenLinks"]] == [
        ("[[Golang|Go notes]]", "alias"),
        ("[[Plan]]", "folder"),
    ]
    text = run_cli("health", "--vault", vault, "--db", db).stdout
    assert (
        "a.md:1:1  [[Go notes]]  -> Go notes (no such note; did you mean [[Golang|Go notes]] (alias)?)"
        in text
    )
    assert (
        "a.md:2:1  [[Old/Plan]]  -> Old/Plan (no such note; did you mean [[Plan]] (folder)?)"
        in text
    )


@pytest.mark.slow
def test_health_exits_1_for_a_broken_anchor_alone_in_both_modes(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", {"a.md": "[[b#Gone]]\n", "b.md": "# Here\n[[a]]\n"})
    db = tmp_path / "i.db"
    result = run_cli("health", "--json", "--vault", vault, "--db", db)
    assert result.code == 1, result.stderr
    data = json_only(result)
    assert data["brokenLinkCount"] == 0 and data["brokenAnchorCount"] == 1
    assert data["brokenAnchors"] == [
        {
            "source": "a.md",
            "line": 1,
            "column": 1,
            "text": "[[b#Gone]]",
            "target": "b.md",
            "subpath": "#Gone",
            "kind": "heading",
            "suggestion": None,
            "reason": None,
            "confidence": None,
        }
    ]
    text = run_cli("health", "--vault", vault, "--db", db)
    assert text.code == 1
    assert "Broken anchors: no such heading or block (1)" in text.stdout
    assert "a.md:1:1  [[b#Gone]]  -> b.md has no heading #Gone" in text.stdout
    assert "0 broken links, 1 broken anchor," in text.stdout  # singular for one
    # Fixed in the target: exit 0 again (the refresh re-checks links into the edited note).
    write(vault / "b.md", "# Gone\n[[a]]\n")
    assert run_cli("health", "--json", "--vault", vault, "--db", db).code == 0
    assert run_cli("health", "--vault", vault, "--db", db).code == 0


def test_health_text_keeps_each_broken_link_on_one_line(tmp_path: Path) -> None:
    """A Markdown link's text may wrap within its paragraph; the report line does not."""
    vault = make_vault(tmp_path / "v", {"a.md": "See [the\nplan](Gone.md) today.\n"})
    result = run_cli("health", "--vault", vault, "--db", tmp_path / "i.db")
    assert result.code == 1, result.stderr
    [line] = [ln for ln in result.stdout.splitlines() if "Gone" in ln]
    assert "a.md:1:5" in line and "[the plan](Gone.md)" in line
    data = json_only(run_cli("health", "--json", "--vault", vault, "--db", tmp_path / "i.db"))
    assert data["brokenLinks"][0]["text"] == "[the\nplan](Gone.md)"  # JSON keeps the raw text


def test_health_warnings_and_errors_in_both_modes(tmp_path: Path) -> None:
    vault = make_vault(
        tmp_path / "v",
        {
            "Space.md": "---\ntags: a, b\n---\n[[A/Dup]]\n",  # SEMANTICS 4: dropped, with a warning
            "Start.md": "[[Dup]]\n",  # SEMANTICS 7.7: a tie-break, with a warning
            "A/Dup.md": "[[Start]]\n",
            "B/Dup.md": "[[Start]]\n",
            "Bad.md": "---\n[oops\n---\n[[Start]]\n",
        },
    )
    db = tmp_path / "i.db"
    result = run_cli("health", "--json", "--vault", vault, "--db", db)
    assert result.code == 0, result.stderr  # warnings and errors are not broken links
    data = json_only(result)
    assert sorted(w["path"] for w in data["warnings"]) == ["Space.md", "Start.md"]
    assert all(set(w) == {"path", "message", "code"} and w["message"] for w in data["warnings"])
    assert sorted(w["code"] for w in data["warnings"]) == ["ambiguous-link", "tag-with-space"]
    ambiguous = next(w for w in data["warnings"] if w["path"] == "Start.md")
    assert "A/Dup.md" in ambiguous["message"]
    assert [e["path"] for e in data["errors"]] == ["Bad.md"]
    text = run_cli("health", "--vault", vault, "--db", db)
    assert text.code == 0
    for entry in data["warnings"] + data["errors"]:
        assert f"{entry['path']}: {entry['message']}" in text.stdout
    assert "2 warnings, 1 error:" in text.stdout
    status = json_only(run_cli("status", "--json", "--vault", vault, "--db", db))
    assert status["counts"]["warnings"] == len(data["warnings"])
    assert status["counts"]["errors"] == len(data["errors"])


# -- graph ------------------------------------------------------------------------------------


def test_graph_json_shape(demo: tuple[Path, Path]) -> None:
    vault, _db = demo
    result = cli(demo, "graph", "--json")
    assert result.code == 0
    data = json_only(result)
    assert set(data) == {"nodes", "edges"}
    ids = [n["id"] for n in data["nodes"]]
    assert len(ids) == len(set(ids))
    for node in data["nodes"]:
        assert set(node) == {"id", "label", "kind"}
        assert node["kind"] in {"note", "attachment", "unresolved"}
    kinds = {n["id"]: n["kind"] for n in data["nodes"]}
    assert {i for i, k in kinds.items() if k == "note"} == vault_notes(vault)
    assert kinds["attachments/para-diagram.png"] == "attachment"
    assert kinds["Concurrency patterns"] == "unresolved"
    labels = {n["id"]: n["label"] for n in data["nodes"]}
    assert labels["Areas/PARA 方法.md"] == "PARA 方法"
    pairs = [(e["source"], e["target"]) for e in data["edges"]]
    assert len(pairs) == len(set(pairs))
    for edge in data["edges"]:
        assert set(edge) == {"source", "target", "count"}
        assert edge["source"] in kinds and kinds[edge["source"]] == "note"
        assert edge["target"] in kinds
        assert isinstance(edge["count"], int) and edge["count"] >= 1
    assert ("README.md", "Areas/PARA 方法.md") in pairs
    assert ("Areas/Go 學習路線.md", "Concurrency patterns") in pairs
    text = cli(demo, "graph")
    assert text.code == 0
    for source, target in pairs:
        assert f"{source} -> {target}" in text.stdout
    assert f"{len(ids)} nodes" in text.stdout and f"{len(pairs)} edges" in text.stdout


def test_graph_has_one_edge_per_node_pair(tmp_path: Path) -> None:
    """[[Foo]], [[Foo.md]] and [[Foo#x]] share the broken key Foo: one edge with count 3."""
    vault = make_vault(
        tmp_path / "v", {"a.md": "[[Foo]] [[Foo.md]] [[Foo#x]] [[foo]] [[b]] ![[b]]\n", "b.md": ""}
    )
    data = json_only(run_cli("graph", "--json", "--vault", vault, "--db", tmp_path / "i.db"))
    assert sorted((e["source"], e["target"], e["count"]) for e in data["edges"]) == [
        ("a.md", "Foo", 3),
        ("a.md", "b.md", 2),
        ("a.md", "foo", 1),  # SEMANTICS 7: keys keep their case
    ]
    assert sorted((n["id"], n["kind"]) for n in data["nodes"]) == [
        ("Foo", "unresolved"),
        ("a.md", "note"),
        ("b.md", "note"),
        ("foo", "unresolved"),
    ]


def test_graph_keeps_an_unresolved_key_apart_from_a_file_of_that_name(tmp_path: Path) -> None:
    """[[Gone.md.md]] is broken with the key "Gone.md" while Gone.md exists: two nodes."""
    vault = make_vault(tmp_path / "v", {"Gone.md": "", "S.md": "[[Gone.md.md]] [[Gone]]\n"})
    data = json_only(run_cli("graph", "--json", "--vault", vault, "--db", tmp_path / "i.db"))
    nodes = {n["id"]: n for n in data["nodes"]}
    assert len(nodes) == len(data["nodes"]) == 3
    [broken] = [n for n in data["nodes"] if n["kind"] == "unresolved"]
    assert broken["label"] == "Gone.md" and broken["id"] != "Gone.md"
    assert nodes["Gone.md"]["kind"] == "note"
    assert sorted((e["target"], e["count"]) for e in data["edges"]) == sorted(
        [("Gone.md", 1), (broken["id"], 1)]
    )


def test_graph_labels_an_excluded_link_target_by_its_name(tmp_path: Path) -> None:
    """SEMANTICS 1: an excluded note still resolves links; as a target node it reads like a note."""
    vault = make_vault(
        tmp_path / "v",
        {
            "Old/Archived plan.md": "# Archived\n",
            "Now.md": "[[Archived plan]] ![[pic.png]]\n",
            "pic.png": "",
            ".obsidian/app.json": '{"userIgnoreFilters": ["Old/"]}',
        },
    )
    data = json_only(run_cli("graph", "--json", "--vault", vault, "--db", tmp_path / "i.db"))
    nodes = {n["id"]: n for n in data["nodes"]}
    assert nodes["Old/Archived plan.md"] == {
        "id": "Old/Archived plan.md",
        "label": "Archived plan",
        "kind": "note",
    }
    assert nodes["pic.png"]["label"] == "pic.png" and nodes["pic.png"]["kind"] == "attachment"


# -- show -------------------------------------------------------------------------------------


def test_show_json_by_path_and_by_title(demo: tuple[Path, Path]) -> None:
    result = cli(demo, "show", "Projects/Cobra CLI 框架.md", "--json")
    assert result.code == 0, result.stderr
    data = json_only(result)
    for key in (
        "path",
        "title",
        "id",
        "type",
        "status",
        "tags",
        "aliases",
        "links",
        "backlinks",
        "errors",
        "warnings",
    ):
        assert key in data
    assert data["path"] == "Projects/Cobra CLI 框架.md"
    assert data["id"] == "20261101-090000" and data["type"] == "reference"
    assert data["tags"] == ["golang", "cli"] and data["aliases"] == ["spf13/cobra"]
    assert ISO.match(data["modified"])
    assert "body" not in data
    [link] = data["links"]
    assert link["target"] == "Projects/Cobra shell completion.md" and link["broken"] is False
    assert {"source", "line", "column", "text"} <= set(data["backlinks"][0])
    sources = {b["source"] for b in data["backlinks"]}
    assert "Projects/ADR-001 選用 Cobra 作為 CLI 框架.md" in sources
    by_title = json_only(cli(demo, "show", "cobra cli 框架", "--json"))
    assert by_title["path"] == data["path"]
    without_md = json_only(cli(demo, "show", "Projects/Cobra CLI 框架", "--json"))
    assert without_md["path"] == data["path"]


def test_show_lists_the_outline_in_both_modes(tmp_path: Path) -> None:
    vault = make_vault(
        tmp_path / "v", {"a.md": "---\nx: 1\n---\n# Top\nPara ^p1\nSub\n---\n```\n# no\n```\n"}
    )
    db = tmp_path / "i.db"
    data = json_only(run_cli("show", "a.md", "--json", "--vault", vault, "--db", db))
    assert data["headings"] == [
        {"level": 1, "text": "Top", "line": 4, "column": 1},
        {"level": 2, "text": "Sub", "line": 6, "column": 1},
    ]
    assert data["blockIds"] == [{"id": "p1", "line": 5, "column": 6}]
    text = run_cli("show", "a.md", "--vault", vault, "--db", db).stdout
    assert "Outline (3)\n  4  # Top\n  5  ^p1\n  6  ## Sub\n" in text


def test_show_body_and_broken_link_details(demo: tuple[Path, Path]) -> None:
    data = json_only(cli(demo, "show", "Go 學習路線", "--body", "--json"))
    assert data["body"].startswith("# Go 學習路線")
    assert "---" not in data["body"].splitlines()[0]
    broken = [link for link in data["links"] if link["broken"]]
    assert broken == [
        {
            "kind": "wikilink",
            "text": "[[Concurrency patterns]]",
            "line": 13,
            "column": 29,
            "target": None,
            "broken": True,
            "key": "Concurrency patterns",
        }
    ]
    text = cli(demo, "show", "Go 學習路線", "--body")
    assert text.code == 0
    assert "BROKEN (Concurrency patterns)" in text.stdout
    assert "Areas/Go 學習路線.md" in text.stdout and "20261105-130000" in text.stdout
    assert "# Go 學習路線" in text.stdout


def test_show_unknown_or_ambiguous_note_is_exit_2_with_empty_stdout(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", {"A/Dup.md": "", "B/Dup.md": "", "x.md": ""})
    db = tmp_path / "i.db"
    missing = run_cli("show", "nothing here", "--json", "--vault", vault, "--db", db)
    assert (missing.code, missing.stdout) == (2, "")
    assert "no note matches" in missing.stderr and "Traceback" not in missing.stderr
    ambiguous = run_cli("show", "Dup", "--json", "--vault", vault, "--db", db)
    assert (ambiguous.code, ambiguous.stdout) == (2, "")
    assert "A/Dup.md" in ambiguous.stderr and "B/Dup.md" in ambiguous.stderr
    assert (
        json_only(run_cli("show", "A/Dup", "--json", "--vault", vault, "--db", db))["path"]
        == "A/Dup.md"
    )


@pytest.mark.slow
def test_show_folds_case_beyond_ascii_like_links_do(tmp_path: Path) -> None:
    """SEMANTICS 7 folds with str.lower() after NFC; SQLite's lower() folds ASCII only."""
    import unicodedata

    vault = make_vault(
        tmp_path / "v",
        {
            "Été/Öl Über.md": "---\ntitle: Ünïcode Títle\n---\n",
            "Ω.md": "",
            "x.md": "[[öl über]] [[ω]]\n",
        },
    )
    db = tmp_path / "i.db"
    for query, path in [
        ("öl über", "Été/Öl Über.md"),
        ("ÖL ÜBER", "Été/Öl Über.md"),
        ("été/öl über.md", "Été/Öl Über.md"),
        ("ÉTÉ/ÖL ÜBER", "Été/Öl Über.md"),
        (unicodedata.normalize("NFD", "été/öl über"), "Été/Öl Über.md"),
        ("ünïcode títle", "Été/Öl Über.md"),
        ("ω", "Ω.md"),
    ]:
        result = run_cli("show", query, "--json", "--vault", vault, "--db", db)
        assert result.code == 0, (query, result.stderr)
        assert json_only(result)["path"] == path, query
    # The links agree: both resolve.
    assert [
        link["target"]
        for link in json_only(run_cli("show", "x", "--json", "--vault", vault, "--db", db))["links"]
    ] == [
        "Été/Öl Über.md",
        "Ω.md",
    ]


# -- status -----------------------------------------------------------------------------------


def test_status_json_shape(demo: tuple[Path, Path]) -> None:
    vault, db = demo
    result = cli(demo, "status", "--json")
    assert result.code == 0
    data = json_only(result)
    assert {"vault", "db", "schemaVersion", "counts", "lastIndexed", "daemon"} <= set(data)
    assert data["vault"] == str(vault.resolve())
    assert data["db"] == str(db)
    assert data["schemaVersion"] == SCHEMA_VERSION
    assert data["counts"] == {
        "notes": 26,
        "excludedNotes": 0,
        "attachments": 1,
        "links": data["counts"]["links"],
        "brokenLinks": 2,
        "errors": 1,
        "warnings": 0,
    }
    assert data["counts"]["links"] >= 15
    assert ISO.match(data["lastIndexed"])
    assert data["daemon"] == {
        "running": False,
        "pid": None,
        "since": None,
        "foldersNotWatched": None,
        "notWatchedSample": [],
    }
    written = json_only(cli(demo, "status", "--json", "--no-refresh"))["lastIndexed"]
    text = cli(demo, "status", "--no-refresh")  # the last write, as the JSON gave it
    assert text.code == 0
    local = dt.datetime.fromisoformat(written).astimezone()
    for fact in (
        str(vault.resolve()),
        str(db),
        f"v{SCHEMA_VERSION}",
        "not running",
        local.strftime("%Y-%m-%d %H:%M:%S %z"),  # local time in the text
    ):
        assert fact in text.stdout


def test_status_last_indexed_moves_on_every_check_and_text_is_local_time(
    demo: tuple[Path, Path],
) -> None:
    first = json_only(cli(demo, "status", "--json"))
    wait_until(
        lambda: time.time() >= dt.datetime.fromisoformat(first["lastIndexed"]).timestamp() + 1.1
    )
    second = json_only(cli(demo, "status", "--json"))  # nothing changed: a check, no write
    assert second["lastIndexed"] > first["lastIndexed"]
    assert second["secondsSinceIndexed"] < 1
    kept = json_only(cli(demo, "status", "--json", "--no-refresh"))
    assert kept["lastIndexed"] <= second["lastIndexed"]  # no check: the last write
    text = run_cli("status", "--vault", demo[0], "--db", demo[1], env={"TZ": "Asia/Taipei"}).stdout
    assert re.search(r"last indexed \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \+0800", text), text


def test_status_reports_a_daemon_holding_the_lock(demo: tuple[Path, Path]) -> None:
    """A writer lock held with role "daemon": status says running with its pid; queries skip
    the refresh (the daemon keeps the index fresh), so a new file is not seen yet."""
    from notedex.store.writer_lock import WriterLock

    vault, db = demo
    lock = WriterLock(Path(str(db) + ".lock"))
    assert lock.acquire("daemon")
    try:
        data = json_only(cli(demo, "status", "--json"))
        assert data["daemon"]["running"] is True and data["daemon"]["pid"] == os.getpid()
        assert ISO.match(data["daemon"]["since"])
        write(vault / "Fresh.md", "new\n")
        paths = {n["path"] for n in json_only(cli(demo, "scan", "--json"))["notes"]}
        assert "Fresh.md" not in paths
    finally:
        lock.release()
    paths = {n["path"] for n in json_only(cli(demo, "scan", "--json"))["notes"]}
    assert "Fresh.md" in paths


def test_index_full_with_a_daemon_running_exits_75_at_once(demo: tuple[Path, Path]) -> None:
    """`index --full` refuses to rebuild under a daemon (plain `index` asks it to rescan:
    test_cli_conventions.py)."""
    from notedex.store.writer_lock import WriterLock

    _vault, db = demo
    lock = WriterLock(Path(str(db) + ".lock"))
    assert lock.acquire("daemon")
    try:
        started = time.monotonic()
        result = cli(demo, "index", "--full", "--json")
        assert (result.code, result.stdout) == (75, "")
        assert "daemon" in result.stderr and str(os.getpid()) in result.stderr
        assert "stop the daemon" in result.stderr
        assert time.monotonic() - started < 10  # no 30 s wait for a lock that never frees
    finally:
        lock.release()


def open_files(pid: int) -> set[str]:
    """The paths a process holds open (Linux: its /proc/PID/fd links)."""
    fds = Path(f"/proc/{pid}/fd")
    paths = set()
    for fd in fds.iterdir():
        try:
            paths.add(os.readlink(fd))
        except OSError:  # closed between listing and reading
            pass
    return paths


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc/PID/fd")
def test_a_query_waits_for_another_writer_building_a_missing_index(tmp_path: Path) -> None:
    """Two first queries at once: the second waits for the first one's index, not exit 2."""
    from notedex.store.writer_lock import WriterLock

    vault = make_vault(tmp_path / "v", {"a.md": ""})
    db = tmp_path / "i.db"
    lock = WriterLock(Path(str(db) + ".lock"))
    assert lock.acquire("index")  # "another process" that is building the index
    proc = subprocess.Popen(
        [sys.executable, "-m", "notedex", "scan", "--json", "--vault", str(vault), "--db", str(db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # It has reached the lock once it holds the lock file open; it must still be waiting.
        wait_until(
            lambda: os.path.realpath(lock.path) in open_files(proc.pid) or proc.poll() is not None,
            message="the query to open the lock file",
        )
        assert proc.poll() is None
    finally:
        lock.release()
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    assert [n["path"] for n in json.loads(stdout)["notes"]] == ["a.md"]


# -- index and refresh ------------------------------------------------------------------------


@pytest.mark.slow
def test_index_prints_a_one_line_summary(tmp_path: Path) -> None:
    vault = make_vault(
        tmp_path / "v", {"a.md": "[[b]]\n", "b.md": "---\n: [\n---\n", "pic.png": b"\x89PNG"}
    )
    db = tmp_path / "i.db"

    def index(*extra: str) -> tuple[int, ...]:
        result = run_cli("index", *extra, "--vault", vault, "--db", db)
        assert result.code == 0, result.stderr
        lines = result.stdout.splitlines()
        assert len(lines) == 1, result.stdout
        match = SUMMARY.match(lines[0])
        assert match, lines[0]
        assert "indexing [" not in result.stderr  # no progress bar without a TTY
        return tuple(int(g) for g in match.groups())

    # (added, changed, removed, moved, unchanged, rehashed, errors): the errors are those the
    # index holds (b.md's bad YAML), as health lists them, not this run's parses (issue 34)
    assert index() == (3, 0, 0, 0, 0, 0, 1)
    assert index() == (0, 0, 0, 0, 3, 0, 1)
    write(vault / "a.md", "[[b]] changed\n")
    write(vault / "c.md", "new\n")
    (vault / "pic.png").unlink()
    assert index() == (1, 1, 1, 0, 1, 0, 1)
    os.utime(vault / "b.md", ns=(1_600_000_000 * 10**9,) * 2)  # a touch: same bytes
    assert index() == (0, 0, 0, 0, 3, 1, 1)
    os.rename(vault / "b.md", vault / "moved.md")  # settled (old mtime): a path update
    assert index() == (0, 0, 0, 1, 2, 0, 1)
    assert index("--full") == (3, 0, 0, 0, 0, 0, 1)
    data = json_only(run_cli("index", "--json", "--vault", vault, "--db", db))
    assert {"added", "changed", "removed", "errors", "seconds"} <= set(data)
    assert (data["added"], data["changed"], data["removed"], data["errors"]) == (0, 0, 0, 1)
    write(vault / "moved.md", "fixed\n")
    assert index() == (0, 1, 0, 0, 2, 0, 0)  # the error goes when its note is fixed


def test_queries_refresh_first_unless_no_refresh(demo: tuple[Path, Path]) -> None:
    vault, _db = demo
    write(vault / "Brand new.md", "[[Concurrency patterns]]\n")
    stale = json_only(cli(demo, "scan", "--json", "--no-refresh"))
    assert "Brand new.md" not in {n["path"] for n in stale["notes"]}
    fresh = json_only(cli(demo, "scan", "--json"))
    assert "Brand new.md" in {n["path"] for n in fresh["notes"]}
    assert fresh["noteCount"] == stale["noteCount"] + 1
    (vault / "Brand new.md").unlink()
    assert json_only(cli(demo, "health", "--json"))["brokenLinkCount"] == 2


def test_a_query_builds_a_missing_index_itself(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", {"a.md": "# A\n"})
    db = tmp_path / "nested" / "deeper" / "i.db"
    data = json_only(run_cli("scan", "--json", "--vault", vault, "--db", db))
    assert [n["path"] for n in data["notes"]] == ["a.md"]
    missing = run_cli(
        "scan", "--json", "--no-refresh", "--vault", vault, "--db", tmp_path / "none.db"
    )
    assert (missing.code, missing.stdout) == (2, "")
    assert "notedex index" in missing.stderr


def _run_with_tty_stderr(args: list[str]) -> tuple[int, str, str]:
    """Run the CLI with stderr on a pseudo-terminal; return (code, stdout, terminal output)."""
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "notedex", *args],
            stdout=subprocess.PIPE,
            stderr=slave,
            stdin=subprocess.DEVNULL,
        )
        os.close(slave)
        chunks: list[bytes] = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(master, 4096)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not chunk:
                    break
                chunks.append(chunk)
            elif proc.poll() is not None:
                break
        stdout, _ = proc.communicate(timeout=60)
    finally:
        os.close(master)
    return proc.returncode, stdout.decode(), b"".join(chunks).decode(errors="replace")


def test_index_shows_a_progress_bar_on_a_tty_stderr(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", {f"n{i}.md": f"[[n{i + 1}]]\n" for i in range(30)})
    code, stdout, terminal = _run_with_tty_stderr(
        ["index", "--vault", str(vault), "--db", str(tmp_path / "i.db")]
    )
    assert code == 0
    assert SUMMARY.match(stdout.strip()), stdout
    assert "indexing [" in terminal and "30/30" in terminal
    assert "\r" in terminal
    # --json keeps stdout pure even with the bar on the terminal.
    write(vault / "n0.md", "changed\n")
    code, stdout, terminal = _run_with_tty_stderr(
        ["index", "--json", "--vault", str(vault), "--db", str(tmp_path / "i.db")]
    )
    assert code == 0 and json.loads(stdout)["changed"] == 1
    assert "1/1" in terminal


# -- usage errors -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("health", "--json", "--bogus"),
        ("scan", "--json", "--tag"),
        ("show", "--json"),
        ("capture", "--json"),
        ("capture", "--json", "   "),
        ("lookup", "--json", "--limit", "0", "x"),
        ("graph", "--json", "extra"),
        ("nosuchcommand", "--json"),
        ("status", "--json", "--no-refresh", "--db", "{tmp}/missing.db"),
        ("health", "--json", "--vault", "{tmp}/no such vault"),
        ("scan", "--json", "--vault", "{tmp}/a-file.md"),
        ("scan", "--json", "--db", "{vault}/inside.db"),
        ("scan", "--json", "--db", "{tmp}/not-sqlite.db"),
        ("scan", "--json", "--db", "{tmp}"),
        ("index", "--json", "--db", "{tmp}/a-file.md/x.db"),
    ],
    ids=lambda a: " ".join(a),
)
def test_bad_usage_exits_2_with_empty_stdout(tmp_path: Path, args: tuple[str, ...]) -> None:
    vault = make_vault(tmp_path / "v", {"a.md": ""})
    write(tmp_path / "a-file.md", "not a folder")
    write(tmp_path / "not-sqlite.db", "this is not a database\n" * 100)
    expanded = [a.format(tmp=tmp_path, vault=vault) for a in args]
    if "--vault" not in expanded:
        expanded += ["--vault", str(vault)]
    if "--db" not in expanded:
        expanded += ["--db", str(tmp_path / "i.db")]
    result = run_cli(*expanded)
    assert result.code == 2, result.stderr
    assert result.stdout == ""
    assert result.stderr.strip(), "a message on stderr"
    assert "Traceback" not in result.stderr
    assert "internal error" not in result.stderr
    assert (tmp_path / "not-sqlite.db").read_text() == "this is not a database\n" * 100


def test_no_vault_anywhere_is_exit_2_with_a_how_to(tmp_path: Path) -> None:
    outside = tmp_path / "plain"
    outside.mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "notedex", "health", "--json"],
        cwd=outside,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (proc.returncode, proc.stdout) == (2, "")
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "--vault" in lines[0] and "NOTEDEX_VAULT" in lines[0]
