"""The documented functions of Bases: global ones and the methods of each type
(SEMANTICS 15.4). Each takes its receiver (methods), its evaluated arguments and the
scope; a wrong type of receiver or argument gives null, never an exception.

Over 400 lines on purpose: one table per documented type, so the Functions page is read in
one place and `base --check` knows every name from these tables."""

from __future__ import annotations

import datetime as dt
import math

from notedex.query.bases.dates import format_date, relative
from notedex.query.bases.values import (
    Date,
    Duration,
    FileValue,
    Link,
    Regex,
    equal,
    order_key,
    parse_date,
    parse_duration,
    to_text,
    truthy,
    type_name,
)

TYPE_CHECKING = False  # no `typing` on the base path (design/bases.md); mypy honours the name
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Fn = Callable[..., Any]

# Rendering-only globals: they make pictures and HTML, which a headless answer has no use for.
REFUSED_GLOBALS = {"html", "image", "icon"}
# The list methods whose argument is an expression run per element (value, index, acc).
LAMBDA_METHODS = {"filter", "map", "reduce"}


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value


def _int(value: float) -> float:
    return int(value) if value == int(value) and abs(value) < 2**53 else value


# -- global ------------------------------------------------------------------------------------


def g_date(scope: Any, value: Any = None) -> Any:
    if isinstance(value, Date):
        return value
    return parse_date(value) if isinstance(value, str) else None


def g_duration(scope: Any, value: Any = None) -> Any:
    return parse_duration(value) if isinstance(value, str) else None


def g_escape_html(scope: Any, value: Any = None) -> Any:
    import html

    return html.escape(value, quote=True) if isinstance(value, str) else None


def g_file(scope: Any, value: Any = None) -> Any:
    if isinstance(value, FileValue):
        return value
    if isinstance(value, Link):
        return scope.vault.file_of(value.path)
    return scope.vault.file_of(value) if isinstance(value, str) else None


def g_if(scope: Any, condition: Any = None, yes: Any = None, no: Any = None) -> Any:
    return yes if truthy(condition) else no


def g_link(scope: Any, target: Any = None, display: Any = None) -> Any:
    shown = None if display is None else to_text(display)
    if isinstance(target, FileValue):
        return Link(target.row.path, shown, resolved=True)
    if isinstance(target, Link):
        return Link(target.path, shown or target.display, target.resolved)
    if not isinstance(target, str):
        return None
    return scope.vault.link_to(target, shown)


def g_list(scope: Any, value: Any = None) -> Any:
    return value if isinstance(value, list) else [value]


def g_max(scope: Any, *values: Any) -> Any:
    numbers = [_num(v) for v in values]
    return None if not numbers or None in numbers else max(numbers)  # type: ignore[type-var]


def g_min(scope: Any, *values: Any) -> Any:
    numbers = [_num(v) for v in values]
    return None if not numbers or None in numbers else min(numbers)  # type: ignore[type-var]


def g_now(scope: Any) -> Any:
    return Date(scope.now)


def g_today(scope: Any) -> Any:
    return Date(scope.now.replace(hour=0, minute=0, second=0, microsecond=0), has_time=False)


def g_number(scope: Any, value: Any = None) -> Any:
    if isinstance(value, bool):
        return 1 if value else 0
    if isinstance(value, int | float):
        return value
    if isinstance(value, Date):
        return _int(value.ms())
    if isinstance(value, Duration):
        return _int(value.total_ms())
    if isinstance(value, str):
        try:
            return _int(float(value.strip()))
        except ValueError:
            return None
    return None


GLOBALS: dict[str, Fn] = {
    "date": g_date,
    "duration": g_duration,
    "escapeHTML": g_escape_html,
    "file": g_file,
    "if": g_if,
    "link": g_link,
    "list": g_list,
    "max": g_max,
    "min": g_min,
    "now": g_now,
    "number": g_number,
    "today": g_today,
}

# -- any ---------------------------------------------------------------------------------------


def m_is_truthy(value: Any, scope: Any) -> Any:
    return truthy(value)


def m_to_string(value: Any, scope: Any) -> Any:
    return to_text(value)


def m_is_type(value: Any, scope: Any, name: Any = None) -> Any:
    return isinstance(name, str) and type_name(value) == name


def m_is_empty(value: Any, scope: Any) -> Any:
    if value is None:
        return True
    if isinstance(value, str | list | dict):
        return len(value) == 0
    return False


ANY: dict[str, Fn] = {
    "isTruthy": m_is_truthy,
    "toString": m_to_string,
    "isType": m_is_type,
    "isEmpty": m_is_empty,
}

# -- date --------------------------------------------------------------------------------------


def d_date(value: Date, scope: Any) -> Any:
    return Date(value.moment.replace(hour=0, minute=0, second=0, microsecond=0), has_time=False)


def d_format(value: Date, scope: Any, pattern: Any = None) -> Any:
    return format_date(value.moment, pattern) if isinstance(pattern, str) else None


def d_time(value: Date, scope: Any) -> Any:
    return value.moment.strftime("%H:%M:%S")


def d_relative(value: Date, scope: Any) -> Any:
    return relative(value.moment, scope.now)


DATE: dict[str, Fn] = {"date": d_date, "format": d_format, "time": d_time, "relative": d_relative}
DATE_FIELDS = ("year", "month", "day", "hour", "minute", "second", "millisecond")


def date_field(value: Date, name: str) -> Any:
    if name == "millisecond":
        return value.moment.microsecond // 1000
    return getattr(value.moment, name)


# -- string ------------------------------------------------------------------------------------


def _texts(values: tuple[Any, ...]) -> list[str] | None:
    return list(values) if all(isinstance(v, str) for v in values) else None


def s_contains(value: str, scope: Any, part: Any = None) -> Any:
    return isinstance(part, str) and part in value


def s_contains_all(value: str, scope: Any, *parts: Any) -> Any:
    texts = _texts(parts)
    return texts is not None and all(p in value for p in texts)


def s_contains_any(value: str, scope: Any, *parts: Any) -> Any:
    texts = _texts(parts)
    return texts is not None and any(p in value for p in texts)


def s_ends_with(value: str, scope: Any, part: Any = None) -> Any:
    return isinstance(part, str) and value.endswith(part)


def s_starts_with(value: str, scope: Any, part: Any = None) -> Any:
    return isinstance(part, str) and value.startswith(part)


def s_lower(value: str, scope: Any) -> Any:
    return value.lower()


def s_replace(value: str, scope: Any, pattern: Any = None, replacement: Any = None) -> Any:
    if not isinstance(replacement, str):
        return None
    if isinstance(pattern, str):
        return value.replace(pattern, replacement)
    if isinstance(pattern, Regex):
        count = 0 if "g" in pattern.flags else 1
        return pattern.compiled.sub(lambda _m: replacement, value, count=count)
    return None


def s_repeat(value: str, scope: Any, count: Any = None) -> Any:
    number = _num(count)
    return None if number is None or number < 0 else value * int(number)


def s_reverse(value: str, scope: Any) -> Any:
    return value[::-1]


def _bounds(start: Any, end: Any) -> tuple[int, int | None] | None:
    first, last = _num(start), _num(end)
    if first is None or (end is not None and last is None):
        return None
    return int(first), None if last is None else int(last)


def s_slice(value: Any, scope: Any, start: Any = None, end: Any = None) -> Any:
    bounds = _bounds(start, end)
    return None if bounds is None else value[bounds[0] : bounds[1]]


def s_split(value: str, scope: Any, separator: Any = None, limit: Any = None) -> Any:
    if isinstance(separator, Regex):
        parts = separator.compiled.split(value)
    elif isinstance(separator, str):
        parts = list(value) if separator == "" else value.split(separator)
    else:
        return None
    count = _num(limit)
    return parts if count is None else parts[: int(count)]


def s_title(value: str, scope: Any) -> Any:
    return " ".join(word[:1].upper() + word[1:] for word in value.split(" "))


def s_trim(value: str, scope: Any) -> Any:
    return value.strip()


STRING: dict[str, Fn] = {
    "contains": s_contains,
    "containsAll": s_contains_all,
    "containsAny": s_contains_any,
    "endsWith": s_ends_with,
    "lower": s_lower,
    "replace": s_replace,
    "repeat": s_repeat,
    "reverse": s_reverse,
    "slice": s_slice,
    "split": s_split,
    "startsWith": s_starts_with,
    "title": s_title,
    "trim": s_trim,
}

# -- number ------------------------------------------------------------------------------------


def n_abs(value: float, scope: Any) -> Any:
    return abs(value)


def n_ceil(value: float, scope: Any) -> Any:
    return math.ceil(value)


def n_floor(value: float, scope: Any) -> Any:
    return math.floor(value)


def n_round(value: float, scope: Any, digits: Any = None) -> Any:
    places = _num(digits)
    scale = 10 ** int(places or 0)
    # JavaScript's Math.round: halves go up (2.5 -> 3, -2.5 -> -2), not to even.
    return _int(math.floor(value * scale + 0.5) / scale)


def n_to_fixed(value: float, scope: Any, precision: Any = None) -> Any:
    places = _num(precision)
    if places is None or not 0 <= places <= 100:
        return None
    text, places = repr(float(value)), int(places)
    if "e" in text or "n" in text or places > 6:  # exponent, inf, nan; Decimal's 0E-7 form
        from decimal import ROUND_HALF_UP, Decimal  # 3-4 ms of imports: only for these

        quantum = Decimal(1).scaleb(-places)
        return str(Decimal(text).quantize(quantum, rounding=ROUND_HALF_UP))
    return _fixed(text, places)


def _fixed(text: str, places: int) -> str:
    """A float's shortest text (no exponent) rounded to ``places`` decimals, halves away from
    zero, the sign kept (``-0.0``): what ``Decimal(text).quantize`` with ROUND_HALF_UP gives,
    in integers."""
    negative = text.startswith("-")
    whole, _, fraction = text.lstrip("-").partition(".")
    scaled = int(whole + fraction)  # the value times 10 ** len(fraction)
    extra = len(fraction) - places
    if extra > 0:
        scaled, rest = divmod(scaled, 10**extra)
        scaled += 2 * rest >= 10**extra
    else:
        scaled *= 10**-extra
    digits = str(scaled).rjust(places + 1, "0")
    fixed = f"{digits[:-places]}.{digits[-places:]}" if places else digits
    return "-" + fixed if negative else fixed


NUMBER: dict[str, Fn] = {
    "abs": n_abs,
    "ceil": n_ceil,
    "floor": n_floor,
    "round": n_round,
    "toFixed": n_to_fixed,
}

# -- list --------------------------------------------------------------------------------------


def _has(items: list[Any], wanted: Any) -> bool:
    return any(equal(item, wanted) for item in items)


def l_contains(value: list[Any], scope: Any, wanted: Any = None) -> Any:
    return _has(value, wanted)


def l_contains_all(value: list[Any], scope: Any, *wanted: Any) -> Any:
    return all(_has(value, w) for w in wanted)


def l_contains_any(value: list[Any], scope: Any, *wanted: Any) -> Any:
    return any(_has(value, w) for w in wanted)


def l_flat(value: list[Any], scope: Any) -> Any:
    out: list[Any] = []
    for item in value:
        out.extend(item if isinstance(item, list) else [item])
    return out


def l_join(value: list[Any], scope: Any, separator: Any = ",") -> Any:
    return to_text(separator).join(to_text(item) for item in value)


def l_reverse(value: list[Any], scope: Any) -> Any:
    return value[::-1]


def l_sort(value: list[Any], scope: Any) -> Any:
    return sorted(value, key=sort_key)


def l_unique(value: list[Any], scope: Any) -> Any:
    out: list[Any] = []
    for item in value:
        if not _has(out, item):
            out.append(item)
    return out


def _numbers(value: list[Any]) -> list[float]:
    return [v for v in value if _num(v) is not None]


def l_sum(value: list[Any], scope: Any) -> Any:
    return _int(sum(_numbers(value)))


def l_mean(value: list[Any], scope: Any) -> Any:
    numbers = _numbers(value)
    return _int(sum(numbers) / len(numbers)) if numbers else None


def l_median(value: list[Any], scope: Any) -> Any:
    import statistics

    numbers = _numbers(value)
    return _int(statistics.median(numbers)) if numbers else None


def l_min(value: list[Any], scope: Any) -> Any:
    numbers = _numbers(value)
    return min(numbers) if numbers else None


def l_max(value: list[Any], scope: Any) -> Any:
    numbers = _numbers(value)
    return max(numbers) if numbers else None


LIST: dict[str, Fn] = {
    "contains": l_contains,
    "containsAll": l_contains_all,
    "containsAny": l_contains_any,
    "flat": l_flat,
    "join": l_join,
    "reverse": l_reverse,
    "slice": s_slice,
    "sort": l_sort,
    "unique": l_unique,
    # Not on the Functions page, but the Bases syntax page's summary uses values.mean().
    "mean": l_mean,
    "sum": l_sum,
    "median": l_median,
    "min": l_min,
    "max": l_max,
}


def sort_key(value: Any) -> tuple[int, Any]:
    """Nulls last; numbers, then dates, then text, then anything else by its text."""
    if value is None:
        return (9, "")
    key = order_key(value)
    if isinstance(key, str):
        return (3, key.lower())
    if isinstance(value, Date):
        return (2, key)
    if key is not None:
        return (1, key)
    if isinstance(value, bool):
        return (0, value)
    return (4, to_text(value).lower())


# -- link, file, object, regexp ----------------------------------------------------------------


def k_as_file(value: Link, scope: Any) -> Any:
    return scope.vault.file_of(value.path)


def k_links_to(value: Link, scope: Any, other: Any = None) -> Any:
    source = scope.vault.file_of(value.path)
    return source is not None and f_has_link(source, scope, other)


def f_as_link(value: FileValue, scope: Any, display: Any = None) -> Any:
    return Link(value.row.path, None if display is None else to_text(display), resolved=True)


def f_has_link(value: FileValue, scope: Any, other: Any = None) -> Any:
    targets = scope.vault.targets_of(other)
    return bool(targets) and any(link.path in targets for link in value.row.links())


def f_has_property(value: FileValue, scope: Any, name: Any = None) -> Any:
    return isinstance(name, str) and name in value.row.properties()


def f_has_tag(value: FileValue, scope: Any, *names: Any) -> Any:
    keys = value.row.tag_keys()
    for name in names:
        if not isinstance(name, str):
            continue
        wanted = name.lstrip("#").lower()
        if any(key == wanted or key.startswith(wanted + "/") for key in keys):
            return True
    return False


def f_in_folder(value: FileValue, scope: Any, folder: Any = None) -> Any:
    if not isinstance(folder, str):
        return False
    prefix = folder.strip("/")
    return prefix == "" or str(value.row.path).startswith(prefix + "/")


def o_keys(value: dict[str, Any], scope: Any) -> Any:
    return list(value)


def o_values(value: dict[str, Any], scope: Any) -> Any:
    return list(value.values())


def r_matches(value: Regex, scope: Any, text: Any = None) -> Any:
    return isinstance(text, str) and value.compiled.search(text) is not None


LINK: dict[str, Fn] = {"asFile": k_as_file, "linksTo": k_links_to}
FILE: dict[str, Fn] = {
    "asLink": f_as_link,
    "hasLink": f_has_link,
    "hasProperty": f_has_property,
    "hasTag": f_has_tag,
    "inFolder": f_in_folder,
}
OBJECT: dict[str, Fn] = {"keys": o_keys, "values": o_values}
REGEXP: dict[str, Fn] = {"matches": r_matches}

METHODS: dict[str, dict[str, Fn]] = {
    "date": DATE,
    "string": STRING,
    "number": NUMBER,
    "list": LIST,
    "link": LINK,
    "file": FILE,
    "object": OBJECT,
    "regexp": REGEXP,
}
KNOWN_METHODS = set(ANY) | LAMBDA_METHODS | {name for table in METHODS.values() for name in table}


def call_method(value: Any, name: str, args: list[Any], scope: Any) -> Any:
    """``value.name(args)``: the method of the value's type, or an Any method; null when the
    value's type has no such method (as Obsidian shows an error in the cell)."""
    table = METHODS.get(type_name(value), {})
    method = table.get(name) or ANY.get(name)
    if method is None:
        return None
    try:
        return method(value, scope, *args)
    except TypeError:  # too many arguments: a wrong call is an empty cell, not a crash
        return None


def now() -> dt.datetime:
    return dt.datetime.now().replace(microsecond=0)
