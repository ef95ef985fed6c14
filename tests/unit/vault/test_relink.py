"""vault.relink (SEMANTICS 8.11): a rewrite changes the target or the anchor, and keeps the
display text, the embed `!`, the table escape and the link style."""

from __future__ import annotations

import pytest

from notedex.vault.markdown.links import find_links, percent_decoded
from notedex.vault.relink import path_in_style, read_link, rewrite


def relinked(raw: str, **changes: str | bool) -> str:
    link = read_link(raw)
    assert link is not None, raw
    return rewrite(link, **changes)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("raw", "linkpath", "expected"),
    [
        # The display text stays; without one, the old target becomes it (what the reader sees).
        ("[[Go notes|my go]]", "Golang", "[[Golang|my go]]"),
        ("[[Go notes]]", "Golang", "[[Golang|Go notes]]"),
        ("[[Go notes#Intro]]", "Golang", "[[Golang#Intro|Go notes#Intro]]"),
        ("[[Go notes#Intro|x]]", "Golang", "[[Golang#Intro|x]]"),
        # The embed `!` and a table's `\|`.
        ("![[old.png]]", "img/old.png", "![[img/old.png]]"),  # an embed shows no link text
        ("![[old.png|100]]", "img/old.png", "![[img/old.png|100]]"),
        ("[[Go notes\\|tabled]]", "Golang", "[[Golang\\|tabled]]"),
        # Markdown links: the text, the title, angle brackets, the percent-encoding.
        ("[my go](Go%20notes.md)", "Golang notes.md", "[my go](Golang%20notes.md)"),
        ("[my go](<Go notes.md>)", "Golang notes.md", "[my go](<Golang notes.md>)"),
        ('[t](a.md "A title")', "b c.md", '[t](b%20c.md "A title")'),
        ("![alt](pic.png)", "img/pic 1.png", "![alt](img/pic%201.png)"),
        ("[t](a.md#Some%20Heading)", "b.md", "[t](b.md#Some%20Heading)"),
    ],
)
def test_a_new_linkpath_keeps_everything_else(raw: str, linkpath: str, expected: str) -> None:
    assert relinked(raw, linkpath=linkpath) == expected


@pytest.mark.parametrize(
    ("raw", "subpath", "expected"),
    [
        ("[[Guide#Instal]]", "#Install", "[[Guide#Install]]"),
        ("[[Guide#Instal|how]]", "#Install", "[[Guide#Install|how]]"),
        ("![[Guide#^sumary]]", "#^summary", "![[Guide#^summary]]"),
        ("[[Guide#A#Instal\\|t]]", "#Install", "[[Guide#Install\\|t]]"),
        ("[t](Guide.md#Instal)", "#Install guide", "[t](Guide.md#Install%20guide)"),
        ("[t](<Guide.md#Instal>)", "#Install guide", "[t](<Guide.md#Install guide>)"),
    ],
)
def test_a_new_anchor_changes_only_the_anchor(raw: str, subpath: str, expected: str) -> None:
    assert relinked(raw, subpath=subpath) == expected


def test_in_a_table_an_added_display_text_is_escaped() -> None:
    assert relinked("[[Go notes]]", linkpath="Golang", in_table=True) == "[[Golang\\|Go notes]]"


def test_what_is_no_link_is_not_read() -> None:
    assert read_link("plain text") is None
    assert read_link("[[a]] and [[b]]") is not None  # only whole links are handed over
    assert read_link("[t](a b.md)") is None


@pytest.mark.parametrize(
    ("written", "target", "source", "shortest", "expected"),
    [
        ("Old", "Areas/Golang.md", "Src.md", "Golang", "Golang"),
        ("Old.md", "Areas/Golang.md", "Src.md", "Golang", "Golang.md"),
        ("x/Old", "Areas/Golang.md", "Src.md", "Golang", "Areas/Golang"),
        ("x/Old.md", "Areas/Golang.md", "Src.md", "Golang", "Areas/Golang.md"),
        ("/x/Old.md", "Areas/Golang.md", "Src.md", "Golang", "/Areas/Golang.md"),
        ("../Old.md", "Areas/Golang.md", "Notes/Src.md", "Golang", "../Areas/Golang.md"),
        ("./Old.md", "Notes/Sub/Go.md", "Notes/Src.md", "Go", "./Sub/Go.md"),
        ("./Old.md", "Go.md", "Notes/Src.md", "Go", "../Go.md"),
        ("old.png", "img/pic.png", "Src.md", "pic.png", "pic.png"),
        ("a/old.png", "img/pic.png", "Src.md", "pic.png", "img/pic.png"),
    ],
)
def test_the_path_keeps_its_style(
    written: str, target: str, source: str, shortest: str, expected: str
) -> None:
    assert path_in_style(written, target, source, shortest) == expected


@pytest.mark.parametrize(
    "raw",
    ["[[A|b]]", "![[A#H|b]]", "[t](<a b.md#c d>)", "[t](a%20b.md#c)", "[[A\\|b]]", "[x](y.md 'z')"],
)
def test_rewriting_with_the_same_parts_gives_the_same_text(raw: str) -> None:
    link = read_link(raw)
    assert link is not None
    linkpath = percent_decoded(link.linkpath) if link.markdown else link.linkpath
    subpath = percent_decoded(link.subpath) if link.markdown else link.subpath
    assert rewrite(link, linkpath=linkpath, subpath=subpath or None) == raw


def test_the_parser_reads_a_rewritten_link_as_meant() -> None:
    new = relinked("[my go](<Go notes.md#Old heading>)", linkpath="Areas/Go lang.md")
    new = relinked(new, subpath="#New heading")
    ((_, _, kind, linkpath, subpath, display),) = find_links(new, new, frozenset(), [])
    assert (kind, linkpath, subpath, display) == (
        "markdown",
        "Areas/Go lang.md",
        "#New heading",
        "my go",
    )
