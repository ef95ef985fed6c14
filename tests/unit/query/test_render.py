"""query.render: the compact JSON agents read is byte-for-byte json.dumps; text on a terminal."""

from __future__ import annotations

import io
import json
import math
import re
import sys
from pathlib import Path, PurePosixPath

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


def test_renderer_makes_clickable_paths_on_a_tty_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from notedex.query.render import Renderer, render_health

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setenv("TERM", "xterm-256color")
    data = {
        "orphanNotes": [{"path": "A b/c#d.md", "title": "c#d"}],
        "unlinkedNotes": [],
        "brokenLinks": [
            {
                "source": "x.md",
                "line": 3,
                "column": 7,
                "text": "[[y]]",
                "target": "y",
                "suggestion": None,
                "reason": None,
            }
        ],
        "brokenAnchors": [],
        "deadEnds": [],
        "unusedAttachments": [],
        "warnings": [],
        "errors": [],
        "orphanCount": 1,
        "brokenLinkCount": 1,
        "brokenAnchorCount": 0,
        "deadEndCount": 0,
        "unusedAttachmentCount": 0,
    }
    screen = Terminal()
    render_health(Renderer(tmp_path, screen), data)
    out = screen.getvalue()
    url = "file://" + str(tmp_path).replace(" ", "%20") + "/A%20b/c%23d.md"
    assert f"\x1b]8;;{url}\x1b\\A b/c#d.md\x1b]8;;\x1b\\" in out
    assert "\x1b\\x.md:3:7\x1b]8;;" in out
    plain = io.StringIO()
    render_health(Renderer(tmp_path, plain), data)
    assert "\x1b" not in plain.getvalue() and "x.md:3:7" in plain.getvalue()
    monkeypatch.setenv("TERM", "dumb")
    dumb = Terminal()
    render_health(Renderer(tmp_path, dumb), data)
    assert "\x1b" not in dumb.getvalue()


def test_table_alignment_ignores_hyperlink_escapes(tmp_path: Path) -> None:
    from notedex.query.render import Renderer

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = Terminal()
    r = Renderer(tmp_path, screen)
    r.links = True
    r.table(("PATH", "TITLE"), [(r.path("a.md"), "A"), (r.path("筆記/long name.md"), "B")])
    lines = [re.sub(r"\x1b]8;;[^\x1b]*\x1b\\", "", line) for line in screen.getvalue().splitlines()]
    # "筆記/long name.md" is 17 cells wide (CJK characters take two).
    assert lines == ["PATH" + " " * 15 + "TITLE", "a.md" + " " * 15 + "A", "筆記/long name.md  B"]


def test_tables_fit_the_terminal_and_pipes_get_whole_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from notedex.query.render import Renderer

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setenv("TERM", "dumb")  # no hyperlinks: plain cells
    monkeypatch.setenv("COLUMNS", "40")
    rows = [("a/long/path/of/a/note.md", "一個很長很長的標題在這裡", "x" * 30)]
    screen = Terminal()
    Renderer(tmp_path, out=screen).table(("PATH", "TITLE", "TAGS"), rows)
    lines = screen.getvalue().splitlines()
    from notedex.query.output import _width

    assert all(_width(line) <= 40 for line in lines), lines
    assert lines[1].startswith("a/long/path/of/a/note.md  ")  # the path is never cut
    assert "…" in lines[1]
    pipe = io.StringIO()
    Renderer(tmp_path, out=pipe).table(("PATH", "TITLE", "TAGS"), rows)
    assert "x" * 30 in pipe.getvalue() and "…" not in pipe.getvalue()  # $COLUMNS or not
