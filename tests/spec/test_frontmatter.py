"""SEMANTICS 2: frontmatter (properties): where it starts and ends, YAML, BOM.

All in-process: the CLI through ``notedex.cli.main`` (`run_inprocess`) on a real vault under
``tmp_path`` with a real index, checked on its exact ``--json`` answers.
"""

from __future__ import annotations

import json

import pytest

from tests.helpers import (
    SpecVault,
    paths_of,
)


def test_frontmatter_must_start_at_byte_0_and_close_with_exact_dashes(v: SpecVault) -> None:
    v.write("Ok.md", "---\ntags: [ok]\ntitle: Fine\n---\nbody\n")
    v.write("Late.md", "\n---\ntags: [late]\n---\n")
    v.write("Unclosed.md", "---\ntags: [open]\nbody\n")
    v.write("Spaces.md", "---\ntags: [sp]\n--- \nstill yaml?\n---\n")
    v.write("Crlf.md", "---\r\ntags: [crlf]\r\ntitle: Win\r\n---\r\n[[Ok]] #inline\r\n")
    notes = {n["path"]: n for n in v.scan()["notes"]}
    assert notes["Ok.md"]["tags"] == ["ok"] and notes["Ok.md"]["title"] == "Fine"
    assert notes["Late.md"]["tags"] == []
    assert notes["Unclosed.md"]["tags"] == []
    assert notes["Crlf.md"]["tags"] == ["crlf", "inline"] and notes["Crlf.md"]["title"] == "Win"
    assert v.targets("Crlf.md") == ["Ok.md"]
    assert v.show("Crlf.md")["links"][0]["line"] == 5


@pytest.mark.slow
def test_broken_yaml_is_an_error_but_the_body_still_counts(v: SpecVault) -> None:
    v.write("Target.md", "")
    v.write("Bad.md", "---\ntags: [a\ntitle: x\n---\n# Heading\n[[Target]] #bodytag [[Gone]]\n")
    v.write("List.md", "---\n- a\n- b\n---\n[[Target]]\n")
    v.write("Scalar.md", "---\njust text\n---\n#s\n")
    scan = v.scan()
    assert scan["noteCount"] == 4
    assert sorted(e["path"] for e in scan["errors"]) == ["Bad.md", "List.md", "Scalar.md"]
    assert scan["errorCount"] == 3
    assert all(e["message"] for e in scan["errors"])
    notes = {n["path"]: n for n in scan["notes"]}
    assert notes["Bad.md"]["tags"] == ["bodytag"]
    assert notes["Bad.md"]["title"] == "Bad"
    assert notes["Scalar.md"]["tags"] == ["s"]
    assert v.targets("Bad.md") == ["Target.md", "BROKEN:Gone"]
    h = v.health()
    assert sorted(e["path"] for e in h["errors"]) == ["Bad.md", "List.md", "Scalar.md"]
    assert [b["source"] for b in h["brokenLinks"]] == ["Bad.md"]
    assert paths_of(h["orphanNotes"]) == ["Scalar.md"]
    assert v.show("Target.md")["backlinks"] and len(v.show("Target.md")["backlinks"]) == 2


def test_yaml_1_2_scalars_and_case_insensitive_keys(v: SpecVault) -> None:
    v.write(
        "Y.md",
        "---\nTags: [yes, no, on, off]\nALIASES: [Yes Alias]\nID: 20230101\nType: yes\n"
        "Status: off\ncreated: 2023-01-02\n---\n",
    )
    n = v.note("Y.md")
    assert n["tags"] == ["yes", "no", "on", "off"]
    assert n["aliases"] == ["Yes Alias"]
    assert (n["id"], n["type"], n["status"]) == ("20230101", "yes", "off")
    props = v.show("Y.md")["properties"]
    assert json.dumps(props).find("2023-01-02") >= 0


def test_bom_before_frontmatter(v: SpecVault) -> None:
    # Obsidian decodes with a BOM-stripping TextDecoder, so the properties are seen
    v.write_bytes("Bom.md", "\ufeff---\ntags: [bom]\n---\n[[Bom]] #inline\n".encode())
    n = v.note("Bom.md")
    assert n["tags"] == ["bom", "inline"]
    assert v.show("Bom.md")["links"][0]["line"] == 4


def test_yaml_alias_bomb_and_deep_nesting_are_errors_not_hangs(v: SpecVault) -> None:
    lines = ["---", 'a0: &a0 ["[[x]]", "q", "q", "q", "q", "q", "q", "q", "q", "q"]']
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    v.write("Bomb.md", "\n".join([*lines, "---", "[[Note]] #bodytag", ""]))
    v.write("Deep.md", "---\nx: " + "[" * 5000 + "]" * 5000 + "\n---\n[[Note]]\n")
    v.write("Note.md", "")
    scan = v.scan()
    assert sorted(e["path"] for e in scan["errors"]) == ["Bomb.md", "Deep.md"]
    assert v.targets("Bomb.md") == ["Note.md"]
    assert v.targets("Deep.md") == ["Note.md"]
    assert v.note("Bomb.md")["tags"] == ["bodytag"]


def test_frontmatter_delimiter_corner_cases(v: SpecVault) -> None:
    v.write("Dots.md", "---\ntags: [dots]\n...\nbody\n")
    v.write("Trailing.md", "---  \ntags: [trailing]\n---\n")
    v.write("Empty.md", "---\n---\nbody #b\n")
    v.write("Comment.md", "---\n# only a comment\n---\n")
    v.write("Glued.md", "---\ntags: [glued]\n---body\n")
    v.write("TitleKey.md", "---\nTITLE: Upper Key\n---\n")
    scan = v.scan()
    notes = {n["path"]: n for n in scan["notes"]}
    assert notes["Dots.md"]["tags"] == []
    assert notes["Trailing.md"]["tags"] == []
    assert notes["Empty.md"]["tags"] == ["b"]
    assert notes["Glued.md"]["tags"] == []
    assert notes["TitleKey.md"]["title"] == "Upper Key"
    # an empty or comment-only block is valid (no properties), not an error
    assert [e["path"] for e in scan["errors"] if e["path"] in ("Empty.md", "Comment.md")] == []
