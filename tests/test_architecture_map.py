"""docs/architecture.md is the map (issue 34): its Layout lists every module under src/notedex,
and nothing that is not there, and the map stays short enough to read."""

from __future__ import annotations

import re
from pathlib import Path

from tests.helpers import REPO

ARCHITECTURE = REPO / "docs" / "architecture.md"
SOURCE = REPO / "src" / "notedex"
DESCRIPTION_COLUMN = 28
ENTRY = re.compile(r"^( *)(\S+?(?: \S+\.py)*)(/?)(?:\s{2,}|\s*$)")


def layout_modules(text: str) -> set[str]:
    """The ``src/notedex`` entries of the Layout block, as paths relative to the package:
    ``cli/parser.py``, ``vault/markdown/`` (a package), read from the indentation."""
    block = text.split("## Layout", 1)[1].split("```", 2)[1]
    found: set[str] = set()
    stack: list[tuple[int, str]] = []
    inside = False
    for line in block.splitlines():
        match = ENTRY.match(line)
        if not match or not line.strip():
            continue
        indent, name, slash = len(match.group(1)), match.group(2), match.group(3)
        if indent > DESCRIPTION_COLUMN // 2:
            continue  # a description's second line
        if indent == 0:
            inside = line.startswith("src/notedex/")
            stack = []
            continue
        if not inside:
            continue
        while stack and stack[-1][0] >= indent:
            stack.pop()
        for one in name.split(" "):  # `run.py render.py  ...`: two modules on one line
            found.add("/".join([part for _, part in stack] + [one]) + slash)
        if slash:
            stack.append((indent, name))
    return found


def source_modules(every: bool = False) -> set[str]:
    """The package's modules and packages; a small ``__init__.py`` only with ``every``."""
    modules = set()
    for path in SOURCE.rglob("*.py"):
        relative = path.relative_to(SOURCE)
        if every or path.name != "__init__.py" or path.stat().st_size > 2_000:
            modules.add(relative.as_posix())  # a package's line covers a small __init__
        for parent in relative.parents:
            if parent != Path("."):
                modules.add(parent.as_posix() + "/")
    return modules


def test_the_layout_lists_every_module_and_no_other() -> None:
    listed = layout_modules(ARCHITECTURE.read_text(encoding="utf-8"))
    actual = source_modules()
    assert sorted(actual - listed) == [], "modules missing from docs/architecture.md's Layout"
    assert sorted(listed - source_modules(every=True)) == [], (
        "Layout lists modules that do not exist"
    )


def test_the_map_reads_a_made_up_layout() -> None:
    text = (
        "## Layout\n```\nsrc/notedex/\n  a.py     x\n  pkg/     y\n    b.py   z\n"
        "      continued description line\n  c.py d.py  two\ntests/\n  t.py\n```\n"
    )
    assert layout_modules(text) == {"a.py", "pkg/", "pkg/b.py", "c.py", "d.py"}


def test_the_map_is_short() -> None:
    assert len(ARCHITECTURE.read_text(encoding="utf-8").splitlines()) <= 450
