"""``stream_indented.Indented`` turns compact JSON, given in pieces cut anywhere (inside a
string, between a backslash and what it escapes, between a bracket and its close), into exactly
what ``json.dumps(indent=2, ensure_ascii=False)`` writes of the same document."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from notedex.query.output import compact_json
from notedex.query.stream_indented import Indented

AWKWARD = ["", 'a"b\\c', "x,y:{}[]", 'é\n\\"', "\\", '"', "{[", "\u2028", 1, -2.5, 10**20, None]


def _document(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 4 or roll < 0.3:
        return rng.choice([*AWKWARD, True, False])
    if roll < 0.65:
        return [_document(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    keys = ["k", "a:b", "{", "\\", '"q"', "é", ""]
    return {rng.choice(keys) + str(i): _document(rng, depth + 1) for i in range(rng.randint(0, 4))}


@pytest.mark.parametrize("seed", range(4))
def test_pieces_cut_anywhere_indent_as_json_dumps(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(150):
        data = _document(rng)
        compact = compact_json(data)
        out: list[str] = []
        indent = Indented(out.append)
        start = 0
        while start < len(compact):
            size = rng.randint(1, 6)
            indent(compact[start : start + size])
            start += size
        assert "".join(out) == json.dumps(data, ensure_ascii=False, indent=2)


def test_empty_containers_and_the_final_newline_stay_as_they_are() -> None:
    out: list[str] = []
    indent = Indented(out.append)
    for piece in ['{"a":[', "]", ',"b":{', '},"c":[[]', "]}", "\n"]:
        indent(piece)
    assert "".join(out) == '{\n  "a": [],\n  "b": {},\n  "c": [\n    []\n  ]\n}\n'
