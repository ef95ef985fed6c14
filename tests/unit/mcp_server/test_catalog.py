"""What a server lists (mcp_server/catalog.py): the read-only tools always, capture only when
allowed, and only capture without the read-only hints."""

from __future__ import annotations

from notedex.mcp_server.catalog import tool_table
from notedex.mcp_server.tools import CHECKS, TOOLS


def test_every_argument_type_of_every_listed_tool_has_a_check() -> None:
    for spec in tool_table(allow_capture=True):
        for name, prop in spec.input_schema["properties"].items():
            assert prop["type"] in CHECKS, (spec.name, name)


def test_only_capture_writes_and_it_is_listed_only_when_allowed() -> None:
    closed, allowed = tool_table(), tool_table(allow_capture=True)
    assert [s.name for s in allowed] == [s.name for s in closed] + ["capture"]
    assert all(spec in closed for spec in TOOLS)
    hints = {s.name: s.wire()["annotations"] for s in allowed}
    assert [name for name, h in hints.items() if not h["readOnlyHint"]] == ["capture"]
    assert (
        hints["capture"]["idempotentHint"] is False and hints["capture"]["destructiveHint"] is False
    )
