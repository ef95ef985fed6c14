"""``NoteFilter``: which notes a command answers about, as one value (issue 32).

Built once, from the command line (``cli.handlers.note_filter``) or from MCP arguments
(``from_mapping``), and passed whole to every listing; ``store.filters`` turns it into SQL.
Adding a kind of filter touches this value, its SQL and its option, not the commands.
Stdlib only and no ``re``: the query path imports it (STYLE 7).
"""

from __future__ import annotations

from notedex.errors import UsageError
from notedex.vault.properties import fold_name, operand_kind

TYPE_CHECKING = False  # no `typing` import on the query path; mypy honours the name
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any
else:
    Any = object  # the annotations of _Frozen, evaluated by nothing at run time

# Longest first: ">=" before ">", "!=" before a "!" that negates a name.
OPERATORS = (">=", "<=", "!=", "~=", "=", "<", ">")
PRESENT = "present"
ABSENT = "absent"
SORTS = ("modified", "created", "title", "path")
WHERE_HELP = (
    "expected NAME=VALUE, NAME!=VALUE, NAME>=N, NAME<=N, NAME>N, NAME<N, NAME~=ITEM (list "
    "contains), NAME (checkbox true or property set) or !NAME (missing or false)"
)


class _Frozen:
    """A frozen value with ``__slots__``: what ``@dataclass(frozen=True, slots=True)`` makes,
    written out because ``dataclasses`` costs 40 ms of imports (``inspect``, ``re``), twice the
    interpreter's start-up, on every filtered query (ARCHITECTURE "The hot-path import budget")."""

    __slots__: tuple[str, ...] = ()
    _names: tuple[str, ...] = ()
    """The fields in order (``__slots__`` is sorted, as ruff wants it)."""
    _defaults: tuple[Any, ...] = ()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        values = dict(zip(self._names, self._defaults, strict=True))
        values.update(zip(self._names, args, strict=False))
        unknown = set(kwargs) - set(self._names)
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field {sorted(unknown)[0]!r}")
        values.update(kwargs)
        for name in self._names:
            object.__setattr__(self, name, values[name])

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen: use replace()")

    def _fields(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._names)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, _Frozen)
            and type(other) is type(self)
            and (self._fields() == other._fields())
        )

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        parts = (f"{name}={getattr(self, name)!r}" for name in self._names)
        return f"{type(self).__name__}({', '.join(parts)})"

    def replace(self, **changes: Any) -> Any:
        return type(self)(**{**dict(zip(self._names, self._fields(), strict=True)), **changes})


class Condition(_Frozen):
    """One ``--where``: a property (name folded), an operator, and the operand as written with
    its type (SEMANTICS 14.3); ``declared`` is the vault's type for the name, if it sets one."""

    __slots__ = ("declared", "key", "kind", "op", "operand")
    _names = ("key", "op", "operand", "kind", "declared")
    _defaults = ("", "", "", "", None)
    key: str
    op: str
    operand: str
    kind: str
    declared: str | None


class NoteFilter(_Frozen):
    """Every condition a note must meet (AND), and the order a listing gives them.

    ``folders`` is an OR (a note in any of them, or below); dates are nanoseconds since the
    epoch, ``since`` inclusive and ``before`` exclusive. ``sort`` is None for each command's
    own order (path for scan, best first for search)."""

    __slots__ = (
        "created_before",
        "created_since",
        "folders",
        "modified_before",
        "modified_since",
        "note_type",
        "reverse",
        "sort",
        "tags",
        "where",
    )
    _names = (
        "tags",
        "note_type",
        "folders",
        "where",
        "modified_since",
        "modified_before",
        "created_since",
        "created_before",
        "sort",
        "reverse",
    )
    _defaults = ((), None, (), (), None, None, None, None, None, False)
    tags: tuple[str, ...]
    note_type: str | None
    folders: tuple[str, ...]
    where: tuple[Condition, ...]
    modified_since: int | None
    modified_before: int | None
    created_since: int | None
    created_before: int | None
    sort: str | None
    reverse: bool

    @property
    def active(self) -> bool:
        """Whether any note can be left out (the order aside)."""
        return bool(
            self.tags
            or self.note_type
            or self.folders
            or self.where
            or self.modified_since is not None
            or self.modified_before is not None
            or self.created_since is not None
            or self.created_before is not None
        )


EVERY_NOTE = NoteFilter()


def parse_where(text: str, declared: Mapping[str, str] | None = None) -> Condition:
    """One ``--where`` expression, or a UsageError saying what was expected."""
    expr = text.strip()
    first = min(
        ((expr.find(op), op) for op in OPERATORS if expr.find(op) > 0),
        default=None,
        key=lambda found: (found[0], -len(found[1])),
    )
    types = declared or {}
    if first is None:
        negated = expr.startswith("!")
        name = expr[1:].strip() if negated else expr
        if not name or any(ch in name for ch in "=<>~!"):
            raise UsageError(f"--where {text!r}: {WHERE_HELP}")
        key = fold_name(name)
        return Condition(key, ABSENT if negated else PRESENT, declared=types.get(key))
    at, op = first
    name, operand = expr[:at].strip(), expr[at + len(op) :].strip()
    if not name or name.startswith("!") or any(ch in name for ch in "<>~="):
        raise UsageError(f"--where {text!r}: {WHERE_HELP}")
    if not operand:
        raise UsageError(f"--where {text!r}: expected a value after {op}")
    if operand[0] in "=<>~":
        raise UsageError(f"--where {text!r}: {WHERE_HELP}")
    key = fold_name(name)
    return Condition(key, op, operand, operand_kind(operand), types.get(key))


def parse_when(text: str, option: str, *, now_ns: int | None = None) -> int:
    """``--modified-since`` and the like: ``YYYY-MM-DD`` (local midnight), a date and time
    (ISO 8601, no zone: local time), or ``Nd`` (N days before now); nanoseconds since the epoch."""
    import datetime as dt
    import time

    value = text.strip()
    if value.endswith("d") and value[:-1].isdigit() and value[:-1].isascii():
        now = time.time_ns() if now_ns is None else now_ns
        return now - int(value[:-1]) * 86_400 * 1_000_000_000
    try:
        when = dt.datetime.fromisoformat(value)
    except ValueError:
        raise UsageError(
            f"{option} {text!r}: expected a date (2026-12-31), a date and time "
            "(2026-12-31T18:00) or a number of days back (7d)"
        ) from None
    if when.tzinfo is None:
        when = when.astimezone()  # no zone: local time
    return int(when.timestamp()) * 1_000_000_000 + when.microsecond * 1000


def check_sort(sort: str | None) -> str | None:
    """``--sort``: one of ``SORTS``, or a property name (folded); '' is a usage error."""
    if sort is None:
        return None
    name = sort.strip()
    if not name:
        raise UsageError(f"--sort: expected {', '.join(SORTS)} or a property name")
    return name if name in SORTS else fold_name(name)


def from_options(option: Callable[[str], Any], declared: Mapping[str, str] | None) -> NoteFilter:
    """A NoteFilter from the command line: ``option(dest)`` is the value of the option stored
    under ``dest`` (``cli.commands.FILTER`` and ``SORT``), None when not given. A new kind of
    filter adds its option there, its field and its line here, and its SQL in store.filters."""

    def when(dest: str) -> int | None:
        value = option(dest)
        return None if value is None else parse_when(value, "--" + dest.replace("_", "-"))

    tags = option("tag")
    return NoteFilter(
        tags=tuple([tags] if isinstance(tags, str) else tags or ()),
        note_type=option("note_type"),
        folders=tuple(clean_folder(f) for f in option("folder") or ()),
        where=tuple(parse_where(w, declared) for w in option("where") or ()),
        modified_since=when("modified_since"),
        modified_before=when("modified_before"),
        created_since=when("created_since"),
        created_before=when("created_before"),
        sort=check_sort(option("sort")),
        reverse=bool(option("reverse")),
    )


def _texts(value: Any, name: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(value)
    raise UsageError(f"filter.{name} must be a string or a list of strings")


def from_mapping(
    spec: Mapping[str, Any] | None, declared: Mapping[str, str] | None = None
) -> NoteFilter:
    """A NoteFilter from MCP's ``filter`` argument: the command line's options as keys
    (``tag``, ``type``, ``folder``, ``where``, ``modifiedSince``, ``modifiedBefore``,
    ``createdSince``, ``createdBefore``, ``sort``, ``reverse``)."""
    if not spec:
        return EVERY_NOTE
    known = {
        "tag",
        "type",
        "folder",
        "where",
        "modifiedSince",
        "modifiedBefore",
        "createdSince",
        "createdBefore",
        "sort",
        "reverse",
    }
    unknown = sorted(set(spec) - known)
    if unknown:
        raise UsageError(f"filter has no key {unknown[0]!r}; known: {', '.join(sorted(known))}")
    note_type = spec.get("type")
    if note_type is not None and not isinstance(note_type, str):
        raise UsageError("filter.type must be a string")
    sort = spec.get("sort")
    if sort is not None and not isinstance(sort, str):
        raise UsageError("filter.sort must be a string")

    def when(name: str) -> int | None:
        value = spec.get(name)
        if value is None:
            return None
        if not isinstance(value, str):
            raise UsageError(f"filter.{name} must be a string")
        return parse_when(value, f"filter.{name}")

    return NoteFilter(
        tags=_texts(spec.get("tag"), "tag"),
        note_type=note_type or None,
        folders=tuple(clean_folder(f) for f in _texts(spec.get("folder"), "folder")),
        where=tuple(parse_where(w, declared) for w in _texts(spec.get("where"), "where")),
        modified_since=when("modifiedSince"),
        modified_before=when("modifiedBefore"),
        created_since=when("createdSince"),
        created_before=when("createdBefore"),
        sort=check_sort(sort),
        reverse=bool(spec.get("reverse", False)),
    )


def clean_folder(text: str) -> str:
    """A ``--folder`` as a vault path without slashes at its ends ('' is the whole vault)."""
    import unicodedata

    return unicodedata.normalize("NFC", text.replace("\\", "/")).strip().strip("/")
