"""query.render: the compact JSON agents read is byte-for-byte json.dumps."""

from __future__ import annotations

import json
import math
import sys
from pathlib import PurePosixPath

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notedex.query.render import compact_json


def reference(data: object) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=6), inner, max_size=4)
        | st.tuples(inner, inner)
    ),
    max_leaves=25,
)


@settings(max_examples=1500, deadline=None)
@given(JSON)
def test_compact_json_equals_json_dumps(data: object) -> None:
    assert compact_json(data) == reference(data)


def test_special_values() -> None:
    data = {
        "path": PurePosixPath("a/b.md"),  # default=str
        "text": 'quote " backslash \\ newline \n nul \x00 中文 emoji 🙂 lone \ud800',
        "floats": [0.1, -0.0, 1e300, math.inf, -math.inf, math.nan],
        3: "int key",
        None: "null key",
        "big": 2**80,
    }
    assert compact_json(data) == reference(data)
    assert compact_json("top-level string") == reference("top-level string")


def test_falls_back_to_json_dumps_without_the_c_encoder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "_json", None)  # `from _json import ...` raises ImportError
    data = {"a": [1, "é"], "b": None}
    assert compact_json(data) == reference(data)
