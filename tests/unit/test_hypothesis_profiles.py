"""The hypothesis profiles of tests/conftest.py: ``fast`` by default, ``thorough`` on request,
and a test's own ``max_examples`` capped by the active profile (issue 34)."""

from __future__ import annotations

import os

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import (
    FAST_EXAMPLES,
    MIN_FAST_EXAMPLES,
    THOROUGH_EXAMPLES,
    _cap_examples,
    fast_examples,
)


def _counting(max_examples: int) -> tuple[object, list[int]]:
    calls: list[int] = []

    @settings(max_examples=max_examples, database=None)
    @given(st.integers())
    def prop(n: int) -> None:
        calls.append(n)

    return prop, calls


def test_the_active_profile_is_fast_unless_asked_for() -> None:
    wanted = os.environ.get("HYPOTHESIS_PROFILE", "fast")
    assert settings.get_current_profile_name() in {wanted, "thorough"}  # or the option's
    assert settings.get_profile("fast").max_examples == FAST_EXAMPLES < 100
    assert settings.get_profile("thorough").max_examples == THOROUGH_EXAMPLES >= 1000


def test_a_tests_own_count_is_capped_by_the_profile() -> None:
    prop, calls = _counting(3000)
    _cap_examples(prop, FAST_EXAMPLES)
    prop()  # type: ignore[operator]
    assert 0 < len(calls) <= FAST_EXAMPLES


def test_a_count_below_the_cap_is_kept() -> None:
    prop, calls = _counting(7)
    _cap_examples(prop, FAST_EXAMPLES)
    prop()  # type: ignore[operator]
    assert len(calls) == 7


def test_fast_runs_a_tenth_of_a_tests_own_count_within_its_bounds() -> None:
    assert [fast_examples(n) for n in (2, 7, 15, 30, 60, 100, 3000)] == [2, 3, 3, 3, 6, 10, 10]
    prop, calls = _counting(30)  # a test whose examples are costly: its author wrote 30
    _cap_examples(prop, FAST_EXAMPLES, tenth=True)
    prop()  # type: ignore[operator]
    assert 0 < len(calls) <= MIN_FAST_EXAMPLES
    prop, calls = _counting(30)
    _cap_examples(prop, THOROUGH_EXAMPLES)  # thorough: as written
    prop()  # type: ignore[operator]
    assert len(calls) == 30
