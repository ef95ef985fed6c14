"""query/bases/syntax.py: the tokenizer and the Pratt parser (SEMANTICS 15.2)."""

from __future__ import annotations

import pytest

from notedex.errors import UsageError
from notedex.query.bases.syntax import parse, tokenize


def test_precedence_loosest_first() -> None:
    assert parse("a || b && c == 1 + 2 * 3") == (
        "binary",
        "||",
        ("ident", "a"),
        (
            "binary",
            "&&",
            ("ident", "b"),
            (
                "binary",
                "==",
                ("ident", "c"),
                ("binary", "+", ("num", 1), ("binary", "*", ("num", 2), ("num", 3))),
            ),
        ),
    )


def test_comparisons_bind_tighter_than_equality() -> None:
    assert parse("a < b == c") == (
        "binary",
        "==",
        ("binary", "<", ("ident", "a"), ("ident", "b")),
        ("ident", "c"),
    )


def test_left_associative() -> None:
    assert parse("8 - 2 - 1") == (
        "binary",
        "-",
        ("binary", "-", ("num", 8), ("num", 2)),
        ("num", 1),
    )


def test_prefix_and_postfix() -> None:
    assert parse('!file.hasTag("a")') == (
        "unary",
        "!",
        ("call", ("member", ("ident", "file"), "hasTag"), (("str", "a"),)),
    )
    assert parse("-x.abs()") == ("unary", "-", ("call", ("member", ("ident", "x"), "abs"), ()))
    assert parse('note["my prop"][0]') == (
        "index",
        ("index", ("ident", "note"), ("str", "my prop")),
        ("num", 0),
    )


def test_literals() -> None:
    assert parse("[1, 'a', true, null, 2.5]") == (
        "list",
        (("num", 1), ("str", "a"), ("bool", True), ("null",), ("num", 2.5)),
    )
    assert parse('{"a": 1, b: 2}') == ("object", (("a", ("num", 1)), ("b", ("num", 2))))
    assert parse(r'"say \"hi\"\n"') == ("str", 'say "hi"\n')


def test_slash_divides_after_an_operand_and_opens_a_regexp_elsewhere() -> None:
    assert parse("a / 2") == ("binary", "/", ("ident", "a"), ("num", 2))
    assert parse("(a) / b / c")[0] == "binary"
    assert parse("/a[/]b/gi.matches(x)") == (
        "call",
        ("member", ("regex", "a[/]b", "gi"), "matches"),
        (("ident", "x"),),
    )
    assert tokenize("x.replace(/,/g, '-')")[4] == ("regex", (",", "g"), 10)


@pytest.mark.parametrize(
    "text",
    ["", "1 +", "(1", "a..b", '"open', "/open", "a b", "1 # 2", "{1: 2}", "f(,)", "[1 2]"],
)
def test_bad_expressions_are_usage_errors(text: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse(text)
    assert "bad expression" in str(caught.value)
