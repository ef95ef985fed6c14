"""vault.text: the one segmentation function the index and the queries share."""

from __future__ import annotations

import re
import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notedex.store.schema import TOKENIZER
from notedex.vault import text as text_module
from notedex.vault.text import (
    _cjk_run_pattern,
    alnum_runs,
    cjk_run_spans,
    fold,
    fold_width,
    fts_phrase,
    is_cjk,
    is_cjk_char,
    nfc,
    segment,
    split_words,
    word_runs,
)
from tests.helpers import modules_after


def test_segment_bigrams_plus_last_character() -> None:
    assert segment("框架") == "框架 架"
    assert segment("框") == "框"
    assert segment("Cobra CLI 框架") == "Cobra CLI 框架 架"
    assert segment("重跑gen-itgc后") == "重跑 跑 gen-itgc 后"
    assert segment("plain text") == "plain text"


def test_split_words_separates_scripts_and_full_width_punctuation() -> None:
    assert split_words("重跑gen-itgc后") == ["重跑", "gen-itgc", "后"]
    assert split_words("Cobra，框架；PARA。") == ["Cobra", "框架", "PARA"]
    assert split_words("v1.2 c++ don't") == ["v1.2", "c", "don't"]
    assert split_words('"AND" OR NEAR(x') == ["AND", "OR", "NEAR", "x"]
    assert split_words("日本語のテキスト 한국어") == ["日本語のテキスト", "한국어"]


def test_fts_phrase_never_passes_syntax_through() -> None:
    assert fts_phrase("框架") == '"框架"'
    assert fts_phrase("框架設計") == '"框架 架設 設計"'
    assert fts_phrase("框") == '"框" *'
    assert fts_phrase("gen-itgc") == '"gen itgc"'
    assert fts_phrase('a"b') == '("a" AND "b")'
    for hostile in ("*", "^", ":", "(", '"', ""):
        assert fts_phrase(hostile) is None


def test_cjk_classification() -> None:
    assert is_cjk_char("框") and is_cjk_char("の") and is_cjk_char("한") and is_cjk_char("𠀀")
    assert not is_cjk_char("a") and not is_cjk_char("，") and not is_cjk_char("é")
    assert is_cjk("Cobra 框架") and not is_cjk("Cobra")


def test_fold_is_nfc_then_lower() -> None:
    assert fold("E\u0301T\u00c9") == "\u00e9t\u00e9"


@pytest.fixture(scope="module")
def fts() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(body, tokenize = '{TOKENIZER}')")
    return conn


CJK = st.text(
    alphabet=st.sampled_from("框架設計重跑后量子糾纏演算法の日本語한국어"), min_size=1, max_size=12
)
MIXED = st.lists(
    st.one_of(CJK, st.sampled_from(["gen-itgc", "Cobra", "CLI", " ", "，", "v1.2"])), max_size=6
)


@settings(max_examples=300, deadline=None)
@given(parts=MIXED, data=st.data())
def test_every_cjk_substring_of_a_title_matches_it(
    fts: sqlite3.Connection, parts: list[str], data: st.DataObject
) -> None:
    """Index and query agree: any piece of a CJK run, of any length, finds the text it is in."""
    title = "".join(parts)
    runs = [w for w in split_words(title) if is_cjk(w)]
    if not runs:
        return
    run = data.draw(st.sampled_from(runs))
    start = data.draw(st.integers(0, len(run) - 1))
    end = data.draw(st.integers(start + 1, len(run)))
    expression = fts_phrase(run[start:end])
    assert expression is not None
    fts.execute("DELETE FROM t")
    fts.execute("INSERT INTO t(body) VALUES (?)", (segment(title),))
    assert fts.execute("SELECT count(*) FROM t WHERE t MATCH ?", (expression,)).fetchone()[0] == 1


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_any_text_gives_a_valid_expression_or_none(fts: sqlite3.Connection, text: str) -> None:
    expression = fts_phrase(text)
    if expression is not None:
        fts.execute("SELECT count(*) FROM t WHERE t MATCH ?", (expression,)).fetchone()
    segment(text)


# -- the re-free word scanners match the patterns they replace -------------------------------

WORD_PATTERN = re.compile(r"\w+(?:['+#./-]+\w+)*")
ALNUM_PATTERN = re.compile(r"[^\W_]+")
# Joiners, underscores, spaces and a spread of scripts, digits and symbols, so that runs,
# joins and dead ends (a joiner followed by nothing or by punctuation) are all common.
TEXT = st.text(
    alphabet=st.one_of(
        st.sampled_from("'+#./-_ \t,;:!?()[]{}\"aZ09é重跑ｱ٣²½ⅧＡ가_"),
        st.characters(),
    ),
    max_size=40,
)


@settings(max_examples=3000, deadline=None)
@given(TEXT)
def test_word_runs_equals_the_word_pattern(text: str) -> None:
    assert word_runs(text) == WORD_PATTERN.findall(text)


@settings(max_examples=3000, deadline=None)
@given(TEXT)
def test_alnum_runs_equals_the_alnum_pattern(text: str) -> None:
    assert alnum_runs(text) == ALNUM_PATTERN.findall(text)


def test_word_runs_examples() -> None:
    assert word_runs("重跑gen-itgc后 v1.2, c++ and x-- -y") == [
        "重跑gen-itgc后",
        "v1.2",
        "c",
        "and",
        "x",
        "y",
    ]
    assert word_runs("a__b 'quoted' e.g.") == ["a__b", "quoted", "e.g"]


# CJK next to whitespace of every kind (U+3000, NBSP, line ends), emoji and other code points
# past the first CJK one, astral Han (ext B), combining marks, Hangul jamo.
CJK_TEXT = st.text(
    alphabet=st.one_of(
        st.sampled_from(
            list(
                "框架的說明。ひらがなカタカナ가나다\u1100\u3000\u00a0 \n\t\r\x1cab1-é😀\u0301𠀀ｱ々"
            )
        ),
        st.characters(),
    ),
    max_size=60,
)


@settings(max_examples=3000, deadline=None)
@given(CJK_TEXT)
def test_cjk_run_spans_equals_the_segment_pattern(text: str) -> None:
    """The query side's re-free run finder and the index side's pattern agree on every text."""
    assert cjk_run_spans(text) == [m.span() for m in _cjk_run_pattern().finditer(text)]


def reference_segment(text: str) -> str:
    """``segment`` as it was written before its ``split`` form: run by run with ``finditer``,
    each run's bigrams sliced one by one."""
    text = nfc(text)
    pattern = _cjk_run_pattern()
    if pattern.search(text) is None:
        return text.strip()
    out: list[str] = []
    pos = 0
    for match in pattern.finditer(text):
        if match.start() > pos:
            out.append(text[pos : match.start()])
        run = match.group()
        grams = [run[i : i + 2] for i in range(len(run) - 1)] + [run[-1]] if len(run) > 1 else [run]
        out.append(" ".join(grams))
        pos = match.end()
    if pos < len(text):
        out.append(text[pos:])
    return " ".join(part.strip() for part in out if part.strip())


@settings(max_examples=3000, deadline=None)
@given(CJK_TEXT)
def test_segment_is_the_run_by_run_form(text: str) -> None:
    """The index's text of every body (FTS5 rows, body_store) is what it was before the cut."""
    assert segment(text) == reference_segment(text)


@settings(max_examples=500, deadline=None)
@given(st.tuples(CJK_TEXT, CJK_TEXT).map(lambda pair: pair[0] + "框架ab é" * 20 + pair[1]))
def test_segment_of_a_long_text_is_the_run_by_run_form(text: str) -> None:
    """Past ``_SHORT`` characters (a body) the pattern cuts the text, below it (a name) the
    re-free run finder: both give the run-by-run form."""
    assert segment(text) == reference_segment(text)


def test_segment_of_a_name_loads_no_re() -> None:
    """A reader segments names for ``highlight()`` (store.lookup_exact): ``re`` stays unloaded."""
    code = (
        "from notedex.vault.text import segment\n"
        "assert segment('语言PR晚 Python 数据') == '语言 言 PR 晚 Python 数据 据'"
    )
    assert "re" not in modules_after(code)


def test_segment_examples_at_the_edges() -> None:
    for text in (
        "",
        " \n\t",
        "a",
        "框",
        " 框 ",
        "框架 ",
        "a框b架c",
        "框\u3000架",
        "é框",
        "\x1c框\x1c",
    ):
        assert segment(text) == reference_segment(text), repr(text)
    assert segment(" 框架 \n x ") == "框架 架 x"


def test_cjk_run_spans_examples() -> None:
    assert cjk_run_spans("plain") == []
    assert cjk_run_spans("Cobra CLI框架的說明，ok") == [(9, 14)]  # full-width comma: not CJK
    assert cjk_run_spans("a 框\u3000架 😀 b") == [(2, 3), (4, 5)]


def test_cjk_ranges_are_found_as_bisect_finds_them() -> None:
    """``_range_end`` is ``bisect_right`` over the range starts, written out (no ``bisect`` on
    the query path): the same answer for every code point up to past the last range."""
    from bisect import bisect_right

    starts, ends = text_module._STARTS, text_module._ENDS
    for code in range(0x32000):
        index = bisect_right(starts, code) - 1
        assert text_module._range_end(code) == (ends[index] if index >= 0 else -1), hex(code)
        assert is_cjk_char(chr(code)) == (index >= 0 and code <= ends[index]), hex(code)


def test_ascii_skips_unicodedata_with_the_same_keys() -> None:
    """ASCII is its own NFC and NFKC, so the folds skip ``unicodedata`` for it, giving the very
    keys the writer stores (fold, fold_width, match_key) for every ASCII character."""
    import unicodedata

    every = "".join(chr(c) for c in range(128)) + " Manage Vaults; C++/x-y.z "
    for text in (every, every[::-1], "ABC def", ""):
        assert nfc(text) == unicodedata.normalize("NFC", text)
        assert fold(text) == unicodedata.normalize("NFC", text).lower()
        assert fold_width(text) == unicodedata.normalize("NFKC", text).casefold()
    assert (
        nfc("e\u0301") == "\u00e9" and fold_width("Ｖａｕｌｔ") == "vault"
    )  # not ASCII: normalised


_KEY_ALPHABET = st.sampled_from(
    list("aZ09 _-'+#./\t!?()[]|:;,&") + list("éÉßİıΣςﬁＡ１ǅ\u0301\u00a0²") + list("知識管理カナ한")
)


@settings(max_examples=400, deadline=None)
@given(st.text(_KEY_ALPHABET, max_size=24))
def test_match_key_of_text_without_cjk_is_its_alphanumeric_runs(text: str) -> None:
    """``match_key``'s short forms (ASCII: one translate and split; no CJK: the alphanumeric
    runs) give the key of the general word-by-word form."""
    from notedex.vault.text import _words_key, fold_width, match_key, nfc

    assert match_key(text) == _words_key(nfc(fold_width(text)))


def test_name_keys_read_a_name_as_a_question_is_read() -> None:
    """Issue 30, schema 22: the keys tier 1 stores for a name besides its full key."""
    from notedex.vault.text import PARTICLES, load_words, name_keys

    stop, hubs = frozenset(load_words("stopwords-en")), frozenset(load_words("hubwords-en"))

    def keys(name: str) -> list[str]:
        return name_keys(name, stop, hubs, PARTICLES)

    assert keys("Rename a note") == ["rename a note", "rename note"]
    assert keys("Back up your vault") == ["back up your vault", "back vault", "backup vault"]
    assert keys("Plugins MOC") == ["plugin moc", "plugin"]
    assert keys("MOC") == ["moc"]  # a hub word alone stays
    assert keys("Zephyr A") == ["zephyr a"]  # the last word stays
    assert keys("Up") == ["up"]  # a particle first joins nothing
    assert keys("整理笔记") == ["整理笔记"]
    assert keys("the") == ["the"]
