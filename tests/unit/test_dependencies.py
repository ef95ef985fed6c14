"""Every third-party import under src/ is a declared dependency (issue 34: PyYAML was imported
but arrived only through python-frontmatter), and every declared dependency is imported.

Imports are read with ``ast`` (those inside functions and ``try`` blocks too) and mapped to
the distributions that provide them by ``importlib.metadata.packages_distributions()``.
Modules of a package named in ``EXTRA_OF`` may also use that optional extra.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "notedex"

EXTRA_OF = {"mcp_server": "mcp"}
"""A package of ours whose third-party imports may come from an optional extra."""


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_name(requirement: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    assert match, requirement
    return _norm(match[1])


def _declared() -> tuple[set[str], dict[str, set[str]]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    core = {_requirement_name(r) for r in project["dependencies"]}
    extras = {
        extra: {_requirement_name(r) for r in reqs}
        for extra, reqs in project.get("optional-dependencies", {}).items()
    }
    return core, extras


def third_party_imports(root: Path = SRC) -> dict[str, set[str]]:
    """{top-level import name: the modules (relative to ``root``) that import it}."""
    found: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        module = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.partition(".")[0]
                if top not in sys.stdlib_module_names and top != "notedex":
                    found.setdefault(top, set()).add(module)
    return found


def test_the_import_reader_finds_imports_at_any_depth(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(
        "import os, yaml.nodes\nfrom . import sibling\nfrom notedex import cli\n"
        "def f():\n    try:\n        from anyio import to_thread\n    except ImportError:\n"
        "        pass\n",
        encoding="utf-8",
    )
    assert third_party_imports(tmp_path) == {"yaml": {"pkg/m.py"}, "anyio": {"pkg/m.py"}}


def test_every_third_party_import_is_a_declared_dependency() -> None:
    core, extras = _declared()
    providers = importlib.metadata.packages_distributions()
    imports = third_party_imports()
    assert "yaml" in imports  # the reader works on the real tree
    problems = []
    for name, modules in sorted(imports.items()):
        dists = {_norm(d) for d in providers.get(name, [])}
        if not dists:
            problems.append(f"{name}: imported by {sorted(modules)}, installed by no distribution")
            continue
        for module in sorted(modules):
            extra = EXTRA_OF.get(module.partition("/")[0])
            allowed = core | (extras.get(extra, set()) if extra else set())
            if not dists & allowed:
                where = "dependencies" + (f" or the [{extra}] extra" if extra else "")
                problems.append(f"{name} ({'/'.join(sorted(dists))}): {module}, not in {where}")
    assert not problems, "\n".join(problems)


def test_every_declared_dependency_is_imported_under_src() -> None:
    core, extras = _declared()
    providers = importlib.metadata.packages_distributions()
    imported = {_norm(d) for name in third_party_imports() for d in providers.get(name, [])}
    unused = (core | extras["mcp"]) - imported
    assert not unused, sorted(unused)
