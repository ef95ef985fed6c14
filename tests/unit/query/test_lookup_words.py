"""``query.lookup_stage1._core`` and ``_same_word``, ``vault.text.alnum_runs`` and ``is_cjk``
(issue 30's speed budget): the same answers as their first forms, with the work on ASCII
words done in C (one ``endswith`` of a tuple instead of eight; no per-character loop)."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from notedex.query.lookup_stage1 import _ENDINGS, _core, _same_word
from notedex.vault.text import alnum_runs, is_cjk


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


def c_calls(call: Callable[[], Any], name: str = "endswith") -> int:
    """The calls of the C function ``name`` (``str.endswith``...) that ``call`` makes."""
    seen: list[str] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "c_call":
            seen.append(arg.__name__)

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return seen.count(name)


def test_a_word_with_no_ending_is_one_test() -> None:
    assert c_calls(lambda: _core("python")) == 1  # eight before: one per ending
    assert c_calls(lambda: _same_word("map", "python")) == 2
    assert _core("linked") == "link" and _core("policies") == "polic"


def alnum_runs_first_form(text: str) -> list[str]:
    runs: list[str] = []
    current: list[str] = []
    for ch in text:
        if ch.isalnum():
            current.append(ch)
        elif current:
            runs.append("".join(current))
            current = []
    if current:
        runs.append("".join(current))
    return runs


@given(st.text(st.characters(max_codepoint=0x7F)) | st.text(max_size=20))
def test_alnum_runs_as_before(text: str) -> None:
    assert alnum_runs(text) == alnum_runs_first_form(text)
    if text.isascii():
        assert alnum_runs(text) == re.findall(r"[^\W_]+", text)
        assert not is_cjk(text)


def test_an_ascii_name_is_cut_without_a_loop() -> None:
    name = "Projects/Python Garden (2024) - notes_v2"
    assert c_calls(lambda: alnum_runs(name), "isalnum") == 0  # one a character before
    assert c_calls(lambda: alnum_runs("Café notes"), "isalnum") == len("Café notes")
    assert alnum_runs(name) == ["Projects", "Python", "Garden", "2024", "notes", "v2"]
