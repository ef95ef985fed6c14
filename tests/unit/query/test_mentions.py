"""`query.mentions`' fast patterns against their plain forms, on adversarial text (SEMANTICS 12).

The patterns start with a literal so the regex engine can skip ahead (ARCHITECTURE, the
mentions budget); these properties hold them to the obvious spellings the rules were first
written in, and the whole blanking to a reference built from those spellings.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from notedex.query import mentions as m
from notedex.vault.markdown.inline import mask_excluded
from notedex.vault.markdown.links import find_links

SETTINGS = settings(max_examples=400, deadline=None)

_PIECES = [
    *"[]()!#<>/|`$\\ \t\n-_.:'abAB9éß",
    *["[[", "]]", "](", "![", "<b>", "</b>", "<div>", "</div>", "#tag", "a#b", "日本", "İ"],
    *["Monitor", "monitor", "MONITOR", "Deploy", "deploy", " ", "  ", "\t", "```\n", "$$"],
]
texts = st.lists(st.sampled_from(_PIECES), max_size=120).map("".join)
names = st.sampled_from(
    [
        "Monitor Deploy",
        "monitor",
        "a",
        "İ",
        "ß",
        "日本",
        "日本 Monitor",
        "C++",
        "#tag",
        "(x)",
        "a-b",
    ]
)

_PLAIN_EXTERNAL_LINK = re.compile(r"!?\[[^\]\n]*\]\([^)\n]*\)")
_PLAIN_TAG = re.compile(r"(?<!\S)#[^\s#]+")


def plain_phrase(name: str) -> re.Pattern[str]:
    body = r"[ \t]+".join(re.escape(word) for word in name.split())
    head = "" if m.is_cjk_char(name[0]) else r"(?<!\w)"
    tail = "" if m.is_cjk_char(name[-1]) else r"(?!\w)"
    return re.compile(head + body + tail, re.IGNORECASE)


def plain_unlinked_text(body: str) -> str:
    masked, rows = mask_excluded(body)
    spans = [(start, end) for start, end, *_ in find_links(body, masked, rows, [])]
    spans += [x.span() for x in _PLAIN_EXTERNAL_LINK.finditer(masked)]
    spans += [x.span() for x in m._HTML_TAG.finditer(masked)]
    spans += [x.span() for x in _PLAIN_TAG.finditer(masked)]
    out = list(masked)
    for start, end in spans:
        for i in range(start, end):
            if out[i] != "\n":
                out[i] = " "
    return "".join(out)


@SETTINGS
@given(texts)
def test_external_link_spans_are_the_plain_patterns(text: str) -> None:
    fast = [m._with_bang(text, x.start(), x.end()) for x in m._EXTERNAL_LINK.finditer(text)]
    assert fast == [x.span() for x in _PLAIN_EXTERNAL_LINK.finditer(text)]


@SETTINGS
@given(texts)
def test_tag_spans_are_the_plain_pattern(text: str) -> None:
    assert [x.span() for x in m._TAG.finditer(text)] == [
        x.span() for x in _PLAIN_TAG.finditer(text)
    ]


@SETTINGS
@given(names, texts)
def test_the_phrase_matches_where_the_plain_phrase_does(name: str, text: str) -> None:
    assert [x.span() for x in m._phrase(name).finditer(text)] == [
        x.span() for x in plain_phrase(name).finditer(text)
    ]


@SETTINGS
@given(texts)
def test_unlinked_text_is_the_reference_blanking(text: str) -> None:
    assert m._unlinked_text(text) == plain_unlinked_text(text)


def test_the_fast_forms_can_fail() -> None:
    """The reference really differs from a wrong pattern: the properties above can fail."""
    text = "x ![a](b) #t"
    assert m._with_bang(text, 3, 9) == (2, 9)
    assert plain_unlinked_text(text) == "x" + " " * 11
    assert [x.span() for x in m._EXTERNAL_LINK.finditer(text)] != [
        x.span() for x in _PLAIN_EXTERNAL_LINK.finditer(text)
    ]  # without _with_bang the image would lose its `!`
    assert [x.span() for x in m._phrase("a").finditer("ba a")] == [(3, 4)]
