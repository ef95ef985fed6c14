"""What a base uses, without running it: each construct it can evaluate and each it refuses
(``base --check``; a run refuses the same ones, exit 2)."""

from __future__ import annotations

from notedex.query.bases.evaluate import FILE_FIELDS, LOCALS, REFUSED_FILE_FIELDS
from notedex.query.bases.functions import GLOBALS, KNOWN_METHODS, REFUSED_GLOBALS

TYPE_CHECKING = False  # no `typing` on the base path (design/bases.md); mypy honours the name
if TYPE_CHECKING:
    from typing import Any

    Node = tuple[Any, ...]


class Findings:
    """The constructs seen, in first-seen order, and the refused ones with their reason."""

    def __init__(self, formulas: set[str]) -> None:
        self.formulas = formulas
        self.used: dict[str, None] = {}
        self.refused: dict[str, str] = {}

    def use(self, construct: str) -> None:
        self.used.setdefault(construct, None)

    def refuse(self, construct: str, reason: str) -> None:
        self.refused.setdefault(construct, reason)


def walk(node: Node, found: Findings) -> None:
    kind = node[0]
    if kind in ("num", "str", "bool", "null"):
        found.use({"num": "number", "str": "string", "bool": "boolean", "null": "null"}[kind])
    elif kind == "regex":
        found.use("regular expression")
    elif kind == "ident":
        name = node[1]
        if name not in ("file", "this", "note", "formula") and name not in LOCALS:
            found.use(f"property {name}")
    elif kind in ("binary", "unary"):
        found.use(f"operator {node[1]}")
        for child in node[2:]:
            walk(child, found)
    elif kind == "member":
        _member(node, found)
    elif kind == "index":
        found.use("index []")
        walk(node[1], found)
        walk(node[2], found)
    elif kind == "call":
        _call(node, found)
    elif kind == "list":
        found.use("list literal")
        for item in node[1]:
            walk(item, found)
    elif kind == "object":
        found.use("object literal")
        for _key, value in node[1]:
            walk(value, found)


def _member(node: Node, found: Findings) -> None:
    target, name = node[1], node[2]
    if target == ("ident", "formula"):
        if name in found.formulas:
            found.use(f"formula.{name}")
        else:
            found.refuse(f"formula.{name}", "no such formula in the base")
        return
    if target == ("ident", "note"):
        found.use(f"property {name}")
        return
    if target in (("ident", "file"), ("member", ("ident", "this"), "file")):
        if name in REFUSED_FILE_FIELDS:
            found.refuse(f"file.{name}", REFUSED_FILE_FIELDS[name])
        elif name in FILE_FIELDS:
            found.use(f"file.{name}")
        else:
            found.refuse(f"file.{name}", "no such file property")
        if target[0] == "member":
            found.use("this")
        return
    if target == ("ident", "this"):
        found.use("this")
    found.use(f"field .{name}")
    walk(target, found)


def _call(node: Node, found: Findings) -> None:
    callee, args = node[1], node[2]
    if callee[0] == "ident":
        name = callee[1]
        if name in REFUSED_GLOBALS:
            found.refuse(f"{name}()", "renders a picture or HTML, nothing a headless answer shows")
        elif name in GLOBALS:
            found.use(f"{name}()")
        else:
            found.refuse(f"{name}()", "no such function")
    elif callee[0] == "member":
        name = callee[2]
        if name in KNOWN_METHODS:
            found.use(f".{name}()")
        else:
            found.refuse(f".{name}()", "no such method")
        walk(callee[1], found)
    else:
        found.refuse("call of a value", "not a function")
    for arg in args:
        walk(arg, found)


def formula_cycles(formulas: dict[str, Node]) -> list[str]:
    """The formulas that reach themselves through other formulas."""
    uses: dict[str, set[str]] = {}
    for name, node in formulas.items():
        seen: set[str] = set()
        _formula_refs(node, seen)
        uses[name] = seen
    cyclic = []
    for name in formulas:
        stack, visited = list(uses[name]), set()
        while stack:
            other = stack.pop()
            if other == name:
                cyclic.append(name)
                break
            if other in visited or other not in uses:
                continue
            visited.add(other)
            stack.extend(uses[other])
    return cyclic


def _formula_refs(node: Any, seen: set[str]) -> None:
    if not isinstance(node, tuple) or not node:
        return
    if node[0] == "member" and node[1] == ("ident", "formula"):
        seen.add(node[2])
        return
    for child in node[1:]:
        if isinstance(child, tuple):
            if child and isinstance(child[0], str):
                _formula_refs(child, seen)
            else:
                for item in child:
                    _formula_refs(item, seen)
