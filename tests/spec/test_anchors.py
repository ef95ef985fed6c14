"""SEMANTICS 10: heading and block anchors, one named test per rule, checked on the exact
``health --json`` answers (in-process CLI, real vault and index)."""

from __future__ import annotations

from typing import Any

from tests.helpers import SpecVault


def anchors(v: SpecVault) -> list[tuple[str, int, str, str, str]]:
    """(source, line, text, target, kind) of each broken anchor, in report order."""
    return [
        (a["source"], a["line"], a["text"], a["target"], a["kind"])
        for a in v.health()["brokenAnchors"]
    ]


def broken_subpaths(v: SpecVault) -> list[str]:
    return [a["subpath"] for a in v.health()["brokenAnchors"]]


def test_10_1_atx_and_setext_headings_are_anchors(v: SpecVault) -> None:
    v.write("T.md", "# Atx ##\nSetext one\n==========\nSetext two\n---\n")
    v.write("S.md", "[[T#Atx]] [[T#Setext one]] [[T#Setext two]] [[T#Nope]]\n")
    assert broken_subpaths(v) == ["#Nope"]


def test_10_1_headings_in_code_math_html_and_frontmatter_are_not_anchors(v: SpecVault) -> None:
    v.write(
        "T.md",
        "---\nx: |\n  # Fm\n---\n```\n# Fenced\n```\n    # Indented\n$$\n# Math\n$$\n"
        "<div>\n# Html\n</div>\n",
    )
    v.write("S.md", "[[T#Fm]] [[T#Fenced]] [[T#Indented]] [[T#Math]] [[T#Html]]\n")
    assert broken_subpaths(v) == ["#Fm", "#Fenced", "#Indented", "#Math", "#Html"]


def test_10_2_block_ids_after_whitespace_after_an_embed_or_alone(v: SpecVault) -> None:
    v.write("T.md", "Para ^para\n![[img.png]]^caption\n\n> quote\n\n^alone\nglued^no\n")
    v.write_bytes("img.png", b"x")
    v.write("S.md", "[[T#^para]] [[T#^CAPTION]] ![[T#^alone]] [[T#^no]]\n")
    assert broken_subpaths(v) == ["#^no"]
    assert [a["kind"] for a in v.health()["brokenAnchors"]] == ["block"]


def test_10_3_markdown_fragments_are_url_decoded(v: SpecVault) -> None:
    v.write("T.md", "## Some Heading\n")
    v.write("S.md", "[a](T.md#Some%20Heading) [b](T.md#Some%20Other) [c](<T.md#Some Heading>)\n")
    found = v.health()["brokenAnchors"]
    assert [(a["text"], a["subpath"]) for a in found] == [("[b](T.md#Some%20Other)", "#Some Other")]


def test_10_3_self_anchors_check_the_source_note(v: SpecVault) -> None:
    v.write("S.md", "# Here\npara ^b\n[[#Here]] [[#^b]] [[#There]] [[#^c]]\n")
    assert anchors(v) == [
        ("S.md", 3, "[[#There]]", "S.md", "heading"),
        ("S.md", 3, "[[#^c]]", "S.md", "block"),
    ]


def test_10_3_frontmatter_links_and_embeds_are_checked(v: SpecVault) -> None:
    v.write("T.md", "# Real\n")
    v.write("S.md", '---\nup: "[[T#Gone]]"\n---\n![[T#Real]] ![[T#Missing]]\n')
    assert anchors(v) == [
        ("S.md", 2, "[[T#Gone]]", "T.md", "heading"),
        ("S.md", 4, "![[T#Missing]]", "T.md", "heading"),
    ]


def test_10_4_punctuation_and_case_folding(v: SpecVault) -> None:
    v.write("T.md", "### `hasTag()`\n## What's new? (v2.0)\n# ÉTÉ\n")
    v.write("S.md", "[[T#hasTag]] [[T#HASTAG()]] [[T#what's new v2 0]] [[T#été]] [[T#has-tag]]\n")
    assert broken_subpaths(v) == ["#has-tag"]


def test_10_5_nested_headings(v: SpecVault) -> None:
    v.write("T.md", "# A\n## B\n### C\n## D\n# E\n## B\n")
    v.write(
        "S.md",
        "[[T#A#B#C]] [[T#A#C]] [[T#E#B]] [[T#B#C]] [[T#D#C]] [[T#E#C]] [[T#C#A]] [[T#A#E]]\n",
    )
    assert broken_subpaths(v) == ["#D#C", "#E#C", "#C#A", "#A#E"]


def test_10_6_subpaths_on_attachments_are_never_checked(v: SpecVault) -> None:
    v.write_bytes("doc.pdf", b"%PDF")
    v.write_bytes("img.png", b"x")
    v.write("S.md", "![[doc.pdf#page=3]] ![[img.png#interface]] [p](doc.pdf#x) [[Missing#H]]\n")
    h = v.health()
    assert h["brokenAnchors"] == [] and h["brokenAnchorCount"] == 0
    assert [b["target"] for b in h["brokenLinks"]] == ["Missing"]  # a broken link, no anchor


def test_10_7_a_broken_anchor_is_not_a_broken_link(v: SpecVault) -> None:
    v.write("T.md", "# Real\n")
    v.write("S.md", "[[T#Gone]]\n")
    h = v.health()
    assert h["brokenLinks"] == [] and h["brokenLinkCount"] == 0
    assert h["brokenAnchorCount"] == 1
    assert h["orphanNotes"] == [] and [n["path"] for n in h["unlinkedNotes"]] == ["S.md"]
    assert [lk["target"] for lk in v.show("S.md")["links"]] == ["T.md"]
    assert [b["source"] for b in v.show("T.md")["backlinks"]] == ["S.md"]
    assert [(e["source"], e["target"]) for e in v.graph()["edges"]] == [("S.md", "T.md")]


def test_broken_anchor_shape_and_suggestions(v: SpecVault) -> None:
    v.write("T.md", "# Installation\n## Linux\nLast ^summary-1\n")
    v.write(
        "S.md",
        "[[T#Install]]\n[[T#Setup for Linux]]\n[[T#Instalation guide]]\n[[T#^sumary-1]]\n[[T#Zebra]]\n",
    )
    found: list[dict[str, Any]] = v.health()["brokenAnchors"]
    assert found[0] == {
        "source": "S.md",
        "line": 1,
        "column": 1,
        "text": "[[T#Install]]",
        "target": "T.md",
        "subpath": "#Install",
        "kind": "heading",
        "suggestion": "#Installation",
        "reason": "prefix",
        "confidence": 0.79,  # SEMANTICS 8.10: 0.5 + 0.5 * 7/12 (issue 33)
    }
    assert [(a["suggestion"], a["reason"], a["confidence"]) for a in found] == [
        ("#Installation", "prefix", 0.79),
        (None, None, None),  # one shared word of three: below the threshold (SEMANTICS 10.8)
        ("#Installation", "typo", 0.76),
        ("#^summary-1", "typo", 0.94),
        (None, None, None),
    ]


def test_anchor_findings_follow_edits_of_the_target(v: SpecVault) -> None:
    v.write("T.md", "# Old heading name\n")
    v.write("S.md", "[[T#Old heading name]]\n")
    assert broken_subpaths(v) == []
    v.write("T.md", "# New heading name\n")
    assert broken_subpaths(v) == ["#Old heading name"]
    assert v.health()["brokenAnchors"][0]["suggestion"] == "#New heading name"
    v.write("S.md", "[[T#New heading name]]\n")
    assert broken_subpaths(v) == []
