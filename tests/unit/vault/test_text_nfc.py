"""``vault.text.nfc`` and ``fold_width`` fold Latin and Han text without loading
``unicodedata`` (issue 30's speed budget: a shared library on some interpreters, loaded by
most lookups): ``nfc_as_is`` and ``nfkc_is_ascii_wide`` say when they may."""

from __future__ import annotations

import subprocess
import sys
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from notedex.vault.text import _FULLWIDTH, fold_width, nfc, nfc_as_is, nfkc_is_ascii_wide

KEPT = [(0x00, 0x24F), (0x4E00, 0x9FFF), (0xFF01, 0xFF5E)]
"""The ranges ``nfc_as_is`` accepts."""
WIDE = [(0x00, 0x7F), (0x4E00, 0x9FFF), (0xFF01, 0xFF5E)]
"""The ranges ``nfkc_is_ascii_wide`` accepts (the fullwidth forms made ASCII)."""

ALPHABET = [*"abcE ", "é", "ß", "Ł", "ǅ", "ª", "工", "作", "？", "Ａ", "\u3000", "\u0301"]
ALPHABET += ["\u0308", "\uac00", "\u1100", "\u1161", "の", "\u3099"]


def kept(ch: str) -> bool:
    return any(low <= ord(ch) <= high for low, high in KEPT)


def test_no_character_of_the_ranges_changes_under_nfc_or_composes() -> None:
    """Each is NFC alone with combining class 0, and none is the second of a canonical
    decomposition pair (canonical composition only rebuilds those): any text of them is NFC."""
    chars = [chr(c) for low, high in KEPT for c in range(low, high + 1)]
    assert [c for c in chars if not unicodedata.is_normalized("NFC", c)] == []
    assert [c for c in chars if unicodedata.combining(c)] == []
    seconds = set()
    for code in range(sys.maxunicode + 1):
        parts = unicodedata.decomposition(chr(code)).split()
        if len(parts) == 2 and not parts[0].startswith("<"):
            seconds.add(chr(int(parts[1], 16)))
    assert sorted(c for c in seconds if kept(c)) == []


def test_nfkc_of_the_wide_ranges_is_the_ascii_form_or_the_character() -> None:
    for low, high in WIDE:
        for code in range(low, high + 1):
            ch = chr(code)
            assert nfkc_is_ascii_wide(ch)
            assert unicodedata.normalize("NFKC", ch) == ch.translate(_FULLWIDTH)


@given(st.text(st.sampled_from(ALPHABET), max_size=12))
def test_the_rules_agree_with_unicodedata(text: str) -> None:
    if nfc_as_is(text):
        assert unicodedata.normalize("NFC", text) == text
    if nfkc_is_ascii_wide(text):
        assert unicodedata.normalize("NFKC", text) == text.translate(_FULLWIDTH)
    assert nfc(text) == unicodedata.normalize("NFC", text)
    assert fold_width(text) == unicodedata.normalize("NFKC", text).casefold()


def test_long_text_goes_to_unicodedata_unless_latin() -> None:
    """Past ``_SHORT`` characters only Latin text is told as it is (``max``, in C): a body."""
    assert nfc_as_is("é" * 300) and not nfc_as_is("工" * 129) and nfc_as_is("工" * 128)
    assert not nfkc_is_ascii_wide("？" * 129)
    for text in ("工作" * 100 + "cafe\u0301", "é" * 300, "e\u0301" * 200, "工？" * 129):
        assert nfc(text) == unicodedata.normalize("NFC", text)
        assert fold_width(text) == unicodedata.normalize("NFKC", text).casefold()


def loads_unicodedata(calls: str) -> bool:
    code = (
        "import sys; from notedex.vault.text import fold_width, nfc, split_words; "
        f"{calls}; print('unicodedata' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip() == "True"


def test_latin_and_han_names_load_no_unicodedata() -> None:
    assert not loads_unicodedata(
        "[nfc(t) for t in ('résumé', '工作 notes', 'Łódź', 'ǅemal')]; split_words('日记 café'); "
        "fold_width('有哪些筆記？ ＡＰＩ')"
    )
    assert loads_unicodedata("nfc('cafe\\u0301')")  # the probe sees the import when it happens
