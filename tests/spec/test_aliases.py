"""SEMANTICS 5: aliases are lookup keys, never link targets.

All in-process: the CLI through ``notedex.cli.main`` (`run_inprocess`) on a real vault under
``tmp_path`` with a real index, checked on its exact ``--json`` answers; rules about parsing
alone go through the pure parser.
"""

from __future__ import annotations

import pytest

from tests.helpers import (
    SpecVault,
    nfd,
    parse_text,
    warned_paths,
)


@pytest.mark.slow
def test_aliases_are_lookup_keys_never_link_targets(v: SpecVault) -> None:
    v.write("Machine Learning.md", "---\naliases: [AI, ' Trimmed ']\nalias: Ignored\n---\n")
    v.write("Comma.md", "---\naliases: AI, ML\n---\n")
    v.write("User.md", "[[AI]] [[ML]]\n")
    assert v.note("Machine Learning.md")["aliases"] == ["AI", "Trimmed"]
    assert v.note("Comma.md")["aliases"] == ["AI, ML"]
    assert v.targets("User.md") == ["BROKEN:AI", "BROKEN:ML"]
    assert "Machine Learning.md" in warned_paths(v.health())
    found = [c["path"] for c in v.json("lookup", "Trimmed")["candidates"]]
    assert "Machine Learning.md" in found


def test_s5_aliases_are_nfc_and_an_nfd_twin_is_not_a_second_alias() -> None:
    note = parse_text(f"---\naliases: [{nfd('Café Crème')}, Café Crème]\n---\n")
    assert note.aliases == ("Café Crème",)
