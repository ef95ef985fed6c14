"""`notedex mcp` as a subprocess, through the SDK's stdio client: the notes as resources
(`resources/list` paged by cursor, `resources/read` inside the vault only, capped), the `status`
and `graph` tools, and the opt-in `capture` tool (listed only with `--allow-capture`, new inbox
notes only). The SDK-free parts are tested in-process under tests/unit/mcp_server."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from notedex.mcp_server.resources import PAGE_SIZE
from notedex.mcp_server.tools import MAX_BODY_CHARS
from tests.helpers import run_cli, write
from tests.indexcheck import make_vault
from tests.system import test_mcp
from tests.system.test_mcp import Session, cli, error_text, is_error, payload, run

RESOURCE_NOT_FOUND, INVALID_PARAMS = -32002, -32602
demo = test_mcp.demo  # the demo vault with symlinks out of it (read-only, one per module)


@pytest.fixture
def sdk() -> Any:
    return pytest.importorskip("mcp")


def uri_of(path: str) -> str:
    return "notedex:///" + quote(path, safe="/")


async def every_page(client: Session) -> list[Any]:
    import mcp.types as types

    pages, cursor = [], None
    while True:
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await client.list_resources(params=params)
        pages.append(page)
        cursor = getattr(page, "next_cursor", None) or getattr(page, "nextCursor", None)
        if not cursor:
            return pages


async def protocol_error(call: Any) -> tuple[int, str]:
    """The JSON-RPC error a request was answered with (the SDK raises it)."""
    try:
        await call
    except Exception as exc:  # MCPError (2.x) or McpError (1.x)
        error = getattr(exc, "error", None)
        return int(getattr(error, "code", getattr(exc, "code", 0))), str(exc)
    raise AssertionError("the request succeeded")


def mime(content: Any) -> str:
    return str(getattr(content, "mime_type", None) or content.mimeType)


# -- resources ----------------------------------------------------------------------------------


@pytest.mark.slow
def test_every_listed_note_is_a_resource_in_pages(sdk: Any, tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {f"Notes/n{i:03d} é #?.md": f"# N{i}\n" for i in range(230)}
    files["Top.md"] = "# Top\n"
    files["img.png"] = b"\x89PNG\r\n\x1a\n"
    files["Hidden/Skip.md"] = "excluded\n"
    files[".obsidian/app.json"] = json.dumps({"userIgnoreFilters": ["Hidden/"]})
    vault = make_vault(tmp_path / "vault", files)
    db = tmp_path / "state" / "index.db"
    assert run_cli("index", "--vault", vault, "--db", db).code == 0

    async def body(client: Session) -> Any:
        pages = await every_page(client)
        first = pages[0].resources[0]
        return pages, await client.read_resource(first.uri)

    pages, first_read = run(vault, db, body)
    assert [len(p.resources) for p in pages] == [PAGE_SIZE, PAGE_SIZE, 31]
    listed = [r for page in pages for r in page.resources]
    scanned = [n["path"] for n in cli(vault, db, "scan")["notes"]]
    assert [r.name for r in listed] == scanned  # every note scan lists, once, by path
    assert "Hidden/Skip.md" not in scanned and len(scanned) == 231
    assert all(str(r.uri) == uri_of(r.name) and mime(r) == "text/markdown" for r in listed)
    assert listed[0].title == "n000 é #?" and listed[0].size == len("# N0\n")
    assert first_read.contents[0].text == "# N0\n"


@pytest.mark.slow
def test_read_gives_the_note_text_and_refuses_anything_outside_the_index(
    sdk: Any, demo: tuple[Path, Path]
) -> None:
    vault, db = demo
    refused = [
        uri_of("leak.md"),  # a symlink to a file outside the vault
        uri_of("linked/inner.md"),
        "notedex:///../outside/secret.md",
        "notedex:///%2E%2E/outside/secret.md",
        "notedex:////etc/passwd",
        "notedex:///Areas/PARA%20%E6%96%B9%E6%B3%95",  # a vault path is exact: .md included
        "notedex:///attachments/" + quote("cobra-logo.png"),
        "notedex:///%FF.md",
        "file:///etc/passwd",
        uri_of("Areas/PARA 方法.md") + "?x=1",
    ]

    async def body(client: Session) -> Any:
        note = await client.read_resource(uri_of("Areas/PARA 方法.md"))
        errors = [await protocol_error(client.read_resource(uri)) for uri in refused]
        import mcp.types as types

        bad_cursor = await protocol_error(
            client.list_resources(params=types.PaginatedRequestParams(cursor="x"))
        )
        still = await client.call_tool("scan", {"limit": 1})
        return note, errors, bad_cursor, still

    note, errors, bad_cursor, still = run(vault, db, body)
    content = note.contents[0]
    assert content.text == (vault / "Areas" / "PARA 方法.md").read_text(encoding="utf-8")
    assert mime(content) == "text/markdown" and str(content.uri) == uri_of("Areas/PARA 方法.md")
    assert getattr(content, "meta", None) is None  # not cut
    for uri, (code, message) in zip(refused, errors):
        assert code == RESOURCE_NOT_FOUND, (uri, code, message)
        assert "TOP-SECRET" not in message and "root:" not in message
    assert bad_cursor[0] == INVALID_PARAMS and "cursor" in bad_cursor[1]
    assert payload(still)["notes"]  # the server keeps answering


@pytest.mark.slow
def test_a_long_note_is_read_up_to_the_cap_and_says_so(sdk: Any, tmp_path: Path) -> None:
    long_text = "# Long\n" + "abcdefghi\n" * (MAX_BODY_CHARS // 10 + 50)
    vault = make_vault(tmp_path / "vault", {"Long.md": long_text, "Short.md": "short\n"})
    db = tmp_path / "state" / "index.db"
    assert run_cli("index", "--vault", vault, "--db", db).code == 0

    async def body(client: Session) -> Any:
        return await client.read_resource(uri_of("Long.md"))

    content = run(vault, db, body).contents[0]
    assert content.text == long_text[:MAX_BODY_CHARS]
    assert content.meta["truncated"] is True and content.meta["chars"] == len(long_text)


# -- status and graph ---------------------------------------------------------------------------


@pytest.mark.slow
def test_status_and_graph_tools_answer_as_the_cli(sdk: Any, demo: tuple[Path, Path]) -> None:
    vault, db = demo

    async def body(client: Session) -> list[Any]:
        return [
            await client.call_tool("status", {}),
            await client.call_tool("graph", {"note": "Cobra CLI 框架", "depth": 2}),
            await client.call_tool("graph", {"note": "Cobra CLI 框架", "maxNodes": 2}),
            await client.call_tool("graph", {"note": "leak.md"}),
            await client.call_tool("graph", {"note": "../outside/secret.md"}),
            await client.call_tool("graph", {"note": "Cobra", "depth": 9}),
            await client.call_tool("graph", {"note": "No such note at all"}),
        ]

    status, around, capped, *refused = run(vault, db, body, "--no-refresh")
    got, expected = payload(status), cli(vault, db, "status")
    moving = {"stale", "secondsSinceIndexed"}
    assert {k: v for k, v in got.items() if k not in moving} == {
        k: v for k, v in expected.items() if k not in moving
    }
    piece = payload(around)
    whole = cli(vault, db, "graph")
    ids = {node["id"] for node in piece["nodes"]}
    assert "Projects/Cobra CLI 框架.md" in ids and len(ids) > 2
    assert piece["edges"] == [
        e for e in whole["edges"] if e["source"] in ids and e["target"] in ids
    ]
    nodes = {node["id"]: node for node in whole["nodes"]}
    assert all(
        {k: v for k, v in n.items() if k != "distance"} == nodes[n["id"]] for n in piece["nodes"]
    )
    cut = payload(capped)
    assert len(cut["nodes"]) == 2 and cut["truncated"] is True and piece["truncated"] is False
    # leak.md (a symlink out of the vault) is not followed, so not indexed (SEMANTICS 1.6)
    leak, outside = error_text(refused[0]), error_text(refused[1])
    assert "no note matches 'leak.md'" in leak and "TOP-SECRET" not in leak
    assert "refused" in outside
    assert "must be in 1..3" in error_text(refused[2])
    assert "no note matches" in error_text(refused[3])


# -- capture, opt-in ----------------------------------------------------------------------------


def tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and not p.is_symlink()
    }


@pytest.mark.slow
def test_capture_is_not_offered_unless_allowed(sdk: Any, demo: tuple[Path, Path]) -> None:
    vault, db = demo
    before = tree(vault)

    async def body(client: Session) -> Any:
        return await client.list_tools(), await client.call_tool("capture", {"text": "hi"})

    tools, called = run(vault, db, body)
    assert "capture" not in {t.name for t in tools.tools}
    assert "unknown tool 'capture'" in error_text(called)
    assert tree(vault) == before


@pytest.mark.slow
def test_capture_creates_only_new_inbox_notes(sdk: Any, demo_copy: tuple[Path, Path]) -> None:
    vault, db = demo_copy
    before = tree(vault)
    text = "Meeting: plan/next steps\n\nsee [[PARA 方法]]"

    async def body(client: Session) -> Any:
        tools = await client.list_tools()
        first = payload(await client.call_tool("capture", {"text": text}))
        second = payload(await client.call_tool("capture", {"text": text}))
        bad = [
            await client.call_tool("capture", {"text": "   \n"}),
            await client.call_tool("capture", {}),
            await client.call_tool("capture", {"text": "x", "path": "Areas/PARA 方法.md"}),
            await client.call_tool("capture", {"text": "x" * (MAX_BODY_CHARS + 1)}),
        ]
        return tools, first, second, bad

    tools, first, second, bad = run(vault, db, body, "--allow-capture", "--no-refresh")
    spec = next(t for t in tools.tools if t.name == "capture")
    hints = spec.annotations
    assert getattr(hints, "read_only_hint", getattr(hints, "readOnlyHint", None)) is False
    assert first["path"] != second["path"]
    for made in (first, second):
        assert made["path"].startswith("00_Inbox/") and made["path"].endswith(".md")
        assert text.splitlines()[2] in (vault / made["path"]).read_text(encoding="utf-8")
    after = tree(vault)
    assert set(after) - set(before) == {first["path"], second["path"]}
    assert all(after[path] == data for path, data in before.items())  # nothing else changed
    assert [is_error(result) for result in bad] == [True] * 4
    assert "must not be empty" in error_text(bad[0])
    assert "unknown argument 'path'" in error_text(bad[2])


@pytest.mark.slow
def test_capture_refuses_an_inbox_outside_the_vault(
    sdk: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = make_vault(tmp_path / "vault", {"One.md": "one\n"})
    db = tmp_path / "state" / "index.db"
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, vault / "Inbox")
    config = write(tmp_path / "config.toml", 'inbox = "Inbox"\n')
    assert run_cli("index", "--vault", vault, "--db", db).code == 0

    async def body(client: Session) -> Any:
        return await client.call_tool("capture", {"text": "escape attempt"})

    monkeypatch.setenv("NOTEDEX_CONFIG", str(config))
    result = run(vault, db, body, "--allow-capture", "--no-refresh")
    assert "outside the vault" in error_text(result)
    assert list(outside.iterdir()) == []
