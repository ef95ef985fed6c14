"""Fix suggestions for broken links (issue 12): the link Obsidian would write to a file, which
reason applies, and how sure it is (SEMANTICS 8.10: ``link_confidence``; below
``SUGGESTION_THRESHOLD`` a suggestion is not offered). Pure functions over paths, no I/O
(STYLE 9); ``notedex fix`` applies them (edit/fix.py)."""

from __future__ import annotations

from collections.abc import Sequence

from notedex.vault.files import is_note_name
from notedex.vault.resolve import file_name_key, file_stem_key, lookup_key

__all__ = [
    "LINK_CONFIDENCE",
    "SUGGESTION_THRESHOLD",
    "TYPO_MIN_LENGTH",
    "broken_link_confidence",
    "is_one_edit_variant",
    "link_confidence",
    "link_to",
    "offered",
    "one_edit_apart",
    "one_edit_variants",
    "same_name",
]

SUGGESTION_THRESHOLD = 0.6
"""SEMANTICS 8.10: a suggestion less sure than this is noise, and is not offered."""
LINK_CONFIDENCE = {"folder": 0.95, "alias": 0.9, "renamed": 0.9}
"""SEMANTICS 8.10: how sure a broken link's suggestion is, by reason (`typo`: by length)."""
TYPO_MIN_LENGTH = 5
"""SEMANTICS 8.3: shorter names are one edit from too many others to suggest one: one edit
on four letters (`link` for `ink`) is the threshold's noise (``typo_confidence``; a test
holds the two together)."""


def typo_confidence(length: int) -> float:
    """SEMANTICS 8.10: one edit on a name of ``length`` characters: ``1 - 2 / length`` (0.6
    at five characters, 0.8 at ten)."""
    return max(0.0, 1.0 - 2.0 / length) if length > 0 else 0.0


def link_confidence(reason: str, key: str) -> float:
    """SEMANTICS 8.10: the confidence of a broken link's suggestion for ``reason``; ``key``
    is the link's `typo` key (its last segment, folded, without ``.md``)."""
    if reason == "typo":
        return round(typo_confidence(len(key)), 2)
    return LINK_CONFIDENCE.get(reason, 0.0)


def broken_link_confidence(reason: str | None, target: str) -> float | None:
    """SEMANTICS 8.10: the confidence of the suggestion of a broken link whose broken key is
    ``target`` (health's ``target``), for ``reason`` (None: no suggestion). The one rule health
    and ``fix`` read: ``link_confidence`` of the key's last segment, folded, without ``.md``."""
    if reason is None:
        return None
    key = lookup_key(target)
    key = key[:-3] if key.endswith(".md") else key
    return link_confidence(reason, key.rpartition("/")[2])


def offered(confidence: float | None) -> bool:
    """SEMANTICS 8.10: whether a suggestion this sure is offered (health shows it, ``fix``
    applies it by default): at or above ``SUGGESTION_THRESHOLD``."""
    return confidence is not None and confidence >= SUGGESTION_THRESHOLD


# The characters a `typo` may have replaced or dropped besides the name's own: ASCII letters,
# digits and the separators people type in names. A bounded set keeps a look-up at a few
# hundred candidate names for any name.
_TYPO_ALPHABET = frozenset("abcdefghijklmnopqrstuvwxyz0123456789 -_")


def same_name(path: str, key: str) -> bool:
    """Whether ``path`` is filed under the link key ``key`` (its name, or a note's stem)."""
    return key in (file_name_key(path), file_stem_key(path))


def link_to(path: str, others: Sequence[str], display: str | None = None) -> str:
    """``[[Name]]`` when no other file in ``others`` shares the name (Obsidian's shortest
    form), else ``[[Folder/Name]]``; a note without ``.md``; ``display`` kept after ``|``."""
    is_note = is_note_name(path.rpartition("/")[2])
    target = path[:-3] if is_note else path
    name = target.rpartition("/")[2]
    key = file_stem_key(path) if is_note else file_name_key(path)
    shared = any(other != path and key is not None and same_name(other, key) for other in others)
    bar = "" if display is None else "|" + display
    return f"[[{target if shared else name}{bar}]]"


def one_edit_variants(key: str) -> set[str]:
    """Every string one edit from ``key`` (a character dropped, added, replaced, or two
    neighbours swapped), adding and replacing with the characters of ``key`` and
    ``_TYPO_ALPHABET``; ``key`` itself is not one. At most about 80 per character of ``key``.
    """
    alphabet = _TYPO_ALPHABET | set(key)
    out: set[str] = set()
    for i in range(len(key) + 1):
        head, tail = key[:i], key[i:]
        out.update(head + c + tail for c in alphabet)
        if tail:
            out.add(head + tail[1:])
            out.update(head + c + tail[1:] for c in alphabet)
            if len(tail) > 1:
                out.add(head + tail[1] + tail[0] + tail[2:])
    out.discard(key)
    return out


def one_edit_apart(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` differ by exactly one edit of ``one_edit_variants`` (any
    character): dropped, added, replaced, or two neighbours swapped."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    if len(a) == len(b):
        if a[start + 1 :] == b[start + 1 :]:
            return True  # one replaced
        swapped = a[start : start + 2] == b[start + 1 : start + 2] + b[start : start + 1]
        return swapped and a[start + 2 :] == b[start + 2 :]
    longer, shorter = (a, b) if len(a) > len(b) else (b, a)
    return longer[start + 1 :] == shorter[start:]


def is_one_edit_variant(key: str, other: str) -> bool:
    """Whether ``other`` is in ``one_edit_variants(key)``, without making them: one edit apart,
    and a character added or replaced is one of ``key``'s or of ``_TYPO_ALPHABET`` (a test
    holds the two equal)."""
    if not one_edit_apart(key, other):
        return False
    if len(other) < len(key):
        return True  # a character dropped
    start = 0
    while start < len(key) and key[start] == other[start]:
        start += 1
    if len(other) == len(key) and key[start + 1 :] != other[start + 1 :]:
        return True  # two neighbours swapped
    # Replaced at ``start``, or added: whichever copy of a repeated character was added, the
    # added character is ``other[start]``.
    added = other[start]
    return added in _TYPO_ALPHABET or added in key
