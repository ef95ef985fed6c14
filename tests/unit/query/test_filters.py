"""query/filters.py: the NoteFilter value, --where and the date options parsed (issue 32)."""

from __future__ import annotations

import datetime as dt

import pytest

from notedex.errors import UsageError
from notedex.query.filters import (
    EVERY_NOTE,
    Condition,
    NoteFilter,
    check_sort,
    clean_folder,
    from_mapping,
    parse_when,
    parse_where,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("status=draft", ("status", "=", "draft", "text")),
        (" Status != Done ", ("status", "!=", "Done", "text")),
        ("priority>=2", ("priority", ">=", "2", "number")),
        ("priority<=2.5", ("priority", "<=", "2.5", "number")),
        ("due<2026-12-31", ("due", "<", "2026-12-31", "date")),
        ("due>2026-12-31T10:00", ("due", ">", "2026-12-31T10:00", "datetime")),
        ("tags~=project", ("tags", "~=", "project", "text")),
        ("done=true", ("done", "=", "true", "checkbox")),
        ("url=a=b", ("url", "=", "a=b", "text")),
        ("reviewed", ("reviewed", "present", "", "")),
        ("!Reviewed", ("reviewed", "absent", "", "")),
    ],
)
def test_parse_where(text: str, expected: tuple[str, str, str, str]) -> None:
    c = parse_where(text)
    assert (c.key, c.op, c.operand, c.kind) == expected


@pytest.mark.parametrize("text", ["", "=x", "!", "a<", "!a=b", "a<>b", "a b=", "<=2", "a~b"])
def test_bad_where_says_what_was_expected(text: str) -> None:
    with pytest.raises(UsageError, match="--where"):
        parse_where(text)


def test_declared_type_rides_on_the_condition() -> None:
    assert parse_where("N>=2", {"n": "number"}).declared == "number"
    assert parse_where("m>=2", {"n": "number"}).declared is None


def test_parse_when() -> None:
    now = 1_800_000_000 * 10**9
    assert parse_when("7d", "--x", now_ns=now) == now - 7 * 86400 * 10**9
    local = dt.datetime(2026, 12, 31).astimezone()
    assert parse_when("2026-12-31", "--x") == int(local.timestamp()) * 10**9
    assert parse_when("2026-12-31T00:00:00+00:00", "--x") == int(
        dt.datetime(2026, 12, 31, tzinfo=dt.UTC).timestamp() * 10**9
    )
    for bad in ("yesterday", "7w", "-7d", "７d"):
        with pytest.raises(UsageError, match="--x"):
            parse_when(bad, "--x")


def test_the_value_is_frozen_and_compares_by_fields() -> None:
    a = NoteFilter(tags=("x",), where=(Condition("k", "=", "v", "text"),))
    assert a == NoteFilter(tags=("x",), where=(Condition("k", "=", "v", "text"),))
    assert hash(a) == hash(a.replace())
    assert a != a.replace(reverse=True) and a.replace(reverse=True).reverse
    with pytest.raises(AttributeError, match="frozen"):
        a.tags = ()  # type: ignore[misc]
    with pytest.raises(TypeError):
        NoteFilter(colour="red")
    assert a.active and not EVERY_NOTE.active and not NoteFilter(sort="title").active


def test_sort_folder_and_mapping() -> None:
    assert check_sort("Modified") == "modified" and check_sort("Due") == "due"
    assert check_sort("path") == "path"
    with pytest.raises(UsageError):
        check_sort(" ")
    assert clean_folder("/Projects/x/") == "Projects/x" and clean_folder("\\a\\b") == "a/b"
    nf = from_mapping({"tag": ["a", "b"], "folder": "P/", "where": "s=1", "reverse": True})
    assert nf.tags == ("a", "b") and nf.folders == ("P",) and nf.reverse
    assert nf.where == (parse_where("s=1"),)
    assert from_mapping(None) is EVERY_NOTE and from_mapping({}) is EVERY_NOTE
    with pytest.raises(UsageError, match=r"filter\.type must be a string"):
        from_mapping({"type": 3})
