"""Anchor rules (SEMANTICS 10.3-10.6): whether a link's ``#heading``, ``#A#B`` or ``#^block``
subpath exists in the target's outline, and the closest one when it does not. Pure functions
over parsed values, no I/O (STYLE 9)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from difflib import SequenceMatcher
from typing import Literal

from notedex.vault.fixes import SUGGESTION_THRESHOLD
from notedex.vault.model import BlockId, Heading

__all__ = [
    "AnchorKind",
    "Suggestion",
    "TargetOutline",
    "anchor_confidence",
    "anchor_kind",
    "fold_heading",
    "is_broken",
    "suggest",
]

AnchorKind = Literal["heading", "block"]
# (suggested subpath, reason)
Suggestion = tuple[str, str]

# SEMANTICS 10.4: each of these characters counts as a space.
_PUNCTUATION = re.compile(r"""[!"#$%&()*+,.:;<=>?@^`{|}~/\[\]\\\s]+""")
_CLOSE_ENOUGH = 0.75  # SequenceMatcher ratio for a `typo` suggestion
_MIN_PREFIX = 3  # characters of the shorter side of a `prefix` suggestion


def fold_heading(text: str) -> str:
    """SEMANTICS 10.4: punctuation as spaces, whitespace collapsed and trimmed, lower case."""
    return _PUNCTUATION.sub(" ", text).strip().lower()


def anchor_kind(subpath: str) -> AnchorKind:
    """SEMANTICS 10.6: ``#^id`` names a block, anything else headings."""
    return "block" if subpath.startswith("#^") else "heading"


def _heading_parts(subpath: str) -> list[str]:
    return [part for part in (fold_heading(p) for p in subpath.split("#")) if part]


def _nested_match(parts: list[str], keys: Sequence[str], levels: Sequence[int]) -> bool:
    """SEMANTICS 10.5: parts[0] anywhere; each next part after the previous one, deeper, and
    inside its section (before the next heading of its level or higher)."""
    return _within(parts, keys, levels, 0, 0, len(keys), 0)


def _within(
    parts: list[str],
    keys: Sequence[str],
    levels: Sequence[int],
    part: int,
    start: int,
    end: int,
    parent_level: int,
) -> bool:
    """``parts[part:]`` nested in the headings ``start:end`` under a heading of
    ``parent_level``. A module function, not a closure that calls itself: that closure and its
    cell were a reference cycle per anchored link, garbage only the cyclic collector frees
    (a first index checks every anchored link of the vault)."""
    for index in range(start, end):
        if levels[index] <= parent_level:
            if part > 0:
                return False  # the parent's section ended
            continue
        if keys[index] != parts[part]:
            continue
        if part + 1 == len(parts):
            return True
        section_end = next((j for j in range(index + 1, end) if levels[j] <= levels[index]), end)
        if _within(parts, keys, levels, part + 1, index + 1, section_end, levels[index]):
            return True
    return False


class TargetOutline:
    """A target note's outline as the anchor rules read it: each heading is folded once,
    however many links name it (a first index checks every anchored link of the vault, and
    a note's headings were folded again for each: 50,000 links at 100k notes)."""

    __slots__ = ("_keys", "_levels", "block_ids", "headings")

    def __init__(self, headings: Sequence[Heading], block_ids: Sequence[BlockId]) -> None:
        self.headings = headings
        self.block_ids = block_ids
        self._keys: list[str] | None = None
        self._levels: list[int] = []

    @property
    def keys(self) -> list[str]:
        """``fold_heading`` of each heading, in order."""
        if self._keys is None:
            self._keys = [fold_heading(h.text) for h in self.headings]
            self._levels = [h.level for h in self.headings]
        return self._keys

    def is_broken(self, subpath: str) -> bool:
        """Whether ``subpath`` (with its leading ``#``) names nothing in this outline.

        A subpath with no text (``[[Note#]]``) names the note itself: never broken.
        """
        if anchor_kind(subpath) == "block":
            wanted = subpath[2:].strip().lower()  # SEMANTICS 10.2: compared ignoring case
            return bool(wanted) and all(b.id.lower() != wanted for b in self.block_ids)
        parts = _heading_parts(subpath)
        if not parts:
            return False
        keys = self.keys
        return not _nested_match(parts, keys, self._levels)

    def suggest(self, subpath: str) -> Suggestion | None:
        """The closest heading or block for a broken ``subpath``, as the subpath to write, and
        why: ``prefix`` (one starts the other), ``words`` (shares most words), ``typo`` (a
        small edit distance); None when nothing is close."""
        if anchor_kind(subpath) == "block":
            wanted = subpath[2:].strip().lower()
            candidates = [(b.id.lower(), "#^" + b.id) for b in self.block_ids]
        else:
            parts = _heading_parts(subpath)
            wanted = parts[-1] if parts else ""  # the innermost part: the heading really meant
            candidates = [
                (key, "#" + h.text) for key, h in zip(self.keys, self.headings, strict=True)
            ]
        return _closest(wanted, [(key, written) for key, written in candidates if key])


def is_broken(subpath: str, headings: Sequence[Heading], block_ids: Sequence[BlockId]) -> bool:
    """``TargetOutline.is_broken`` of one link."""
    return TargetOutline(headings, block_ids).is_broken(subpath)


def suggest(
    subpath: str, headings: Sequence[Heading], block_ids: Sequence[BlockId]
) -> Suggestion | None:
    """``TargetOutline.suggest`` of one link."""
    return TargetOutline(headings, block_ids).suggest(subpath)


def _words(key: str) -> set[str]:
    """The words of a folded key that count for `words`: three letters or more."""
    return {word for word in key.split() if len(word) >= 3}


def prefix_confidence(wanted: str, key: str) -> float:
    """SEMANTICS 10.8: ``0.5 + 0.5 * shorter / longer`` when one starts the other (the shorter
    at least 3 characters), else 0."""
    short, long = sorted((len(wanted), len(key)))
    if short < _MIN_PREFIX or not (key.startswith(wanted) or wanted.startswith(key)):
        return 0.0
    return 0.5 + 0.5 * short / long


def words_confidence(wanted: str, key: str) -> float:
    """SEMANTICS 10.8: the words (three letters or more) both share, over the words of the
    longer side: ``Sponsor this author`` and ``Author of`` share one word of three, 0.33."""
    mine, theirs = _words(wanted), _words(key)
    most = max(len(mine), len(theirs))
    return len(mine & theirs) / most if most else 0.0


def typo_ratio(wanted: str, key: str) -> float:
    """SEMANTICS 10.8: ``difflib``'s similarity ratio."""
    return SequenceMatcher(None, wanted, key).ratio()


def anchor_confidence(subpath: str, suggestion: str, reason: str) -> float:
    """SEMANTICS 10.8: the confidence of ``suggestion`` (a subpath) for the broken ``subpath``
    and ``reason``, from the folded innermost parts as ``suggest`` compared them."""
    if anchor_kind(subpath) == "block":
        wanted, key = subpath[2:].strip().lower(), suggestion[2:].strip().lower()
    else:
        parts = _heading_parts(subpath)
        wanted, key = (parts[-1] if parts else ""), fold_heading(suggestion[1:])
    rule = {"prefix": prefix_confidence, "words": words_confidence, "typo": typo_ratio}.get(reason)
    return round(rule(wanted, key), 2) if rule is not None and wanted and key else 0.0


def _closest(wanted: str, candidates: list[tuple[str, str]]) -> Suggestion | None:
    """The candidate (folded key, subpath to write) closest to ``wanted``, and why; each rule
    only offers what reaches ``SUGGESTION_THRESHOLD`` (SEMANTICS 10.8)."""
    if not wanted or not candidates:
        return None
    for key, written in candidates:
        if prefix_confidence(wanted, key) >= SUGGESTION_THRESHOLD:
            return written, "prefix"
    best_overlap, best_written = 0.0, ""
    if _words(wanted):
        for key, written in candidates:
            overlap = words_confidence(wanted, key)
            if overlap > best_overlap:
                best_overlap, best_written = overlap, written
    if best_overlap >= SUGGESTION_THRESHOLD:
        return best_written, "words"
    best_ratio, best_written = 0.0, ""
    matcher = SequenceMatcher(None, wanted)
    letters = Counter(wanted)
    for key, written in candidates:
        # The bounds first, SequenceMatcher's real_quick_ratio (the lengths) and quick_ratio
        # (the letters shared), the same sums here without giving it the key (set_seq2 maps
        # every letter's places: most of a first index's anchor suggestions): a candidate
        # that cannot reach the best so far, or _CLOSE_ENOUGH, is skipped.
        floor = max(best_ratio, _CLOSE_ENOUGH)
        length = len(wanted) + len(key)
        if 2.0 * min(len(wanted), len(key)) / length < floor:
            continue
        if 2.0 * (letters & Counter(key)).total() / length < floor:
            continue
        matcher.set_seq2(key)
        ratio = matcher.ratio()
        if ratio > best_ratio:
            best_ratio, best_written = ratio, written
    return (best_written, "typo") if best_ratio >= _CLOSE_ENOUGH else None
