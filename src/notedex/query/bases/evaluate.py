"""Evaluating a Bases expression tree for one file (SEMANTICS 15.2), and
checking a tree without running it: every construct it uses, and the ones refused."""

from __future__ import annotations

from notedex.errors import UsageError
from notedex.query.bases.functions import (
    DATE_FIELDS,
    GLOBALS,
    LAMBDA_METHODS,
    call_method,
    date_field,
)
from notedex.query.bases.values import (
    Date,
    FileValue,
    Regex,
    arithmetic,
    compare,
    equal,
    truthy,
)

TYPE_CHECKING = False  # no `typing` on the base path (design/bases.md); mypy honours the name
if TYPE_CHECKING:
    import datetime as dt
    from typing import Any

    Node = tuple[Any, ...]

FILE_FIELDS = (
    "name",
    "basename",
    "path",
    "folder",
    "ext",
    "size",
    "mtime",
    "ctime",
    "tags",
    "links",
    "backlinks",
    "embeds",
    "properties",
    "file",
)
# file. fields refused with the reason (none now: file.ctime is the note filter's "created",
# files.ctime_ns, SEMANTICS 14.7); check.py names any listed here.
REFUSED_FILE_FIELDS: dict[str, str] = {}
LOCALS = ("value", "index", "acc", "values")


class Unsupported(UsageError):
    """A construct notedex does not evaluate (exit 2, naming it): never a wrong answer."""


class Scope:
    """What an expression sees: the vault, the row, ``this``, the formulas, the locals."""

    __slots__ = ("cache", "formulas", "locals", "now", "row", "running", "this", "vault")

    def __init__(
        self, vault: Any, formulas: dict[str, Node], now: dt.datetime, this: Any = None
    ) -> None:
        self.vault = vault
        self.formulas = formulas
        self.now = now
        self.this = this
        self.row: Any = None
        self.cache: dict[str, Any] = {}
        self.locals: dict[str, Any] = {}
        self.running: set[str] = set()

    def at(self, row: Any) -> Scope:
        self.row = row
        self.cache = {}
        return self


def evaluate(node: Node, scope: Scope) -> Any:
    kind = node[0]
    if kind in ("num", "str", "bool"):
        return node[1]
    if kind == "null":
        return None
    if kind == "ident":
        return _identifier(node[1], scope)
    if kind == "binary":
        return _binary(node[1], node[2], node[3], scope)
    if kind == "unary":
        value = evaluate(node[2], scope)
        if node[1] == "!":
            return not truthy(value)
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        return -value if node[1] == "-" else value
    if kind == "member":
        return _member(node, scope)
    if kind == "index":
        return _index(evaluate(node[1], scope), evaluate(node[2], scope), scope)
    if kind == "call":
        return _call(node[1], node[2], scope)
    if kind == "list":
        return [evaluate(item, scope) for item in node[1]]
    if kind == "object":
        return {key: evaluate(value, scope) for key, value in node[1]}
    return Regex(node[1], node[2])


def _identifier(name: str, scope: Scope) -> Any:
    if name in scope.locals:
        return scope.locals[name]
    if name == "file":
        return FileValue(scope.row)
    if name == "this":
        return scope.this
    if name == "note":
        return scope.row.properties()
    if name == "formula":
        return {key: formula(key, scope) for key in scope.formulas}
    return scope.row.property(name)


def _binary(op: str, left: Node, right: Node, scope: Scope) -> Any:
    if op == "&&":
        return truthy(evaluate(left, scope)) and truthy(evaluate(right, scope))
    if op == "||":
        return truthy(evaluate(left, scope)) or truthy(evaluate(right, scope))
    a, b = evaluate(left, scope), evaluate(right, scope)
    if op == "==":
        return equal(a, b)
    if op == "!=":
        return not equal(a, b)
    if op in ("<", ">", "<=", ">="):
        return compare(op, a, b)
    return arithmetic(op, a, b)


def formula(name: str, scope: Scope) -> Any:
    if name in scope.cache:
        return scope.cache[name]
    node = scope.formulas.get(name)
    if node is None or name in scope.running:
        return None  # a cycle is refused by check(); an undefined formula is empty
    scope.running.add(name)
    try:
        value = evaluate(node, scope)
    finally:
        scope.running.discard(name)
    scope.cache[name] = value
    return value


def _member(node: Node, scope: Scope) -> Any:
    target, name = node[1], node[2]
    if target == ("ident", "formula") and "formula" not in scope.locals:
        return formula(name, scope)
    if target == ("ident", "note") and "note" not in scope.locals:
        return scope.row.property(name)
    return field(evaluate(target, scope), name, scope)


def field(value: Any, name: str, scope: Scope) -> Any:
    if isinstance(value, FileValue):
        return file_field(value.row, name, scope)
    if isinstance(value, dict):
        return value.get(name)
    if isinstance(value, Date) and name in DATE_FIELDS:
        return date_field(value, name)
    if isinstance(value, str | list) and name == "length":
        return len(value)
    return None


def file_field(row: Any, name: str, scope: Scope) -> Any:
    path = str(row.path)
    base = path.rsplit("/", 1)[-1]
    if name == "name":
        return base
    if name == "basename":
        return base.rsplit(".", 1)[0] if "." in base[1:] else base
    if name == "path":
        return path
    if name == "folder":
        return path.rsplit("/", 1)[0] if "/" in path else "/"
    if name == "ext":
        return base.rsplit(".", 1)[1] if "." in base[1:] else ""
    if name == "size":
        return row.size
    if name == "mtime":
        return row.mtime()
    if name == "ctime":
        return row.ctime()
    if name == "tags":
        return list(row.tags())
    if name == "links":
        return list(row.links())
    if name == "embeds":
        return list(row.embeds())
    if name == "backlinks":
        return list(row.backlinks())
    if name == "properties":
        return row.properties()
    if name == "file":
        return FileValue(row)
    return None


def _index(value: Any, key: Any, scope: Scope) -> Any:
    if isinstance(value, list) and isinstance(key, int) and not isinstance(key, bool):
        return value[key] if -len(value) <= key < len(value) else None
    if isinstance(value, dict) and isinstance(key, str):
        return value.get(key)
    if isinstance(value, FileValue) and isinstance(key, str):
        return file_field(value.row, key, scope)
    if isinstance(value, str) and isinstance(key, int) and not isinstance(key, bool):
        return value[key] if 0 <= key < len(value) else None
    return None


def _call(callee: Node, args: tuple[Node, ...], scope: Scope) -> Any:
    if callee[0] == "ident":
        function = GLOBALS.get(callee[1])
        if function is None:
            raise Unsupported(f"the function {callee[1]}() is not implemented")
        if callee[1] == "if":  # only the branch taken is evaluated
            condition = evaluate(args[0], scope) if args else None
            branch = args[1] if truthy(condition) else (args[2] if len(args) > 2 else None)
            return None if branch is None else evaluate(branch, scope)
        return function(scope, *[evaluate(a, scope) for a in args])
    if callee[0] != "member":
        raise Unsupported("calling a value that is not a function is not implemented")
    receiver = evaluate(callee[1], scope)
    name = callee[2]
    if name in LAMBDA_METHODS and isinstance(receiver, list):
        return _per_element(receiver, name, args, scope)
    return call_method(receiver, name, [evaluate(a, scope) for a in args], scope)


def _per_element(items: list[Any], name: str, args: tuple[Node, ...], scope: Scope) -> Any:
    """``filter``, ``map`` and ``reduce``: the argument runs once per element, with ``value``,
    ``index`` (and ``acc``) bound."""
    if not args:
        return None
    saved = dict(scope.locals)
    try:
        if name == "reduce":
            acc = evaluate(args[1], scope) if len(args) > 1 else None
            for index, value in enumerate(items):
                scope.locals.update(value=value, index=index, acc=acc)
                acc = evaluate(args[0], scope)
            return acc
        out = []
        for index, value in enumerate(items):
            scope.locals.update(value=value, index=index)
            result = evaluate(args[0], scope)
            if name == "map":
                out.append(result)
            elif truthy(result):
                out.append(value)
        return out
    finally:
        scope.locals = saved
