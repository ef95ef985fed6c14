"""SEMANTICS 3: title and identity (title, first H1, id, type, status).

All in-process: the CLI through ``notedex.cli.main`` (`run_inprocess`) on a real vault under
``tmp_path`` with a real index, checked on its exact ``--json`` answers; rules about parsing
alone go through the pure parser.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers import (
    SpecVault,
    cli_json,
    nfd,
    parse_text,
    paths_of,
    write,
)


def test_title_is_frontmatter_title_if_non_empty_string_else_stem(v: SpecVault) -> None:
    v.write("Custom.md", "---\ntitle: Zebra Quartz\n---\n# H\n")
    v.write("Empty.md", "---\ntitle: ''\n---\n")
    v.write("Number.md", "---\ntitle: 42\n---\n")
    v.write("Heading.md", "# The First Heading\n")
    titles = {n["path"]: n["title"] for n in v.scan()["notes"]}
    assert titles == {
        "Custom.md": "Zebra Quartz",
        "Empty.md": "Empty",
        "Number.md": "Number",
        "Heading.md": "Heading",
    }
    shown = v.show("Heading.md")
    assert (shown["stem"], shown["firstH1"], shown["frontmatterTitle"]) == (
        "Heading",
        "The First Heading",
        None,
    )
    # lookup matches all three
    for query, path in (("Quartz", "Custom.md"), ("Custom", "Custom.md"), ("First", "Heading.md")):
        found = [c["path"] for c in v.json("lookup", query)["candidates"]]
        assert path in found, (query, found)


def test_id_type_status_are_strings_or_null(v: SpecVault) -> None:
    v.write("A.md", "---\nid: 7\ntype: 3.5\nstatus: true\n---\n")
    v.write("B.md", "")
    notes = {n["path"]: n for n in v.scan()["notes"]}
    assert (notes["A.md"]["id"], notes["A.md"]["type"]) == ("7", "3.5")
    assert isinstance(notes["A.md"]["status"], str)
    assert (notes["B.md"]["id"], notes["B.md"]["type"], notes["B.md"]["status"]) == (
        None,
        None,
        None,
    )


def test_setext_heading_is_a_first_h1(v: SpecVault) -> None:
    v.write("Setext.md", "Big Title\n=========\n\ntext\n")
    assert v.show("Setext.md")["firstH1"] == "Big Title"
    assert [c["path"] for c in v.json("lookup", "Big")["candidates"]] == ["Setext.md"]


def test_first_h1_rules(v: SpecVault) -> None:
    v.write("Fenced.md", "```\n# not this\n```\n#notheading\n# Real One #withtag\n")
    v.write("Closing.md", "# Closed ##\n")
    v.write("Second.md", "## Level two\n# Level one\n")
    shown = v.show("Fenced.md")
    assert shown["firstH1"] in ("Real One #withtag", "Real One")
    assert sorted(shown["tags"]) == ["notheading", "withtag"]
    assert v.show("Closing.md")["firstH1"] == "Closed"
    assert v.show("Second.md")["firstH1"] == "Level one"


def test_scan_type_filter(v: SpecVault) -> None:
    v.write("A.md", "---\ntype: project\n---\n")
    v.write("B.md", "---\ntype: Person\n---\n")
    v.write("C.md", "")
    assert paths_of(v.scan("--type", "project")["notes"]) == ["A.md"]


def test_s3_title_h1_and_text_properties_are_nfc_like_paths_and_tags() -> None:
    note = parse_text(
        f"---\ntitle: {nfd('Déjà Vu')}\ntype: {nfd('réunion')}\nid: {nfd('été-1')}\n"
        f"status: {nfd('brouillon à revoir')}\n---\n# {nfd('Résumé')}\n"
    )
    assert (note.title, note.frontmatter_title, note.first_h1) == ("Déjà Vu", "Déjà Vu", "Résumé")
    assert (note.type, note.id, note.status) == ("réunion", "été-1", "brouillon à revoir")


def test_s3_scan_type_filter_finds_a_type_written_nfd(tmp_path: Path) -> None:
    vault, db = tmp_path / "v", tmp_path / "db.sqlite"
    write(vault / ".obsidian" / "app.json", "{}")
    write(vault / "Meeting.md", f"---\ntype: {nfd('réunion')}\n---\n")
    scan = cli_json(vault, db, "scan", "--type", "réunion")
    assert [(n["path"], n["type"]) for n in scan["notes"]] == [("Meeting.md", "réunion")]
