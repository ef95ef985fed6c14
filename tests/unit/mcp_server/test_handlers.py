"""The tool handlers in-process (no SDK): dispatch, paging of the CLI's JSON, and the deadline."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from notedex.config import Config
from notedex.mcp_server.handlers import VaultTools
from notedex.mcp_server.tools import ToolError
from notedex.query.reports import health
from notedex.store.connect import connect_readonly
from tests.helpers import indexed_demo


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return indexed_demo(tmp_path_factory.mktemp("mcp-handlers"))


@pytest.fixture
def tools(indexed: tuple[Path, Path]) -> Iterator[VaultTools]:
    vault, db = indexed
    tools = VaultTools(Config(vault, db), timeout=10, refresh=False)
    yield tools
    tools.close()


def test_an_unknown_tool_is_refused_with_the_list_of_tools(tools: VaultTools) -> None:
    with pytest.raises(ToolError) as caught:
        tools.call("nope", {})
    assert (
        str(caught.value)
        == "unknown tool 'nope'; the tools are lookup, search, show, quote, health, tags, "
        "mentions, scan, status, graph, tasks, base, properties"
    )


def test_health_pages_every_list_and_keeps_their_full_lengths(
    tools: VaultTools, indexed: tuple[Path, Path]
) -> None:
    conn = connect_readonly(indexed[1])
    try:
        full = health(conn)
    finally:
        conn.close()
    lists = (
        "orphanNotes",
        "unlinkedNotes",
        "brokenLinks",
        "brokenAnchors",
        "deadEnds",
        "unusedAttachments",
        "selfLinks",  # issue 33: a declared finding, paged like the others
        "warnings",
        "errors",
    )
    got = tools.call("health", {"limit": 1, "offset": 1})
    assert got["totals"] == {name: len(full[name]) for name in lists}
    assert max(got["totals"].values()) > 2  # the demo vault has enough findings to page
    for name in lists:
        assert got[name] == full[name][1:2], name
    assert got["total"] == max(got["totals"].values())
    assert (got["offset"], got["limit"], got["hasMore"], got["stale"]) == (1, 1, True, False)


def test_lookup_past_the_last_candidate_says_so(tools: VaultTools) -> None:
    got = tools.call("lookup", {"question": "cobra", "offset": 90})
    assert got["candidates"] == [] and got["shown"] == 0 and got["narrowed"] is True
    assert got["message"] == f"no candidates past 90; {got['total']} in all"
    assert got["hasMore"] is False


def test_a_query_past_its_deadline_is_interrupted(indexed: tuple[Path, Path]) -> None:
    vault, db = indexed
    tools = VaultTools(Config(vault, db), timeout=0.3, refresh=False)

    def forever(conn: Any, args: dict[str, Any]) -> dict[str, Any]:
        conn.execute(
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) FROM c"
        ).fetchone()
        return {}

    tools._handlers["scan"] = forever
    started = time.monotonic()
    with pytest.raises(ToolError, match="deadline"):
        tools.call("scan", {}, time.monotonic() + 0.3)
    assert time.monotonic() - started < 5
    tools._handlers.pop("scan")
    tools.close()


COBRA = "Projects/Cobra CLI 框架.md"


def test_quote_tool_has_the_cli_contract(tools: VaultTools) -> None:
    got = tools.call("quote", {"note": COBRA, "text": "root command、子命令、flags 與"})
    assert got["found"] is True and got["stale"] is False
    assert got["match"]["cite"] == f"{COBRA}:10-11"
    missed = tools.call("quote", {"note": COBRA, "text": "掛到母命令上"})
    assert missed["found"] is False and missed["closest"]["line"] == 14


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"note": COBRA, "text": "  "}, "'text' must not be empty"),
        ({"note": COBRA, "text": "**"}, "the quote is empty"),
        ({"note": "/etc/passwd", "text": "root"}, "absolute"),
        ({"note": "No such note", "text": "x"}, "no note matches"),
    ],
)
def test_quote_tool_refuses_bad_input(
    tools: VaultTools, arguments: dict[str, Any], message: str
) -> None:
    with pytest.raises(ToolError) as caught:
        tools.call("quote", arguments)
    assert message in str(caught.value)


def test_show_tool_with_lines_returns_numbered_lines_instead_of_the_body(
    tools: VaultTools,
) -> None:
    got = tools.call("show", {"note": COBRA, "lines": "10-11"})
    assert "body" not in got
    assert [item["line"] for item in got["lines"]] == [10, 11]
    assert (got["bodyStartLine"], got["lineCount"]) == (8, 16)
    whole = tools.call("show", {"note": COBRA})
    assert whole["bodyStartLine"] == 8 and "lines" not in whole
    with pytest.raises(ToolError, match="bad line range '5-2'"):
        tools.call("show", {"note": COBRA, "lines": "5-2"})


def test_capture_is_answered_only_when_allowed(tmp_path: Path) -> None:
    vault, db = indexed_demo(tmp_path)
    closed = VaultTools(Config(vault, db), timeout=10, refresh=False)
    assert "capture" not in [spec.name for spec in closed.specs]
    with pytest.raises(ToolError, match="unknown tool 'capture'"):
        closed.call("capture", {"text": "a thought"})
    assert sorted(p.name for p in (vault / "00_Inbox").iterdir()) == [
        "20261120-093000 讀書會想法.md"
    ]
    allowed = VaultTools(Config(vault, db), timeout=10, refresh=False, allow_capture=True)
    made = allowed.call("capture", {"text": "a thought: with/slashes"})
    assert made["path"].startswith("00_Inbox/") and (vault / made["path"]).is_file()
    assert "a thought" in (vault / made["path"]).read_text(encoding="utf-8")
    closed.close()
    allowed.close()


def test_status_and_graph_tools_reuse_the_query_functions(
    tools: VaultTools, indexed: tuple[Path, Path]
) -> None:
    from notedex.query.listing import status
    from notedex.query.neighbourhood import neighbourhood

    vault, db = indexed
    conn = connect_readonly(db)
    try:
        piece = neighbourhood(conn, COBRA, depth=2, max_nodes=5)
        expected = status(conn, vault, db, tools.cfg.lock_path)
    finally:
        conn.close()
    assert tools.call("graph", {"note": COBRA, "depth": 2, "maxNodes": 5}) == {
        **piece,
        "stale": False,
    }
    got = tools.call("status", {})
    assert got["counts"] == expected["counts"] and got["db"] == str(db)
    with pytest.raises(ToolError, match="refused"):
        tools.call("graph", {"note": "../outside.md"})


def test_tags_pages_the_cli_document(tools: VaultTools, indexed: tuple[Path, Path]) -> None:
    from notedex.query.reports import tags

    conn = connect_readonly(indexed[1])
    try:
        full = tags(conn)
    finally:
        conn.close()
    got = tools.call("tags", {"offset": 2, "limit": 3})
    assert got["tags"] == full["tags"][2:5]
    assert got["totals"] == {"tags": full["tagCount"]} and got["hasMore"] is True
    assert got["taggedNoteCount"] == full["taggedNoteCount"] > 0


def test_mentions_pages_the_cli_document(tools: VaultTools, indexed: tuple[Path, Path]) -> None:
    from notedex.query.mentions import mentions

    vault, db = indexed
    conn = connect_readonly(db)
    try:
        full = mentions(conn, vault, "Cobra CLI 框架", max_bytes=5_000_000)
    finally:
        conn.close()
    got = tools.call("mentions", {"note": "Cobra CLI 框架", "offset": 0, "limit": 1})
    assert got["note"] == "Projects/Cobra CLI 框架.md" and got["names"] == full["names"]
    assert got["mentions"] == full["mentions"][:1]
    assert got["totals"] == {"mentions": full["mentionCount"]}
    with pytest.raises(ToolError):
        tools.call("mentions", {"note": "../outside"})


def test_tasks_tool_is_the_cli_document_paged(tmp_path: Path) -> None:
    from tests.helpers import cli_json, write

    vault, db = tmp_path / "vault", tmp_path / "index.db"
    write(vault / ".obsidian" / "app.json", "{}")
    write(vault / "a.md", "---\ntags: [p]\n---\n- [ ] a 📅 2026-03-01\n- [x] b\n- [/] c\n")
    write(vault / "b.md", "- [-] d [due:: 2026-01-01]\n- [ ] e 📅 2026-02-01\n")
    full = cli_json(vault, db, "tasks")  # indexes the vault, too
    tools = VaultTools(Config(vault, db), timeout=10, refresh=False)
    try:
        got = tools.call("tasks", {"offset": 1, "limit": 2})
        assert got["tasks"] == full["tasks"][1:3]
        assert (got["taskCount"], got["counts"]) == (full["taskCount"], full["counts"])
        assert got["hasMore"] is True
        picked = tools.call(
            "tasks", {"state": "open, done", "status": "-", "dueBefore": "2026-03-01"}
        )
        assert (
            picked["tasks"]
            == cli_json(
                vault,
                db,
                "tasks",
                "--open",
                "--done",
                "--status",
                "-",
                "--due-before",
                "2026-03-01",
            )["tasks"]
        )
        assert [t["text"] for t in tools.call("tasks", {"tag": "p", "status": "/"})["tasks"]] == [
            "c"
        ]
        with pytest.raises(ToolError, match="not a date"):
            tools.call("tasks", {"dueAfter": "someday"})
        with pytest.raises(ToolError, match="unknown task state 'closed'"):
            tools.call("tasks", {"state": "closed"})
    finally:
        tools.close()
