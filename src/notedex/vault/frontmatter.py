r"""Frontmatter: loading the block as YAML 1.2 and reading Obsidian's keys (SEMANTICS 2-6).

Pure functions over already-decoded text (STYLE 9); ``vault.files`` locates the block. The
YAML is composed and built here, not through python-frontmatter, and that is needed, not
taste: its ``parse``/``loads`` strip the text first (every line number after the block would
shift, and a block after blank lines would count), its YAML boundary ``^-{3,}\s*$`` closes at
``--- `` and ``-----`` (the drift SEMANTICS 2 rules out), and its handler returns values only,
while frontmatter links need the YAML nodes for their line and column. With split and load
both ours, a handler subclass was dead code; ``load_properties`` is what its ``load`` was.
"""

from __future__ import annotations

import base64
import datetime as dt
import math
import unicodedata
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from notedex.vault.files import frontmatter_bounds
from notedex.vault.markdown.links import wikilink_parts
from notedex.vault.model import Link, Problem
from notedex.vault.yaml12 import STR_TAG, YamlBombError, load_pairs


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
    """SEMANTICS 2: the block at offset 0, as ``vault.files`` locates it for every command."""
    bounds = frontmatter_bounds(text)
    if bounds is None:
        return None
    yaml_start, yaml_end, body_offset = bounds
    return FrontmatterBlock(
        yaml_text=text[yaml_start:yaml_end],
        yaml_offset=yaml_start,
        body_offset=body_offset,
        body_line=text.count("\n", 0, body_offset) + 1,
    )


def load_properties(fm: str) -> dict[str, Any] | None:
    """The YAML of a block as a dict (first of equal keys wins), or None when empty or not a
    mapping: what ``yaml.load(fm, Loader=Yaml12Loader)`` builds, faster."""
    _root, pairs = load_pairs(fm)
    if pairs is None:
        return None
    mapping: dict[str, Any] = {}
    for key, _node, value in pairs:
        mapping.setdefault(_key_text(key), value)
    return mapping


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
        return Frontmatter(errors=[Problem("bad-yaml", _yaml_error_message(exc))])


def _read_mapping(block: FrontmatterBlock) -> Frontmatter:
    result = Frontmatter()
    root, pairs = load_pairs(block.yaml_text)
    if root is None:
        return result
    if pairs is None:
        message = (
            f"frontmatter is {_kind_of_node(root)}, not a mapping of properties; properties ignored"
        )
        result.errors.append(Problem("bad-yaml", message))
        return result
    link_roots: list[Node] = []
    for key, value_node, value in pairs:
        name = _key_text(key)
        folded = name.lower()
        if folded in result.values:
            # SEMANTICS 2: names are case-insensitive; the first spelling wins.
            result.warnings.append(
                Problem(
                    "duplicate-property",
                    f"duplicate property `{name}` ignored; the first one is used",
                )
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
        elif isinstance(node, ScalarNode) and node.tag == STR_TAG:
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
        Problem(
            "not-single-value", f"`{key}:` should be a single value; {_shown(value)} is ignored"
        )
    )
    return None


def frontmatter_tags(values: dict[str, Any], warnings: list[Problem]) -> list[str]:
    """SEMANTICS 4: ``tags`` only; a string is one tag, a list gives its string items."""
    tags: list[str] = []
    for item in _string_or_list(values, "tags", "tag", warnings):
        if not isinstance(item, str):
            if item is None:
                warnings.append(Problem("empty-tag", "`tags:` has an empty item; ignored"))
            else:
                warnings.append(
                    Problem(
                        "tag-not-text",
                        f"`tags:` item {_shown(item)} is not text and is ignored by Obsidian; "
                        f'quote it ("{_shown(item)}") to make it a tag',
                    )
                )
            continue
        name = item.strip()
        name = name.removeprefix("#")
        if not name:
            warnings.append(Problem("empty-tag", f"`tags:` item {item!r} is empty; ignored"))
        elif any(char.isspace() for char in name):
            warnings.append(
                Problem(
                    "tag-with-space",
                    f"`tags:` item {item!r} contains a space and is ignored by Obsidian; "
                    "write a list (`tags: [a, b]`) or use - or _",
                )
            )
        else:
            tags.append(unicodedata.normalize("NFC", name))
    return tags


def frontmatter_aliases(values: dict[str, Any], warnings: list[Problem]) -> list[str]:
    """SEMANTICS 5: ``aliases`` only; a string is one alias (no comma split)."""
    aliases: list[str] = []
    for item in _string_or_list(values, "aliases", "alias", warnings):
        if isinstance(item, str):
            alias = unicodedata.normalize("NFC", item.strip())
            if alias and alias not in aliases:
                aliases.append(alias)
        elif item is not None:
            warnings.append(
                Problem(
                    "alias-not-text",
                    f"`aliases:` item {_shown(item)} is not text and is ignored by Obsidian",
                )
            )
    return aliases


def _string_or_list(
    values: dict[str, Any], key: str, singular: str, warnings: list[Problem]
) -> list[Any]:
    """SEMANTICS 4, 5: ``tags``/``aliases`` is one string or a list of items; the singular key
    (``tag:``, ``alias:``) and any other value are ignored with a warning."""
    if singular in values:
        warnings.append(
            Problem("singular-key", f"`{singular}:` is ignored by Obsidian; use `{key}:`")
        )
    raw = values.get(key)
    if raw is None:
        return []
    if isinstance(raw, str):
        return [raw]
    if isinstance(raw, list):
        return raw
    warnings.append(
        Problem("not-a-list", f"`{key}:` should be a string or a list; {_shown(raw)} is ignored")
    )
    return []


def _shown(value: Any) -> str:
    """A value as the user wrote it, roughly: ``2023``, ``true``, ``{a: 1}``."""
    safe = json_safe(value)
    if isinstance(safe, bool):
        return "true" if safe else "false"
    text = str(safe)
    return text if len(text) <= 60 else text[:57] + "..."
