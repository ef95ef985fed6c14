"""query/bases: each documented function and operator, evaluated on one row's properties
(SEMANTICS 15.2-15.4). The row is a plain object with the few methods the evaluator reads;
the same functions over a real index are tests/spec/test_bases.py."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from notedex.query.bases.evaluate import Scope, Unsupported, evaluate
from notedex.query.bases.run import to_json
from notedex.query.bases.syntax import parse
from notedex.query.bases.values import FileValue, Link

NOW = dt.datetime(2026, 3, 10, 15, 4, 5)


class Row:
    def __init__(self, path: str, props: dict[str, Any], tags: list[str] = ()) -> None:  # type: ignore[assignment]
        self.path = path
        self.size = 42
        self._props = props
        self._tags = list(tags)

    def properties(self) -> dict[str, Any]:
        return self._props

    def property(self, name: str) -> Any:
        return self._props.get(name)

    def tag_keys(self) -> list[str]:
        return [t.lower() for t in self._tags]

    def tags(self) -> list[str]:
        return list(self._tags)

    def links(self) -> list[Link]:
        return [Link("Books/Dune.md", resolved=True)]


class Files:
    def __init__(self, rows: list[Row]) -> None:
        self.rows = {row.path: row for row in rows}

    def resolve(self, text: str) -> str | None:
        for path in self.rows:
            if text in (path, path[:-3], path.rsplit("/", 1)[-1][:-3]):
                return path
        return None

    def file_of(self, text: str) -> FileValue | None:
        path = self.resolve(text)
        return FileValue(self.rows[path]) if path else None

    def link_to(self, text: str, display: str | None) -> Link:
        path = self.resolve(text)
        return Link(path or text, display, resolved=path is not None)

    def targets_of(self, other: Any) -> set[str]:
        if isinstance(other, FileValue):
            return {other.row.path}
        if isinstance(other, Link):
            return {other.path}
        path = self.resolve(other) if isinstance(other, str) else None
        return {path} if path else set()


ROW = Row(
    "Notes/Item.md",
    {"n": 7, "f": 2.5, "s": "Hello World", "l": ["b", "a", "b"], "e": "", "t": True, "z": 0},
    ["Project/Active", "misc"],
)
DUNE = Row("Books/Dune.md", {})


def ev(text: str) -> Any:
    scope = Scope(Files([ROW, DUNE]), {"double": parse("n * 2")}, NOW).at(ROW)
    return to_json(evaluate(parse(text), scope))


CASES = [
    # operators and the type rule
    ("1 + 2 * 3", 7),
    ("(1 + 2) * 3", 9),
    ("7 % 3", 1),
    ("7 / 2", 3.5),
    ("1 / 0", None),
    ('"a" + 1', "a1"),
    ("n + null", None),
    ('n == "7"', False),
    ("n != 7", False),
    ("s > 1", False),
    ('"b" > "a"', True),
    ("l == ['b', 'a', 'b']", True),
    ("!e && !z && t", True),
    ("null || 0", False),
    ("missing == null", True),
    ("-n", -7),
    ("formula.double", 14),
    ("note.n + note['f']", 9.5),
    # global
    ('date("2026-01-31") + "1M"', "2026-02-28"),
    ('date("2024-12-01") + "1M" + "4h" + "3m"', "2025-01-01T04:03:00"),
    ('date("2026-01-02") - date("2026-01-01")', 86_400_000),
    ('date("nonsense")', None),
    ('duration("1d 12h")', 129_600_000),
    ('duration("5h") * 2', 36_000_000),
    ("escapeHTML(\"<a href='x'>&</a>\")", "&lt;a href=&#x27;x&#x27;&gt;&amp;&lt;/a&gt;"),
    ('file("Dune")', "Books/Dune.md"),
    ('file("nowhere")', None),
    ('if(n > 5, "big", "small")', "big"),
    ('if(z, "yes")', None),
    ('link("Dune", "the book")', "[[Books/Dune|the book]]"),
    ('link("Unknown")', "[[Unknown]]"),
    ("list(n)", [7]),
    ("list(l)", ["b", "a", "b"]),
    ("max(1, n, 3)", 7),
    ("min(1, n, -3)", -3),
    ("max(1, 'x')", None),
    ("now()", "2026-03-10T15:04:05"),
    ("today()", "2026-03-10"),
    ('number("3.4")', 3.4),
    ("number(true)", 1),
    ('number("x")', None),
    (
        'number(date("1970-01-02"))',
        86_400_000 - dt.datetime(1970, 1, 2).astimezone().utcoffset().total_seconds() * 1000,
    ),
    # any
    ("n.isTruthy()", True),
    ("z.isTruthy()", False),
    ("n.toString()", "7"),
    ("f.toString()", "2.5"),
    ("l.toString()", "b, a, b"),
    ('n.isType("number")', True),
    ('s.isType("number")', False),
    ("missing.isEmpty()", True),
    # date
    ('date("2026-05-27 13:04:09").year', 2026),
    ('date("2026-05-27 13:04:09").month', 5),
    ('date("2026-05-27 13:04:09").day', 27),
    ('date("2026-05-27 13:04:09").hour', 13),
    ('date("2026-05-27 13:04:09").minute', 4),
    ('date("2026-05-27 13:04:09").second', 9),
    ('date("2026-05-27 13:04:09").millisecond', 0),
    ('date("2026-05-27 13:04:09").date()', "2026-05-27"),
    ('date("2026-05-27 13:04:09").time()', "13:04:09"),
    (
        'date("2026-05-03 13:04:09").format("dddd, MMMM Do YYYY, h:mm A [at] ss")',
        "Sunday, May 3rd 2026, 1:04 PM at 09",
    ),
    ('date("2026-05-27").format("YY-M-D ddd MMM")', "26-5-27 Wed May"),
    ('(now() - "3d").relative()', "3 days ago"),
    ('(now() + "2h").relative()', "in 2 hours"),
    ('(now() - "10s").relative()', "a few seconds ago"),
    ('(now() - "400d").relative()', "a year ago"),
    ("now().isEmpty()", False),
    ('date("2026-01-01") < date("2026-01-02")', True),
    ('date("2026-01-01") == date("2026-01-01 00:00:00")', True),
    # string
    ("s.length", 11),
    ('s.contains("lo W")', True),
    ('s.containsAll("H", "W")', True),
    ('s.containsAll("H", "x")', False),
    ('s.containsAny("x", "W")', True),
    ('s.endsWith("World")', True),
    ('s.startsWith("Hell")', True),
    ("s.isEmpty()", False),
    ("e.isEmpty()", True),
    ("s.lower()", "hello world"),
    ('"a,b,c,d".replace(",", "-")', "a-b-c-d"),
    ('"a,b,c,d".replace(/,/, "-")', "a-b,c,d"),
    ('"a,b,c,d".replace(/,/g, "-")', "a-b-c-d"),
    ('"123".repeat(2)', "123123"),
    ('"hello".reverse()', "olleh"),
    ('"hello".slice(1, 4)', "ell"),
    ('"hello".slice(1)', "ello"),
    ('"a,b,c,d".split(",", 3)', ["a", "b", "c"]),
    ('"a1b22c".split(/[0-9]+/)', ["a", "b", "c"]),
    ('"hello world".title()', "Hello World"),
    ('"  hi  ".trim()', "hi"),
    ("s.abs()", None),  # a method of another type: null, not a crash
    # number
    ("(-5).abs()", 5),
    ("(2.1).ceil()", 3),
    ("(2.9).floor()", 2),
    ("(2.5).round()", 3),
    ("(-2.5).round()", -2),
    ("(2.3333).round(2)", 2.33),
    ("(3.14159).toFixed(2)", "3.14"),
    ("(2.345).toFixed(2)", "2.35"),
    ("(-0.04).toFixed(1)", "-0.0"),  # the sign kept, as Decimal keeps it
    ("(2.5).toFixed(0)", "3"),
    ("(5).toFixed(3)", "5.000"),
    ("(0.0000001).toFixed(7)", "1E-7"),  # Decimal's form past 6 places
    ("n.isEmpty()", False),
    # list
    ("l.length", 3),
    ('l.contains("a")', True),
    ("[1,2,3].containsAll(2,3)", True),
    ("[1,2,3].containsAny(3,4)", True),
    ("[1,2,3,4].filter(value > 2)", [3, 4]),
    ("[1,2,3,4].filter(index < 1)", [1]),
    ("[1,[2,3]].flat()", [1, 2, 3]),
    ("[].isEmpty()", True),
    ('[1,2,3].join(",")', "1,2,3"),
    ("[1,2,3,4].map(value + 1)", [2, 3, 4, 5]),
    ("[1,2,3].reduce(acc + value, 0)", 6),
    ("[4, 9, 2].reduce(if(acc == null || value > acc, value, acc), null)", 9),
    ("[1,2,3].reverse()", [3, 2, 1]),
    ("[1,2,3,4].slice(1,3)", [2, 3]),
    ("[3, 1, 2].sort()", [1, 2, 3]),
    ('["c", "a", "b"].sort()', ["a", "b", "c"]),
    ("[1,2,2,3].unique()", [1, 2, 3]),
    ("[1, 2, 6].mean()", 3),
    ("l[0]", "b"),
    ("l[9]", None),
    # link, file, object, regexp
    ('link("Dune").asFile()', "Books/Dune.md"),
    ('link("Item").linksTo(file("Dune"))', True),
    ('file.asLink("me")', "[[Notes/Item|me]]"),
    ('file.hasLink("Dune")', True),
    ("file.hasLink(file)", False),
    ('file.hasProperty("n")', True),
    ('file.hasProperty("nope")', False),
    ('file.hasTag("project")', True),  # nested and case-insensitive
    ('file.hasTag("#misc")', True),
    ('file.hasTag("proj")', False),
    ('file.hasTag("x", "project/active")', True),
    ('file.inFolder("Notes")', True),
    ('file.inFolder("Note")', False),
    ('file.inFolder("/")', True),
    ("file.name", "Item.md"),
    ("file.basename", "Item"),
    ("file.folder", "Notes"),
    ("file.ext", "md"),
    ("file.size", 42),
    ("file.tags", ["Project/Active", "misc"]),
    ('{"a": 1}.keys()', ["a"]),
    ('{"a": 1}.values()', [1]),
    ("{}.isEmpty()", True),
    ('/abc/.matches("xabcx")', True),
    ('/^abc/.matches("xabc")', False),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_evaluates(text: str, expected: Any) -> None:
    assert ev(text) == expected


def test_an_unknown_global_is_refused_when_run() -> None:
    with pytest.raises(Unsupported, match="nosuch"):
        ev("nosuch(1)")


def test_if_evaluates_only_the_branch_taken() -> None:
    # The other branch would be refused if it were evaluated.
    assert ev('if(true, "ok", nosuch())') == "ok"


def test_to_fixed_in_integers_equals_decimal_quantize() -> None:
    """``toFixed`` rounds in integers (no `decimal` import) exactly as ``Decimal(repr(x))``
    quantized with ROUND_HALF_UP, for every value and 0-6 places it takes that path for."""
    import random
    from decimal import ROUND_HALF_UP, Decimal

    from notedex.query.bases.functions import _fixed

    rnd = random.Random(32)
    values = [0.0, -0.0, 0.5, -2.5, 0.125, 1.005, 9.995, 99.5, 0.05, 1e-4, 9999999999999998.0]
    values += [rnd.uniform(-1e6, 1e6) for _ in range(2000)]
    values += [round(rnd.uniform(-1000, 1000), rnd.randint(0, 7)) for _ in range(3000)]
    values += [rnd.randint(-(10**6), 10**6) / 8 for _ in range(2000)]
    checked = 0
    for value in values:
        text = repr(value)
        if "e" in text:
            continue
        for places in range(7):
            quantum = Decimal(1).scaleb(-places)
            expected = str(Decimal(text).quantize(quantum, rounding=ROUND_HALF_UP))
            assert _fixed(text, places) == expected, (text, places)
            checked += 1
    assert checked > 40000
