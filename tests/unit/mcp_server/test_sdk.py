"""The SDK shim in-process: a call's async deadline, and results and errors as MCP sends them."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any

import pytest

from notedex.config import Config
from notedex.mcp_server.handlers import VaultTools
from notedex.mcp_server.sdk import result_wire, run_tool
from tests.helpers import indexed_demo


def test_a_result_travels_as_json_text_and_as_structured_content() -> None:
    result = {"path": "Areas/PARA 方法.md", "stale": False}
    assert result_wire(result, None) == {
        "content": [{"type": "text", "text": json.dumps(result, ensure_ascii=False)}],
        "structuredContent": result,
        "isError": False,
    }
    assert "方法" in result_wire(result, None)["content"][0]["text"]  # not \\u-escaped


def test_an_error_travels_as_one_prefixed_text_block() -> None:
    assert result_wire(None, "no note matches 'x'") == {
        "content": [{"type": "text", "text": "notedex: no note matches 'x'"}],
        "isError": True,
    }


def test_an_error_with_data_carries_it_as_structured_content() -> None:
    data = {"error": "building", "exitCode": 75, "done": 1000, "total": 3000}
    assert result_wire(data, "the index is still being built") == {
        "content": [{"type": "text", "text": "notedex: the index is still being built"}],
        "structuredContent": data,
        "isError": True,
    }


def test_a_call_that_overruns_gets_an_error_and_the_next_call_works(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """A handler stuck outside SQLite (the progress handler cannot reach it) is answered at the
    async deadline. The handler blocks until the test releases it, so the error can only come
    from the deadline, never from the handler finishing early or late."""
    pytest.importorskip("mcp")
    vault, db = indexed_demo(tmp_path_factory.mktemp("mcp-sdk"))
    tools = VaultTools(Config(vault, db), timeout=0.3, refresh=False)
    real_scan = tools._handlers["scan"]
    release, returned = threading.Event(), threading.Event()

    def stuck(conn: Any, args: dict[str, Any]) -> dict[str, Any]:
        try:
            release.wait(timeout=60)  # not SQLite: only the async deadline can stop waiting
            return real_scan(conn, args)
        finally:
            returned.set()

    tools._handlers["scan"] = stuck

    async def main() -> list[Any]:
        started = time.monotonic()
        first = await run_tool(tools, "scan", {})
        elapsed = time.monotonic() - started
        still_stuck = not returned.is_set()
        release.set()
        tools._handlers["scan"] = real_scan
        second = await run_tool(tools, "scan", {"limit": 1})
        return [first, elapsed, still_stuck, second]

    try:
        (result, error), elapsed, still_stuck, (second, second_error) = asyncio.run(main())
    finally:
        release.set()
        assert returned.wait(timeout=30), "the abandoned handler thread did not finish"
        tools.close()
    assert result is None and error is not None and "deadline" in error
    assert still_stuck  # answered while the handler was still blocked: by the deadline
    assert tools.timeout <= elapsed < 10  # the deadline plus its 1 s grace, on a loaded machine
    assert second_error is None and second is not None and second["notes"]
