"""The Bases expression language, text to tree: a tokenizer and a Pratt parser
(SEMANTICS 15.2). A tree node is a tuple whose first item names its kind."""

from __future__ import annotations

from notedex.errors import UsageError

TYPE_CHECKING = False  # no `typing` on the base path (design/bases.md); mypy honours the name
if TYPE_CHECKING:
    from typing import Any

    Node = tuple[Any, ...]


class BaseSyntaxError(UsageError):
    """An expression that is not Bases syntax (exit 2, with the text and the offset)."""

    def __init__(self, text: str, offset: int, problem: str) -> None:
        super().__init__(f"bad expression {text!r} at offset {offset}: {problem}")


# Binding power of each binary operator: higher binds tighter.
BINARY = {
    "||": 1,
    "&&": 2,
    "==": 3,
    "!=": 3,
    "<": 4,
    ">": 4,
    "<=": 4,
    ">=": 4,
    "+": 5,
    "-": 5,
    "*": 6,
    "/": 6,
    "%": 6,
}
PREFIX_POWER = 7
_TWO_CHAR = ("||", "&&", "==", "!=", "<=", ">=")
_ONE_CHAR = "+-*/%<>!()[]{},.:"
_OPERAND_END = ("num", "str", "ident", "regex")


def _is_ident_char(ch: str, first: bool) -> bool:
    return ch == "_" or ch == "$" or ch.isalpha() or (not first and ch.isdigit())


def tokenize(text: str) -> list[tuple[str, Any, int]]:
    """(kind, value, offset) triples; kinds: num, str, ident, regex, op, end."""
    tokens: list[tuple[str, Any, int]] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
            continue
        start = i
        if ch.isdigit() or (ch == "." and i + 1 < n and text[i + 1].isdigit()):
            while i < n and (text[i].isdigit() or text[i] == "."):
                i += 1
            literal = text[start:i]
            try:
                value: Any = float(literal) if "." in literal else int(literal)
            except ValueError:
                raise BaseSyntaxError(text, start, f"bad number {literal!r}") from None
            tokens.append(("num", value, start))
        elif ch in "\"'":
            i, value = _string(text, i)
            tokens.append(("str", value, start))
        elif _is_ident_char(ch, True):
            while i < n and _is_ident_char(text[i], False):
                i += 1
            tokens.append(("ident", text[start:i], start))
        elif ch == "/" and not _after_operand(tokens):
            i, value = _regex(text, i)
            tokens.append(("regex", value, start))
        elif text[i : i + 2] in _TWO_CHAR:
            tokens.append(("op", text[i : i + 2], start))
            i += 2
        elif ch in _ONE_CHAR:
            tokens.append(("op", ch, start))
            i += 1
        else:
            raise BaseSyntaxError(text, start, f"unexpected character {ch!r}")
    tokens.append(("end", None, n))
    return tokens


def _after_operand(tokens: list[tuple[str, Any, int]]) -> bool:
    """Whether a ``/`` divides (after an operand) or opens a regular expression."""
    if not tokens:
        return False
    kind, value, _ = tokens[-1]
    return kind in _OPERAND_END or (kind == "op" and value in (")", "]"))


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "0": "\0"}


def _string(text: str, i: int) -> tuple[int, str]:
    quote, i = text[i], i + 1
    out: list[str] = []
    while i < len(text):
        ch = text[i]
        if ch == quote:
            return i + 1, "".join(out)
        if ch == "\\" and i + 1 < len(text):
            out.append(_ESCAPES.get(text[i + 1], text[i + 1]))
            i += 2
            continue
        out.append(ch)
        i += 1
    raise BaseSyntaxError(text, len(text), "unterminated string")


def _regex(text: str, i: int) -> tuple[int, tuple[str, str]]:
    start, i = i, i + 1
    in_class = False
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":
            in_class = True
        elif ch == "]":
            in_class = False
        elif ch == "/" and not in_class:
            pattern = text[start + 1 : i]
            i += 1
            flags_start = i
            while i < len(text) and text[i].isalpha():
                i += 1
            return i, (pattern, text[flags_start:i])
        i += 1
    raise BaseSyntaxError(text, start, "unterminated regular expression")


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.pos = 0

    def peek(self) -> tuple[str, Any, int]:
        return self.tokens[self.pos]

    def take(self) -> tuple[str, Any, int]:
        token = self.tokens[self.pos]
        self.pos += 1
        return token

    def expect(self, op: str) -> None:
        kind, value, offset = self.take()
        if kind != "op" or value != op:
            found = "the end" if kind == "end" else repr(value)
            raise BaseSyntaxError(self.text, offset, f"expected {op!r}, found {found}")

    def at(self, op: str) -> bool:
        kind, value, _ = self.peek()
        return kind == "op" and value == op

    def expression(self, power: int = 0) -> Node:
        left = self.prefix()
        while True:
            kind, value, _ = self.peek()
            if kind != "op" or value not in BINARY or BINARY[value] <= power:
                return left
            self.take()
            left = ("binary", value, left, self.expression(BINARY[value]))

    def prefix(self) -> Node:
        kind, value, offset = self.take()
        if kind == "op" and value in ("!", "-", "+"):
            return self.postfix(("unary", value, self.expression(PREFIX_POWER)))
        if kind == "num":
            node: Node = ("num", value)
        elif kind == "str":
            node = ("str", value)
        elif kind == "regex":
            node = ("regex", value[0], value[1])
        elif kind == "ident":
            node = {"true": ("bool", True), "false": ("bool", False), "null": ("null",)}.get(
                value, ("ident", value)
            )
        elif kind == "op" and value == "(":
            node = self.expression()
            self.expect(")")
        elif kind == "op" and value == "[":
            node = ("list", tuple(self.items("]")))
        elif kind == "op" and value == "{":
            node = self.object()
        else:
            found = "the end" if kind == "end" else repr(value)
            raise BaseSyntaxError(self.text, offset, f"expected a value, found {found}")
        return self.postfix(node)

    def items(self, close: str) -> list[Node]:
        items: list[Node] = []
        while not self.at(close):
            items.append(self.expression())
            if not self.at(close):
                self.expect(",")
        self.take()
        return items

    def object(self) -> Node:
        pairs: list[tuple[str, Node]] = []
        while not self.at("}"):
            kind, key, offset = self.take()
            if kind not in ("str", "ident"):
                raise BaseSyntaxError(self.text, offset, "expected an object key")
            self.expect(":")
            pairs.append((key, self.expression()))
            if not self.at("}"):
                self.expect(",")
        self.take()
        return ("object", tuple(pairs))

    def postfix(self, node: Node) -> Node:
        while True:
            if self.at("."):
                self.take()
                kind, name, offset = self.take()
                if kind != "ident":
                    raise BaseSyntaxError(self.text, offset, "expected a name after '.'")
                node = ("member", node, name)
            elif self.at("["):
                self.take()
                index = self.expression()
                self.expect("]")
                node = ("index", node, index)
            elif self.at("("):
                self.take()
                node = ("call", node, tuple(self.items(")")))
            else:
                return node


def parse(text: str) -> Node:
    """The tree of one expression; BaseSyntaxError (exit 2) when it is not one."""
    parser = _Parser(text)
    node = parser.expression()
    kind, value, offset = parser.peek()
    if kind != "end":
        raise BaseSyntaxError(text, offset, f"unexpected {value!r}")
    return node
