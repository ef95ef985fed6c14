"""`notedex mcp` as a subprocess, driven by the MCP SDK's own stdio client.

Tool results must equal the CLI's `--json` for the same vault (minus the MCP-only keys), errors
must be tool errors after which the server keeps answering, and `show` must never read outside
the vault. The SDK-free parts (argument checks, path refusal, the deadline) are tested in-process
under tests/unit/mcp_server. Tests that need the SDK skip cleanly without it.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import run_cli, write
from tests.indexcheck import copy_demo

MCP_ONLY = {
    "stale",
    "offset",
    "limit",
    "hasMore",
    "totals",
    "total",
    "bodyChars",
    "bodyOffset",
    "bodyTruncated",
}
TOOL_NAMES = {
    "lookup",
    "search",
    "show",
    "health",
    "scan",
    "tasks",
    "quote",
    "status",
    "graph",
    "tags",
    "mentions",
    "base",
    "properties",
}


@pytest.fixture
def sdk() -> Any:
    return pytest.importorskip("mcp")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The demo vault with symlinks that lead outside it, which no tool may follow (the
    default: ``follow_symlinks`` is off)."""
    base = tmp_path_factory.mktemp("mcp-demo")
    outside = base / "outside"
    write(outside / "secret.md", "TOP-SECRET outside the vault\n")
    write(outside / "folder" / "inner.md", "TOP-SECRET inner\n")
    vault, db = copy_demo(base)
    os.symlink(outside / "secret.md", vault / "leak.md")
    os.symlink(outside / "folder", vault / "linked")
    result = run_cli("index", "--vault", vault, "--db", db)  # the links, as a user adds them
    assert result.code == 0, result.stderr
    return vault, db


Session = Any


@asynccontextmanager
async def session(vault: Path, db: Path, *extra: str) -> AsyncIterator[Session]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "notedex", "mcp", "--vault", str(vault), "--db", str(db), *extra],
        env=dict(os.environ),
    )
    async with (
        stdio_client(params) as (read, write_stream),
        ClientSession(read, write_stream) as client,
    ):
        await client.initialize()
        yield client


def run(vault: Path, db: Path, body: Callable[[Session], Awaitable[Any]], *extra: str) -> Any:
    async def main() -> Any:
        async with session(vault, db, *extra) as client:
            return await asyncio.wait_for(body(client), timeout=120)

    return asyncio.run(main())


def is_error(result: Any) -> bool:
    return bool(getattr(result, "is_error", None) or getattr(result, "isError", None))


def payload(result: Any) -> dict[str, Any]:
    assert not is_error(result), result.content[0].text
    data = json.loads(result.content[0].text)
    assert isinstance(data, dict)
    return data


def error_text(result: Any) -> str:
    assert is_error(result), result.content[0].text[:300]
    return str(result.content[0].text)


def cli(vault: Path, db: Path, *args: str) -> dict[str, Any]:
    result = run_cli(*args, "--vault", vault, "--db", db, "--json", "--no-refresh")
    assert result.code in (0, 1), result.stderr
    return dict(json.loads(result.stdout))


def without(data: dict[str, Any], keys: set[str]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in keys}


# -- through the SDK's stdio client -----------------------------------------------------------------


@pytest.mark.slow
def test_lists_the_read_only_tools_with_schemas(sdk: Any, demo: tuple[Path, Path]) -> None:
    async def body(client: Session) -> Any:
        return (await client.list_tools()).tools

    tools = run(*demo, body)
    assert {t.name for t in tools} == TOOL_NAMES
    for tool in tools:
        schema = getattr(tool, "input_schema", None) or tool.inputSchema
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        assert len(tool.description) > 80
        for name, prop in schema["properties"].items():
            assert prop.get("description"), (tool.name, name)
        annotations = tool.annotations
        assert getattr(annotations, "read_only_hint", None) or getattr(
            annotations, "readOnlyHint", None
        )
    required = {
        t.name: (getattr(t, "input_schema", None) or t.inputSchema).get("required", [])
        for t in tools
    }
    assert required == {
        "lookup": ["question"],
        "search": ["query"],
        "show": ["note"],
        "quote": ["note", "text"],
        "health": [],
        "scan": [],
        "tasks": [],
        "status": [],
        "graph": ["note"],
        "tags": [],
        "mentions": ["note"],
        "base": ["base"],
        "properties": [],
    }


@pytest.mark.slow
def test_every_tool_returns_the_cli_json(sdk: Any, demo: tuple[Path, Path]) -> None:
    vault, db = demo
    calls = {
        "lookup": ({"question": "Cobra CLI 框架"}, ("lookup", "Cobra CLI 框架")),
        "lookup-graph": ({"question": "second brain"}, ("lookup", "second brain")),
        "search": ({"query": "cobra"}, ("search", "cobra")),
        "show": ({"note": "PARA 方法"}, ("show", "PARA 方法", "--body")),
        "show-lines": (
            {"note": "PARA 方法", "lines": "9-11"},
            ("show", "PARA 方法", "--lines", "9-11"),
        ),
        "quote": (
            {"note": "PARA 方法", "text": "Projects, Areas, Resources, Archive"},
            ("quote", "PARA 方法", "Projects, Areas, Resources, Archive"),
        ),
        "health": ({}, ("health",)),
        "scan": ({"tag": "golang"}, ("scan", "--tag", "golang")),
        "scan-all": ({}, ("scan",)),
    }

    async def body(client: Session) -> dict[str, Any]:
        return {
            key: payload(await client.call_tool(key.split("-")[0], args))
            for key, (args, _) in calls.items()
        }

    results = run(vault, db, body)
    for key, (_, argv) in calls.items():
        got, expected = results[key], cli(vault, db, *argv)
        assert got["stale"] is False, key
        assert without(got, MCP_ONLY) == without(expected, MCP_ONLY), key
    assert results["show"]["body"] == cli(vault, db, "show", "PARA 方法", "--body")["body"]
    assert (
        results["scan-all"]["noteCount"]
        == results["scan-all"]["total"]
        == len(results["scan-all"]["notes"])
    )


@pytest.mark.slow
def test_lists_are_bounded_and_paginated(sdk: Any, demo: tuple[Path, Path]) -> None:
    vault, db = demo

    async def body(client: Session) -> list[dict[str, Any]]:
        return [
            payload(await client.call_tool("scan", {"limit": 3, "offset": 3})),
            payload(await client.call_tool("search", {"query": "cobra", "limit": 1, "offset": 1})),
            payload(
                await client.call_tool("lookup", {"question": "cobra", "limit": 2, "offset": 2})
            ),
            payload(
                await client.call_tool(
                    "show", {"note": "PARA 方法", "maxBodyChars": 10, "bodyOffset": 5}
                )
            ),
        ]

    scan, search, lookup, show = run(vault, db, body)
    every_note = cli(vault, db, "scan")["notes"]
    assert scan["notes"] == every_note[3:6]
    assert (scan["total"], scan["offset"], scan["limit"]) == (len(every_note), 3, 3)
    assert scan["hasMore"] is True and scan["noteCount"] == len(every_note)
    all_hits = cli(vault, db, "search", "cobra")["hits"]
    assert search["hits"] == all_hits[1:2] and search["total"] == len(all_hits)
    all_candidates = cli(vault, db, "lookup", "cobra")["candidates"]
    assert lookup["candidates"] == all_candidates[2:4] and lookup["total"] == len(all_candidates)
    full_body = cli(vault, db, "show", "PARA 方法", "--body")["body"]
    assert show["body"] == full_body[5:15]
    assert show["bodyTruncated"] is True and show["bodyChars"] == len(full_body)


@pytest.mark.slow
def test_bad_arguments_are_tool_errors_and_the_server_keeps_answering(
    sdk: Any, demo: tuple[Path, Path]
) -> None:
    bad_calls = [
        ("lookup", {}, "missing required argument 'question'"),
        ("lookup", {"question": 42}, "must be a string"),
        ("lookup", {"question": "x", "limit": 0}, "must be in 1..100"),
        ("lookup", {"question": "x", "limit": True}, "whole number"),
        ("scan", {"colour": "red"}, "unknown argument 'colour'"),
        ("search", {"query": "   "}, "must not be empty"),
        ("search", {"query": '"'}, "nothing to search for"),
        ("search", {"query": "-cobra"}, "at least one word"),
        ("show", {"note": "No such note at all"}, "no note matches"),
        ("show", {"note": "x", "body": "yes"}, "true or false"),
        ("nope", {}, "unknown tool"),
    ]

    async def body(client: Session) -> list[Any]:
        out = []
        for name, args, _ in bad_calls:
            out.append(await client.call_tool(name, args))
            out.append(await client.call_tool("scan", {"limit": 1}))  # still answering
        return out

    results = run(*demo, body)
    for i, (name, _, expected) in enumerate(bad_calls):
        assert expected in error_text(results[2 * i]), name
        assert payload(results[2 * i + 1])["notes"]


@pytest.mark.slow
def test_show_never_reads_outside_the_vault(sdk: Any, demo: tuple[Path, Path]) -> None:
    vault, db = demo
    refused = [
        "../outside/secret.md",
        "../../etc/passwd",
        "Areas/../../outside/secret.md",
        "..",
        str(vault / "Areas" / "PARA 方法.md"),  # absolute, even inside the vault
        "/etc/passwd",
        "~/secret.md",
        "C:\\Windows\\win.ini",
        "leak.md",  # a symlink to a file outside the vault
        "leak",
        "linked/inner.md",  # a file in a symlinked folder outside the vault
    ]

    async def body(client: Session) -> list[Any]:
        results = [await client.call_tool("show", {"note": note}) for note in refused]
        results.append(await client.call_tool("search", {"query": "TOP-SECRET"}))
        results.append(await client.call_tool("show", {"note": "Areas/PARA 方法.md"}))
        return results

    results = run(vault, db, body)
    found = payload(results[-2])  # not followed, not indexed: search agrees with show
    assert found["hits"] == []
    for note, result in zip(refused, results):
        text = error_text(result)
        assert "TOP-SECRET" not in text and "root:" not in text, note
        assert "refused" in text or "no note matches" in text, (note, text)
    for note in ("/etc/passwd", "../outside/secret.md"):
        assert "refused" in error_text(results[refused.index(note)]), note
    assert payload(results[-1])["path"] == "Areas/PARA 方法.md"


@pytest.mark.slow
def test_with_follow_symlinks_search_and_show_agree(
    sdk: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = tmp_path / "outside"
    write(outside / "secret.md", "TOP-SECRET outside the vault\n")
    vault = tmp_path / "vault"
    write(vault / "a.md", "# A\n")
    os.symlink(outside / "secret.md", vault / "leak.md")
    db = tmp_path / "index.db"
    config = tmp_path / "config.toml"
    config.write_text("follow_symlinks = true\n", encoding="utf-8")
    monkeypatch.setenv("NOTEDEX_CONFIG", str(config))  # the MCP server and the CLI alike
    assert run_cli("index", "--vault", vault, "--db", db).code == 0

    async def body(client: Session) -> list[Any]:
        return [
            await client.call_tool("search", {"query": "TOP-SECRET"}),
            await client.call_tool("show", {"note": "leak.md", "body": True}),
        ]

    found, shown = run(vault, db, body)
    hits = payload(found)["hits"]
    assert [h["path"] for h in hits] == ["leak.md"] and hits[0]["snippet"]
    assert payload(shown)["path"] == "leak.md"


@pytest.mark.slow
def test_stale_reports_a_vault_that_changed_after_the_last_index(sdk: Any, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    os.utime(write(vault / "One.md", "one #alpha\n"), (1_700_000_000, 1_700_000_000))  # not racy
    db = tmp_path / "index.db"
    assert run_cli("index", "--vault", vault, "--db", db).code == 0

    async def no_refresh(client: Session) -> list[dict[str, Any]]:
        before = payload(await client.call_tool("scan", {}))
        write(vault / "Two.md", "two #alpha\n")
        after = payload(await client.call_tool("scan", {}))
        return [before, after]

    before, after = run(vault, db, no_refresh, "--no-refresh")
    assert before["stale"] is False and after["stale"] is True
    assert after["noteCount"] == 1  # answered from the index as it is

    async def refreshing(client: Session) -> list[dict[str, Any]]:
        first = payload(await client.call_tool("scan", {}))
        write(vault / "Three.md", "three\n")
        second = payload(await client.call_tool("scan", {}))
        return [first, second]

    first, second = run(vault, db, refreshing)
    assert first["stale"] is False and first["noteCount"] == 2  # the server brought it up to date
    assert second["stale"] is False and second["noteCount"] == 3


@pytest.mark.slow
def test_handshake_is_immediate_while_the_first_index_waits(sdk: Any, tmp_path: Path) -> None:
    """The first build cannot start (another writer holds the lock): the handshake and tools/list
    are still answered at once, a call fails clearly at its deadline, and once the lock is free
    the server builds the index and answers."""
    from notedex.store.writer_lock import WriterLock

    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    write(vault / "Note.md", "hello #greeting\n")
    db = tmp_path / "state" / "index.db"
    lock = WriterLock(db.with_name(db.name + ".lock"))
    assert lock.acquire("index")

    async def body(client: Session) -> list[Any]:
        started = time.monotonic()
        tools = await client.list_tools()
        listed = time.monotonic() - started
        started = time.monotonic()
        early = await client.call_tool("scan", {})
        waited = time.monotonic() - started
        lock.release()
        later = None
        for _ in range(60):
            later = await client.call_tool("scan", {})
            if not is_error(later):
                break
        return [tools, listed, early, waited, later]

    try:
        tools, listed, early, waited, later = run(vault, db, body, "--timeout", "2")
    finally:
        lock.release()
    assert len(tools.tools) == len(TOOL_NAMES) and listed < 2
    assert "still being built" in error_text(early) and waited < 6
    assert payload(later)["noteCount"] == 1


def test_without_the_sdk_mcp_says_how_to_install_it(demo: tuple[Path, Path]) -> None:
    vault, db = demo
    code = (
        "import sys; sys.modules['mcp'] = None\n"
        "from notedex.cli import main\n"
        f"sys.exit(main(['mcp', '--vault', {str(vault)!r}, '--db', {str(db)!r}]))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1
    assert "pip install 'notedex[mcp]'" in proc.stderr
