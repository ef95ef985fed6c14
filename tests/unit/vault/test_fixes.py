"""vault/fixes.py: the `typo` neighbourhood (SEMANTICS 8.3), tested without generating it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from notedex.vault.fixes import is_one_edit_variant, one_edit_variants

# Letters of the typo alphabet, characters outside it (é, 日, Z, .), and repeats.
_CHARS = st.sampled_from(list("abca é日-_Z."))
words = st.lists(_CHARS, max_size=6).map("".join)


@settings(max_examples=3000, deadline=None)
@given(words, st.lists(_CHARS, max_size=7).map("".join))
def test_is_one_edit_variant_is_membership_of_the_variants(key: str, other: str) -> None:
    assert is_one_edit_variant(key, other) == (other in one_edit_variants(key))


@settings(max_examples=500, deadline=None)
@given(st.lists(_CHARS, min_size=1, max_size=6).map("".join), st.data())
def test_every_variant_is_one(key: str, data: st.DataObject) -> None:
    other = data.draw(st.sampled_from(sorted(one_edit_variants(key))))
    assert is_one_edit_variant(key, other)


def test_examples() -> None:
    assert is_one_edit_variant("topic", "topik")  # replaced by an alphabet letter
    assert is_one_edit_variant("topic", "tpoic")  # swapped
    assert is_one_edit_variant("topic", "topc")  # dropped
    assert is_one_edit_variant("topic", "topicc")  # added: a repeat
    assert not is_one_edit_variant("topic", "topié")  # é is neither the key's nor the alphabet's
    assert is_one_edit_variant("topié", "topéé")  # ... unless the key has it
    assert not is_one_edit_variant("topic", "topic")
    assert not is_one_edit_variant("topic", "tpoci")  # two edits


def test_the_typo_length_floor_is_the_confidence_threshold() -> None:
    """SEMANTICS 8.10: TYPO_MIN_LENGTH is where one edit reaches SUGGESTION_THRESHOLD, so the
    bulk searches' length filter and the threshold cannot drift apart."""
    from notedex.vault.fixes import SUGGESTION_THRESHOLD, TYPO_MIN_LENGTH, link_confidence

    assert link_confidence("typo", "x" * TYPO_MIN_LENGTH) >= SUGGESTION_THRESHOLD
    assert link_confidence("typo", "x" * (TYPO_MIN_LENGTH - 1)) < SUGGESTION_THRESHOLD
    assert link_confidence("typo", "link") == 0.5
    assert link_confidence("typo", "kubernetes") == 0.8
    assert link_confidence("folder", "x") == 0.95
    assert link_confidence("nothing", "x") == 0.0
