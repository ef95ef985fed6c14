"""Text normalisation and CJK segmentation, shared by the index and the query side.

SQLite's unicode61 tokenizer keeps a run of Han/Kana/Hangul as one token, so a term inside a
longer run could never match. We rewrite text before it reaches FTS5: every CJK run becomes
overlapping bigrams followed by its last character alone, and ASCII glued to CJK is split off.
Latin words pass through unchanged; FTS5's porter tokenizer stems them on both sides.

This module is on every query's path, and importing ``re`` costs a query a few milliseconds
(enum, functools...): the query side scans words with ``str`` methods and classifies CJK by
code point, and only the index side's one big pattern (compiled on first use) needs ``re``.
Nor ``bisect`` (a C extension to load) or, for ASCII text, ``unicodedata``: ASCII is its own
NFC and NFKC, so an ASCII question never loads it.

Over 500 lines on purpose: the index side and the query side must fold and cut text by the same
rules, and those rules share their tables (CJK ranges, the match key's translation, the stop
and particle words); the index side's patterns are compiled only when it runs. Moving the
index-only keying (``name_keys``, ``split_words``'s pattern) to a module of its own would take
a few hundred bytes of code off every query, and is left for a later split.
"""

import sys

TYPE_CHECKING = False  # no `typing` import on the query path; mypy honours the name
if TYPE_CHECKING:
    import re

# Han (incl. extensions and compatibility), Kana, Hangul, Bopomofo: inclusive code-point ranges.
_CJK_RANGES = (
    (0x1100, 0x11FF),  # hangul jamo
    (0x2E80, 0x2FDF),  # radicals
    (0x3005, 0x3007),  # 々 〆 〇
    (0x3021, 0x3029),
    (0x3038, 0x303B),
    (0x3040, 0x30FF),  # hiragana, katakana
    (0x3100, 0x312F),  # bopomofo
    (0x3130, 0x318F),  # hangul compatibility jamo
    (0x31A0, 0x31BF),  # bopomofo extended
    (0x31F0, 0x31FF),  # katakana extension
    (0x3400, 0x4DBF),  # ext A
    (0x4E00, 0x9FFF),  # unified
    (0xAC00, 0xD7AF),  # hangul syllables
    (0xF900, 0xFAFF),  # compatibility
    (0xFF66, 0xFF9F),  # half-width katakana
    (0x20000, 0x3134F),  # ext B..G
)
_STARTS = tuple(start for start, _ in _CJK_RANGES)
_ENDS = tuple(end for _, end in _CJK_RANGES)
_FIRST_CJK = _STARTS[0]


def _range_end(code: int) -> int:
    """The end of the last range of ``_CJK_RANGES`` that starts at or before ``code`` (-1: none),
    by binary search: ``_ENDS[bisect_right(_STARTS, code) - 1]`` without importing ``bisect``."""
    low, high = 0, len(_STARTS)
    while low < high:
        middle = (low + high) // 2
        if code < _STARTS[middle]:
            high = middle
        else:
            low = middle + 1
    return _ENDS[low - 1] if low else -1


# Latin/digit words, joined by - . / + # ' (`gen-itgc`, `v1.2`, `c++`); CJK is split off below.
_LINKS = "'+#./-"
_JOINERS = "'+#./-_"
_CJK_RUN: "re.Pattern[str] | None" = None


_CJK_SPLIT: "re.Pattern[str] | None" = None
_WORD_RUN: "re.Pattern[str] | None" = None  # word_runs' pattern: the index side only


def _index_side_patterns() -> None:
    """Compile ``word_runs``' pattern and the CJK split for ``split_words`` (issue 35,
    build35c): a parse worker splits every name of the vault, and the ``str``-method forms
    looked at each character in Python (half of ``name_keys``). The query path never calls
    this (a query imports no ``re``); the words are the same either way (a test holds them
    equal)."""
    global _WORD_RUN
    if _WORD_RUN is None:
        import re

        _cjk_split_pattern()
        _WORD_RUN = re.compile(r"\w+(?:['+#./-]+\w+)*")


def _cjk_run_pattern() -> "re.Pattern[str]":
    global _CJK_RUN
    if _CJK_RUN is None:
        import re

        chars = "".join(f"{chr(a)}-{chr(b)}" for a, b in _CJK_RANGES)
        _CJK_RUN = re.compile(f"[{chars}]+")
    return _CJK_RUN


def _cjk_split_pattern() -> "re.Pattern[str]":
    """``_cjk_run_pattern`` as one group: ``split`` gives the gaps and the runs in turn."""
    global _CJK_SPLIT
    if _CJK_SPLIT is None:
        import re

        _CJK_SPLIT = re.compile(f"({_cjk_run_pattern().pattern})")
    return _CJK_SPLIT


def cjk_run_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every maximal CJK run in ``text``: the runs ``segment`` rewrites (the
    same spans as its pattern; a test compares them).

    No ``re`` (a tenth of a search process, issue 15): no CJK character is whitespace, so a run
    lies inside one ``str.split()`` word; ASCII words are skipped on a flag, a word whose
    characters all fall in one CJK range (``min`` and ``max`` run in C) is a run as a whole, and
    only words that mix scripts are looked at character by character."""
    if text.isascii():  # a flag of the string: no scan
        return []
    spans: list[tuple[int, int]] = []
    at = 0
    for word in text.split():
        if word.isascii():  # a flag of the string: no scan
            continue
        # The first occurrence from the end of the last non-ASCII word is this word: nothing
        # between them holds a non-ASCII character, and no occurrence can span whitespace.
        start = text.find(word, at)
        at = start + len(word)
        high = ord(max(word))
        if high < _FIRST_CJK:
            continue
        low = ord(min(word))
        if low >= _FIRST_CJK and high <= _range_end(low):
            spans.append((start, at))  # one range holds every character: a run as a whole
            continue
        run = -1
        for i, ch in enumerate(word, start):
            code = ord(ch)
            if code >= _FIRST_CJK and code <= _range_end(code):
                if run < 0:
                    run = i
            elif run >= 0:
                spans.append((run, i))
                run = -1
        if run >= 0:
            spans.append((run, at))
    return spans


def is_cjk_char(ch: str) -> bool:
    code = ord(ch)
    return code >= _FIRST_CJK and code <= _range_end(code)


_SHORT = 128
"""The longest text with other than Latin characters that is checked character by character."""


def nfc(text: str) -> str:
    if text.isascii():  # ASCII is NFC (and NFKC): a flag of the string, no scan
        return text
    if "unicodedata" not in sys.modules and nfc_as_is(text):
        return text
    import unicodedata

    return unicodedata.normalize("NFC", text)


def nfc_as_is(text: str) -> bool:
    """Whether NFC leaves ``text`` as it is, told without ``unicodedata``: a shared library on
    some interpreters (about 0.3 ms to load), which a lookup no longer loads for names like
    "résumé" or "工作" nor for a question like "有哪些筆記？" (issue 30's speed budget). Once it
    is loaded its C check is cheaper, and ``nfc`` asks it instead.

    True for Latin (ASCII, Latin-1, Extended-A and -B) and, up to ``_SHORT`` characters, for
    Latin mixed with the CJK unified ideographs and the fullwidth forms of ASCII: none of them
    combines or has a canonical decomposition, nor is the second of any pair that composes
    (tests/unit/vault/test_text_nfc.py checks the ranges against the Unicode database)."""
    return (
        text.isascii()
        or max(text) < "\u0250"
        or (
            len(text) <= _SHORT
            and all(
                ch < "\u0250" or "\u4e00" <= ch <= "\u9fff" or "\uff01" <= ch <= "\uff5e"
                for ch in text
            )
        )
    )


def fold(text: str) -> str:
    """The comparison key of SEMANTICS 7: NFC, then ``str.lower()``."""
    return nfc(text).lower()


def _stem(word: str) -> str:
    """Porter's step 1a (plurals), enough to equate ``Vaults`` with ``vault``."""
    if len(word) > 3 and word.endswith("sses"):
        return word[:-2]
    if len(word) > 3 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 2 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def fold_width(text: str) -> str:
    """Width and case folded (NFKC, ``casefold``): the first step of ``match_key``."""
    if text.isascii():
        return text.casefold()
    if "unicodedata" not in sys.modules and nfkc_is_ascii_wide(text):
        return text.translate(_FULLWIDTH).casefold()
    import unicodedata

    return unicodedata.normalize("NFKC", text).casefold()


_FULLWIDTH = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)}
"""U+FF01-U+FF5E, the fullwidth forms, as the ASCII characters NFKC makes of them."""


def nfkc_is_ascii_wide(text: str) -> bool:
    """Whether NFKC of ``text`` is ``text`` with its fullwidth forms of ASCII (U+FF01-U+FF5E)
    made ASCII, told without ``unicodedata`` (``nfc_as_is``): text of ASCII, the CJK unified
    ideographs and those forms, up to ``_SHORT`` characters."""
    return len(text) <= _SHORT and all(
        ch < "\x80" or "\u4e00" <= ch <= "\u9fff" or "\uff01" <= ch <= "\uff5e" for ch in text
    )


def match_key(text: str) -> tuple[str, ...]:
    """The words of a title, alias or question compared for an exact lookup match.

    Folded for width (NFKC), case (``casefold``) and plurals (porter step 1a); punctuation is
    dropped as the tokenizer drops it, and CJK runs stay whole: ``Manage Vaults`` and
    ``manage vault`` give the same key.
    """
    folded = nfc(fold_width(text))
    # Without CJK a word's pieces are the alphanumeric runs of the whole text: every run lies
    # in one word of ``split_words`` and its cuts split runs nowhere else (a test holds the
    # two forms equal). Titles and aliases are keyed by the thousand in a first index.
    if folded.isascii():
        return tuple(_stem(run) for run in folded.translate(_ASCII_NOT_ALNUM).split())
    if not cjk_run_spans(folded):
        return tuple(_stem(run) for run in alnum_runs(folded))
    return _words_key(folded)


_ASCII_NOT_ALNUM = {code: " " for code in range(128) if not chr(code).isalnum()}


def _words_key(folded: str) -> tuple[str, ...]:
    """``match_key`` word by word, CJK runs whole (the general form)."""
    words: list[str] = []
    for word in split_words(folded):
        if is_cjk_char(word[0]):
            words.append(word)
        else:
            words.extend(_stem(run) for run in alnum_runs(word))
    return tuple(words)


def exact_name_key(text: str) -> str:
    """``match_key`` as one string, the words joined by spaces (no word holds one): what the
    index stores for every title and alias (``exact_names``) and lookup's tier 1 looks up."""
    return " ".join(match_key(text))


PARTICLES = frozenset(("up", "in", "out", "on", "off", "down", "over", "back"))
"""The English particles that make compounds when written apart (`set up` of "setup", `log in`
of "login"): the stop words drop them, so lookup tries the compound joined, on the question's
side (``query.lookup_terms``) and on the names' (``name_keys``)."""

_DATA = __file__.rsplit("/", 2)[0] + "/data/"  # os.path-free: no import on the query path


def load_words(name: str) -> tuple[str, ...]:
    """A word list of ``notedex/data/<name>.txt``: one a line, ``#`` lines are comments.

    The stop lists are data, shared by lookup and search (``query.terms``) and by the writer's
    name keys (``name_keys``), one file per language.
    """
    with open(_DATA + name + ".txt", "rb") as handle:  # bytes: no text layer to set up
        lines = handle.read().decode("utf-8").splitlines()
    return tuple(word for word in (line.strip() for line in lines) if word and word[0] != "#")


def name_keys(
    name: str,
    stop_words: "frozenset[str]",
    hub_words: "frozenset[str]",
    particles: "frozenset[str]",
) -> list[str]:
    """The ``exact_name_key`` of a name, then of the name read as a question is read (issue 30:
    the same stop-word rule on both sides of tier 1): its words less the English stop words
    (``Rename a note`` -> ``rename note``) but its last (``Zephyr A`` stays ``zephyr a``: a
    letter or a particle that ends a name is part of it), and less the hub words too when
    others remain (``Plugins MOC`` -> ``plugin``: the hub of plugins), each also with a word
    and the particle after it joined (``Back up your vault`` -> ``backup vault``, as a question writes it).
    Distinct, non-empty, the full key first. A question's keywords, and its keywords less the
    notes-tool words, are compared with these (``query.lookup_stage1._exact_names``).
    """
    _index_side_patterns()  # never on the query path: only the index keys names
    keys = [exact_name_key(name)]
    words = split_words(name)
    joined: list[str] = []
    for word in words:
        last = joined[-1] if joined else ""
        if (
            last
            and word.lower() in particles
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
            final = index == len(variant) - 1  # "Plan A" is not "plan", "Sign in" not "sign"
            if (final or low not in stop_words) and low not in seen:
                seen.add(low)
                kept.append(word)
        content = [word for word in kept if word.lower() not in hub_words] or kept
        keys += [_words_joined_key(kept), _words_joined_key(content)]
    return [key for key in dict.fromkeys(keys) if key]


_WORD_KEYS: dict[str, str] = {}  # the words of names keyed lately: names share their words
_WORD_KEYS_HELD = 1 << 14  # emptied when it holds this many: about 2.5 MB at most


def _words_joined_key(words: "list[str]") -> str:
    """``exact_name_key(" ".join(words))`` of words of ``split_words``, from each word's key
    (issue 35, build35c): ``match_key``'s words never cross a space, and neither NFKC nor
    case folding joins a word's last character with the next one's first across one, so the
    key of words joined by spaces is their keys joined (a test holds the two equal)."""
    parts = []
    for word in words:
        found = _WORD_KEYS.get(word)
        if found is None:
            if len(_WORD_KEYS) >= _WORD_KEYS_HELD:
                _WORD_KEYS.clear()
            found = _WORD_KEYS[word] = exact_name_key(word)
        if found:
            parts.append(found)
    return " ".join(parts)


def is_cjk(text: str) -> bool:
    if text.isascii():  # no CJK code point is ASCII: a flag of the string, no scan
        return False
    return any(is_cjk_char(ch) for ch in text)


def segment_or_empty(text: str | None) -> str:
    """``nx_segment``, the SQL function the ``note_fts_text`` view (note_fts's content) calls:
    ``segment`` of a name, "" for none. The writer's, and a reader's that asks FTS5 for
    ``highlight()`` (store.lookup: tier 1's counts of hits), so both see one text."""
    return segment(text) if text else ""


def segment(text: str) -> str:
    """Index-side text: CJK runs as bigrams (+ last char), split from glued ASCII.

    ``"重跑gen-itgc后"`` -> ``"重跑 跑 gen-itgc 后"``; unicode61 then splits ``gen-itgc``.

    Every body of a first index goes through here (in the parse workers): ASCII text is
    returned on a flag of the string, and the rest is cut by one ``split`` in C into the gaps
    and the runs in turn, each run's bigrams made by ``map`` over the run and itself shifted by
    one. The same text as the run-by-run ``finditer`` form (a test holds them equal). A name
    (``_SHORT`` characters or fewer) is cut at ``cjk_run_spans``, the same runs without ``re``:
    a lookup that asks FTS5 for ``highlight()`` segments a few names, where importing ``re``
    and compiling the pattern would cost more than the lookup (issue 30's speed budget).
    """
    text = nfc(text)
    if text.isascii():  # no CJK run: a flag of the string, no scan
        return text.strip()
    if len(text) <= _SHORT:
        pieces, at = [], 0
        for start, end in cjk_run_spans(text):
            pieces += [text[at:start], text[start:end]]
            at = end
        pieces.append(text[at:])
    else:
        pieces = _cjk_split_pattern().split(text)  # index side: bodies are long, one C scan
    if len(pieces) == 1:
        return text.strip()
    out: list[str] = []
    for index, piece in enumerate(pieces):
        if not index & 1:  # a gap between runs: kept stripped, dropped when only spaces
            piece = piece.strip()
            if piece:
                out.append(piece)
        elif len(piece) == 1:
            out.append(piece)
        else:
            out.append(" ".join(map(str.__add__, piece, piece[1:])))
            out.append(piece[-1])  # so a one-character query matches at the end of a run too
    return " ".join(out)


def _split_scripts(word: str) -> list[str]:
    """``重跑gen-itgc后`` -> ``["重跑", "gen-itgc", "后"]``: CJK runs apart from the rest."""
    parts: list[str] = []
    current: list[str] = []
    current_cjk = False
    for ch in word:
        cjk = is_cjk_char(ch)
        if current and cjk != current_cjk:
            parts.append("".join(current))
            current = []
        current.append(ch)
        current_cjk = cjk
    if current:
        parts.append("".join(current))
    cleaned = (part if is_cjk_char(part[0]) else part.strip(_JOINERS) for part in parts)
    return [part for part in cleaned if part]


def _is_word_char(ch: str) -> bool:
    """``re``'s ``\\w`` for str patterns: alphanumeric in Unicode, or ``_``."""
    return ch.isalnum() or ch == "_"


def word_runs(text: str) -> list[str]:
    """``re.findall(r"\\w+(?:['+#./-]+\\w+)*", text)`` without ``re`` (a test pins the equality)."""
    runs: list[str] = []
    n = len(text)
    i = 0
    while i < n:
        if not _is_word_char(text[i]):
            i += 1
            continue
        start = i
        while i < n and _is_word_char(text[i]):
            i += 1
        while True:  # more joiners-then-word-characters belong to the same word
            j = i
            while j < n and text[j] in _LINKS:
                j += 1
            if j in (i, n) or not _is_word_char(text[j]):
                break
            i = j
            while i < n and _is_word_char(text[i]):
                i += 1
        runs.append(text[start:i])
    return runs


def alnum_runs(text: str) -> list[str]:
    """``re.findall(r"[^\\W_]+", text)`` without ``re``: maximal runs of alphanumerics.

    ASCII text is cut in C (``str.translate``, ``split``): lookup asks this of every word of
    its candidates' names (issue 30's speed budget)."""
    if text.isascii():
        return text.translate(_ASCII_NOT_ALNUM).split()
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


def split_words(text: str) -> list[str]:
    """Split free text into words: CJK runs and Latin/digit words (``gen-itgc`` stays whole)."""
    words: list[str] = []
    text = nfc(text)
    if _WORD_RUN is not None and _CJK_SPLIT is not None:  # the index side: in C
        cjk_split = _CJK_SPLIT.split
        for match in _WORD_RUN.findall(text):
            pieces = [match] if match.isascii() else cjk_split(match)
            if len(pieces) > 1:  # ``_split_scripts``: the runs, the rest stripped of joiners
                pieces[::2] = (piece.strip(_JOINERS) for piece in pieces[::2])
                words.extend(piece for piece in pieces if piece)
            elif stripped := match.strip("_"):
                words.append(stripped)
        return words
    for match in word_runs(text):
        if is_cjk(match):
            words.extend(_split_scripts(match))
        else:
            stripped = match.strip("_")
            if stripped:
                words.append(stripped)
    return words


def fts_phrase(term: str) -> str | None:
    """One term as a safe FTS5 expression (never raw user syntax), or None if it has no token.

    A CJK term of two or more characters becomes the phrase of its bigrams (adjacent in the
    index too); a single CJK character becomes a prefix query, which matches the bigrams that
    start with it and the trailing single character of a run.
    """
    pieces = _fts_pieces(term)
    if not pieces:
        return None
    return pieces[0] if len(pieces) == 1 else "(" + " AND ".join(pieces) + ")"


def fts_without_prefixes(term: str) -> str | None:
    """The AND of ``fts_phrase(term)``'s pieces that are no prefix query (a lone CJK character
    is one), when it has pieces of both kinds; else None. It matches every row the whole
    expression matches, so its count bounds that one's from above, without the merge of every
    token a prefix starts (`第9章`: "9" alone, where "第" * and "章" * read the doclists of
    every bigram they begin; issue 30's speed budget)."""
    pieces = _fts_pieces(term)
    plain = [piece for piece in pieces if not piece.endswith("*")]
    if not plain or len(plain) == len(pieces):
        return None
    return plain[0] if len(plain) == 1 else "(" + " AND ".join(plain) + ")"


def _fts_pieces(term: str) -> list[str]:
    """``fts_phrase``'s pieces of ``term``, each a quoted phrase or a quoted prefix query."""
    pieces: list[str] = []
    for word in split_words(term):
        if is_cjk_char(word[0]):
            if len(word) == 1:
                pieces.append(f'"{word}" *')
            else:
                grams = " ".join(word[i : i + 2] for i in range(len(word) - 1))
                pieces.append(f'"{grams}"')
        else:
            # unicode61 drops the punctuation; quotes are doubled so nothing escapes the string.
            token_text = " ".join(alnum_runs(word))
            if token_text:
                pieces.append('"' + token_text.replace('"', '""') + '"')
    return pieces
