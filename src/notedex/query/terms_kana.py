"""A Japanese or Korean run of a question -> its keywords (SEMANTICS 11.5): ``query.terms``'
rules for kana and hangul.

A module of its own, loaded only by a question holding kana or hangul: a question in Chinese or
in a Latin script (most) never unmarshals this code (issue 30's speed budget). The stop lists
and the Chinese cut are ``query.terms``'.
"""

from notedex.query.terms import _split_at_stop_words, _stop_lengths, _words
from notedex.vault.text import load_words

_endings: list[tuple[str, ...]] = []


def korean_endings() -> tuple[str, ...]:
    """Korean particles and endings stripped from word ends, longest first."""
    if not _endings:
        _endings.append(tuple(sorted(load_words("endings-ko"), key=len, reverse=True)))
    return _endings[0]


# Case particles: they link a word to what follows, so one is cut before another script or a
# longer stop word too (の in ふりかえりのやり方); か, な, ね, よ... may end a hiragana word.
_CASE_PARTICLES = frozenset("のはがをにへもでとや")


def _is_hiragana(ch: str) -> bool:
    return "\u3041" <= ch <= "\u309f"


def _japanese_cuts(run: str) -> list[bool]:
    """Which characters of a kana run are stop words (SEMANTICS 11.5).

    A stop word of two characters or more, or a kanji one (何), is cut wherever it stands,
    longest first. A one-kana stop word (の, は, か...) is cut only where it follows another
    script or a longer stop word, and a case particle (の, は, が...) also where it comes before
    one (たまごのレシピ, ふりかえりのやり方). Inside a hiragana stretch it may be part of a word: ひらがな holds が and
    な, and ひらがなですか and ひらがな入力 keep their な.
    """
    stop_words, lengths = _words("STOP_WORDS_JA"), _stop_lengths("STOP_WORDS_JA")
    cut = [False] * len(run)
    long_cut = [False] * len(run)
    i = 0
    while i < len(run):
        for length in lengths:
            if length > 1 and i + length <= len(run) and run[i : i + length] in stop_words:
                long_cut[i : i + length] = cut[i : i + length] = [True] * length
                i += length
                break
        else:
            i += 1

    def other_script(j: int) -> bool:
        return 0 <= j < len(run) and not _is_hiragana(run[j])

    for i, ch in enumerate(run):
        if cut[i] or ch not in stop_words:
            continue
        after_a_word = other_script(i - 1) or (i > 0 and long_cut[i - 1])
        before_a_word = ch in _CASE_PARTICLES and (
            other_script(i + 1) or (i + 1 < len(run) and long_cut[i + 1])
        )
        cut[i] = not _is_hiragana(ch) or after_a_word or before_a_word  # 何 is cut anywhere
    return cut


def _split_at(run: str, cut: list[bool]) -> list[str]:
    """The stretches of ``run`` between the characters marked ``cut``."""
    pieces: list[str] = []
    start = 0
    for i, is_cut in enumerate([*cut, True]):
        if is_cut:
            if i > start:
                pieces.append(run[start:i])
            start = i + 1
    return pieces


def japanese_pieces(run: str) -> list[str]:
    """The keywords of a kana run (SEMANTICS 11.5): stop words cut, okurigana dropped.

    内部リンクについてのノートはどれ -> [内部リンク, ノート]; タグの使い方を教えて -> [タグ];
    ひらがなの練習 -> [ひらがな, 練習]. Between the cuts, a hiragana stretch that follows kanji
    or katakana (okurigana, an ending: 違い, 書く) is no keyword; one that begins a piece is a
    word of its own when it has two characters or more. A single character is dropped when a
    longer piece remains.
    """
    pieces: list[str] = []
    for piece in _split_at(run, _japanese_cuts(run)):
        lead = 0  # the hiragana that begins the piece
        while lead < len(piece) and _is_hiragana(piece[lead]):
            lead += 1
        if lead > 1:
            pieces.append(piece[:lead])
        part = ""
        for ch in piece[lead:] + "\u3041":  # a hiragana sentinel closes the last part
            if not _is_hiragana(ch):
                part += ch
            elif part:
                pieces.extend(_split_at_stop_words(part))  # kanji: Chinese stop words too
                part = ""
    longer = [piece for piece in pieces if len(piece) > 1]
    return longer or pieces


def korean_piece(word: str) -> list[str]:
    """Strip one particle or ending from a Korean word's end: 볼트를 -> 볼트; 방법 -> [].

    A stop word is dropped as written (있나요) or once stripped (방법을, 하나요 -> 하).
    """
    stop_words = _words("STOP_WORDS_KO")
    if word in stop_words:
        return []
    for ending in korean_endings():
        if word.endswith(ending) and len(word) - len(ending) >= max(1, 3 - len(ending)):
            word = word[: -len(ending)]
            break
    return [] if word in stop_words else [word]
