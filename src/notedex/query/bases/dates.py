"""Dates as Obsidian writes them: Moment.js format tokens and ``relative()`` (SEMANTICS 15.4)."""

from __future__ import annotations

import datetime as dt

MONTHS = (
    "January February March April May June July August September October November December"
).split()
WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()


def _ordinal(n: int) -> str:
    if 10 <= n % 100 <= 20:
        return f"{n}th"
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th') }"


def _tokens(m: dt.datetime) -> dict[str, str]:
    hour12 = m.hour % 12 or 12
    return {
        "YYYY": f"{m.year:04d}",
        "YY": f"{m.year % 100:02d}",
        "MMMM": MONTHS[m.month - 1],
        "MMM": MONTHS[m.month - 1][:3],
        "MM": f"{m.month:02d}",
        "M": str(m.month),
        "Do": _ordinal(m.day),
        "DD": f"{m.day:02d}",
        "D": str(m.day),
        "dddd": WEEKDAYS[m.weekday()],
        "ddd": WEEKDAYS[m.weekday()][:3],
        "HH": f"{m.hour:02d}",
        "H": str(m.hour),
        "hh": f"{hour12:02d}",
        "h": str(hour12),
        "mm": f"{m.minute:02d}",
        "m": str(m.minute),
        "ss": f"{m.second:02d}",
        "s": str(m.second),
        "SSS": f"{m.microsecond // 1000:03d}",
        "A": "AM" if m.hour < 12 else "PM",
        "a": "am" if m.hour < 12 else "pm",
    }


# Longest first, so that YYYY is not read as YY twice.
_ORDER = sorted(_tokens(dt.datetime(2000, 1, 1)), key=len, reverse=True)


def format_date(moment: dt.datetime, pattern: str) -> str:
    """``date.format(pattern)``: Moment's tokens; ``[text]`` is literal; other letters stay."""
    values = _tokens(moment)
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern[i] == "[":
            end = pattern.find("]", i)
            if end != -1:
                out.append(pattern[i + 1 : end])
                i = end + 1
                continue
        for token in _ORDER:
            if pattern.startswith(token, i):
                out.append(values[token])
                i += len(token)
                break
        else:
            out.append(pattern[i])
            i += 1
    return "".join(out)


def relative(moment: dt.datetime, now: dt.datetime) -> str:
    """Moment's ``fromNow()``: "a few seconds ago", "3 days ago", "in 2 months"."""
    seconds = (now - moment).total_seconds()
    past = seconds >= 0
    s = abs(seconds)
    minutes, hours, days = s / 60, s / 3600, s / 86400
    if s < 45:
        text = "a few seconds"
    elif s < 90:
        text = "a minute"
    elif minutes < 45:
        text = f"{round(minutes)} minutes"
    elif minutes < 90:
        text = "an hour"
    elif hours < 22:
        text = f"{round(hours)} hours"
    elif hours < 36:
        text = "a day"
    elif days < 26:
        text = f"{round(days)} days"
    elif days < 45:
        text = "a month"
    elif days < 320:
        text = f"{round(days / 30.4)} months"
    elif days < 548:
        text = "a year"
    else:
        text = f"{round(days / 365)} years"
    return f"{text} ago" if past else f"in {text}"
