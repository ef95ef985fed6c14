"""`show`'s line range (query/listing.py): the three forms of ``--lines`` and what is refused."""

from __future__ import annotations

import pytest

from notedex.errors import UsageError
from notedex.query.listing import parse_line_range


@pytest.mark.parametrize(
    ("text", "expected"),
    [("12-20", (12, 20)), ("7", (7, 7)), ("3-", (3, None)), (" 1 - 2 ", (1, 2)), ("4-4", (4, 4))],
)
def test_parse_line_range_reads_the_three_forms(
    text: str, expected: tuple[int, int | None]
) -> None:
    assert parse_line_range(text) == expected


@pytest.mark.parametrize("text", ["5-2", "x", "0-3", "-3", "", "1-2-3", "1.5", "a-b"])
def test_parse_line_range_refuses_anything_else(text: str) -> None:
    with pytest.raises(UsageError, match="line range"):
        parse_line_range(text)
