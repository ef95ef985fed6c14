"""The package dependency rules of docs/architecture.md, checked on every import in src/.

Every `import notedex...` and `from notedex... import` is read from the source with `ast`,
including the lazy ones inside functions, so a rule cannot be broken by moving an import into a
function body.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "notedex"

# The modules of store/ that the read side (query/) may use: the reader's connection, its SQL,
# and the schema constants. Everything else in store/ is the writer's.
STORE_READ_SIDE = {
    "notedex.store",
    "notedex.store.connect",
    "notedex.store.read",
    "notedex.store.listing_rows",  # what only whole-vault listings read (scan, export, tags)
    "notedex.store.health_lists",  # health's lists (the findings, warnings, errors)
    "notedex.store.graph_rows",  # the edges and nodes of `graph`
    "notedex.store.one_note",  # the note a command names; what `show` reads of it
    "notedex.store.relinks",  # what `fix` and `mv` read before they write the vault
    "notedex.store.lookup",
    "notedex.store.lookup_stage2",
    "notedex.store.lookup_terms",
    "notedex.store.schema",
    "notedex.store.fulltext",
    "notedex.store.outline",  # the notes.outline format, decoded by `show`
    "notedex.store.bases",  # the rows a base evaluates (`base`)
    "notedex.store.tasks",  # the SQL of `tasks` (SEMANTICS 13)
    "notedex.store.filters",  # a NoteFilter's SQL, the properties table read back (issue 32)
}

# package -> packages of ours it must never import (directly, at any depth of the code).
FORBIDDEN = {
    "notedex.errors": ("notedex.",),
    "notedex.vault": (
        "notedex.store",
        "notedex.query",
        "notedex.indexing",
        "notedex.daemon",
        "notedex.cli",
        "notedex.mcp_server",
        "notedex.config",
    ),
    "notedex.store": (
        "notedex.query",
        "notedex.indexing",
        "notedex.daemon",
        "notedex.cli",
        "notedex.mcp_server",
    ),
    "notedex.indexing": ("notedex.query", "notedex.daemon", "notedex.cli", "notedex.mcp_server"),
    "notedex.query": ("notedex.indexing", "notedex.daemon", "notedex.cli", "notedex.mcp_server"),
    "notedex.daemon": ("notedex.query", "notedex.cli", "notedex.mcp_server"),
    # edit/ writes the vault (ARCHITECTURE "Writing the vault"): it reads the index as query/
    # does and never writes it; only the commands (cli/, mcp_server/) call it.
    "notedex.edit": (
        "notedex.query",
        "notedex.indexing",
        "notedex.daemon",
        "notedex.cli",
        "notedex.mcp_server",
    ),
}
# The rest of the error hierarchy imports notedex.errors alone: what vault may not, nor vault.
FORBIDDEN["notedex.error_kinds"] = ("notedex.vault", *FORBIDDEN["notedex.vault"])
# The packages that never write the vault, so never import edit/.
for _package in ("notedex.store", "notedex.indexing", "notedex.query", "notedex.daemon"):
    FORBIDDEN[_package] += ("notedex.edit",)


def module_name(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> set[str]:
    """Every notedex module named by an import statement anywhere in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("notedex"))
        elif (
            isinstance(node, ast.ImportFrom)
            and node.level == 0
            and (node.module or "").startswith("notedex")
        ):
            module = node.module or ""
            found.add(module)
            # `from notedex.store import read` imports the module notedex.store.read.
            found.update(f"{module}.{a.name}" for a in node.names)
    return found


def all_modules() -> dict[str, set[str]]:
    return {module_name(p): imports_of(p) for p in sorted(SRC.rglob("*.py"))}


def is_within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def violations(graph: dict[str, set[str]]) -> list[str]:
    known = set(graph)
    found = []
    for module, imported in graph.items():
        for package, banned in FORBIDDEN.items():
            if not is_within(module, package):
                continue
            for name in imported:
                if name not in known and not any(is_within(name, m) for m in known if "." in m):
                    continue  # `from notedex.x import SomeClass` adds "notedex.x.SomeClass"
                if any(
                    name.startswith(b) if b.endswith(".") else is_within(name, b) for b in banned
                ):
                    found.append(f"{module} imports {name}")
        if is_within(module, "notedex.query") or is_within(module, "notedex.edit"):
            for name in imported & known:
                if is_within(name, "notedex.store") and name not in STORE_READ_SIDE:
                    found.append(f"{module} imports the writer side: {name}")
    return sorted(found)


def test_packages_import_only_in_the_allowed_direction() -> None:
    graph = all_modules()
    assert "notedex.vault.walk" in graph and "notedex.query.lookup" in graph  # it read the tree
    assert violations(graph) == []


def test_vault_imports_nothing_of_ours_but_errors() -> None:
    for module, imported in all_modules().items():
        if is_within(module, "notedex.vault"):
            ours = {n for n in imported if not is_within(n, "notedex.vault")}
            assert {n.split(".")[1] for n in ours} <= {"errors", "error_kinds"}, (module, ours)


@pytest.mark.parametrize(
    ("module", "imported", "expected"),
    [
        (
            "notedex.vault.walk",
            "notedex.store.read",
            "notedex.vault.walk imports notedex.store.read",
        ),
        (
            "notedex.query.lookup",
            "notedex.daemon.service",
            "notedex.query.lookup imports notedex.daemon.service",
        ),
        (
            "notedex.query.lookup",
            "notedex.store.writer",
            "notedex.query.lookup imports the writer side: notedex.store.writer",
        ),
        ("notedex.errors", "notedex.config", "notedex.errors imports notedex.config"),
        (
            "notedex.query.lookup",
            "notedex.edit.safewrite",
            "notedex.query.lookup imports notedex.edit.safewrite",
        ),
        (
            "notedex.edit.fix",
            "notedex.store.writer",
            "notedex.edit.fix imports the writer side: notedex.store.writer",
        ),
    ],
)
def test_the_check_can_fail(module: str, imported: str, expected: str) -> None:
    graph = {module: {imported}, imported: set()}
    assert expected in violations(graph)
