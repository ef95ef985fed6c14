"""Reading a base: the YAML of a ``.base`` file, or of a note's ```` ```base ```` block, as a
plain JSON-safe value (SEMANTICS 15.5). PyYAML through yaml12, so only the
``base`` command and the indexer load it, never the other read commands."""

from __future__ import annotations

from typing import Any

BASE_SUFFIX = ".base"
"""Obsidian's Bases files; the indexer stores each one's YAML as JSON (store.basedocs)."""


class BadBase(ValueError):
    """A base whose YAML cannot be read; the message says where."""


def load_base(text: str) -> Any:
    """The base's YAML as a dict of JSON-safe values (dates as ISO text), None when empty;
    BadBase when it is not YAML or not a mapping."""
    import yaml

    from notedex.vault.frontmatter import json_safe
    from notedex.vault.yaml12 import YamlBombError, load_pairs

    try:
        root, pairs = load_pairs(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise BadBase(f"invalid YAML{where}: {exc.problem or exc.context}") from None
    except (yaml.YAMLError, YamlBombError, ValueError, TypeError, RecursionError) as exc:
        raise BadBase(f"invalid YAML: {exc}") from None
    if root is None:
        return None
    if pairs is None:
        raise BadBase("a base is a mapping of filters, formulas and views")
    mapping: dict[str, Any] = {}
    for key, _node, value in pairs:
        mapping.setdefault(str(key), value)
    return json_safe(mapping)


def base_blocks(text: str) -> list[str]:
    """The text of every ```` ```base ```` (or ``~~~base``) fenced block of a note, in order."""
    blocks: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        stripped = lines[i].lstrip(" ")
        fence = stripped[:3]
        if fence in ("```", "~~~") and len(lines[i]) - len(stripped) < 4:
            run = len(stripped) - len(stripped.lstrip(fence[0]))
            info = stripped[run:].strip()
            end = i + 1
            while end < len(lines):
                closing = lines[end].strip()
                if closing.startswith(fence[0] * run) and not closing.lstrip(fence[0]):
                    break
                end += 1
            if info.split(" ")[0] == "base":
                blocks.append("\n".join(lines[i + 1 : end]))
            i = end + 1
            continue
        i += 1
    return blocks


def base_document(text: str, *, note: bool) -> Any:
    """The base a file holds: a ``.base`` file's YAML, or (``note``) the YAML of the note's
    first ```` ```base ```` block; BadBase when there is none or it is not a base."""
    if note:
        blocks = base_blocks(text)
        if not blocks:
            raise BadBase("no ```base block in this note")
        text = blocks[0]
    return load_base(text)


def read_base_file(disk_path: str, max_bytes: int) -> tuple[str | None, str | None]:
    """A ``.base`` file as the indexer stores it: (its base as JSON, None), or (None, why it
    is no base). Never raises: a bad file is a recorded error, as a bad note is."""
    import json

    from notedex.vault.files import over_the_cap, read_capped

    try:
        raw, info = read_capped(disk_path, max_bytes)
    except OSError as exc:
        return None, f"cannot read the base: {exc.strerror or exc}"
    if len(raw) > max_bytes:
        return None, f"cannot read the base: {over_the_cap(info.st_size, max_bytes)}"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None, "the base is not UTF-8 text"
    try:
        return json.dumps(load_base(text), ensure_ascii=False), None
    except BadBase as exc:
        return None, str(exc)
