"""`notedex mcp` spoken to in raw JSON-RPC lines (issue 31, item 10): every request gets a reply.

A line the SDK cannot read as a message (a lone surrogate, text that is not JSON, a message of
the wrong shape) is answered with a JSON-RPC error carrying the request's id when it has one, so
no client waits on an id forever, and the server keeps answering.
"""

from __future__ import annotations

import json
from pathlib import Path

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
