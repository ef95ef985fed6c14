"""Question -> keywords, for lookup and search (ARCHITECTURE "Two-stage lookup", 1. Terms).

Stop words per language are data files (``notedex/data/stopwords-*.txt``, one word a line):
English words are dropped, Chinese and Japanese ones are cut out of CJK runs (Japanese runs also
where hiragana meets kanji or katakana), Korean particles and endings are stripped from word
ends. Notes-tool words ("vault", "show"...) count only when nothing else is left.
"""

from notedex.errors import UsageError
from notedex.vault.text import fts_phrase, is_cjk, load_words, split_words

TYPE_CHECKING = False  # no `typing` import on the query path; mypy honours the name
if TYPE_CHECKING:
    from typing import Any

MAX_TERMS = 16
MAX_QUERY_CHARS = 2_000
"""The longest question (lookup) or search text (search), in characters, for CLI and MCP."""


def checked_query(text: str, what: str) -> str:
    """The one rule for a query's size, shared by lookup, search and the MCP tools (which call
    them): a query that is empty (or only whitespace) or over ``MAX_QUERY_CHARS`` is a usage
    error (exit 2), never silently cut. ``what`` names it in the message.

    So is a query without a letter or digit (``!!``, ``-``): nothing to look for (issue 34,
    docs/cli.md "Empty queries"). A query of stop words only has words: lookup answers it with
    no candidates, search matches the words as written; both exit 0."""
    if not text.strip():
        raise UsageError(f"the {what} is empty: give some words to look for")
    if not any(ch.isalnum() for ch in text):
        raise UsageError(
            f"nothing to search for in the {what}: give at least one word (letters or digits)"
        )
    if len(text) > MAX_QUERY_CHARS:
        raise UsageError(
            f"the {what} is too long ({len(text)} characters; at most {MAX_QUERY_CHARS})"
        )
    return text


# The lists are read when a question first needs them, each once: a Latin question reads the
# English ones only (six files at import were a tenth of this module's cost to every query).
# Their names are module attributes too (``__getattr__``).
_LISTS = {
    "STOP_WORDS_EN": "stopwords-en",
    # Notes-tool words: what a notes tool hears in every question, but sometimes the subject
    # ("Manage vaults", "List view"). They are dropped when other keywords remain and kept when
    # nothing else is left; the exact-title tier compares the question with them (ARCHITECTURE
    # "Two-stage lookup").
    "TOOL_WORDS_EN": "stopwords-tools-en",
    # Removed from inside CJK runs, longest match first (Traditional and Simplified alike).
    "STOP_WORDS_ZH": "stopwords-zh",
    # Japanese: particles and question endings, cut out of the hiragana parts of a run.
    "STOP_WORDS_JA": "stopwords-ja",
    # Korean: words dropped whole (the particles and endings stripped from word ends: ENDINGS_KO).
    "STOP_WORDS_KO": "stopwords-ko",
}
_loaded: dict[str, frozenset[str]] = {}
_lengths: dict[str, list[int]] = {}


def _words(name: str) -> frozenset[str]:
    """The stop list ``name`` (a key of ``_LISTS``), read on first use."""
    words = _loaded.get(name)
    if words is None:
        words = _loaded[name] = frozenset(load_words(_LISTS[name]))
    return words


def _stop_lengths(name: str) -> list[int]:
    """The lengths of the words of stop list ``name``, longest first (longest match first)."""
    lengths = _lengths.get(name)
    if lengths is None:
        lengths = _lengths[name] = sorted({len(w) for w in _words(name)}, reverse=True)
    return lengths


def __getattr__(name: str) -> "Any":
    """``STOP_WORDS_EN``, ``TOOL_WORDS_EN``, ``STOP_WORDS_ZH``/``_JA``/``_KO`` and
    ``ENDINGS_KO`` as module attributes, read on first use."""
    if name in _LISTS:
        return _words(name)
    if name == "ENDINGS_KO":
        from notedex.query.terms_kana import korean_endings

        return korean_endings()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# Japanese and Korean notes-tool words ("note", "memo"), with the English rule.
TOOL_WORDS_CJK = frozenset(("ノート", "メモ", "노트", "메모"))


def _split_at_stop_words(run: str) -> list[str]:
    """Cut a CJK run at its Chinese stop words, longest match first: 框架相關的筆記 -> [框架]."""
    words, lengths = _words("STOP_WORDS_ZH"), _stop_lengths("STOP_WORDS_ZH")
    pieces: list[str] = []
    start = i = 0
    while i < len(run):
        for length in lengths:
            if run[i : i + length] in words:
                if i > start:
                    pieces.append(run[start:i])
                i += length
                start = i
                break
        else:
            i += 1
    if start < len(run):
        pieces.append(run[start:])
    return pieces


def _is_kana_or_hangul(ch: str) -> str:
    """ "ja" for kana, "ko" for hangul, "" for anything else."""
    if "\u3041" <= ch <= "\u30ff" or "\uff66" <= ch <= "\uff9f":
        return "ja"
    if "\uac00" <= ch <= "\ud7af" or "\u1100" <= ch <= "\u11ff" or "\u3130" <= ch <= "\u318f":
        return "ko"
    return ""


def _language(run: str) -> str:
    """The language of a CJK run: ``ko`` (hangul), ``ja`` (kana), else ``zh``."""
    found = {_is_kana_or_hangul(ch) for ch in run}
    return "ko" if "ko" in found else "ja" if "ja" in found else "zh"


def _cjk_pieces(run: str) -> list[str]:
    language = _language(run)
    if language == "zh":
        return _split_at_stop_words(run)
    # Kana or hangul: their rules are a module of their own, which a question in Chinese or
    # in a Latin script never loads (issue 30's speed budget: its bytecode costs every query
    # that loads it).
    from notedex.query import terms_kana

    if language == "ja":
        return terms_kana.japanese_pieces(run)
    return terms_kana.korean_piece(run)


def keywords(question: str) -> list[tuple[str, bool]]:
    """Every keyword of a question in order, no repeats: (word, is a notes-tool word)."""
    keywords: list[tuple[str, bool]] = []
    seen: set[str] = set()
    stop_words, tool_words = _words("STOP_WORDS_EN"), _words("TOOL_WORDS_EN")
    for word in split_words(question[:MAX_QUERY_CHARS]):
        pieces = _cjk_pieces(word) if is_cjk(word) else [word]
        for piece in pieces:
            key = piece.lower()
            if key in stop_words or key in seen or fts_phrase(piece) is None:
                continue
            seen.add(key)
            keywords.append((piece, key in tool_words or key in TOOL_WORDS_CJK))
    return keywords


def _trim_cjk(run: str, leading: bool) -> str:
    """A Chinese run without the stop words at its start (``leading``) or end: 有哪些整理笔记 ->
    整理笔记, 整理笔记 -> 整理."""
    if _language(run) != "zh":
        return run
    words, lengths = _words("STOP_WORDS_ZH"), _stop_lengths("STOP_WORDS_ZH")
    trimmed = True
    while trimmed and run:
        trimmed = False
        for length in lengths:
            piece = run[:length] if leading else run[-length:]
            if len(run) > length and piece in words:
                run = run[length:] if leading else run[:-length]
                trimmed = True
                break
    return run


def name_forms(question: str) -> list[str]:
    """The forms of a question compared with whole names for lookup's tier 1 (ARCHITECTURE
    "Two-stage lookup"), besides its keywords: the question as written, and without the stop
    and question words at its ends (a Chinese run trimmed of its stop words too), so that
    ``how do I rename a folder?`` equals the title "Rename a folder" with its inner ``a``, and
    ``有哪些整理笔记`` the title 整理笔记 with its 笔记. The names keep their stop words; a
    question keeps those between its first and last keyword."""
    words = split_words(question[:MAX_QUERY_CHARS])
    stop_words = _words("STOP_WORDS_EN")
    start, end = 0, len(words)
    while start < end and words[start].lower() in stop_words:
        start += 1
    while end > start and words[end - 1].lower() in stop_words:
        end -= 1
    forms = [" ".join(words), " ".join(words[start:end])]
    core = words[start:end]
    if core and (is_cjk(core[0]) or is_cjk(core[-1])):
        first = _trim_cjk(core[0], leading=True) if is_cjk(core[0]) else core[0]
        forms.append(" ".join([first, *core[1:]]) if len(core) > 1 else first)
    return [form for form in dict.fromkeys(forms) if form]


def extract_terms(question: str) -> list[str]:
    """Keywords of a question: stop words of both languages removed, order kept, no repeats.

    Notes-tool words ("vault", "show"...) count only when no other keyword is left.
    """
    found = keywords(question)
    content = [word for word, tool in found if not tool]
    return (content or [word for word, _ in found])[:MAX_TERMS]
