"""``vault.text.nfc`` and ``fold_width`` fold Latin and Han text without loading
``unicodedata`` (issue 30's speed budget: a shared library on some interpreters, loaded by
most lookups)."""

from __future__ import annotations

import subprocess
import sys
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from notedex.vault.text import fold_width, nfc

KEPT = [(0x00, 0x24F), (0x4E00, 0x9FFF), (0xFF01, 0xFF5E)]
"""The ranges ``nfc`` returns as they are."""
WIDE = [(0x00, 0x7F), (0x4E00, 0x9FFF), (0xFF01, 0xFF5E)]
"""The ranges ``fold_width`` folds itself (the fullwidth forms to ASCII)."""


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
            want = chr(code - 0xFEE0) if code >= 0xFF01 else ch
            assert unicodedata.normalize("NFKC", ch) == want
            assert fold_width(ch) == unicodedata.normalize("NFKC", ch).casefold()


@given(
    st.text(
        st.sampled_from(
            [
                *"abcE ",
                "é",
                "ß",
                "Ł",
                "ǅ",
                "工",
                "作",
                "？",
                "Ａ",
                "\u0301",
                "\u0308",
                "\uac00",
                "\u1100",
                "ª",
            ]
        ),
        max_size=12,
    )
)
def test_nfc_agrees_with_unicodedata(text: str) -> None:
    assert nfc(text) == unicodedata.normalize("NFC", text)
    assert fold_width(text) == unicodedata.normalize("NFKC", text).casefold()


def test_latin_and_han_names_load_no_unicodedata() -> None:
    code = (
        "import sys; from notedex.vault.text import fold_width, nfc, split_words; "
        "[nfc(t) for t in ('résumé', '工作 notes', 'Łódź', 'ǅemal')]; split_words('日记 café'); "
        "fold_width('有哪些筆記？ ＡＰＩ'); "
        "print('unicodedata' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    decomposed = "import sys; from notedex.vault.text import nfc; nfc('cafe\\u0301'); "
    out = subprocess.run(
        [sys.executable, "-c", decomposed + "print('unicodedata' in sys.modules)"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "True"  # the probe sees the import when it happens


def test_long_text_is_normalised_as_before() -> None:
    """Past ``_SHORT`` characters Han text goes to ``unicodedata`` (a body), Latin does not."""
    for text in ("工作" * 100 + "cafe\u0301", "é" * 300, "e\u0301" * 200, "工？" * 129):
        assert nfc(text) == unicodedata.normalize("NFC", text)
        assert fold_width(text) == unicodedata.normalize("NFKC", text).casefold()
