"""Frontmatter: locating the block, loading it as YAML 1.2, reading Obsidian's keys.

Pure functions over already-decoded text (STYLE 9). The YAML is loaded through a
python-frontmatter handler whose split and load we control: the library's own ``parse``
strips the text, which would shift every line number after the block.
"""

from __future__ import annotations

import base64
import datetime as dt
import math
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import yaml
from frontmatter.default_handlers import YAMLHandler
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from notedex.vault.markdown import wikilink_parts
from notedex.vault.model import Link, Problem

try:
    from yaml import CSafeLoader as _BaseLoader
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]

# Aliases can expand a few lines of YAML into billions of values ("billion laughs").
# PyYAML shares aliased objects, so only our own walk would explode; we refuse above this.
MAX_EXPANDED_VALUES = 100_000

_STR_TAG = "tag:yaml.org,2002:str"
_OPEN_LENGTHS = (("---\n", 4), ("---\r\n", 5))
# SEMANTICS 2: the block closes at the next line that is exactly `---` (CRLF accepted).
_CLOSE_LINE = re.compile(r"^---\r?$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class FrontmatterBlock:
    """Where the frontmatter sits in the decoded text."""

    yaml_text: str
    yaml_offset: int
    """Offset of ``yaml_text`` in the text; always the start of line 2."""
    body_offset: int
    body_line: int
    """1-based file line of the first body line."""


def locate_frontmatter(text: str) -> FrontmatterBlock | None:
    """SEMANTICS 2: only a block starting at offset 0 with ``---`` + newline counts."""
    length = next((size for opener, size in _OPEN_LENGTHS if text.startswith(opener)), 0)
    if not length:
        return None
    close = _CLOSE_LINE.search(text, length)
    if close is None:
        return None
    body_offset = close.end() + 1 if close.end() < len(text) else close.end()
    return FrontmatterBlock(
        yaml_text=text[length : close.start()],
        yaml_offset=length,
        body_offset=body_offset,
        body_line=text.count("\n", 0, body_offset) + 1,
    )


# --- YAML 1.2 core schema --------------------------------------------------------------------


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
    _STR_TAG: lambda _loader, node: node.value,
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


class ObsidianYAMLHandler(YAMLHandler):
    """A python-frontmatter handler that follows SEMANTICS 2 exactly.

    ``split`` only accepts the block at offset 0, ``load`` uses YAML 1.2 core scalars.
    ``load_pairs`` is the entry point the parser uses: it keeps the nodes, so frontmatter
    links can be located in the file.
    """

    FM_BOUNDARY = _CLOSE_LINE

    def detect(self, text: str) -> bool:
        return locate_frontmatter(text) is not None

    def split(self, text: str) -> tuple[str, str]:
        block = locate_frontmatter(text)
        if block is None:
            raise ValueError("no frontmatter block at the start of the text")
        return block.yaml_text, text[block.body_offset :]

    def load(self, fm: str, **kwargs: object) -> Any:
        """The properties as a dict, or None when the YAML is empty or not a mapping."""
        _root, pairs = self.load_pairs(fm)
        if pairs is None:
            return None
        mapping: dict[str, Any] = {}
        for key, _node, value in pairs:
            mapping.setdefault(_key_text(key), value)  # first wins, as in load_frontmatter
        return mapping

    def load_pairs(self, fm: str) -> tuple[Node | None, list[tuple[Any, Node, Any]] | None]:
        """Compose ``fm``; for a mapping also construct each top-level (key, node, value).

        Raises ``yaml.YAMLError``, ``YamlBombError`` or whatever a constructor raises
        (``ValueError`` for ``!!int abc``); the caller turns all of them into a Problem.
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


HANDLER = ObsidianYAMLHandler()


# --- From YAML values to Obsidian's properties -----------------------------------------------


@dataclass(slots=True)
class Frontmatter:
    """What the parser needs from a frontmatter block."""

    properties: dict[str, Any] = field(default_factory=dict)
    """JSON-safe, original key spelling, first of case-insensitive duplicates."""
    values: dict[str, Any] = field(default_factory=dict)
    """Lower-cased key -> value as YAML built it (dates still dates), same keys."""
    links: list[Link] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    errors: list[Problem] = field(default_factory=list)


def _key_text(key: Any) -> str:
    if isinstance(key, str):
        return key
    if key is None or isinstance(key, bool):
        return "null" if key is None else ("true" if key else "false")
    return str(json_safe(key))


def json_safe(value: Any) -> Any:
    """Dates -> ISO strings, sets/tuples -> lists, bytes -> base64, inf/nan -> text."""
    if value is None or type(value) is str or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, dt.date):  # datetime is a date too
        return value.isoformat()
    if isinstance(value, dict):
        return {_key_text(key): json_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(item) for item in value]
    if isinstance(value, set | frozenset):
        return sorted((json_safe(item) for item in value), key=repr)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    return str(value)


def _yaml_error_message(exc: BaseException) -> str:
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        # Line 0 of the YAML text is line 2 of the file (after the opening ---).
        line = exc.problem_mark.line + 2
        problem = exc.problem or exc.context or "invalid YAML"
        return f"invalid YAML in frontmatter at line {line}: {problem}; properties ignored"
    if isinstance(exc, YamlBombError):
        return f"{exc}; properties ignored"
    if isinstance(exc, RecursionError):
        return "frontmatter is nested too deeply to read; properties ignored"
    return f"invalid YAML in frontmatter: {exc}; properties ignored"


def _kind_of_node(node: Node) -> str:
    if isinstance(node, SequenceNode):
        return "a list"
    return "a single value"


def load_frontmatter(block: FrontmatterBlock) -> Frontmatter:
    """SEMANTICS 2: a mapping gives properties; anything else is an error, never fatal."""
    try:
        return _read_mapping(block)
    except Exception as exc:  # any YAML or constructor failure is a reported problem
        return Frontmatter(errors=[Problem("yaml", _yaml_error_message(exc))])


def _read_mapping(block: FrontmatterBlock) -> Frontmatter:
    result = Frontmatter()
    root, pairs = HANDLER.load_pairs(block.yaml_text)
    if root is None:
        return result
    if pairs is None:
        message = (
            f"frontmatter is {_kind_of_node(root)}, not a mapping of properties; properties ignored"
        )
        result.errors.append(Problem("yaml", message))
        return result
    link_roots: list[Node] = []
    for key, value_node, value in pairs:
        name = _key_text(key)
        folded = name.lower()
        if folded in result.values:
            # SEMANTICS 2: names are case-insensitive; the first spelling wins.
            result.warnings.append(
                Problem("property", f"duplicate property `{name}` ignored; the first one is used")
            )
            continue
        result.values[folded] = value
        result.properties[name] = json_safe(value)
        link_roots.append(value_node)
    if "[[" in block.yaml_text:
        result.links = _frontmatter_links(link_roots, block)
    return result


def _frontmatter_links(roots: list[Node], block: FrontmatterBlock) -> list[Link]:
    """SEMANTICS 6: any string value, at any depth, written as ``[[...]]``."""
    links: list[Link] = []
    seen: set[int] = set()
    stack = list(reversed(roots))
    yaml_text = block.yaml_text
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, MappingNode):
            stack.extend(value for _key, value in reversed(node.value))
        elif isinstance(node, SequenceNode):
            stack.extend(reversed(node.value))
        elif isinstance(node, ScalarNode) and node.tag == _STR_TAG:
            value = node.value
            if not (value.startswith("[[") and value.endswith("]]")):
                continue
            inner = value[2:-2]
            # One link per value: "[[a]] and [[b]]" or a multi-line value is not a link.
            if not inner or "[[" in inner or "]]" in inner or "\n" in inner:
                continue
            parts = wikilink_parts(inner)
            if parts is None:
                continue
            start = node.start_mark.index
            bracket = yaml_text.find("[[", start, max(node.end_mark.index, start))
            offset = block.yaml_offset + (bracket if bracket >= 0 else start)
            line_start = yaml_text.rfind("\n", 0, offset - block.yaml_offset) + 1
            links.append(
                Link(
                    kind="frontmatter",
                    raw=value,
                    linkpath=parts[0],
                    subpath=parts[1],
                    display=parts[2],
                    line=yaml_text.count("\n", 0, offset - block.yaml_offset) + 2,
                    column=offset - block.yaml_offset - line_start + 1,
                )
            )
    return links


# --- Obsidian's keys (SEMANTICS 3-5) ---------------------------------------------------------


def text_property(values: dict[str, Any], key: str, warnings: list[Problem]) -> str | None:
    """``id``/``type``/``status`` as text (SEMANTICS 3): numbers and dates printed, None when
    absent or empty; a list or mapping is ignored with a warning."""
    value = values.get(key)
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return unicodedata.normalize("NFC", value.strip()) or None
    if isinstance(value, int | float | dt.date):
        return str(json_safe(value))
    warnings.append(
        Problem("property", f"`{key}:` should be a single value; {_shown(value)} is ignored")
    )
    return None


def frontmatter_tags(values: dict[str, Any], warnings: list[Problem]) -> list[str]:
    """SEMANTICS 4: ``tags`` only; a string is one tag, a list gives its string items."""
    if "tag" in values:
        warnings.append(Problem("tag", "`tag:` is ignored by Obsidian; use `tags:`"))
    raw = values.get("tags")
    if raw is None:
        return []
    if isinstance(raw, str):
        items: list[Any] = [raw]
    elif isinstance(raw, list):
        items = raw
    else:
        warnings.append(
            Problem("tag", f"`tags:` should be a string or a list; {_shown(raw)} is ignored")
        )
        return []
    tags: list[str] = []
    for item in items:
        if not isinstance(item, str):
            if item is None:
                warnings.append(Problem("tag", "`tags:` has an empty item; ignored"))
            else:
                warnings.append(
                    Problem(
                        "tag",
                        f"`tags:` item {_shown(item)} is not text and is ignored by Obsidian; "
                        f'quote it ("{_shown(item)}") to make it a tag',
                    )
                )
            continue
        name = item.strip()
        name = name.removeprefix("#")
        if not name:
            warnings.append(Problem("tag", f"`tags:` item {item!r} is empty; ignored"))
        elif any(char.isspace() for char in name):
            warnings.append(
                Problem(
                    "tag",
                    f"`tags:` item {item!r} contains a space and is ignored by Obsidian; "
                    "write a list (`tags: [a, b]`) or use - or _",
                )
            )
        else:
            tags.append(unicodedata.normalize("NFC", name))
    return tags


def frontmatter_aliases(values: dict[str, Any], warnings: list[Problem]) -> list[str]:
    """SEMANTICS 5: ``aliases`` only; a string is one alias (no comma split)."""
    if "alias" in values:
        warnings.append(Problem("property", "`alias:` is ignored by Obsidian; use `aliases:`"))
    raw = values.get("aliases")
    if raw is None:
        return []
    items: list[Any] = [raw] if isinstance(raw, str) else raw if isinstance(raw, list) else []
    if not items and not isinstance(raw, list):
        warnings.append(
            Problem(
                "property", f"`aliases:` should be a string or a list; {_shown(raw)} is ignored"
            )
        )
    aliases: list[str] = []
    for item in items:
        if isinstance(item, str):
            alias = unicodedata.normalize("NFC", item.strip())
            if alias and alias not in aliases:
                aliases.append(alias)
        elif item is not None:
            warnings.append(
                Problem(
                    "property",
                    f"`aliases:` item {_shown(item)} is not text and is ignored by Obsidian",
                )
            )
    return aliases


def _shown(value: Any) -> str:
    """A value as the user wrote it, roughly: ``2023``, ``true``, ``{a: 1}``."""
    safe = json_safe(value)
    if isinstance(safe, bool):
        return "true" if safe else "false"
    text = str(safe)
    return text if len(text) <= 60 else text[:57] + "..."
