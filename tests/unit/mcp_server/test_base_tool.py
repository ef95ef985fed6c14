"""The MCP `base` tool: the rows of `notedex base --json`, paged; `check`; errors as tool
errors (SEMANTICS 15)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from notedex.config import Config
from notedex.mcp_server.handlers import VaultTools
from notedex.mcp_server.tools import ToolError
from tests.helpers import run_inprocess

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "bases" / "vault"


@pytest.fixture(scope="module")
def tools(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VaultTools]:
    vault = tmp_path_factory.mktemp("basetool") / "vault"
    shutil.copytree(EXAMPLES, vault)
    (vault / ".obsidian").mkdir(exist_ok=True)
    db = vault.parent / "index.db"
    assert run_inprocess("index", "--vault", vault, "--db", db).code == 0
    tools = VaultTools(Config(vault, db), timeout=10, refresh=False)
    yield tools
    tools.close()


def test_rows_are_paged(tools: VaultTools) -> None:
    data = tools.call("base", {"base": "groupby.base", "limit": 2, "offset": 1})
    assert [r["path"] for r in data["rows"]] == ["Books/Foundation.md", "Books/Emma.md"]
    assert (data["total"], data["hasMore"], data["stale"]) == (4, True, False)
    assert data["groups"][0] == {"key": "done", "paths": ["Books/Dune.md"]}


def test_a_view_and_a_note_block(tools: VaultTools) -> None:
    data = tools.call("base", {"base": "books.base", "view": "Cheap"})
    assert [r["path"] for r in data["rows"]] == ["Books/Dune.md", "Books/Foundation.md"]
    data = tools.call("base", {"base": "Reading list.md"})
    assert [r["formula.here"] for r in data["rows"]] == ["Reading list", "Reading list"]


def test_check(tools: VaultTools) -> None:
    data = tools.call("base", {"base": "books.base", "check": True})
    assert [v["view"] for v in data["views"]] == ["By rating", "Cheap"]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"base": "missing.base"}, "cannot read missing.base"),
        ({"base": "../outside.base"}, ".."),
        ({"base": "books.base", "view": "Nope"}, "no view named 'Nope'"),
    ],
)
def test_errors_are_tool_errors(tools: VaultTools, arguments: dict[str, str], message: str) -> None:
    with pytest.raises(ToolError) as caught:
        tools.call("base", arguments)
    assert message in str(caught.value)
