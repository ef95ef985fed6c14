"""YAML 1.2 core schema on PyYAML: the loader, a fast value builder, and the alias-bomb guard.

``load_pairs`` composes a frontmatter block once and builds each top-level value, keeping the
nodes so the caller can locate links in the file (SEMANTICS 2: YAML 1.2 core scalars, errors
are reported, never raised past the parser). Knows nothing of Obsidian's keys.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

__all__ = ["MAX_EXPANDED_VALUES", "STR_TAG", "Yaml12Loader", "YamlBombError", "load_pairs"]

try:
    from yaml import CSafeLoader as _BaseLoader
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]

# Aliases can expand a few lines of YAML into billions of values ("billion laughs").
# PyYAML shares aliased objects, so only our own walk would explode; we refuse above this.
MAX_EXPANDED_VALUES = 100_000

STR_TAG = "tag:yaml.org,2002:str"


class Yaml12Loader(_BaseLoader):
    """SafeLoader with YAML 1.2 core scalars (SEMANTICS 2).

    ``yes``/``no``/``on``/``off`` stay strings, only ``true``/``false`` (three spellings each)
    are booleans, no sexagesimal or ``0``-prefixed octal ints, no ``<<`` merge, no ``=``.
    Timestamps are kept (dates are common in notes) and printed ISO later.
    """

    yaml_implicit_resolvers: dict[Any, list[tuple[str, re.Pattern[str]]]] = {}  # noqa: RUF012


Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool",
    re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
    list("tTfF"),
)
Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:null", re.compile(r"^(?:~|null|Null|NULL|)$"), ["~", "n", "N", ""]
)
# int before float: the 1.2 float pattern also matches plain digit strings.
Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:int",
    re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"),
    list("-+0123456789"),
)
Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
    ),
    list("-+.0123456789"),
)
Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:timestamp",
    re.compile(
        r"^(?:[0-9]{4}-[0-9]{2}-[0-9]{2}"
        r"|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?"
        r"(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?)$"
    ),
    list("0123456789"),
)


def _construct_int(loader: Yaml12Loader, node: ScalarNode) -> int:
    text = loader.construct_scalar(node)
    if text.startswith("0o"):
        return int(text[2:], 8)
    if text.startswith("0x"):
        return int(text[2:], 16)
    try:
        return int(text, 10)  # YAML 1.2: "012" is twelve
    except ValueError:
        # An explicit `!!int 0b101` or `1_000`: fall back to PyYAML's 1.1 reading.
        return int(loader.construct_yaml_int(node))


def _construct_timestamp(loader: Yaml12Loader, node: ScalarNode) -> object:
    try:
        return loader.construct_yaml_timestamp(node)
    except ValueError:  # 2023-02-30: a string, as Obsidian would show it
        return loader.construct_scalar(node)


Yaml12Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)
Yaml12Loader.add_constructor("tag:yaml.org,2002:timestamp", _construct_timestamp)

_SCALAR_BUILDERS: dict[str, Callable[[Yaml12Loader, ScalarNode], object]] = {
    STR_TAG: lambda _loader, node: node.value,
    "tag:yaml.org,2002:null": lambda _loader, _node: None,
    "tag:yaml.org,2002:bool": Yaml12Loader.construct_yaml_bool,
    "tag:yaml.org,2002:int": _construct_int,
    "tag:yaml.org,2002:float": Yaml12Loader.construct_yaml_float,
    "tag:yaml.org,2002:timestamp": _construct_timestamp,
}
_SEQ_TAG = "tag:yaml.org,2002:seq"
_MAP_TAG = "tag:yaml.org,2002:map"


def _build(loader: Yaml12Loader, node: Node, memo: dict[int, Any]) -> Any:
    """The value of ``node``, as PyYAML's constructor would build it, in a third of the time.

    Handles the core tags directly; anything else (``!!binary``, ``!!set``, unknown tags,
    non-scalar keys) goes to PyYAML, which also produces its error messages. Aliased nodes
    give the same object, as in PyYAML.
    """
    if isinstance(node, ScalarNode):
        builder = _SCALAR_BUILDERS.get(node.tag)
        if builder is not None:
            return builder(loader, node)
    elif node.tag == _SEQ_TAG and isinstance(node, SequenceNode):
        if id(node) in memo:
            return memo[id(node)]
        items: list[Any] = []
        memo[id(node)] = items
        items.extend(_build(loader, item, memo) for item in node.value)
        return items
    elif node.tag == _MAP_TAG and isinstance(node, MappingNode):
        if id(node) in memo:
            return memo[id(node)]
        if any(not isinstance(key, ScalarNode) for key, _value in node.value):
            return loader.construct_object(node, deep=True)
        mapping: dict[Any, Any] = {}
        memo[id(node)] = mapping
        for key_node, value_node in node.value:
            mapping[_build(loader, key_node, memo)] = _build(loader, value_node, memo)
        return mapping
    return loader.construct_object(node, deep=True)


class YamlBombError(ValueError):
    """Aliases that expand past MAX_EXPANDED_VALUES, or refer to themselves."""


def _children(node: Node) -> list[Node]:
    if isinstance(node, MappingNode):
        return [child for pair in node.value for child in pair]
    if isinstance(node, SequenceNode):
        return list(node.value)
    return []


def _check_expansion(root: Node) -> None:
    """Count the values the node graph expands to, without expanding it (memoised DFS)."""
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        if finished:
            on_path.discard(key)
            sizes[key] = total = 1 + sum(sizes[id(child)] for child in _children(node))
            if total > MAX_EXPANDED_VALUES:
                raise YamlBombError(
                    f"frontmatter expands to more than {MAX_EXPANDED_VALUES} values "
                    "through YAML aliases"
                )
            continue
        if key in sizes:
            continue
        if key in on_path:
            raise YamlBombError("frontmatter has a YAML alias that contains itself")
        on_path.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in sizes)


def load_pairs(fm: str) -> tuple[Node | None, list[tuple[Any, Node, Any]] | None]:
    """Compose ``fm``; for a mapping also construct each top-level (key, node, value).

    The nodes are kept so frontmatter links can be located in the file. Raises
    ``yaml.YAMLError``, ``YamlBombError`` or whatever a constructor raises (``ValueError`` for
    ``!!int abc``); the caller turns all of them into a Problem.
    """
    loader = Yaml12Loader(fm)
    try:
        root = loader.get_single_node()
        if root is None or not isinstance(root, MappingNode):
            return root, None
        if "*" in fm:  # no alias, no expansion: skip the walk
            _check_expansion(root)
        memo: dict[int, Any] = {}
        pairs = [
            (_build(loader, key_node, memo), value_node, _build(loader, value_node, memo))
            for key_node, value_node in root.value
        ]
        return root, pairs
    finally:
        loader.dispose()
