"""vault.text on the index side (issue 35, build35c): a parse worker keys every name of the
vault (``name_keys``), with ``split_words`` in C once the index side's patterns are compiled
and each word's key reused across a name's variants and across names. The words and keys
are the ones of the query side's ``str``-method forms, on any text."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notedex.vault import text as text_module
from notedex.vault.text import PARTICLES, exact_name_key, load_words, name_keys, split_words
from tests.helpers import calls_to

STOP, HUBS = frozenset(load_words("stopwords-en")), frozenset(load_words("hubwords-en"))

# Words, stop words, hub words and particles, CJK and joiners, and characters that NFKC or
# case folding change (a ligature, fullwidth forms, ™, an Arabic ligature NFKC spells with
# spaces, ß, a combining mark), so that variants and folds are all common.
NAME = st.lists(
    st.one_of(
        st.sampled_from(
            (
                "the a of Up in back set log MOC Plugins Index Vaults notes gen-itgc v1.2 c++ "
                "_x_ 整理笔记 工作 重跑gen-itgc后 ｱｲ ﬁle Ｗｉｋｉ ™ ﷺ Straße e\u0301 가나 𠀀 ½ — & / # "
                "'s x- -y"
            ).split()
        ),
        st.text(max_size=6),
    ),
    max_size=8,
).map(lambda words: " ".join(words))


@pytest.fixture
def str_forms() -> Iterator[None]:
    """The query side's forms: the index side's patterns not compiled."""
    saved = text_module._WORD_RUN
    text_module._WORD_RUN = None
    try:
        yield
    finally:
        text_module._WORD_RUN = saved


def reference_name_keys(name: str) -> list[str]:
    """``name_keys`` as it was before issue 35's build35c: every variant keyed whole."""
    keys = [exact_name_key(name)]
    words = split_words(name)
    joined: list[str] = []
    for word in words:
        last = joined[-1] if joined else ""
        if (
            last
            and word.lower() in PARTICLES
            and (last + word).isascii()
            and (last + word).isalpha()
        ):
            joined[-1] = last + word
        else:
            joined.append(word)
    for variant in (words, joined) if joined != words else (words,):
        seen: set[str] = set()
        kept = []
        for index, word in enumerate(variant):
            low = word.lower()
            if (index == len(variant) - 1 or low not in STOP) and low not in seen:
                seen.add(low)
                kept.append(word)
        content = [word for word in kept if word.lower() not in HUBS] or kept
        keys += [exact_name_key(" ".join(kept)), exact_name_key(" ".join(content))]
    return [key for key in dict.fromkeys(keys) if key]


@settings(max_examples=2000, deadline=None)
@given(st.one_of(NAME, st.text(max_size=40)))
def test_split_words_index_side_equals_the_str_form(text: str) -> None:
    name_keys("x", STOP, HUBS, PARTICLES)  # compiles the index side's patterns
    assert text_module._WORD_RUN is not None
    index_side = split_words(text)
    saved, text_module._WORD_RUN = text_module._WORD_RUN, None
    try:
        assert index_side == split_words(text)
    finally:
        text_module._WORD_RUN = saved


@settings(max_examples=2000, deadline=None)
@given(st.one_of(NAME, st.text(max_size=40)))
def test_name_keys_equal_every_variant_keyed_whole(name: str) -> None:
    text_module._WORD_KEYS.clear()
    first = name_keys(name, STOP, HUBS, PARTICLES)
    assert first == reference_name_keys(name)
    assert name_keys(name, STOP, HUBS, PARTICLES) == first  # the word keys held, the same


def test_the_index_side_splits_words_in_c(monkeypatch: pytest.MonkeyPatch) -> None:
    """Once ``name_keys`` has run, ``split_words`` looks at no character in Python."""
    name_keys("x", STOP, HUBS, PARTICLES)

    def refused(*_args: object) -> None:
        raise AssertionError("a character scanned in Python")

    monkeypatch.setattr(text_module, "word_runs", refused)
    monkeypatch.setattr(text_module, "is_cjk_char", refused)
    assert split_words("重跑gen-itgc后 the Vaults_ 整理 ﬁle") == [
        "重跑",
        "gen-itgc",
        "后",
        "the",
        "Vaults",
        "整理",
        "ﬁle",
    ]


def test_a_word_is_keyed_once_across_names(monkeypatch: pytest.MonkeyPatch) -> None:
    """Names that share their words key each word once: 200 names of 5 words from 12, less
    their stop and hub words, cost their 200 whole keys and the 12 words' keys (each name's
    variants keyed whole cost up to 600)."""
    words = ["alpha", "beta", "gamma", "delta", "the", "of", "MOC", "index"]
    words += ["kappa", "lambda", "sigma", "omega"]
    names = [" ".join(words[(i * k) % len(words)] for k in (1, 3, 5, 7, 11)) for i in range(200)]
    text_module._WORD_KEYS.clear()
    calls = calls_to(monkeypatch, text_module, "exact_name_key")
    for name in names:
        name_keys(name, STOP, HUBS, PARTICLES)
    assert len(calls) <= len(names) + len(words)


def test_split_words_str_form_examples(str_forms: None) -> None:
    assert split_words("重跑gen-itgc后 _a_ ﬁle") == ["重跑", "gen-itgc", "后", "a", "ﬁle"]
