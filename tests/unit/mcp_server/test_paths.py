"""Path safety, in-process: note names that would leave the vault (symlinks that lead out are
refused by the read itself: tests/unit/vault/test_reading.py)."""

from __future__ import annotations

import pytest

from notedex.mcp_server.paths import refuse_outside_paths
from notedex.mcp_server.tools import ToolError


@pytest.mark.parametrize(
    "note", ["../x", "a/../../b", "/abs", "~/x", "~", "C:/x", "D:\\x", "a\\..\\..\\b", "nul\0"]
)
def test_outside_paths_are_refused_before_any_lookup(note: str) -> None:
    with pytest.raises(ToolError, match=r"refused|NUL"):
        refuse_outside_paths(note)


@pytest.mark.parametrize("note", ["PARA 方法", "Areas/PARA 方法.md", "Wait.. what", "a/b.c"])
def test_ordinary_names_pass(note: str) -> None:
    refuse_outside_paths(note)
