"""``query.lookup_stage1._core`` and ``_same_word`` (issue 30's speed budget): the same answers
as their first form, with one C test for a word with no ending instead of eight."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from notedex.query.lookup_stage1 import _ENDINGS, _core, _same_word


def core_first_form(word: str) -> str:
    for ending in _ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            return word[: -len(ending)]
    return word


def same_word_first_form(typed: str, word: str) -> bool:
    short, long = sorted((core_first_form(typed), core_first_form(word)), key=len)
    return long.startswith(short)


WORDS = st.text(st.sampled_from("aeilnsdy"), max_size=9)


@given(WORDS, WORDS)
def test_the_same_answers_as_the_first_form(typed: str, word: str) -> None:
    assert _core(word) == core_first_form(word)
    assert _same_word(typed, word) == same_word_first_form(typed, word)


def c_calls(call: Callable[[], Any]) -> int:
    """The calls into C functions (``str.endswith``...) that ``call`` makes."""
    seen: list[str] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "c_call":
            seen.append(arg.__name__)

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return seen.count("endswith")


def test_a_word_with_no_ending_is_one_test() -> None:
    assert c_calls(lambda: _core("python")) == 1  # eight before: one per ending
    assert c_calls(lambda: _same_word("map", "python")) == 2
    assert _core("linked") == "link" and _core("policies") == "polic"
