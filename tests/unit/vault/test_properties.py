"""vault/properties.py: values typed as Obsidian types them (SEMANTICS 14.2-15.4), pure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from notedex.vault.properties import (
    datetime_key,
    declared_types,
    declared_value,
    fold_name,
    is_date,
    number_of,
    operand_kind,
    property_rows,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-12-31", "2026-12-31T00:00:00"),
        ("2026-12-31T18:05", "2026-12-31T18:05:00"),
        ("2026-12-31 18:05:09", "2026-12-31T18:05:09"),
        ("2026-12-31T18:05:09.5+02:00", "2026-12-31T18:05:09"),
        ("2026-02-30", None),
        ("2026-12-31T24:00", None),
        ("2026-12-3", None),
        ("soon", None),
    ],
)
def test_datetime_key(text: str, expected: str | None) -> None:
    assert datetime_key(text) == expected


def test_numbers_and_operands() -> None:
    assert number_of("2") == 2.0 and number_of("-1.5") == -1.5 and number_of("1e3") == 1000.0
    assert number_of("nan") is None and number_of("inf") is None and number_of("1_0") is None
    assert number_of("") is None and number_of("12a") is None
    assert [operand_kind(t) for t in ("2", "true", "2026-01-01", "2026-01-01T10:00", "x")] == [
        "number",
        "checkbox",
        "date",
        "datetime",
        "text",
    ]
    assert is_date("2024-02-29") and not is_date("2023-02-29")


def test_rows_per_value_and_item() -> None:
    rows = property_rows(
        {
            "Status": "Draft",
            "status": "ignored: the first spelling wins",
            "n": 2,
            "ok": False,
            "due": "2026-01-02",
            "tags": ["a", 3],
            "none": [],
            "blank": "  ",
            "empty": None,
            "obj": {"k": 1},
        }
    )
    assert rows == [
        ("status", 0, 0, "text", "Draft", "draft", None),
        ("n", 0, 0, "number", "2", "2", 2.0),
        ("ok", 0, 0, "checkbox", "false", "false", None),
        ("due", 0, 0, "date", "2026-01-02", "2026-01-02T00:00:00", None),
        ("tags", 0, 1, "text", "a", "a", None),
        ("tags", 1, 1, "number", "3", "3", 3.0),
        ("none", 0, 1, "null", None, None, None),
        ("blank", 0, 0, "null", "  ", None, None),
        ("empty", 0, 0, "null", None, None, None),
        ("obj", 0, 0, "object", '{"k": 1}', None, None),
    ]
    assert fold_name("ÉTAT") == "état"


def test_declared_types(tmp_path: Path) -> None:
    assert declared_types(tmp_path) == {}
    (tmp_path / ".obsidian").mkdir()
    types = tmp_path / ".obsidian" / "types.json"
    types.write_text(
        json.dumps({"types": {"Due": "date", "tags": "tags", "x": "weird", "n": "number"}})
    )
    assert declared_types(tmp_path) == {"due": "date", "tags": "list", "n": "number"}
    types.write_text("[1, 2]")
    assert declared_types(tmp_path) == {}
    types.write_bytes(b"\xff\xfe{")
    assert declared_types(tmp_path) == {}


@pytest.mark.parametrize(
    ("value", "declared", "read"),
    [
        ("2026-01-01", None, "2026-01-01"),
        (5, "text", "5"),
        (True, "text", "true"),
        ("2026-01-01", "text", "2026-01-01"),
        ("42", "number", 42),
        ("2.5", "number", 2.5),
        ("high", "number", None),
        (3, "number", 3),
        ("TRUE", "checkbox", True),
        ("false", "checkbox", False),
        (1, "checkbox", None),
        ("2026-01-01", "date", "2026-01-01"),
        ("2026-01-01T10:00", "date", "2026-01-01T10:00"),
        ("soon", "datetime", None),
        ("draft", "list", ["draft"]),
        (["1", "x"], "number", [1, None]),
        ("", "number", ""),
        ({"a": 1}, "text", {"a": 1}),
        (None, "list", None),
    ],
)
def test_declared_value_reads_a_value_as_its_declared_type(
    value: object, declared: str | None, read: object
) -> None:
    assert declared_value(value, declared) == read
