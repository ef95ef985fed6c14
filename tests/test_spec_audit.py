"""Rules of SEMANTICS.md that an independent audit found unpinned or broken.

Each test is named after the spec sentence it checks; parsing cases go through ``parse_note``
(pure), reports through the CLI as a subprocess on a real vault.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from notedex.vault.model import Note
from notedex.vault.parse import parse_note
from tests.helpers import run_cli, write


def parse(text: str, path: str = "Src.md") -> Note:
    return parse_note(text.encode("utf-8"), path)


def tag_names(text: str) -> list[str]:
    return [tag.name for tag in parse(text).tags]


def link_rows(text: str) -> list[tuple[str, str, int]]:
    return [(link.kind, link.linkpath, link.column) for link in parse(text).links]


def cli_json(vault: Path, db: Path, *args: str, ok: tuple[int, ...] = (0,)) -> Any:
    result = run_cli(*args, "--vault", vault, "--db", db, "--json")
    assert "Traceback" not in result.stderr, result.stderr
    assert result.code in ok, (result.code, result.stdout, result.stderr)
    return json.loads(result.stdout)


# --- SEMANTICS 4: "The # must start ... an inline chunk (... after a link ...)" ----------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[site](https://example.org)#after", ["after"]),
        ("<https://example.org>#auto", ["auto"]),
        ("[a](Note.md)#x [b](http://q.example)#y #z", ["x", "y", "z"]),
        # still no tag inside the URL itself, nor an all-digit one after it
        ("[site](https://example.org/#frag)", []),
        ("<https://example.org/#frag>", []),
        ("[site](https://example.org)#1984", []),
    ],
)
def test_s4_a_tag_may_start_right_after_an_external_link(text: str, expected: list[str]) -> None:
    assert tag_names(text) == expected


# --- SEMANTICS 6: Markdown links `[t](dest)`; link text may hold balanced brackets ------------


def test_s6_linked_image_gives_the_image_embed_and_the_link() -> None:
    text = "[![badge](img/pic.png)](Note.md)"
    assert link_rows(text) == [("markdown", "Note.md", 1), ("markdown-embed", "img/pic.png", 2)]


def test_s6_markdown_link_text_with_brackets_is_a_link() -> None:
    assert link_rows("see [the [draft] plan](Plan.md)") == [("markdown", "Plan.md", 5)]


def test_s6_wikilink_brackets_are_not_reused_by_a_markdown_link() -> None:
    assert link_rows("[[A]](B.md)") == [("wikilink", "A", 1)]


def test_s6_no_tag_inside_a_linked_image_text() -> None:
    assert tag_names("[![a](p.png) #inside](Note.md) #outside") == ["outside"]


def test_s8_note_reached_only_through_a_linked_image_is_not_an_orphan(tmp_path: Path) -> None:
    vault, db = tmp_path / "v", tmp_path / "db.sqlite"
    write(vault / ".obsidian" / "app.json", "{}")
    write(vault / "Target.md", "target\n")
    write(vault / "Readme.md", "[![build](img/badge.png)](Target.md)\n")
    (vault / "img").mkdir()
    (vault / "img" / "badge.png").write_bytes(b"\x89PNG")
    health = cli_json(vault, db, "health")
    assert health["orphanNotes"] == []
    assert [n["path"] for n in health["unlinkedNotes"]] == ["Readme.md"]
    shown = cli_json(vault, db, "show", "Readme.md")
    assert [(lk["target"], lk["broken"]) for lk in shown["links"]] == [
        ("Target.md", False),
        ("img/badge.png", False),
    ]


# --- SEMANTICS 1/3/5: text that macOS may write decomposed (NFD) is stored NFC ---------------


def nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


def test_s3_title_h1_and_text_properties_are_nfc_like_paths_and_tags() -> None:
    note = parse(
        f"---\ntitle: {nfd('Déjà Vu')}\ntype: {nfd('réunion')}\nid: {nfd('été-1')}\n"
        f"status: {nfd('brouillon à revoir')}\n---\n# {nfd('Résumé')}\n"
    )
    assert (note.title, note.frontmatter_title, note.first_h1) == ("Déjà Vu", "Déjà Vu", "Résumé")
    assert (note.type, note.id, note.status) == ("réunion", "été-1", "brouillon à revoir")


def test_s5_aliases_are_nfc_and_an_nfd_twin_is_not_a_second_alias() -> None:
    note = parse(f"---\naliases: [{nfd('Café Crème')}, Café Crème]\n---\n")
    assert note.aliases == ("Café Crème",)


def test_s3_scan_type_filter_finds_a_type_written_nfd(tmp_path: Path) -> None:
    vault, db = tmp_path / "v", tmp_path / "db.sqlite"
    write(vault / ".obsidian" / "app.json", "{}")
    write(vault / "Meeting.md", f"---\ntype: {nfd('réunion')}\n---\n")
    scan = cli_json(vault, db, "scan", "--type", "réunion")
    assert [(n["path"], n["type"]) for n in scan["notes"]] == [("Meeting.md", "réunion")]


# --- SEMANTICS 6: "Not links, not tags: ... indented code blocks" -----------------------------


@pytest.mark.parametrize(
    "text",
    [
        "---\n    [[x]] #t\n",  # after a thematic break
        "***\n    [[x]] #t\n",
        "* * *\n    [[x]] #t\n",
        "___\n    [[x]] #t\n",
        "Intro\n---\n    [[x]] #t\n",  # after a setext heading
        "Intro\n===\n    [[x]] #t\n",
        "- item\n---\n    [[x]] #t\n",  # the break ends the list
        "-foo is not a list item\n\n    [[x]] #t\n",  # a marker needs a space after it
        "+1 vote\n\n    [[x]] #t\n",
        "1.5 items\n\n    [[x]] #t\n",
    ],
)
def test_s6_indented_code_after_a_break_heading_or_non_list_paragraph(text: str) -> None:
    note = parse(text)
    assert (note.links, note.tags) == ((), ())


@pytest.mark.parametrize(
    "text",
    [
        "- item\n\n    [[x]] #t\n",  # list continuation, not code
        "Intro\n    [[x]] #t\n",  # paragraph continuation
        "- a\n  ---\n    [[x]] #t\n",  # a break inside the item keeps the list open
    ],
)
def test_s6_indented_lines_that_are_not_code_still_link(text: str) -> None:
    note = parse(text)
    assert [link.linkpath for link in note.links] == ["x"]
    assert [tag.name for tag in note.tags] == ["t"]


# --- SEMANTICS 4: "The # must start the line or an inline chunk" -------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (">#quoted", ["quoted"]),  # the line start inside a blockquote
        (">>#deep", ["deep"]),
        ("> [!note] Title\n>#incallout", ["incallout"]),
        ("|#head|b|\n|-|-|\n|#cell|x|", ["head", "cell"]),  # a table cell's start
        # still not tags: mid-word after > or |, outside a quote or a table
        ("a>#no x|#no <b>#no</b>", []),
        (">#1984", []),
        ("># Heading", []),
    ],
)
def test_s4_a_tag_may_start_a_quoted_line_or_a_table_cell(text: str, expected: list[str]) -> None:
    assert tag_names(text) == expected


def test_s6_markdown_link_text_may_wrap_within_its_paragraph() -> None:
    # SEMANTICS 6 asks "on one line" of wikilinks only; CommonMark link text may wrap.
    note = parse("see [the\nplan](Plan.md) and [not\n\na link](X.md)")
    assert [(link.linkpath, link.line, link.column) for link in note.links] == [("Plan.md", 1, 5)]


# --- SEMANTICS 1 + 8: excluded files are "left out of reports" -----------------------------


def test_s8_a_link_from_an_excluded_note_does_not_save_a_note_from_the_orphan_list(
    tmp_path: Path,
) -> None:
    # Obsidian's graph (whose "Orphans" SEMANTICS 8 follows) hides excluded files and their
    # edges; notedex's own graph leaves them out too, so health must agree with it.
    vault, db = tmp_path / "v", tmp_path / "db.sqlite"
    write(vault / ".obsidian" / "app.json", '{"userIgnoreFilters": ["Archive/"]}')
    write(vault / "Archive" / "Old.md", "[[Target]] [[Linker]]\n")
    write(vault / "Target.md", "no links\n")
    write(vault / "Linker.md", "[[Elsewhere]]\n")
    health = cli_json(vault, db, "health", ok=(1,))
    assert [n["path"] for n in health["orphanNotes"]] == ["Target.md"]
    assert [n["path"] for n in health["unlinkedNotes"]] == ["Linker.md"]
    graph = cli_json(vault, db, "graph")
    assert all(edge["target"] != "Target.md" for edge in graph["edges"])
    # the link still resolves and is still a backlink of the note itself
    shown = cli_json(vault, db, "show", "Target.md")
    assert [b["source"] for b in shown["backlinks"]] == ["Archive/Old.md"]


def test_s4_tag_and_type_filters_accept_an_argument_typed_nfd(tmp_path: Path) -> None:
    # Paths and tags are NFC (SEMANTICS 1, 4); a macOS terminal can hand us NFD arguments.
    vault, db = tmp_path / "v", tmp_path / "db.sqlite"
    write(vault / ".obsidian" / "app.json", "{}")
    write(vault / "Summer.md", "---\ntype: réunion\n---\n#été/juillet\n")
    for args in (("--tag", nfd("été")), ("--tag", nfd("ÉTÉ/Juillet")), ("--type", nfd("réunion"))):
        scan = cli_json(vault, db, "scan", *args)
        assert [n["path"] for n in scan["notes"]] == ["Summer.md"], args
    found = cli_json(vault, db, "lookup", "summer", "--tag", nfd("été"), "--type", nfd("réunion"))
    assert [c["path"] for c in found["candidates"]] == ["Summer.md"]


# --- SEMANTICS 6: wikilink inner text; "rejected if the inner text contains [[" ---------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a `$` or a backtick in a note name must not open math or code across two links
        ("[[Price A$]] and [[Price B$]]", ["Price A$", "Price B$"]),
        ("[[a`b]] and [[c`d]]", ["a`b", "c`d"]),
        # "Drop one trailing \\ from the target": also when nothing follows it
        ("[[Note\\]]", ["Note"]),
        # code, math and escapes that start first still win
        ("`[[x]]` $[[y]]$ \\[\\[z\\]\\] [[ok]]", ["ok"]),
    ],
)
def test_s6_a_wikilink_that_starts_first_keeps_its_text(text: str, expected: list[str]) -> None:
    links = parse(text).links
    assert [link.linkpath for link in links] == expected
    assert all("[[" not in link.linkpath and "]]" not in link.linkpath for link in links)


@pytest.mark.parametrize(
    "text",
    [
        "[[$[[|x ($$]]",  # math hides the second [[: the written inner text holds [[
        "[[a`b [[c`]]",  # the same with a code span
        "[[x \\[[ y]]",  # an escape inside
    ],
)
def test_s6_no_wikilink_whose_written_inner_text_holds_brackets(text: str) -> None:
    for link in parse(text).links:
        assert "[[" not in link.raw[2:-2] and "]]" not in link.raw[2:-2], link
