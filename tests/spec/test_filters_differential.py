"""SEMANTICS 14, differentially: for random property values and ``--where`` conditions, the notes
``scan --where`` lists are the notes a plain Python reading of the rules keeps.

The reference below is written from docs/semantics.md section 15 over the values as the test
wrote them, not from the SQL: it types each value and operand by its shape and compares them.
"""

from __future__ import annotations

import datetime as dt
import itertools
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import SpecVault

KEYS = ("status", "priority", "due", "flag")
TEXTS = ("draft", "Draft", "done", "2", "high", "2026-01-03", "x y")
DATES = ("2026-01-01", "2026-01-03", "2026-02-10")

scalar = st.one_of(
    st.tuples(st.just("num"), st.sampled_from((0, 1, 2, 3, 2.5, -1))),
    st.tuples(st.just("bool"), st.booleans()),
    st.tuples(st.just("date"), st.sampled_from(DATES)),
    st.tuples(st.just("text"), st.sampled_from(TEXTS)),
    st.tuples(st.just("empty"), st.none()),
)
value = st.one_of(scalar, st.tuples(st.just("list"), st.lists(scalar, max_size=3)))
note = st.dictionaries(st.sampled_from(KEYS), value, max_size=4)
OPERANDS = ("2", "1", "2.5", "draft", "DONE", "high", "true", "false", *DATES, "2026-01-03T12:00")
condition = st.one_of(
    st.tuples(
        st.sampled_from(KEYS),
        st.sampled_from(("=", "!=", ">=", "<=", ">", "<", "~=")),
        st.sampled_from(OPERANDS),
    ),
    st.tuples(st.sampled_from(KEYS), st.sampled_from(("present", "absent")), st.just("")),
)


def yaml_of(v: tuple[str, Any]) -> str:
    kind, raw = v
    if kind == "num":
        return str(raw)
    if kind == "bool":
        return "true" if raw else "false"
    if kind == "date":
        return raw  # unquoted: YAML reads a date
    if kind == "text":
        return '"' + raw + '"'
    if kind == "empty":
        return ""
    return "[" + ", ".join(yaml_of(item) if item[0] != "empty" else "null" for item in raw) + "]"


# -- the reference ----------------------------------------------------------------------------


def is_date(text: str) -> bool:
    try:
        dt.date.fromisoformat(text)
    except ValueError:
        return False
    return len(text) == 10


def typed(v: tuple[str, Any]) -> tuple[str, Any]:
    """15.2: (type, comparable value) of one written scalar."""
    kind, raw = v
    if kind == "num":
        return "number", float(raw)
    if kind == "bool":
        return "checkbox", raw
    if kind == "date":
        return "date", raw + "T00:00:00"
    if kind == "text":
        return ("date", raw + "T00:00:00") if is_date(raw) else ("text", raw.lower())
    return "null", None


def operand_typed(text: str) -> tuple[str, Any]:
    """15.3: the operand's type by its shape."""
    try:
        return "number", float(text)
    except ValueError:
        pass
    if text in ("true", "false"):
        return "checkbox", text == "true"
    if is_date(text):
        return "date", text + "T00:00:00"
    if len(text) == 16 and is_date(text[:10]) and text[10] == "T":
        return "date", text + ":00"
    return "text", text.lower()


COMPARE = {
    "=": lambda a, b: a == b,
    ">=": lambda a, b: a >= b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    "<": lambda a, b: a < b,
}


def scalar_meets(v: tuple[str, Any], op: str, operand: str) -> bool:
    """15.5 for one value: same types compare; = on text compares the operand as text."""
    vkind, vval = typed(v)
    okind, oval = operand_typed(operand)
    if op == "=" and vkind == "text":
        return bool(vval == operand.lower())
    if vkind != okind or vkind == "null":
        return False
    if vkind == "checkbox" and op != "=":
        return False
    return bool(COMPARE[op](vval, oval))


def is_set(v: tuple[str, Any]) -> bool:
    kind, raw = typed(v)
    return kind != "null" and not (kind == "checkbox" and raw is False)


def reference(props: dict[str, tuple[str, Any]], key: str, op: str, operand: str) -> bool:
    v = props.get(key)
    items = [] if v is None else (list(v[1]) or [("empty", None)]) if v[0] == "list" else [v]
    if op in ("present", "absent"):
        found = any(is_set(item) for item in items)
        return found if op == "present" else not found
    if op == "~=":
        return any(scalar_meets(item, "=", operand) for item in items)
    single = v is not None and v[0] != "list"
    equal = single and scalar_meets(v, "=" if op == "!=" else op, operand)  # type: ignore[arg-type]
    return not equal if op == "!=" else equal


def where_text(key: str, op: str, operand: str) -> str:
    if op == "present":
        return key
    if op == "absent":
        return "!" + key
    return f"{key}{op}{operand}"


_runs = itertools.count()


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    notes=st.lists(note, min_size=1, max_size=6),
    conditions=st.lists(condition, min_size=1, max_size=4),
)
def test_where_agrees_with_the_rules_read_in_python(
    notes: list[dict[str, tuple[str, Any]]], conditions: list[tuple[str, str, str]]
) -> None:
    base = Path(tempfile.mkdtemp(prefix=f"where{next(_runs)}-"))
    v = SpecVault(base / "vault", base / "index.db")
    for i, props in enumerate(notes):
        front = "".join(f"{key}: {yaml_of(val)}\n" for key, val in props.items())
        v.write(f"n{i}.md", f"---\n{front}---\nbody\n" if props else "body\n")
    everything = [note["path"] for note in v.scan()["notes"]]
    assert everything == sorted(f"n{i}.md" for i in range(len(notes)))
    for key, op, operand in conditions:
        got = [n["path"] for n in v.scan("--where", where_text(key, op, operand))["notes"]]
        want = [f"n{i}.md" for i, props in enumerate(notes) if reference(props, key, op, operand)]
        assert got == sorted(want), (key, op, operand, notes)
    args = [a for key, op, operand in conditions for a in ("--where", where_text(key, op, operand))]
    got = [n["path"] for n in v.scan(*args)["notes"]]
    want = [
        f"n{i}.md"
        for i, props in enumerate(notes)
        if all(reference(props, key, op, operand) for key, op, operand in conditions)
    ]
    assert got == sorted(want), (conditions, notes)
