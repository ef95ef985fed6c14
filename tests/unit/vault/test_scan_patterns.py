"""The scanner's patterns that open with a literal (searched for it) find exactly what their
earlier forms found, which opened with a repeat, a lookbehind or ``^`` (tried at every
position): a cold index's parse time, not its rows (issue 12, docs/benchmarks.md)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from notedex.vault.markdown import blocks, headings, inline, tags

PIECES = [*"#>|`-=*_+:$~<!/ \t\n\r1.)aZ框[]^\\", "```", "    ", "|-|"]
MARKDOWN = st.lists(st.sampled_from(PIECES), max_size=60).map("".join)

OLD_ATX_MARK = re.compile(r"#{1,6}(?=[ \t]|\r?$)", re.MULTILINE)
OLD_TAG_AFTER_MARK = re.compile(r"(?<=[>|])#(" + tags._TAG_BODY + ")")
OLD_BACKTICK_RUN = re.compile(r"`+")
OLD_BLOCK_HINT = re.compile(r"^" + blocks._BLOCK_HINT_LINE, re.MULTILINE)


def found(
    pattern: re.Pattern[str], text: str
) -> list[tuple[tuple[int, int], tuple[str | None, ...]]]:
    return [(match.span(), match.groups()) for match in pattern.finditer(text)]


@settings(max_examples=3000, deadline=None)
@given(MARKDOWN)
def test_the_literal_first_patterns_find_what_the_old_ones_found(text: str) -> None:
    assert found(headings._ATX_MARK, text) == found(OLD_ATX_MARK, text)
    assert found(tags._TAG_AFTER_MARK, text) == found(OLD_TAG_AFTER_MARK, text)
    assert found(inline._BACKTICK_RUN, text) == found(OLD_BACKTICK_RUN, text)
    assert blocks.may_hold_blocks(text) == (OLD_BLOCK_HINT.search(text) is not None)


def test_the_patterns_on_examples() -> None:
    assert [m.span() for m in headings._ATX_MARK.finditer("####### x\n## y\n#z")] == [
        (1, 7),
        (10, 12),
    ]
    assert [m.group(1) for m in tags._TAG_AFTER_MARK.finditer(">#a |#b #c")] == ["a", "b"]
    assert [m.span() for m in inline._BACKTICK_RUN.finditer("a ``` b `")] == [(2, 5), (8, 9)]
    for text, expected in (
        ("```\ncode\n```", True),
        ("text\n    indented", True),
        ("a\n| b |", True),
        ("plain\nprose\n", False),
        ("", False),
        ("> quote\n- item", False),
    ):
        assert blocks.may_hold_blocks(text) is expected, text
