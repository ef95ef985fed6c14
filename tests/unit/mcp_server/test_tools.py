"""The MCP tool table and its argument checks, in-process: defaults, bounds and the exact errors."""

from __future__ import annotations

from typing import Any

import pytest

from notedex.mcp_server.tools import CHECKS, TOOLS, ToolError, check_arguments


def spec_of(name: str) -> Any:
    return next(t for t in TOOLS if t.name == name)


def test_argument_checks_fill_defaults() -> None:
    spec = spec_of("search")
    assert check_arguments(spec, {"query": "x"}) == {
        "query": "x",
        "limit": 20,
        "offset": 0,
        "filter": None,
    }
    assert check_arguments(spec, {"query": "x", "limit": 5.0})["limit"] == 5
    with pytest.raises(ToolError, match=r"must be in 1\.\.100"):
        check_arguments(spec, {"query": "x", "limit": 101})


def test_null_arguments_mean_the_defaults() -> None:
    assert check_arguments(spec_of("scan"), None) == {
        "tag": None,
        "type": None,
        "limit": 100,
        "offset": 0,
        "filter": None,
    }
    assert check_arguments(spec_of("search"), {"query": "x", "limit": None})["limit"] == 20
    show = check_arguments(spec_of("show"), {"note": "N", "body": False, "bodyOffset": 3})
    assert show == {
        "note": "N",
        "body": False,
        "bodyOffset": 3,
        "maxBodyChars": 100_000,
        "limit": 200,
        "lines": None,
    }


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("scan", [], "scan: arguments must be an object"),
        (
            "scan",
            {"colour": 1},
            "scan: unknown argument 'colour'; expected filter, limit, offset, tag, type",
        ),
        ("lookup", None, "lookup: missing required argument 'question'"),
        ("lookup", {"question": 42}, "lookup: 'question' must be a string"),
        ("search", {"query": " \t"}, "search: 'query' must not be empty"),
        ("search", {"query": "x" * 2001}, "search: 'query' is too long (at most 2000 characters)"),
        ("scan", {"limit": 5.5}, "scan: 'limit' must be a whole number"),
        ("scan", {"limit": True}, "scan: 'limit' must be a whole number"),
        ("scan", {"limit": "5"}, "scan: 'limit' must be a whole number"),
        ("scan", {"offset": -1}, "scan: 'offset' must be in 0..inf, not -1"),
        ("scan", {"limit": 501}, "scan: 'limit' must be in 1..500, not 501"),
        ("show", {"note": "x", "body": "yes"}, "show: 'body' must be true or false"),
        ("show", {"note": "x", "body": 1}, "show: 'body' must be true or false"),
    ],
)
def test_argument_errors_name_the_tool_and_the_rule(
    tool: str, arguments: Any, message: str
) -> None:
    with pytest.raises(ToolError) as caught:
        check_arguments(spec_of(tool), arguments)
    assert str(caught.value) == message


def test_every_argument_type_in_the_table_has_a_check() -> None:
    for spec in TOOLS:
        for name, prop in spec.input_schema["properties"].items():
            assert prop["type"] in CHECKS, (spec.name, name)


def test_lookup_and_scan_offer_the_same_filters_in_a_fixed_order() -> None:
    lookup = spec_of("lookup").input_schema["properties"]
    scan = spec_of("scan").input_schema["properties"]
    assert list(lookup) == ["question", "limit", "offset", "tag", "type", "filter"]
    assert list(scan) == ["tag", "type", "limit", "offset", "filter"]  # the wire keeps this order
    assert {k: lookup[k] for k in ("tag", "type")} == {k: scan[k] for k in ("tag", "type")}
