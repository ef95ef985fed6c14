"""Running one view of a base over the index: filters (global AND view), formulas, sort,
limit, groupBy and summaries (SEMANTICS 15.5), and ``--check``/``--list``.

Over 400 lines on purpose: a view's sections are run in one order here, read top to bottom."""

from __future__ import annotations

from notedex.errors import UsageError
from notedex.query.bases.check import Findings, formula_cycles, walk
from notedex.query.bases.evaluate import Scope, Unsupported, evaluate
from notedex.query.bases.functions import now as current_time
from notedex.query.bases.functions import sort_key
from notedex.query.bases.rows import Vault
from notedex.query.bases.syntax import parse
from notedex.query.bases.values import (
    Date,
    Duration,
    FileValue,
    Link,
    Regex,
    equal,
    number_text,
    to_text,
    truthy,
)
from notedex.store import bases as store

TYPE_CHECKING = False  # no `typing` on the base path (design/bases.md); mypy honours the name
if TYPE_CHECKING:
    import datetime as dt
    import sqlite3
    from collections.abc import Mapping
    from typing import Any

    Node = tuple[Any, ...]

SUMMARIES = (
    "Average",
    "Min",
    "Max",
    "Sum",
    "Range",
    "Median",
    "Stddev",
    "Earliest",
    "Latest",
    "Checked",
    "Unchecked",
    "Empty",
    "Filled",
    "Unique",
)


class Base:
    """A parsed base: its filter trees, formulas and views, checked for shape (exit 2)."""

    def __init__(self, data: Any, source: str) -> None:
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise UsageError(f"{source}: a base is a mapping of filters, formulas and views")
        self.source = source
        self.data = data
        self.filters = _filter_tree(data.get("filters"), source)
        formulas = data.get("formulas") or {}
        if not isinstance(formulas, dict):
            raise UsageError(f"{source}: formulas must be a mapping of names to expressions")
        self.formulas = {str(k): parse(_expression_text(v, source)) for k, v in formulas.items()}
        summaries = data.get("summaries") or {}
        if not isinstance(summaries, dict):
            raise UsageError(f"{source}: summaries must be a mapping of names to expressions")
        self.summaries = {str(k): parse(_expression_text(v, source)) for k, v in summaries.items()}
        views = data.get("views") or [{"type": "table", "name": "Table"}]
        if not isinstance(views, list) or not all(isinstance(v, dict) for v in views):
            raise UsageError(f"{source}: views must be a list of mappings")
        self.views = views
        properties = data.get("properties") or {}
        self.properties = properties if isinstance(properties, dict) else {}

    def view(self, name: str | None) -> dict[str, Any]:
        if name is None:
            return self.views[0]
        for view in self.views:
            if str(view.get("name")) == name:
                return view
        names = ", ".join(repr(str(v.get("name"))) for v in self.views)
        raise UsageError(f"{self.source}: no view named {name!r} (views: {names})")

    def display_name(self, column: str) -> str:
        config = self.properties.get(column)
        if isinstance(config, dict) and config.get("displayName"):
            return str(config["displayName"])
        return column


def _expression_text(value: Any, source: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if not isinstance(value, str):
        raise UsageError(f"{source}: an expression must be text, not {value!r}")
    return value


def _filter_tree(value: Any, source: str) -> Node | None:
    """``and``/``or``/``not`` mappings of lists, or one expression, as one tree."""
    if value is None:
        return None
    if isinstance(value, dict):
        if len(value) != 1 or next(iter(value)) not in ("and", "or", "not"):
            raise UsageError(f"{source}: a filter mapping has exactly one key: and, or or not")
        ((key, items),) = value.items()
        if items is None:
            items = []
        if not isinstance(items, list):
            raise UsageError(f"{source}: {key} takes a list of filters")
        children = [_filter_tree(item, source) for item in items]
        return ("group", key, tuple(c for c in children if c is not None))
    return ("expr", parse(_expression_text(value, source)))


def _passes(tree: Node | None, scope: Scope) -> bool:
    if tree is None:
        return True
    if tree[0] == "expr":
        return truthy(evaluate(tree[1], scope))
    results = (_passes(child, scope) for child in tree[2])
    if tree[1] == "and":
        return all(results)
    if tree[1] == "or":
        return any(results)
    return not any(results)


def _walk_tree(tree: Node | None, found: Findings) -> None:
    if tree is None:
        return
    if tree[0] == "expr":
        walk(tree[1], found)
        return
    found.use(f"filter {tree[1]}")
    for child in tree[2]:
        _walk_tree(child, found)


def column_node(column: str) -> Node:
    """A property id of ``order``/``sort``/``groupBy``: file.x, formula.x, note.x or x."""
    head, dot, rest = column.partition(".")
    if dot and head in ("file", "formula", "note"):
        return ("member", ("ident", head), rest)
    return ("member", ("ident", "note"), column)


def _sorts(view: dict[str, Any], source: str) -> list[tuple[str, bool]]:
    sorts = view.get("sort") or []
    if not isinstance(sorts, list):
        raise UsageError(f"{source}: a view's sort is a list of {{property, direction}}")
    out = []
    for item in sorts:
        if not isinstance(item, dict) or "property" not in item:
            raise UsageError(f"{source}: a view's sort is a list of {{property, direction}}")
        out.append((str(item["property"]), str(item.get("direction", "ASC")).upper() == "DESC"))
    return out


def _group_by(view: dict[str, Any], source: str) -> tuple[str, bool] | None:
    group = view.get("groupBy")
    if group is None:
        return None
    if isinstance(group, str):
        return group, False
    if not isinstance(group, dict) or "property" not in group:
        raise UsageError(f"{source}: groupBy is {{property, direction}}")
    return str(group["property"]), str(group.get("direction", "ASC")).upper() == "DESC"


def check(base: Base, view: dict[str, Any]) -> Findings:
    """Every construct the view uses, and the refused ones (``base --check``)."""
    found = Findings(set(base.formulas))
    for name in formula_cycles(base.formulas):
        found.refuse(f"formula.{name}", "refers to itself")
    _walk_tree(base.filters, found)
    _walk_tree(_filter_tree(view.get("filters"), base.source), found)
    columns = [str(c) for c in view.get("order") or ["file.name"]]
    sorts = _sorts(view, base.source)
    group = _group_by(view, base.source)
    used_formulas = [c.partition(".")[2] for c in columns if c.startswith("formula.")]
    for name in dict.fromkeys(used_formulas + list(base.formulas)):
        if name in base.formulas:
            walk(base.formulas[name], found)
    for column in columns + [s[0] for s in sorts] + ([group[0]] if group else []):
        walk(column_node(column), found)
    if sorts:
        found.use("sort")
    if group:
        found.use("groupBy")
    if view.get("limit") is not None:
        found.use("limit")
    summaries = view.get("summaries") or {}
    for column, name in summaries.items() if isinstance(summaries, dict) else ():
        if name in SUMMARIES:
            found.use(f"summary {name}")
        elif name in base.summaries:
            found.use(f"summary {name}")
            walk(base.summaries[name], found)
        else:
            found.refuse(f"summary {name}", "no such summary")
        walk(column_node(str(column)), found)
    return found


def _narrowing(trees: list[Node | None]) -> tuple[list[str], list[list[str]], set[int]]:
    """The folder and tag conditions every passing file meets (top-level AND), for SQL, and
    the ids of the filter trees SQL so decides (``_decided``)."""
    folders: list[tuple[str, Node]] = []
    tags: list[list[str]] = []
    decided: set[int] = set()
    stack = [t for t in trees if t is not None]
    while stack:
        tree = stack.pop()
        if tree[0] == "group":
            if tree[1] == "and":
                stack.extend(tree[2])
            continue
        node = tree[1]
        if node[0] != "call" or node[1][:2] != ("member", ("ident", "file")):
            continue
        args = node[2]
        if not args or not all(a[0] == "str" for a in args):
            continue
        if node[1][2] == "inFolder" and len(args) == 1:
            folders.append((args[0][1].strip("/"), tree))
        elif node[1][2] == "hasTag":
            tags.append([a[1].lstrip("#").lower() for a in args])
            decided.add(id(tree))
    # Only one folder condition narrows (several AND-ed folders are rare; Python decides them).
    usable = [f for f in folders if f[0]]
    if usable:
        decided.add(id(usable[0][1]))
    return ([usable[0][0]] if usable else []), tags, decided


def _decided(tree: Node | None, decided: set[int]) -> Node | None:
    """``tree`` without the conditions the SQL narrowing has applied exactly (SEMANTICS 15.4's
    ``file.inFolder``/``file.hasTag`` as ``store.bases.file_rows`` selects them): every
    narrowed row meets them, so evaluating them again per row (a tag read per file) decides
    nothing. ``and`` groups only, where ``_narrowing`` found them."""
    if tree is None or id(tree) in decided:
        return None
    if tree[0] == "group" and tree[1] == "and":
        kept = [_decided(child, decided) for child in tree[2]]
        return ("group", "and", tuple(child for child in kept if child is not None))
    return tree


def run(
    conn: sqlite3.Connection,
    base: Base,
    view_name: str | None,
    *,
    this_path: str | None = None,
    now: dt.datetime | None = None,
    declared: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """``base``'s view as rows (SEMANTICS 15); ``declared`` are the vault's property types
    (``vault.properties.declared_types``), which a base reads as the note filter does."""
    view = base.view(view_name)
    found = check(base, view)
    if found.refused:
        names = "; ".join(f"{c} ({why})" for c, why in found.refused.items())
        raise Unsupported(f"{base.source}: not implemented: {names}")
    view_filters = _filter_tree(view.get("filters"), base.source)
    folders, tags, decided = _narrowing([base.filters, view_filters])
    vault = Vault(conn, store.file_rows(conn, folders=folders, tags=tags), declared)
    filters = (_decided(base.filters, decided), _decided(view_filters, decided))
    return _answer(base, view, filters, vault, this_path, now or current_time())


def _answer(
    base: Base,
    view: dict[str, Any],
    filters: tuple[Node | None, Node | None],
    vault: Vault,
    this_path: str | None,
    now: dt.datetime,
) -> dict[str, Any]:
    """The view's answer over the narrowed rows; ``filters``: the global and the view's
    filters, less what the narrowing decided."""
    this = vault.file_of(this_path) if this_path else None
    scope = Scope(vault, base.formulas, now, this)
    kept = []
    for row in vault.rows:
        scope.at(row)
        if _passes(filters[0], scope) and _passes(filters[1], scope):
            kept.append(row)
    columns = [str(c) for c in view.get("order") or ["file.name"]]
    sorts = _sorts(view, base.source)
    group = _group_by(view, base.source)
    wanted = list(dict.fromkeys(columns + [s[0] for s in sorts] + ([group[0]] if group else [])))
    nodes = {column: column_node(column) for column in wanted}
    values = {}
    for row in kept:
        scope.at(row)
        values[row.path] = {c: evaluate(nodes[c], scope) for c in wanted}
    for column, descending in reversed(sorts) if not group else [*reversed(sorts), group]:
        kept = _sorted(kept, values, column, descending)
    limit = view.get("limit")
    if isinstance(limit, int) and not isinstance(limit, bool) and limit >= 0:
        kept = kept[:limit]
    rows = [{"path": r.path, **{c: to_json(values[r.path][c]) for c in columns}} for r in kept]
    groups: list[tuple[Any, list[str]]] | None = None
    if group:
        groups = []
        for row in kept:
            key = values[row.path][group[0]]
            if not groups or not equal(groups[-1][0], key):
                groups.append((key, []))
            groups[-1][1].append(row.path)
    summaries = _summaries(base, view, kept, scope)
    return {
        "base": base.source,
        "view": str(view.get("name") or ""),
        "columns": [{"id": c, "name": base.display_name(c)} for c in columns],
        "rows": rows,
        "groups": None
        if groups is None
        else [{"key": to_json(k), "paths": paths} for k, paths in groups],
        "summaries": summaries,
    }


def _sorted(
    rows: list[Any], values: dict[str, dict[str, Any]], column: str, descending: bool
) -> list[Any]:
    """Rows by one column, stable; empty values last either way."""
    rows = sorted(rows, key=lambda row: sort_key(values[row.path][column]), reverse=descending)
    empty = [row for row in rows if values[row.path][column] is None]
    return [row for row in rows if values[row.path][column] is not None] + empty


def _summaries(base: Base, view: dict[str, Any], kept: list[Any], scope: Scope) -> dict[str, Any]:
    wanted = view.get("summaries") or {}
    out: dict[str, Any] = {}
    for column, name in wanted.items() if isinstance(wanted, dict) else ():
        node = column_node(str(column))
        column_values = [evaluate(node, scope.at(row)) for row in kept]
        if name in SUMMARIES:
            out[str(column)] = to_json(summary(name, column_values))
        else:
            scope.locals = {"values": column_values}
            try:
                out[str(column)] = to_json(evaluate(base.summaries[name], scope))
            finally:
                scope.locals = {}
    return out


def _numbers(values: list[Any]) -> list[float]:
    return [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]


def summary(name: str, values: list[Any]) -> Any:  # noqa: C901 - one branch per summary
    """A built-in summary over a column's values (SEMANTICS 15.5)."""
    numbers = _numbers(values)
    dates = [v for v in values if isinstance(v, Date)]
    filled = [v for v in values if truthy(v) or v is False or v == 0]
    if name == "Average":
        return _whole(sum(numbers) / len(numbers)) if numbers else None
    if name == "Sum":
        return _whole(sum(numbers))
    if name == "Min":
        return min(numbers) if numbers else None
    if name == "Max":
        return max(numbers) if numbers else None
    if name == "Range":
        if dates:
            return _whole(max(d.ms() for d in dates) - min(d.ms() for d in dates))
        return _whole(max(numbers) - min(numbers)) if numbers else None
    if name in ("Median", "Stddev"):
        import statistics  # costs 10 ms of imports (random, decimal): only when asked

        if not numbers:
            return None
        return (
            _whole(statistics.median(numbers)) if name == "Median" else statistics.pstdev(numbers)
        )
    if name == "Earliest":
        return min(dates, key=lambda d: d.ms()) if dates else None
    if name == "Latest":
        return max(dates, key=lambda d: d.ms()) if dates else None
    if name == "Checked":
        return sum(1 for v in values if v is True)
    if name == "Unchecked":
        return sum(1 for v in values if v is not True)
    if name == "Empty":
        return len(values) - len(filled)
    if name == "Filled":
        return len(filled)
    unique: list[Any] = []
    for value in filled:
        if not any(equal(value, seen) for seen in unique):
            unique.append(value)
    return len(unique)


def _whole(value: float) -> float:
    return int(value) if value == int(value) else value


def to_json(value: Any) -> Any:
    """A Bases value in the JSON answer: dates as ISO text, links as ``[[...]]``, files as
    their path, durations as milliseconds."""
    if value is None or isinstance(value, bool | str | int):
        return value
    if isinstance(value, float):
        return None if value != value or value in (float("inf"), float("-inf")) else value
    if isinstance(value, list):
        return [to_json(v) for v in value]
    if isinstance(value, dict):
        return {k: to_json(v) for k, v in value.items()}
    if isinstance(value, Date):
        return value.iso()
    if isinstance(value, Duration):
        return _whole(value.total_ms())
    if isinstance(value, Link):
        return value.text()
    if isinstance(value, FileValue):
        return value.row.path
    if isinstance(value, Regex):
        return to_text(value)
    return to_text(value)


def cell_text(value: Any) -> str:
    """A JSON cell as the table shows it."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return number_text(value)
    if isinstance(value, list):
        return ", ".join(cell_text(v) for v in value)
    return str(value)


def listing(conn: sqlite3.Connection, load: Any) -> dict[str, Any]:
    """``base --list``: every ``.base`` file of the vault and its views (``load`` reads one)."""
    out = []
    for path in store.base_files(conn):
        try:
            base = load(path)
            views = [str(v.get("name") or "") for v in base.views]
            out.append({"path": path, "views": views, "error": None})
        except UsageError as exc:
            out.append({"path": path, "views": [], "error": str(exc)})
    return {"bases": out}


def checked(base: Base) -> dict[str, Any]:
    """``base --check``: per view, the constructs it evaluates and the ones it refuses."""
    views = []
    for view in base.views:
        found = check(base, view)
        views.append(
            {
                "view": str(view.get("name") or ""),
                "evaluates": list(found.used),
                "refuses": [{"construct": c, "reason": r} for c, r in found.refused.items()],
            }
        )
    return {"base": base.source, "views": views}
