"""The MCP list tools' ``filter`` argument and the ``properties`` tool (issue 32), in-process on
a vault built here: the same notes as the CLI's options keep, and a bad filter is a ToolError."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from notedex.config import Config
from notedex.mcp_server.handlers import VaultTools
from notedex.mcp_server.tools import ToolError
from tests.helpers import write


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("mcp-filter")
    vault, db = base / "vault", base / "index.db"
    (vault / ".obsidian").mkdir(parents=True)
    write(vault / "P/a.md", "---\nstatus: draft\npriority: 3\ntags: [x]\n---\ncobra [[gone]]\n")
    write(vault / "P/b.md", "---\nstatus: done\npriority: 1\n---\ncobra #t\n")
    write(vault / "Q/c.md", "---\nstatus: Draft\n---\ncobra\n")
    subprocess.run(
        [sys.executable, "-m", "notedex", "index", "--vault", vault, "--db", db],
        check=True,
        capture_output=True,
    )
    return vault, db


@pytest.fixture
def tools(indexed: tuple[Path, Path]) -> Iterator[VaultTools]:
    vault, db = indexed
    tools = VaultTools(Config(vault, db), timeout=10, refresh=False)
    yield tools
    tools.close()


def paths(items: list[dict[str, object]], key: str = "path") -> list[object]:
    return [item[key] for item in items]


def test_scan_search_health_tags_take_a_filter(tools: VaultTools) -> None:
    scan = tools.call("scan", {"filter": {"where": "status=draft"}})
    assert paths(scan["notes"]) == ["P/a.md", "Q/c.md"]
    scan = tools.call("scan", {"filter": {"folder": ["Q", "P"], "sort": "priority"}})
    assert paths(scan["notes"]) == ["P/b.md", "P/a.md", "Q/c.md"]
    scan = tools.call("scan", {"tag": "x", "filter": {"where": ["priority>=2"]}})
    assert paths(scan["notes"]) == ["P/a.md"]
    search = tools.call("search", {"query": "cobra", "filter": {"folder": "Q"}})
    assert paths(search["hits"]) == ["Q/c.md"]
    health = tools.call("health", {"filter": {"where": "status=done"}})
    assert health["brokenLinks"] == []
    health = tools.call("health", {"filter": {"where": "status=draft", "folder": "P"}})
    assert paths(health["brokenLinks"], "source") == ["P/a.md"]
    tags = tools.call("tags", {"filter": {"folder": "P", "where": "status=done"}})
    assert paths(tags["tags"], "tag") == ["t"]


def test_the_properties_tool(tools: VaultTools) -> None:
    data = tools.call("properties", {})
    by_name = {p["name"]: (p["type"], p["count"]) for p in data["properties"]}
    assert by_name == {"priority": ("number", 2), "status": ("text", 3), "tags": ("list", 1)}
    values = tools.call("properties", {"name": "Status"})
    assert [(v["value"], v["count"]) for v in values["values"]] == [("Draft", 2), ("done", 1)]
    only_p = tools.call("properties", {"name": "status", "filter": {"folder": "P"}})
    assert [v["count"] for v in only_p["values"]] == [1, 1]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"filter": {"where": "a<"}}, "expected a value after <"),
        ({"filter": {"colour": "x"}}, "filter has no key 'colour'"),
        ({"filter": {"folder": 3}}, "filter.folder must be a string or a list of strings"),
        ({"filter": {"modifiedSince": "soon"}}, "expected a date"),
        ({"filter": "status=draft"}, "'filter' must be an object"),
    ],
)
def test_a_bad_filter_is_a_tool_error(
    tools: VaultTools, arguments: dict[str, object], message: str
) -> None:
    with pytest.raises(ToolError, match=message):
        tools.call("scan", arguments)
