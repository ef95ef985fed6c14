"""The quote normalisation and search (vault/quote.py): what a reader's quote matches, where."""

from __future__ import annotations

import difflib

import pytest

from notedex.vault import quote as quote_module
from notedex.vault.quote import (
    MAX_WINDOWS,
    closest_passage,
    find_quote,
    normalise,
    normalise_quote,
)


def located(source: str, quote: str) -> str | None:
    """The source text a quote matches, or None."""
    found = find_quote(normalise(source), normalise_quote(quote))
    return None if found is None else source[found.start : found.end]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("a  b\n\n c\t d", "a b c d"),
        (
            "**bold** and _em_ and `code` and ~~gone~~ and ==marked==",
            "bold and em and code and gone and marked",
        ),
        ("see [[Target|shown text]] here", "see shown text here"),
        ("see [[Target]] and ![[image.png]]", "see Target and image.png"),
        ("a [link](https://x.org/a_b) and ![alt](p.png)", "a link and alt"),
        ("“curly” ‘single’ „low‚", "\"curly\" 'single' \"low'"),
        ("中文\n換行 and 、\nnext", "中文換行and、next"),  # no space next to CJK
        ("e\u0301", "\u00e9"),
        ("  leading and trailing  \n", "leading and trailing"),
    ],
)
def test_normalise_reads_text_as_a_reader_quotes_it(source: str, expected: str) -> None:
    assert normalise_quote(source) == expected


def test_every_normalised_character_maps_back_to_its_source_character() -> None:
    source = "x **bold** [[T|shown]] [a](u) “q” 中文\n換行"
    body = normalise(source)
    for index, char in enumerate(body.text):
        mapped = source[body.source_start(index)]
        if char == " ":
            assert mapped.isspace(), index
        else:
            assert mapped.translate({0x201C: '"', 0x201D: '"'}) == char, index


def test_normalise_starts_at_the_body_offset() -> None:
    source = "---\ntitle: x\n---\nbody text"
    body = normalise(source, 17)
    assert body.text == "body text"
    assert body.source_start(0) == 17


@pytest.mark.parametrize(
    ("quote", "expected"),
    [
        ("across a line break", "across a\nline break"),
        ("through emphasis here", "through **emphasis** here"),
        ("the display text of a link", "the [[Some Note|display text]] of a link"),
        ('"straight" quotes', "“straight” quotes"),
        ("框架的命令", "框架的\n命令"),
        ("**through emphasis**", "through **emphasis"),
    ],
)
def test_a_reader_s_quote_is_found_with_its_source_span(quote: str, expected: str) -> None:
    source = (
        "Intro across a\nline break, then through **emphasis** here, "
        "the [[Some Note|display text]] of a link, “straight” quotes; 框架的\n命令。"
    )
    assert located(source, quote) == expected


def test_a_changed_word_is_not_found_and_its_closest_passage_is_reported() -> None:
    source = "First line.\nThe quick brown fox jumps over the lazy dog.\nLast line."
    body = normalise(source)
    wanted = normalise_quote("The quick brown cat jumps over the lazy dog")
    assert find_quote(body, wanted) is None
    closest = closest_passage(body, wanted)
    assert closest is not None
    assert source[closest.start : closest.end] == "The quick brown fox jumps over the lazy dog"
    assert 0.9 < closest.similarity < 1.0


def test_a_quote_with_nothing_in_common_has_no_closest_passage() -> None:
    assert closest_passage(normalise("alpha beta gamma"), normalise_quote("zzzz qqqq")) is None
    assert closest_passage(normalise(""), normalise_quote("anything")) is None


def test_an_empty_quote_is_never_found() -> None:
    assert find_quote(normalise("text"), "") is None


def test_closest_passage_on_a_five_megabyte_note_aligns_only_a_few_windows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    filler = "alpha beta gamma delta the of and note vault\n"
    target = "An unusual sentence about zebras crossing the Limpopo at dawn."
    half = filler * (2_500_000 // len(filler))
    source = half + target + "\n" + half
    assert len(source) > 5_000_000
    matchers: list[int] = []
    real = difflib.SequenceMatcher

    class Counting(real):  # type: ignore[misc,valid-type]
        def __init__(self, *args: object, **kwargs: object) -> None:
            matchers.append(1)
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(quote_module.difflib, "SequenceMatcher", Counting)
    body = normalise(source)
    wanted = normalise_quote("An unusual sentence about zebras crossing the Zambezi at dawn.")
    closest = closest_passage(body, wanted)
    assert closest is not None
    assert source[closest.start : closest.end].startswith("An unusual sentence about zebras")
    assert len(matchers) <= 2 * MAX_WINDOWS  # an aligner and a scorer per window, no more
