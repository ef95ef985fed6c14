"""SEMANTICS 10.1, 10.2: headings (ATX and setext) and block ids, with true lines and columns."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notedex.vault.markdown.scan import scan_body
from notedex.vault.model import BlockId, Heading
from notedex.vault.parse import parse_note


def headings(body: str) -> list[tuple[int, str]]:
    return [(h.level, h.text) for h in scan_body(body).headings]


def block_ids(body: str) -> list[str]:
    return [b.id for b in scan_body(body).block_ids]


def test_atx_levels_text_and_closing_hashes() -> None:
    body = "# One\n## Two ##\n###### Six\n####### seven\n#nospace\n   ### Indented\n#\n"
    assert headings(body) == [(1, "One"), (2, "Two"), (6, "Six"), (3, "Indented"), (1, "")]


def test_heading_text_keeps_inline_markup() -> None:
    assert headings("### `hasTag()`\n## **Bold** [[Link]]\n") == [
        (3, "`hasTag()`"),
        (2, "**Bold** [[Link]]"),
    ]


def test_setext_levels() -> None:
    assert headings("Title\n=====\n\nSub\n---\n") == [(1, "Title"), (2, "Sub")]


@pytest.mark.parametrize(
    "body",
    [
        "\n---\n",  # no paragraph line above: a rule
        "- item\n---\n",  # a list item above
        "> quote\n---\n",
        "| a |\n---\n",
        "---\n---\n",  # a rule over a rule
        "    code\n---\n",  # indented code above
    ],
)
def test_setext_needs_a_paragraph_line_above(body: str) -> None:
    assert headings(body) == []


def test_headings_in_code_math_and_html_are_ignored() -> None:
    body = "```\n# fenced\n```\n    # indented\n$$\n# math\n$$\n<div>\n# html\n</div>\n\n# Real\n"
    assert headings(body) == [(1, "Real")]


def test_lines_and_columns_are_file_positions() -> None:
    note = parse_note(b"---\ntitle: T\n---\n# A\n  ## B\nSet\n===\n", "n.md")
    assert note.headings == (
        Heading(1, "A", 4, 1),
        Heading(2, "B", 5, 3),
        Heading(1, "Set", 6, 1),
    )


def test_first_h1_is_the_first_level_one_heading() -> None:
    assert scan_body("## Two\n\nSet\n===\n# Atx\n").first_h1 == "Set"
    assert scan_body("#\n# Real\n").first_h1 == "Real"  # an empty heading is no title


def test_block_ids_at_line_end_after_an_embed_or_alone() -> None:
    body = "Para ^blk1\n![[img.png]]^caption\n> quote\n\n^alone-2\nx^glued\n[^1]\n"
    assert block_ids(body) == ["blk1", "caption", "alone-2"]


def test_block_id_positions_and_spelling() -> None:
    note = parse_note(b"---\na: 1\n---\nText ^MixedCase\n", "n.md")
    assert note.block_ids == (BlockId("MixedCase", 4, 6),)


def test_block_ids_in_code_are_ignored() -> None:
    assert block_ids("```\ntext ^incode\n```\n`x ^span`\n") == []


def test_block_id_characters() -> None:
    assert block_ids("a ^ok_no\nb ^é\nc ^a-1\n") == ["a-1"]


_TOKENS = [*"#=- \n\t^`>|abcXY19", "```", "    ", "$$", "]]", "[["]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_TOKENS), max_size=120).map("".join))
def test_positions_point_at_the_heading_and_block(body: str) -> None:
    scan = scan_body(body, first_line=1)
    lines = body.split("\n")
    for heading in scan.headings:
        line = lines[heading.line - 1]
        assert line[: heading.column - 1].strip(" ") == ""
        assert 1 <= heading.level <= 6
        assert heading.text in line or heading.level <= 2  # setext text is the line above
        if heading.text:
            assert heading.text in "\n".join(lines[heading.line - 1 : heading.line + 1])
    for block in scan.block_ids:
        line = lines[block.line - 1]
        assert line[block.column - 1 :].rstrip(" \t\r") == "^" + block.id


def test_a_block_id_followed_by_math_or_code_does_not_end_its_line() -> None:
    """SEMANTICS 10.2: masked math after `^id` is still text on the line (found by the property
    test above: `^-$$$$`)."""
    assert scan_body("^-$$$$").block_ids == ()
    assert scan_body("x ^id `code`\n").block_ids == ()
    assert [b.id for b in scan_body("x ^id\t\r\ny").block_ids] == ["id"]


@settings(max_examples=500, deadline=None)
@given(st.text(st.sampled_from(list("=-# \t\r\na>")), max_size=40))
def test_setext_underlines_found_from_their_newline_are_the_line_start_ones(text: str) -> None:
    """``_SETEXT_AFTER_NEWLINE`` (a literal first: fast) finds the underlines that
    ``_SETEXT_UNDERLINE`` (``^``: tried at every position) finds, less one on line 1."""
    from notedex.vault.markdown.headings import _SETEXT_AFTER_NEWLINE, _SETEXT_UNDERLINE

    fast = [(m.start() + 1, m.group()[1:]) for m in _SETEXT_AFTER_NEWLINE.finditer(text)]
    slow = [(m.start(), m.group()) for m in _SETEXT_UNDERLINE.finditer(text) if m.start()]
    assert fast == slow
