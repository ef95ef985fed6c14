"""``notedex.cli.preload``: the query path's modules read from their cached bytecode without the
import system's search (issue 30's speed budget), the same modules as ``import`` would load, and
``import``'s job wherever the cache is not plainly the source's."""

from __future__ import annotations

import json
import py_compile
import subprocess
import sys
from pathlib import Path

import pytest

from notedex.cli import PRELOADED, preload
from notedex.cli.listings import SHOW_MODULES
from notedex.cli.lookup import LOOKUP_MODULES
from notedex.cli.questions import HEALTH_MODULES, SEARCH_MODULES

CLI_MODULES = {"notedex.errors", "notedex.cli.commands", "notedex.cli.handlers"}
MARK = "preload-probe: "


def loaded(args: tuple[str | Path, ...], *, importtime: bool = False) -> dict[str, str | None]:
    """Our modules a command line loaded, each with its spec's ``loader_state``."""
    code = (
        "import json, sys\n"
        "from notedex.cli import main\n"
        f"code = main({[str(a) for a in args]!r})\n"
        "states = {name: getattr(getattr(module, '__spec__', None), 'loader_state', None)\n"
        "          for name, module in sys.modules.items() if name.startswith('notedex')}\n"
        f"print({MARK!r} + json.dumps(states), file=sys.stderr)\n"
    )
    flags = ["-X", "importtime"] if importtime else []
    proc = subprocess.run(
        [sys.executable, *flags, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    line = next(x for x in proc.stderr.splitlines() if x.startswith(MARK))
    states: dict[str, str | None] = json.loads(line[len(MARK) :])
    return states


COMMANDS = {
    "lookup": (("lookup", "cobra"), LOOKUP_MODULES),
    "lookup --json": (("lookup", "--json", "cli", "framework"), LOOKUP_MODULES),
    "search": (("search", "cobra", "--json"), SEARCH_MODULES),
    "health": (("health", "--json"), HEALTH_MODULES),
    "show": (("show", "cobra", "--body"), SHOW_MODULES),
}


@pytest.mark.parametrize("name", COMMANDS)
def test_a_query_preloads_its_list_and_loads_nothing_more(
    demo: tuple[Path, Path], name: str
) -> None:
    """Every module of the command's list and the CLI's own came through the preload; with the
    preload standing aside (``-X importtime``, whose report must show every import) the process
    loads exactly the same modules of ours."""
    vault, db = demo
    words, listed = COMMANDS[name]
    args = (*words, "--vault", vault, "--db", db, "--no-refresh")
    states = loaded(args)
    preloaded = {n for n, state in states.items() if state == PRELOADED}
    assert sorted((CLI_MODULES | set(listed)) - preloaded) == []
    plain = loaded(args, importtime=True)
    assert sorted(n for n, state in plain.items() if state == PRELOADED) == []
    assert sorted(set(states) ^ set(plain)) == []


def test_a_lookup_imports_nothing_of_ours_but_the_package_and_the_cli(
    demo: tuple[Path, Path],
) -> None:
    """The list is a lookup's whole hot path: only the two modules the launcher imports itself
    go through the import system."""
    vault, db = demo
    states = loaded(("lookup", "cobra", "--vault", vault, "--db", db, "--no-refresh"))
    assert sorted(n for n, state in states.items() if state != PRELOADED) == [
        "notedex",
        "notedex.cli",
    ]


def test_a_refreshing_query_preloads_the_freshness_check(demo: tuple[Path, Path]) -> None:
    vault, db = demo
    states = loaded(("lookup", "cobra", "--vault", vault, "--db", db))
    assert states["notedex.indexing.freshness"] == PRELOADED


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A package ``preloadpkg`` with one module ``mod`` (VALUE = 1), its cache written by
    ``import``; every module of it is forgotten again at the end."""
    folder = tmp_path / "preloadpkg"
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "mod.py").write_text("VALUE = 1\n")
    (folder / "sub").mkdir()
    (folder / "sub" / "__init__.py").write_text("")
    (folder / "sub" / "leaf.py").write_text("VALUE = 3\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    import importlib

    importlib.invalidate_caches()
    importlib.import_module("preloadpkg.mod")
    importlib.import_module("preloadpkg.sub.leaf")
    yield folder
    for name in [n for n in sys.modules if n == "preloadpkg" or n.startswith("preloadpkg.")]:
        del sys.modules[name]


def _forget(*names: str) -> None:
    for name in names:
        del sys.modules[name]
        parent, _, leaf = name.rpartition(".")
        if parent in sys.modules:
            delattr(sys.modules[parent], leaf)


def test_a_current_cache_gives_the_module_import_gives(package: Path) -> None:
    keys = ("__name__", "__file__", "__cached__", "__package__", "__path__")
    names = ("preloadpkg.mod", "preloadpkg.sub", "preloadpkg.sub.leaf")
    expected = {name: _attributes(sys.modules[name], keys) for name in names}
    _forget(*names)
    preload(("preloadpkg.mod", "preloadpkg.sub.leaf"))
    assert {name: _attributes(sys.modules[name], keys) for name in names} == expected
    for name in names:
        spec = sys.modules[name].__spec__
        assert (spec.loader_state, spec.origin) == (PRELOADED, expected[name]["__file__"])
    assert sys.modules["preloadpkg.mod"].VALUE == 1
    assert sys.modules["preloadpkg.sub.leaf"].VALUE == 3
    assert sys.modules["preloadpkg"].mod is sys.modules["preloadpkg.mod"]
    assert sys.modules["preloadpkg.sub"].leaf is sys.modules["preloadpkg.sub.leaf"]
    assert sys.modules["preloadpkg.sub"].__spec__.submodule_search_locations == [
        str(package / "sub")
    ]


def _attributes(module: object, keys: tuple[str, ...]) -> dict[str, object]:
    return {key: getattr(module, key, None) for key in keys}


def test_a_source_changed_since_its_cache_is_imported(package: Path) -> None:
    (package / "mod.py").write_text("VALUE = 22\n")
    _forget("preloadpkg.mod")
    preload(("preloadpkg.mod",))
    assert "preloadpkg.mod" not in sys.modules
    import preloadpkg.mod  # type: ignore[import-not-found]

    assert preloadpkg.mod.VALUE == 22


def test_a_hash_based_cache_is_left_to_import(package: Path) -> None:
    source = package / "mod.py"
    py_compile.compile(
        str(source),
        cfile=sys.modules["preloadpkg.mod"].__cached__,
        invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH,
    )
    _forget("preloadpkg.mod")
    preload(("preloadpkg.mod",))
    assert "preloadpkg.mod" not in sys.modules


def test_a_module_that_fails_is_not_left_half_loaded(package: Path) -> None:
    source = package / "bad.py"
    source.write_text("VALUE = 1\nraise RuntimeError('boom')\n")
    py_compile.compile(
        str(source),
        cfile=str(
            package
            / "__pycache__"
            / Path(sys.modules["preloadpkg.mod"].__cached__).name.replace("mod.", "bad.")
        ),
    )
    with pytest.raises(RuntimeError, match="boom"):
        preload(("preloadpkg.bad",))
    assert "preloadpkg.bad" not in sys.modules
    assert not hasattr(sys.modules["preloadpkg"], "bad")


def test_a_lookup_makes_only_its_own_commands_options_and_loads_no_errno(
    demo: tuple[Path, Path],
) -> None:
    """What the CLI's modules do when loaded (design/imports.md): the command table makes a
    command's own options when first asked for, and ``errno`` is a writer's import only."""
    vault, db = demo
    code = (
        "import sys\n"
        "from notedex.cli import main\n"
        f"main(['lookup', 'cobra', '--vault', {str(vault)!r}, '--db', {str(db)!r},"
        " '--no-refresh'])\n"
        "from notedex.cli.commands import COMMANDS\n"
        "made = sorted(n for n, c in COMMANDS.items() if c._made is not None)\n"
        f"print({MARK!r}, made, 'errno' in sys.modules, file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    line = next(x for x in proc.stderr.splitlines() if x.startswith(MARK))
    assert line == f"{MARK} ['lookup'] False"
