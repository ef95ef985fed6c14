"""Text normalisation and CJK segmentation, shared by the index and the query side.

SQLite's unicode61 tokenizer keeps a run of Han/Kana/Hangul as one token, so a term inside a
longer run could never match. We rewrite text before it reaches FTS5: every CJK run becomes
overlapping bigrams followed by its last character alone, and ASCII glued to CJK is split off.
Latin words pass through unchanged; FTS5's porter tokenizer stems them on both sides.

This module is stdlib-only: the query path imports it.
"""

from __future__ import annotations

import re
import unicodedata

# Han (incl. extensions and compatibility), Hiragana, Katakana, Hangul, Bopomofo, CJK symbols-less.
_CJK_CLASS = (
    "\u2e80-\u2fdf"  # radicals
    "\u3005-\u3007"  # 々 〆 〇
    "\u3021-\u3029\u3038-\u303b"
    "\u3040-\u309f"  # hiragana
    "\u30a0-\u30ff"  # katakana
    "\u3100-\u312f\u31a0-\u31bf"  # bopomofo
    "\u31f0-\u31ff"  # katakana ext
    "\u3400-\u4dbf"  # ext A
    "\u4e00-\u9fff"  # unified
    "\uac00-\ud7af"  # hangul syllables
    "\u1100-\u11ff\u3130-\u318f"  # hangul jamo
    "\uf900-\ufaff"  # compatibility
    "\uff66-\uff9f"  # half-width katakana
    "\U00020000-\U0003134f"  # ext B..G
)
_CJK_RUN = re.compile(f"[{_CJK_CLASS}]+")
_CJK_CHAR = re.compile(f"[{_CJK_CLASS}]")
# A "word" for term extraction: a CJK run, or a run of letters/digits possibly joined by - _ . /
_WORD = re.compile(rf"[{_CJK_CLASS}]+|[^\W_{_CJK_CLASS}](?:[\w\-./+#']*[^\W_{_CJK_CLASS}])?")


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def fold(text: str) -> str:
    """The comparison key of SEMANTICS 7: NFC, then ``str.lower()``."""
    return unicodedata.normalize("NFC", text).lower()


def is_cjk(text: str) -> bool:
    return bool(_CJK_CHAR.search(text))


def _segment_run(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    grams = [run[i : i + 2] for i in range(len(run) - 1)]
    grams.append(run[-1])  # so a one-character query matches at the end of a run too
    return grams


def segment(text: str) -> str:
    """Index-side text: CJK runs as bigrams (+ last char), split from glued ASCII.

    ``"重跑gen-itgc后"`` -> ``"重跑 跑 gen-itgc 后"``; unicode61 then splits ``gen-itgc``.
    """
    text = nfc(text)
    out: list[str] = []
    pos = 0
    for match in _CJK_RUN.finditer(text):
        if match.start() > pos:
            out.append(text[pos : match.start()])
        out.append(" ".join(_segment_run(match.group())))
        pos = match.end()
    if pos < len(text):
        out.append(text[pos:])
    return " ".join(part.strip() for part in out if part.strip())


def split_words(text: str) -> list[str]:
    """Split free text into words: CJK runs and Latin/digit words (``gen-itgc`` stays whole)."""
    return _WORD.findall(nfc(text))


def fts_phrase(term: str) -> str | None:
    """One term as a safe FTS5 expression (never raw user syntax), or None if it has no token.

    A CJK term of two or more characters becomes the phrase of its bigrams (adjacent in the
    index too); a single CJK character becomes a prefix query, which matches the bigrams that
    start with it and the trailing single character of a run.
    """
    pieces: list[str] = []
    for word in split_words(term):
        if _CJK_RUN.fullmatch(word):
            if len(word) == 1:
                pieces.append(f'"{word}" *')
            else:
                grams = " ".join(word[i : i + 2] for i in range(len(word) - 1))
                pieces.append(f'"{grams}"')
        else:
            # unicode61 drops the punctuation; quotes are doubled so nothing escapes the string.
            token_text = re.sub(r"[^\w]+", " ", word).strip()
            if token_text:
                pieces.append('"' + token_text.replace('"', '""') + '"')
    if not pieces:
        return None
    return pieces[0] if len(pieces) == 1 else "(" + " AND ".join(pieces) + ")"
