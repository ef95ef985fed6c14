"""SEMANTICS 6: which text is a link, its kind, and its position.

All in-process: the CLI through ``notedex.cli.main`` (`run_inprocess`) on a real vault under
``tmp_path`` with a real index, checked on its exact ``--json`` answers; rules about parsing
alone go through the pure parser.
"""

from __future__ import annotations

import pytest

from tests.helpers import (
    SpecVault,
    broken,
    link_rows,
    parse_text,
    tag_names,
)


def test_frontmatter_links(v: SpecVault) -> None:
    v.write("Note.md", "")
    v.write("Gamma.md", "")
    v.write(
        "F.md",
        "---\nlink: \"[[Note]]\"\nrelated: ['[[Gamma|g]]', '[[Missing]]']\n"
        "deep: {a: {b: ['[[Note#H]]']}}\nx: \"see [[Note]]\"\ny: [[Note]]\n"
        "cover: '![[Note]]'\n---\nbody\n",
    )
    links = v.show("F.md")["links"]
    assert [(lk["target"] if not lk["broken"] else "BROKEN:" + lk["key"]) for lk in links] == [
        "Note.md",
        "Gamma.md",
        "BROKEN:Missing",
        "Note.md",
    ]
    assert {lk["kind"] for lk in links} == {"frontmatter"}


def test_odd_wikilink_forms(v: SpecVault) -> None:
    v.write("Note.md", "# Note\n^block\n")
    v.write(
        "W.md",
        "[[Note|]]\n[[Note#]]\n![[Note#^block]]\n[[a [[Note]]\n[[Missing.md]]\n"
        "[[Folder/Missing#h|d]]\n[[Foo]] [[foo]]\n",
    )
    assert v.targets("W.md") == [
        "Note.md",
        "Note.md",
        "Note.md",
        "Note.md",
        "BROKEN:Missing",
        "BROKEN:Folder/Missing",
        "BROKEN:Foo",
        "BROKEN:foo",
    ]
    nodes = {n["id"] for n in v.graph()["nodes"] if n["kind"] == "unresolved"}
    assert nodes == {"Missing", "Folder/Missing", "Foo", "foo"}


def test_markdown_link_forms(v: SpecVault) -> None:
    v.write("A/Start.md", "")
    v.write("A/B/Dup.md", "")
    v.write("C/Dup.md", "")
    v.write("My Note.md", "")
    v.write("Note.md", "")
    v.write_bytes("img/pic.png", b"\x89PNG")
    v.write(
        "A/B/M.md",
        "[up](../Start.md)\n[here](./Dup.md)\n[sp](../../My%20Note.md)\n[angle](<../../My Note.md>)\n"
        "[root](/Note.md)\n[noext](../../Note)\n[frag](../../Note.md#Heading)\n![img](pic.png)\n"
        "[bare](Note.md)\n[enc](%4Eote.md)\n",
    )
    assert v.targets("A/B/M.md") == [
        "A/Start.md",
        "A/B/Dup.md",
        "My Note.md",
        "My Note.md",
        "Note.md",
        "Note.md",
        "Note.md",
        "img/pic.png",
        "Note.md",
        "Note.md",
    ]


def test_link_positions_are_one_based_file_lines_and_character_columns(v: SpecVault) -> None:
    v.write("P.md", "---\ntitle: t\n---\n日本語 [[Gone]]\n\tx [t](Gone2.md)\n")
    h = v.health()
    assert broken(h) == [
        ("P.md", 4, 5, "[[Gone]]", "Gone"),
        ("P.md", 5, 4, "[t](Gone2.md)", "Gone2"),
    ]


def test_dollar_amounts_are_not_math(v: SpecVault) -> None:
    v.write("Note.md", "")
    v.write("M.md", "It costs $5 and [[Note]] costs $10.\n")
    assert v.targets("M.md") == ["Note.md"]


def test_unclosed_backtick_does_not_hide_a_link(v: SpecVault) -> None:
    v.write("Note.md", "")
    v.write("M.md", "a stray ` backtick then [[Note]] #tagged\n")
    assert v.targets("M.md") == ["Note.md"]
    assert v.note("M.md")["tags"] == ["tagged"]


def test_list_continuation_indented_four_spaces_is_not_code(v: SpecVault) -> None:
    v.write("Note.md", "")
    v.write("L.md", "- item\n\n    [[Note]] #cont\n")
    assert v.targets("L.md") == ["Note.md"]


def test_multiline_comment_links_are_indexed(v: SpecVault) -> None:
    v.write("Note.md", "")
    v.write("K.md", "%%\n[[Note]] #hidden\n%%\n")
    assert v.targets("K.md") == ["Note.md"]
    assert v.note("K.md")["tags"] == ["hidden"]


def test_html_block_ends_at_a_blank_line_and_html_comments_hide_links(v: SpecVault) -> None:
    v.write("Note.md", "")
    v.write("H.md", "<div>\n\n[[Note]] #after\n\n</div>\n<!-- [[Hidden]] #hid -->\n")
    assert v.targets("H.md") == ["Note.md"]
    assert v.note("H.md")["tags"] == ["after"]


def test_fence_closing_rules(v: SpecVault) -> None:
    v.write("Note.md", "")
    v.write(
        "F.md",
        "````\n```\n[[x1]]\n````\n~~~\n```\n[[x2]]\n~~~\n   ```\n[[x3]]\n   ```\n"
        "```\n[[x4]]\n```   \n[[Note]]\n",
    )
    assert v.targets("F.md") == ["Note.md"]


def test_unclosed_fence_hides_to_end_of_file(v: SpecVault) -> None:
    v.write("F.md", "[[Before]]\n```\n[[Inside]] #inside\n")
    assert v.targets("F.md") == ["BROKEN:Before"]
    assert v.note("F.md")["tags"] == []


def test_adjacent_links_and_embeds(v: SpecVault) -> None:
    v.write("A.md", "")
    v.write("B.md", "")
    v.write_bytes("pic.png", b"x")
    v.write("S.md", "[[A]][[B]]![[A]]![alt|100](pic.png)[b](B.md)\n")
    links = v.show("S.md")["links"]
    assert [(lk["kind"], lk["target"], lk["column"]) for lk in links] == [
        ("wikilink", "A.md", 1),
        ("wikilink", "B.md", 6),
        ("embed", "A.md", 11),
        ("markdown-embed", "pic.png", 17),
        ("markdown", "B.md", 36),
    ]


def test_nbsp_inside_a_name_and_padded_pipes(v: SpecVault) -> None:
    v.write("My Note.md", "")
    v.write("S.md", "[[My\u00a0Note]] [[ My Note |alias]] [[My Note#h| d ]]\n")
    assert v.targets("S.md") == ["My Note.md", "My Note.md", "My Note.md"]


def test_frontmatter_link_positions(v: SpecVault) -> None:
    v.write("F.md", '---\ntitle: x\nrel: "[[Missing]]"\n---\n')
    (b,) = v.health()["brokenLinks"]
    assert (b["source"], b["line"], b["target"], b["text"]) == ("F.md", 3, "Missing", "[[Missing]]")
    assert b["column"] >= 1


def test_emoji_columns_are_characters(v: SpecVault) -> None:
    v.write_bytes("E.md", "\ufeff[[Gone]]\n🎉 [[Gone]]\n".encode())
    assert [(b[1], b[2]) for b in broken(v.health())] == [(1, 1), (2, 3)]


def test_markdown_link_destinations(v: SpecVault) -> None:
    v.write("My Note.md", "")
    v.write("Note(1).md", "")
    v.write("Note.md", "")
    v.write(
        "S.md",
        "[a](My+Note.md)\n[b](Note(1).md)\n[c](Note%2Emd)\n[d](%)\n[e](obsidian://open?vault=x)\n"
        "![f](https://x/a.png)\n[g](<https://x y>)\n[h](Note.md#Heading%20One)\n",
    )
    assert v.targets("S.md") == ["BROKEN:My+Note", "Note(1).md", "Note.md", "Note.md"]


def test_more_wikilink_splits(v: SpecVault) -> None:
    v.write("Note.md", "# H\n")
    v.write("S.md", "[[Note|a|b]]\n[[Note\\|x]]\n| a |\n| - |\n| [[Note#H\\|x]] |\n[[img/pic]]\n")
    v.write_bytes("img/pic.png", b"x")
    assert v.targets("S.md") == ["Note.md", "Note.md", "Note.md", "BROKEN:img/pic"]


def test_links_in_common_markdown_constructs(v: SpecVault) -> None:
    v.write("Note.md", "")
    v.write(
        "S.md",
        "# [[Note]]\n- [ ] [[Note]] #todo\n- [x] done #done\nText[^1]\n\n[^1]: see [[Note]]\n"
        "$x$ [[Note]] $y$\nprice \\$5 [[Note]] \\$6\n",
    )
    assert v.targets("S.md") == ["Note.md"] * 5
    assert sorted(v.note("S.md")["tags"]) == ["done", "todo"]


def test_indented_code_inside_quotes_and_lists_hides_links(v: SpecVault) -> None:
    v.write("Q.md", "> quote\n>\n>     [[QC]] #qc\n")
    v.write("L.md", "- item\n\n      [[LC]] #lc\n")
    assert v.show("Q.md")["links"] == [] and v.note("Q.md")["tags"] == []
    assert v.show("L.md")["links"] == [] and v.note("L.md")["tags"] == []


def test_indented_lines_that_continue_a_paragraph_are_not_code(v: SpecVault) -> None:
    v.write("Note.md", "")
    v.write("Q.md", "> quote\n>     [[Note]] #cont\n\n  para [[Note]]\n")
    assert v.targets("Q.md") == ["Note.md", "Note.md"]
    assert v.note("Q.md")["tags"] == ["cont"]


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
    note = parse_text(text)
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
    note = parse_text(text)
    assert [link.linkpath for link in note.links] == ["x"]
    assert [tag.name for tag in note.tags] == ["t"]


def test_s6_markdown_link_text_may_wrap_within_its_paragraph() -> None:
    # SEMANTICS 6 asks "on one line" of wikilinks only; CommonMark link text may wrap.
    note = parse_text("see [the\nplan](Plan.md) and [not\n\na link](X.md)")
    assert [(link.linkpath, link.line, link.column) for link in note.links] == [("Plan.md", 1, 5)]


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
    links = parse_text(text).links
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
    for link in parse_text(text).links:
        assert "[[" not in link.raw[2:-2] and "]]" not in link.raw[2:-2], link
