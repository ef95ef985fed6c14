"""Property values typed as Obsidian types them (SEMANTICS 14): the rows the index stores per
value, the type of an operand written on the command line, and the vault's declared types.

Pure and stdlib only (no ``re``): the query path imports it to type ``--where`` operands and
read ``.obsidian/types.json``; the writer imports it to turn a note's properties into rows.
"""

from __future__ import annotations

import os
import unicodedata

TYPE_CHECKING = False  # no `typing` import on the query path; mypy honours the name
if TYPE_CHECKING:
    from typing import Any

TEXT = "text"
LIST = "list"
NUMBER = "number"
CHECKBOX = "checkbox"
DATE = "date"
DATETIME = "datetime"
NULL = "null"  # no value (an empty property): present in the note, but empty
OBJECT = "object"  # a nested mapping: Obsidian has no type for it; compared as nothing

# .obsidian/types.json names -> ours (multitext, tags and aliases are lists).
_DECLARED = {
    "text": TEXT,
    "multitext": LIST,
    "tags": LIST,
    "aliases": LIST,
    "number": NUMBER,
    "checkbox": CHECKBOX,
    "date": DATE,
    "datetime": DATETIME,
}

PropertyRow = tuple[str, int, int, str, "str | None", "str | None", "float | None"]
"""(key, position, is_list, kind, value, fold, num): one stored value of a note's property."""


def fold_name(name: str) -> str:
    """SEMANTICS 14.1: property names are one property whatever their case (NFC, lower)."""
    return unicodedata.normalize("NFC", name).lower()


def fold_text(text: str) -> str:
    """Text values compare without case (NFC, then ``str.lower``), as ``--tag`` and ``--type``."""
    return unicodedata.normalize("NFC", text).lower()


def _digits(text: str, start: int, end: int) -> bool:
    return all("0" <= ch <= "9" for ch in text[start:end])


def is_date(text: str) -> bool:
    """``YYYY-MM-DD``, a real calendar day."""
    if len(text) != 10 or text[4] != "-" or text[7] != "-":
        return False
    if not (_digits(text, 0, 4) and _digits(text, 5, 7) and _digits(text, 8, 10)):
        return False
    return _real_day(text)


def _real_day(text: str) -> bool:
    import datetime as dt

    try:
        dt.date(int(text[:4]), int(text[5:7]), int(text[8:10]))
    except ValueError:
        return False
    return True


def datetime_key(text: str) -> str | None:
    """``YYYY-MM-DDTHH:MM[:SS[.fff]]`` (or a space for the ``T``, a zone after it ignored) as
    ``YYYY-MM-DDTHH:MM:SS``; a date as its midnight; None for anything else."""
    if is_date(text):
        return text + "T00:00:00"
    if len(text) < 16 or not is_date(text[:10]) or text[10] not in "T ":
        return None
    clock = text[11:19] if len(text) >= 19 and text[16] == ":" else text[11:16] + ":00"
    if not (clock[2] == ":" and clock[5] == ":"):
        return None
    if not (_digits(clock, 0, 2) and _digits(clock, 3, 5) and _digits(clock, 6, 8)):
        return None
    if int(clock[:2]) > 23 or int(clock[3:5]) > 59 or int(clock[6:8]) > 59:
        return None
    return text[:10] + "T" + clock


def number_of(text: str) -> float | None:
    """A decimal number written as text (``2``, ``-1.5``, ``1e3``), or None (no nan, no inf)."""
    text = text.strip()
    if not text or not all(ch in "0123456789+-.eE_" for ch in text) or "_" in text:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value


def kind_of_text(text: str) -> str:
    """SEMANTICS 14.2: the type Obsidian gives a text value by its shape."""
    if is_date(text):
        return DATE
    if datetime_key(text) is not None:
        return DATETIME
    return TEXT


def operand_kind(text: str) -> str:
    """The type of a value written in ``--where`` (SEMANTICS 14.3): a number, a date, a date
    and time, ``true``/``false`` (a checkbox), else text."""
    if number_of(text) is not None:
        return NUMBER
    if text.lower() in ("true", "false"):
        return CHECKBOX
    return kind_of_text(text)


def _scalar_row(value: Any) -> tuple[str, str | None, str | None, float | None]:
    """(kind, value, fold, num) of one JSON-safe scalar (the index's ``notes.properties``)."""
    if value is None:
        return NULL, None, None, None
    if isinstance(value, bool):
        word = "true" if value else "false"
        return CHECKBOX, word, word, None
    if isinstance(value, int | float):
        return NUMBER, str(value), str(value), float(value)
    if isinstance(value, dict):
        import json

        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
        return OBJECT, text, None, None
    text = str(value)
    if not text.strip():
        return NULL, text, None, None
    kind = kind_of_text(text)
    if kind in (DATE, DATETIME):
        return kind, text, datetime_key(text), None
    return TEXT, text, fold_text(text), number_of(text)


def property_rows(properties: dict[str, Any]) -> list[PropertyRow]:
    """The stored rows of a note's properties (JSON-safe, as ``Note.properties`` holds them):
    one per scalar, one per list item (an empty list one ``null`` item), each typed by its
    value (SEMANTICS 14.2). Names are folded; the first spelling of a name is the note's."""
    rows: list[PropertyRow] = []
    seen: set[str] = set()
    for name, value in properties.items():
        key = fold_name(name)
        if key in seen:
            continue
        seen.add(key)
        if isinstance(value, list):
            items = value or [None]
            for position, item in enumerate(items):
                if isinstance(item, list):
                    item = str(item)
                rows.append((key, position, 1, *_scalar_row(item)))
        else:
            rows.append((key, 0, 0, *_scalar_row(value)))
    return rows


def declared_value(value: Any, declared: str | None) -> Any:
    """SEMANTICS 14.4: a property's value (JSON-safe, as YAML gives it) read as the vault
    declares its type: the one rule of declared types. ``store.filters`` follows it in SQL over
    the rows ``property_rows`` stores (a test holds the two to the same answers), Bases
    (``query.bases.rows``) through this function. A list type makes a single value a list of
    one; a list under another type is read item by item; under ``text`` every value is its
    text (``5`` is ``"5"``, a date-shaped text stays text); under ``number`` a text that reads
    as a number is that number; under ``checkbox`` the text ``true``/``false`` (any case) is a
    checkbox; under ``date``/``datetime`` a date or datetime stays one. A value the declared
    type cannot read is None: it compares as nothing (SEMANTICS 14.5). Empty values, objects,
    an unknown type and no declaration leave the value as it is."""
    if declared is None or value is None:
        return value
    if declared == LIST:
        return value if isinstance(value, list) else [value]
    if isinstance(value, list):
        return [declared_value(item, declared) for item in value]
    kind, text, _fold, num = _scalar_row(value)
    if kind in (NULL, OBJECT):
        return value
    if declared == TEXT:
        return text
    if declared == NUMBER:
        if kind == NUMBER or num is None:
            return value if kind == NUMBER else None
        return int(num) if num.is_integer() and abs(num) < 2**53 else num
    if declared == CHECKBOX:
        if kind == CHECKBOX:
            return value
        return {"true": True, "false": False}.get(str(text).lower()) if kind == TEXT else None
    if declared in (DATE, DATETIME):
        return value if kind in (DATE, DATETIME) else None
    return value


def declared_types(vault: str | os.PathLike[str]) -> dict[str, str]:
    """SEMANTICS 14.4: the types set in Obsidian (``.obsidian/types.json``), by folded name;
    {} when the file is missing or unreadable, and a type we do not know is left out. Read with
    ``os.path`` strings (no ``pathlib``: it brings ``re``); ``json`` only when the file is there."""
    try:
        with open(os.path.join(vault, ".obsidian", "types.json"), "rb") as file:
            raw = file.read(1 << 20)
    except OSError:
        return {}
    import json

    try:
        data = json.loads(raw)
    except ValueError:
        return {}
    types = data.get("types") if isinstance(data, dict) else None
    if not isinstance(types, dict):
        return {}
    return {
        fold_name(name): _DECLARED[kind]
        for name, kind in types.items()
        if isinstance(name, str) and isinstance(kind, str) and kind in _DECLARED
    }
