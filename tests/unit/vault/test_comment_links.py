"""Issue 33: a link inside a ``%%comment%%`` or an inline ``<!-- HTML comment -->`` is a link
(SEMANTICS 6.9) with ``in_comment`` set; code hides the comment marks, and an HTML comment that
starts a block holds no link at all (SEMANTICS 6.7)."""

from __future__ import annotations

from tests.helpers import parse_text


def flags(text: str) -> list[tuple[str, bool]]:
    return [(link.linkpath, link.in_comment) for link in parse_text(text).links]


def test_percent_comments_inline_and_over_lines() -> None:
    assert flags("[[a]] %% [[b]] %% [[c]]\n%%\n[[d]]\n%%\n[[e]]\n") == [
        ("a", False),
        ("b", True),
        ("c", False),
        ("d", True),
        ("e", False),
    ]


def test_an_unclosed_percent_comment_runs_to_the_end() -> None:
    assert flags("[[a]]\n%% start\n[[b]]\n\n[[c]]\n") == [("a", False), ("b", True), ("c", True)]


def test_inline_html_comments() -> None:
    assert flags("x <!-- [[a]] --> [[b]] <!-- [[c]]\nmore -->\n") == [
        ("a", True),
        ("b", False),
        ("c", True),
    ]


def test_an_html_comment_block_holds_no_link() -> None:
    assert flags("<!--\n[[a]]\n-->\n\n[[b]]\n") == [("b", False)]


def test_comment_marks_in_code_open_nothing() -> None:
    assert flags("`%%` [[a]] `<!--` [[b]]\n") == [("a", False), ("b", False)]


def test_markdown_links_and_embeds_are_flagged_too() -> None:
    assert flags("%% ![[pic.png]] [t](Note.md) %%\n") == [("pic.png", True), ("Note.md", True)]


def test_frontmatter_links_are_never_in_a_comment() -> None:
    assert flags("---\nup: '[[Hub]]'\n---\n%% [[a]] %%\n") == [("Hub", False), ("a", True)]
