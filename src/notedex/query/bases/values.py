"""The values of Bases expressions and their operators (SEMANTICS 15.3).

Python values stand for Bases values: None (null), bool, int/float (number), str, list, dict
(object); and the classes below for dates, durations, links, files and regular expressions.
A comparison or arithmetic of mismatched types is false or null, never an exception.
"""

from __future__ import annotations

import datetime as dt
import math

TYPE_CHECKING = False  # no `typing` on the base path (design/bases.md); mypy honours the name
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


class Date:
    """A date (``has_time`` False: midnight, shown without a time) or a local date and time."""

    __slots__ = ("has_time", "moment")

    def __init__(self, moment: dt.datetime, has_time: bool = True) -> None:
        self.moment = moment
        self.has_time = has_time

    def ms(self) -> float:
        return self.moment.timestamp() * 1000

    def __repr__(self) -> str:
        return f"Date({self.text()})"

    def text(self) -> str:
        if self.has_time:
            return self.moment.strftime("%Y-%m-%d %H:%M:%S")
        return self.moment.strftime("%Y-%m-%d")

    def iso(self) -> str:
        if self.has_time:
            return self.moment.isoformat(timespec="seconds")
        return self.moment.date().isoformat()


class Duration:
    """A calendar duration: months (a year is 12) and milliseconds (days, hours, ...)."""

    __slots__ = ("millis", "months")

    def __init__(self, months: int = 0, millis: float = 0) -> None:
        self.months = months
        self.millis = millis

    def total_ms(self) -> float:
        return self.months * 30 * 86_400_000 + self.millis


class Link:
    """A link to ``path``: a vault path when it resolves, else the link text. A link read from a
    property is resolved only when its target is asked for (``resolver``): most runs never ask,
    and resolving by name needs every file's name."""

    __slots__ = ("_path", "_resolver", "display", "resolved")

    def __init__(
        self,
        path: str,
        display: str | None = None,
        resolved: bool = False,
        resolver: Callable[[str], str | None] | None = None,
    ) -> None:
        self._path = path
        self.display = display
        self.resolved = resolved
        self._resolver = resolver

    @property
    def path(self) -> str:
        if self._resolver is not None:
            found = self._resolver(self._path)
            self._resolver = None
            if found is not None:
                self._path, self.resolved = found, True
        return self._path

    def text(self) -> str:
        path = self.path
        target = path[:-3] if path.endswith(".md") else path
        return f"[[{target}|{self.display}]]" if self.display else f"[[{target}]]"


class Regex:
    __slots__ = ("compiled", "flags", "pattern")

    def __init__(self, pattern: str, flags: str) -> None:
        import re

        self.pattern = pattern
        self.flags = flags
        options = (re.IGNORECASE if "i" in flags else 0) | (re.MULTILINE if "m" in flags else 0)
        options |= re.DOTALL if "s" in flags else 0
        try:
            self.compiled = re.compile(pattern, options)
        except re.error as exc:
            from notedex.errors import UsageError

            raise UsageError(f"bad regular expression /{pattern}/: {exc}") from None


class FileValue:
    """A vault file as a value: its row (see query.bases.rows.FileRow)."""

    __slots__ = ("row",)

    def __init__(self, row: Any) -> None:
        self.row = row


UNITS = {
    "y": ("months", 12),
    "year": ("months", 12),
    "years": ("months", 12),
    "M": ("months", 1),
    "month": ("months", 1),
    "months": ("months", 1),
    "w": ("ms", 7 * 86_400_000),
    "week": ("ms", 7 * 86_400_000),
    "weeks": ("ms", 7 * 86_400_000),
    "d": ("ms", 86_400_000),
    "day": ("ms", 86_400_000),
    "days": ("ms", 86_400_000),
    "h": ("ms", 3_600_000),
    "hour": ("ms", 3_600_000),
    "hours": ("ms", 3_600_000),
    "m": ("ms", 60_000),
    "minute": ("ms", 60_000),
    "minutes": ("ms", 60_000),
    "s": ("ms", 1000),
    "second": ("ms", 1000),
    "seconds": ("ms", 1000),
}


def parse_duration(text: str) -> Duration | None:
    """``"1d"``, ``"2 weeks"``, ``"1M 4h"``, ``"-3d"``: None when it is not a duration."""
    months, millis, i, n, seen = 0, 0.0, 0, len(text), False
    while i < n:
        while i < n and text[i].isspace():
            i += 1
        if i == n:
            break
        start = i
        if text[i] in "+-":
            i += 1
        while i < n and (text[i].isdigit() or text[i] == "."):
            i += 1
        try:
            amount = float(text[start:i])
        except ValueError:
            return None
        while i < n and text[i].isspace():
            i += 1
        unit_start = i
        while i < n and text[i].isalpha():
            i += 1
        unit = UNITS.get(text[unit_start:i])
        if unit is None:
            return None
        if unit[0] == "months":
            months += int(amount * unit[1])
        else:
            millis += amount * unit[1]
        seen = True
    return Duration(months, millis) if seen else None


def parse_date(text: str) -> Date | None:
    """``YYYY-MM-DD``, with an optional ``THH:mm[:ss]`` or `` HH:mm[:ss]``: None otherwise."""
    text = text.strip()
    if len(text) < 10 or text[4:5] != "-" or text[7:8] != "-":
        return None
    try:
        day = dt.date.fromisoformat(text[:10])
    except ValueError:
        return None
    if len(text) == 10:
        return Date(dt.datetime(day.year, day.month, day.day), has_time=False)
    try:
        moment = dt.datetime.fromisoformat(text[:10] + "T" + text[11:])
    except ValueError:
        return None
    if moment.tzinfo is not None:  # a written offset: the same moment in local time
        moment = moment.astimezone().replace(tzinfo=None)
    return Date(moment)


def add_duration(date: Date, duration: Duration, sign: int) -> Date:
    moment = date.moment
    if duration.months:
        total = moment.year * 12 + (moment.month - 1) + sign * duration.months
        year, month = divmod(total, 12)
        last = _days_in_month(year, month + 1)
        moment = moment.replace(year=year, month=month + 1, day=min(moment.day, last))
    moment = moment + dt.timedelta(milliseconds=sign * duration.millis)
    keeps_day = duration.millis % 86_400_000 == 0
    return Date(moment, has_time=date.has_time or not keeps_day)


def _days_in_month(year: int, month: int) -> int:
    if month == 12:
        return 31
    return (dt.date(year, month + 1, 1) - dt.date(year, month, 1)).days


def type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "object"
    return {Date: "date", Duration: "duration", Link: "link", FileValue: "file", Regex: "regexp"}[
        type(value)
    ]


def truthy(value: Any) -> bool:
    """JavaScript's truthiness, except that an empty list or object is false (SEMANTICS 15.3:
    an empty list property shows as empty in Obsidian)."""
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value != 0 and not math.isnan(value)
    if isinstance(value, str | list | dict):
        return len(value) > 0
    return True


def number_text(value: float) -> str:
    """A number as JavaScript prints it: 3, 2.5, 0.1."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == int(value) and abs(value) < 1e21:
        return str(int(value))
    return repr(value)


def to_text(value: Any) -> str:
    """``toString()``: the text of any value."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return number_text(value)
    if isinstance(value, list):
        return ", ".join(to_text(item) for item in value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {to_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, Date):
        return value.text()
    if isinstance(value, Duration):
        return number_text(value.total_ms())
    if isinstance(value, Link):
        return value.text()
    if isinstance(value, FileValue):
        return str(value.row.path)
    return f"/{value.pattern}/{value.flags}"


def _target(value: Any) -> str | None:
    """The vault path a link or file stands for (links and files compare by it)."""
    if isinstance(value, FileValue):
        return str(value.row.path)
    if isinstance(value, Link):
        return value.path
    return None


def equal(a: Any, b: Any) -> bool:
    """``==``: same type and value; a link equals a file it resolves to; else false."""
    if isinstance(a, Link | FileValue) and isinstance(b, Link | FileValue):
        return _target(a) == _target(b)
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if type(a) is not type(b):
        return False
    if isinstance(a, Date):
        return a.ms() == b.ms()
    if isinstance(a, Duration):
        return bool(a.total_ms() == b.total_ms())
    if isinstance(a, list):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(equal(a[k], b[k]) for k in a)
    if isinstance(a, Regex):
        return bool(a.pattern == b.pattern and a.flags == b.flags)
    return bool(a == b)


def order_key(value: Any) -> float | str | None:
    """The comparable of an ordered value (number, string, date, duration), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return value
    if isinstance(value, str):
        return value
    if isinstance(value, Date):
        return value.ms()
    if isinstance(value, Duration):
        return value.total_ms()
    return None


def compare(op: str, a: Any, b: Any) -> bool:
    """``< > <= >=`` over two numbers, two strings or two dates; anything else is false."""
    ka, kb = order_key(a), order_key(b)
    if ka is None or kb is None or isinstance(ka, str) is not isinstance(kb, str):
        return False
    if type(a) is not type(b) and not (isinstance(a, int | float) and isinstance(b, int | float)):
        return False
    if op == "<":
        return ka < kb  # type: ignore[operator]
    if op == ">":
        return ka > kb  # type: ignore[operator]
    if op == "<=":
        return ka <= kb  # type: ignore[operator]
    return ka >= kb  # type: ignore[operator]


def arithmetic(op: str, a: Any, b: Any) -> Any:
    """``+ - * / %``; a date with a duration (or duration text); text joined by ``+``;
    null for any other mix (SEMANTICS 15.3)."""
    if isinstance(a, Date):
        return _date_arithmetic(op, a, b)
    if isinstance(a, Duration) and isinstance(b, int | float) and not isinstance(b, bool):
        if op == "*":
            return Duration(int(a.months * b), a.millis * b)
        if op == "/" and b:
            return Duration(int(a.months / b), a.millis / b)
        return None
    if isinstance(a, Duration) and isinstance(b, Duration) and op in "+-":
        sign = 1 if op == "+" else -1
        return Duration(a.months + sign * b.months, a.millis + sign * b.millis)
    if op == "+" and (isinstance(a, str) or isinstance(b, str)):
        if a is None or b is None:
            return None
        return to_text(a) + to_text(b)
    if not _is_number(a) or not _is_number(b):
        return None
    return _number_arithmetic(op, a, b)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _number_arithmetic(op: str, a: float, b: float) -> float | None:
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        if b == 0:
            return None
        result = a / b
        return int(result) if result == int(result) and abs(result) < 2**53 else result
    if b == 0:
        return None
    return math.fmod(a, b)


def _date_arithmetic(op: str, a: Date, b: Any) -> Any:
    if isinstance(b, Date):
        return a.ms() - b.ms() if op == "-" else None
    duration = parse_duration(b) if isinstance(b, str) else b
    if not isinstance(duration, Duration) or op not in "+-":
        return None
    return add_duration(a, duration, 1 if op == "+" else -1)
