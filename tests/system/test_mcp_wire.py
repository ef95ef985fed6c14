"""`notedex mcp` spoken to in raw JSON-RPC lines (issue 31, item 10): every request gets a reply.

A line the SDK cannot read as a message (a lone surrogate, text that is not JSON, a message of
the wrong shape) is answered with a JSON-RPC error carrying the request's id when it has one, so
no client waits on an id forever, and the server keeps answering.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import run_cli, write
from tests.system.mcpwire import McpWire, text_of


@pytest.fixture
def indexed(tmp_path: Path) -> tuple[Path, Path]:
    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    write(vault / "Note.md", "hello #greeting\n")
    db = tmp_path / "index.db"
    assert run_cli("index", "--vault", vault, "--db", db).code == 0
    return vault, db


def test_every_unreadable_request_gets_a_json_rpc_error(indexed: tuple[Path, Path]) -> None:
    pytest.importorskip("mcp")
    lone = (
        '{"jsonrpc":"2.0","id":7,"method":"tools/call",'
        '"params":{"name":"lookup","arguments":{"question":"\\ud800"}}}'
    )
    assert "\\ud800" in lone and json.loads(lone)["params"]["arguments"]["question"] == "\ud800"
    with McpWire(*indexed, "--no-refresh") as server:
        server.initialize()
        server.send(lone)
        surrogate = server.reply(7, timeout=30)
        server.send('{"jsonrpc":"2.0","id":"eight","method":"tools/call","params":"bad"}')
        shape = server.reply("eight", timeout=30)
        server.send("this is not JSON")
        not_json = server.reply(None, timeout=30)
        server.send('{"jsonrpc":"2.0","id":11,"result":{}}')  # a response: never answered
        server.send("[1, 2]")
        not_object = server.reply(None, timeout=30)
        still = server.call("scan", {})
        assert 11 not in server.replies
    assert (
        surrogate["error"]["code"] == -32600 and "lone surrogate" in surrogate["error"]["message"]
    )
    assert shape["error"]["code"] == -32600 and "params" in shape["error"]["message"]
    assert not_json["error"]["code"] == -32700
    assert not_object["error"]["code"] == -32600
    assert not still["isError"] and "Note.md" in text_of(still)


def test_a_call_before_the_first_index_says_how_far_the_build_is(tmp_path: Path) -> None:
    """No index yet: a tool call is answered long before its deadline with a structured "being
    built" error (exit code 75, done/total), while the build goes on; once the build is done
    the same call answers. The writer lock, held by the test at first, keeps the build from
    finishing before the first answer, whatever the machine's speed."""
    pytest.importorskip("mcp")
    from notedex.store.writer_lock import WriterLock

    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    for i in range(2500):
        write(vault / f"f{i % 25}" / f"Note {i}.md", f"# Note {i}\n\nabout [[Note {i // 2}]]\n")
    db = tmp_path / "state" / "index.db"
    lock = WriterLock(db.with_name(db.name + ".lock"))
    assert lock.acquire("index")
    errors: list[dict[str, Any]] = []
    try:
        with McpWire(vault, db, "--timeout", "60") as server:
            server.initialize()
            started = time.monotonic()
            first = server.call("scan", {"limit": 1})
            waited = time.monotonic() - started
            lock.release()
            answer = first
            for _ in range(2000):
                if not answer["isError"]:
                    break
                errors.append(answer)
                answer = server.call("scan", {"limit": 1})
    finally:
        lock.release()
    assert waited < 20, waited  # far from the 60 s deadline the old answer waited for
    assert first["isError"] and "still being built" in text_of(first)
    assert first["structuredContent"] == {
        "error": "building",
        "exitCode": 75,
        "done": 0,
        "total": None,
        "retryAfter": 1.0,
    }
    for error in errors:
        data = error.get("structuredContent")
        assert data is not None, text_of(error)
        assert data["error"] == "building" and data["exitCode"] == 75, data
        if data["total"] is not None:
            assert 0 < data["done"] <= data["total"] == 2500, data
            assert f"{data['done']} of 2500 files" in text_of(error)
    assert not answer["isError"], text_of(answer)
    assert json.loads(text_of(answer))["noteCount"] == 2500
