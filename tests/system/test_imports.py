"""The query path stays on the stdlib: `python -X importtime` proves which modules load."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from notedex.store.writer_lock import WriterLock
from tests.helpers import REPO, indexed_demo, pure_json, run_cli

BANNED = (
    "sqlite_utils",
    "watchdog",
    "structlog",
    "apscheduler",
    "frontmatter",
    "yaml",
    "notedex.daemon",
)


def imported_modules(*args: str | Path) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "notedex", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    names = set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    assert "notedex.cli" in names, "importtime output not captured"
    return names


def banned_in(names: set[str]) -> list[str]:
    return sorted(n for n in names if any(n == b or n.startswith(b + ".") for b in BANNED))


@pytest.mark.parametrize(
    "command",
    [
        ("lookup", "cobra", "--no-refresh"),
        ("lookup", "cobra"),  # refresh check on a current index: stdlib etag walk only
        ("health", "--json"),
        ("scan", "--json", "--no-refresh"),
        ("show", "PARA 方法", "--json"),
        ("graph", "--json", "--no-refresh"),
        ("status", "--json"),
    ],
    ids=lambda c: " ".join(c),
)
def test_query_commands_import_no_heavy_module(
    demo: tuple[Path, Path], command: tuple[str, ...]
) -> None:
    vault, db = demo
    names = imported_modules(*command, "--vault", vault, "--db", db)
    assert banned_in(names) == []


def test_an_unchanged_plain_vault_skips_the_full_walk(demo: tuple[Path, Path]) -> None:
    """The etag check lists a plain vault itself: no vault.walk, dataclasses or typing; and it
    reads the Excluded-files list without json (nor re, which json imports: issue 15)."""
    vault, db = demo
    assert (vault / ".obsidian" / "app.json").is_file()  # the list is read, not skipped
    names = imported_modules("lookup", "cobra", "--vault", vault, "--db", db)
    assert "notedex.indexing.etagcheck" in names  # the check did run
    assert {"notedex.vault.walk", "notedex.vault.model", "dataclasses", "typing"} & names == set()
    assert {"json", "re"} & names == set()


@pytest.mark.slow
def test_the_check_can_fail(tmp_path: Path) -> None:
    """A refresh that has work to do does import the writer: the probe above really sees imports."""
    vault, db = indexed_demo(tmp_path)  # a private copy: this test writes to the vault
    (vault / "New note.md").write_text("new\n", encoding="utf-8")
    try:
        names = imported_modules("lookup", "cobra", "--vault", vault, "--db", db)
    finally:
        (vault / "New note.md").unlink()
    assert "notedex.store.writer" in names
    assert banned_in(names)  # the parser's YAML stack: the probe does see heavy imports
    # sqlite-utils is imported only by code that asks for ``IndexWriter.db`` (issue 6:
    # with its optional numpy it cost the daemon about 18 MB of RSS for nothing).
    assert "sqlite_utils" not in names


@pytest.mark.parametrize(
    "command",
    [
        ("lookup", "cobra", "--no-refresh"),
        ("lookup", "--json", "cli", "framework", "--limit", "3", "--no-refresh"),
        ("health", "--json", "--no-refresh"),
        ("health", "--json"),  # without a daemon: the refresh check reads .obsidian/app.json
        ("search", "cobra", "--no-refresh"),
    ],
    ids=lambda c: " ".join(c),
)
def test_ordinary_queries_skip_argparse(demo: tuple[Path, Path], command: tuple[str, ...]) -> None:
    vault, db = demo
    names = imported_modules(*command, "--vault", vault, "--db", db)
    assert "argparse" not in names
    assert "notedex.cli.parser" not in names
    if command[0] in ("lookup", "health") and "--no-refresh" in command:
        # Neither the word scanner nor the compact JSON needs re (nor json, which imports it).
        assert {"re", "json"} & names == set()


def test_search_imports_no_heavy_module(demo: tuple[Path, Path]) -> None:
    vault, db = demo
    names = imported_modules(
        "search", "cobra", "--vault", vault, "--db", db, "--no-refresh", "--json"
    )
    assert "notedex.query.search" in names
    assert banned_in(names) == []


def test_unusual_argv_still_goes_through_argparse(demo: tuple[Path, Path]) -> None:
    """The probe above can fail: an abbreviated option is argparse's to parse."""
    vault, db = demo
    names = imported_modules("lookup", "cobra", "--no-ref", "--vault", vault, "--db", db)
    assert "argparse" in names


def test_installed_command_imports_neither_re_nor_argparse(demo: tuple[Path, Path]) -> None:
    """The `notedex` launcher itself (not pip's entry-point wrapper, which imports re first)."""
    vault, db = demo
    launcher = Path(sys.executable).parent / "notedex"
    if not launcher.exists():
        pytest.skip("notedex is not installed next to this interpreter")
    proc = subprocess.run(
        [
            sys.executable,
            "-X",
            "importtime",
            str(launcher),
            "lookup",
            "cobra",
            "--no-refresh",
            "--vault",
            str(vault),
            "--db",
            str(db),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Cobra" in proc.stdout
    names = {
        line.rsplit("|", 1)[1].strip()
        for line in proc.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    assert "notedex.cli" in names
    assert {"re", "argparse", "sqlite3", "json"} & names == set()
    # _sqlite3 is imported without functools (store.connect: 2.5 ms of collections, operator,
    # reprlib...), and only a writer imports fcntl
    assert {"functools", "collections", "fcntl"} & names == set()


ARCHITECTURE = REPO / "docs" / "architecture.md"
SRC = REPO / "src"


TASKS_DESIGN = REPO / "docs" / "design" / "tasks.md"
BASES_DESIGN = REPO / "docs" / "design" / "bases.md"
FILTER_BUDGET = REPO / "docs" / "design" / "imports.md"
LOOKUP_DESIGN = REPO / "docs" / "design" / "lookup.md"


def hot_path_list(which: str = "hot-path", doc: Path = ARCHITECTURE) -> set[str]:
    """The one list of hot-path (or ``mentions-path``) modules, read from docs/architecture.md
    (or ``doc``: the ``tasks-path`` list in ``TASKS_DESIGN``, the ``filter-path`` list in
    ``FILTER_BUDGET``)."""
    text = doc.read_text(encoding="utf-8")
    block = text.split(f"<!-- {which} modules: begin -->", 1)[1]
    block = block.split(f"<!-- {which} modules: end -->", 1)[0]
    names = {line.strip() for line in block.splitlines()}
    return {n for n in names if n.startswith("notedex")}


def hot_path_runs(vault: Path, db: Path) -> dict[str, set[str]]:
    """What `lookup`, `health` and `search` load: with --no-refresh, and with a daemon keeping
    the index fresh. `search` joined the hot path in issue 15 (ARCHITECTURE, the budget)."""
    common = ("--vault", vault, "--db", db)
    runs = {
        "lookup --no-refresh": imported_modules("lookup", "cobra", *common, "--no-refresh"),
        "health --no-refresh": imported_modules("health", "--json", *common, "--no-refresh"),
        "search (positions) --no-refresh": imported_modules(
            "search", "cobra", *common, "--no-refresh"
        ),
        "search --paths": imported_modules("search", "cobra", "--paths", *common, "--no-refresh"),
    }
    lock = WriterLock(f"{db}.lock")
    assert lock.acquire("daemon")  # the lock a running daemon holds: queries skip the refresh
    try:
        runs["lookup, daemon running"] = imported_modules("lookup", "cobra", *common)
        runs["health, daemon running"] = imported_modules("health", "--json", *common)
        runs["search (positions) --json, daemon running"] = imported_modules(
            "search", "cobra", "--json", *common
        )
    finally:
        lock.release()
    return runs


def test_the_hot_path_is_exactly_the_documented_list(demo: tuple[Path, Path]) -> None:
    runs = hot_path_runs(*demo)
    loaded = set().union(*runs.values())
    ours = {n for n in loaded if n == "notedex" or n.startswith("notedex.")}
    listed = hot_path_list()
    assert len(listed) > 10  # the block was found and read
    assert sorted(ours - listed) == [], "loaded by lookup/health but not on the hot-path list"
    assert sorted(listed - ours) == [], "on the hot-path list but no longer loaded"
    # The daemon case is the everyday one: it must stay as lean as --no-refresh. (`search`
    # with positions maps hits in notes holding CJK text, as cobra's do, without `re` too.)
    for name, names in runs.items():
        banned = {"re", "json", "argparse", "typing", "sqlite3", "notedex.vault.walk"}
        assert banned & names == set(), name
    # Its positions are the part of `search` that --paths does not load.
    assert "notedex.query.positions" not in runs["search --paths"]


def module_of(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def test_import_time_tricks_only_in_hot_path_modules() -> None:
    """`TYPE_CHECKING = False` saves importing typing; off the hot path it only costs clarity."""
    tricky = {
        module_of(path)
        for path in (SRC / "notedex").rglob("*.py")
        if "TYPE_CHECKING = False" in path.read_text(encoding="utf-8")
    }
    assert "notedex.query.lookup" in tricky  # the scan sees the trick where it is allowed
    allowed = (
        hot_path_list()
        | hot_path_list("mentions-path")
        | hot_path_list("tasks-path", TASKS_DESIGN)
        | hot_path_list("filter-path", FILTER_BUDGET)
        | hot_path_list("listing-path", FILTER_BUDGET)
        | hot_path_list("base-path", BASES_DESIGN)
        | hot_path_list("lookup-later-path", LOOKUP_DESIGN)
        | hot_path_list("lookup-exact-path", LOOKUP_DESIGN)
    )
    assert sorted(tricky - allowed) == []


def test_tasks_loads_the_documented_list_and_nothing_heavy(demo: tuple[Path, Path]) -> None:
    """ARCHITECTURE "Tasks" (design/tasks.md, the tasks budget): the hot path's modules and the
    two of tasks."""
    vault, db = demo
    common = ("--vault", vault, "--db", db, "--no-refresh")
    runs = [
        (False, imported_modules("tasks", "--open", "--json", *common)),
        (True, imported_modules("tasks", "--open", "--status", "/", "--tag", "x", *common)),
    ]
    listed = hot_path_list("tasks-path", TASKS_DESIGN)
    assert len(listed) == 3
    for filtered, names in runs:
        assert "notedex.query.tasks" in names  # the probe saw the work
        ours = {n for n in names if n == "notedex" or n.startswith("notedex.")}
        # a note filter (--tag) loads the filter's own list too (FILTER_BUDGET)
        filters = hot_path_list("filter-path", FILTER_BUDGET) if filtered else set()
        assert sorted(ours - hot_path_list() - listed - filters) == [], "loaded by tasks, unlisted"
        assert sorted(listed - ours) == [], "on the tasks list but no longer loaded"
        heavy = {"dataclasses", "typing", "re", "json", "sqlite3", "argparse", "datetime"}
        assert sorted(heavy & names) == []
        assert banned_in(names) == []


def test_a_filtered_search_loads_the_filter_list_and_nothing_heavy(
    demo: tuple[Path, Path],
) -> None:
    """docs/design/imports.md, the filter budget: a filtered search loads the hot path and the
    three filter modules, and none of re, typing, dataclasses; an unfiltered one none of them."""
    vault, db = demo
    common = ("--vault", vault, "--db", db, "--no-refresh")
    filtered = imported_modules(
        "search", "cobra", "--where", "status=draft", "--folder", "Projects", "--json", *common
    )
    ours = {n for n in filtered if n == "notedex" or n.startswith("notedex.")}
    listed = hot_path_list("filter-path", FILTER_BUDGET)
    assert len(listed) == 3
    assert sorted(listed - ours) == [], "on the filter list but not loaded"
    assert sorted(ours - hot_path_list() - listed) == [], "loaded by a filtered search, unlisted"
    assert sorted({"re", "typing", "dataclasses"} & filtered) == []
    plain = imported_modules("search", "cobra", "--json", *common)
    assert sorted(listed & plain) == []  # no filter option: no filter module


def test_recent_and_a_sorted_scan_load_the_listing_list_and_nothing_heavy(
    demo: tuple[Path, Path],
) -> None:
    """docs/design/imports.md, the listing budget: `recent` and `scan --sort` load the hot path,
    the filter list and the listing list, and none of typing, pathlib, dataclasses."""
    vault, db = demo
    common = ("--vault", vault, "--db", db, "--no-refresh")
    listed = hot_path_list("listing-path", FILTER_BUDGET)
    assert len(listed) == 6
    allowed = hot_path_list() | hot_path_list("filter-path", FILTER_BUDGET) | listed
    for args in (("recent", "--json"), ("scan", "--sort", "modified", "--folder", "Projects")):
        names = imported_modules(*args, *common)
        ours = {n for n in names if n == "notedex" or n.startswith("notedex.")}
        if args[0] == "recent":  # a piped sorted scan streams (issue 35): no query.listing
            assert sorted(listed - ours) == [], (args, "on the listing list but not loaded")
        assert sorted(ours - allowed) == [], (args, "loaded, unlisted")
        assert sorted({"typing", "pathlib", "dataclasses"} & names) == [], args


def test_mentions_loads_the_documented_list_and_nothing_heavy(demo: tuple[Path, Path]) -> None:
    """ARCHITECTURE, the mentions budget: `re` and the scanner, not the parse model's
    dataclasses, typing, pathlib or urllib.parse."""
    vault, db = demo
    common = ("--vault", vault, "--db", db, "--no-refresh")
    names = imported_modules("mentions", "Cobra CLI 框架", "--json", *common)
    assert "notedex.query.mentions" in names and "re" in names  # the probe saw the work
    ours = {n for n in names if n == "notedex" or n.startswith("notedex.")}
    listed = hot_path_list("mentions-path")
    assert len(listed) > 3
    assert sorted(ours - hot_path_list() - listed) == [], "loaded by mentions, on neither list"
    assert sorted(listed - ours) == [], "on the mentions list but no longer loaded"
    heavy = {"dataclasses", "typing", "pathlib", "urllib.parse", "json", "sqlite3", "argparse"}
    assert sorted(heavy & names) == []
    assert banned_in(names) == []


@pytest.mark.parametrize(
    "command",
    [("lookup", "cobra", "--no-refresh"), ("lookup", "cobra", "--json", "--no-refresh")],
    ids=lambda c: " ".join(c),
)
def test_lookup_skips_the_other_renderers_and_future(
    demo: tuple[Path, Path], command: tuple[str, ...]
) -> None:
    """Issue 11: lookup's output is in ``query.output``; the other commands' renderers
    (``query.render``) and ``__future__`` (no module on lookup's path imports it) stay unloaded."""
    vault, db = demo
    names = imported_modules(*command, "--vault", vault, "--db", db)
    assert "notedex.query.output" in names  # the probe sees the output module
    assert {"notedex.query.render", "__future__"} & names == set()


def test_a_filtered_scan_skips_the_outline_model(demo: tuple[Path, Path]) -> None:
    """Issue 32's filtered scan: `show`'s outline decoder and its dataclasses model were a third
    of the command's start-up; `scan` reads none of them, nor query.listing (json, pathlib)."""
    vault, db = demo
    args = ("scan", "--where", "status=draft", "--folder", "Areas", "--sort", "modified")
    names = imported_modules(*args, "--json", "--vault", vault, "--db", db, "--no-refresh")
    heavy = {"notedex.store.outline", "notedex.vault.model", "dataclasses", "notedex.query.listing"}
    assert sorted(heavy & names) == []  # sorted and piped: streamed, as in path order


STREAM_FORMS = {"scan", "graph", "health", "indented"}


@pytest.mark.parametrize(
    ("command", "unused"),
    [
        (("scan", "--json"), {"notedex.query.reports"}),
        (("graph", "--json"), {"notedex.query.reports", "notedex.query.render", "pathlib"}),
        (("health", "--json"), {"notedex.query.render", "notedex.query.find"}),
        (("export",), {"notedex.query.reports", "notedex.query.output"}),
    ],
    ids=lambda c: " ".join(c) if isinstance(c, tuple) else "",
)
def test_a_piped_streamed_answer_loads_its_own_form_only(
    demo: tuple[Path, Path], command: tuple[str, ...], unused: set[str]
) -> None:
    """docs/design/streaming.md, "A module per command": a piped scan, graph or health loads the
    shared query.stream and its own form's module, not the others' nor the terminal's indenter;
    graph and health no renderer (graph no pathlib either), export and scan no query.reports."""
    vault, db = demo
    names = imported_modules(*command, "--no-refresh", "--vault", vault, "--db", db)
    assert "notedex.query.stream" in names  # the probe saw a streamed answer
    own = {f"notedex.query.stream_{command[0]}"} & {
        f"notedex.query.stream_{f}" for f in STREAM_FORMS
    }
    assert own <= names
    others = {f"notedex.query.stream_{f}" for f in STREAM_FORMS} - own
    if command[0] == "graph":  # query.listing's whole scan builds with stream_scan's objects
        others.discard("notedex.query.stream_scan")
    assert sorted((others | unused) & names) == []


BENCH_LIKE_BASE = """\
filters:
  and:
    - 'file.inFolder("Projects")'
    - 'file.hasTag("project")'
    - 'status != "done"'
formulas:
  kb: '(file.size / 1024).toFixed(1) + " KB " + file.basename.lower()'
views:
  - type: table
    name: Bench
    order: [file.name, status, formula.kb]
"""


def test_base_loads_the_documented_list_and_nothing_heavy(tmp_path: Path) -> None:
    """design/bases.md, the base's budget: a base of three filters and a formula (bench/bases.py's
    kind) reads its stored copy, properties and toFixed without typing, re, json or decimal."""
    vault, db = tmp_path / "vault", tmp_path / "index.db"
    (vault / "Projects").mkdir(parents=True)
    (vault / "Projects" / "A.md").write_text("---\nstatus: draft\n---\n#project a\n", "utf-8")
    (vault / "Projects" / "B.md").write_text("---\nstatus: done\n---\n#project b\n", "utf-8")
    (vault / "bench.base").write_text(BENCH_LIKE_BASE, "utf-8")
    assert run_cli("index", "--vault", vault, "--db", db).code == 0
    common = ("--vault", vault, "--db", db, "--no-refresh")
    names = imported_modules("base", "bench.base", "--json", *common)
    rows = pure_json(run_cli("base", "bench.base", "--json", *common))["rows"]
    assert [(r["path"], r["formula.kb"]) for r in rows] == [("Projects/A.md", "0.0 KB a")]
    listed = hot_path_list("base-path", BASES_DESIGN)
    assert len(listed) > 5
    ours = {n for n in names if n == "notedex" or n.startswith("notedex.")}
    allowed = hot_path_list() | hot_path_list("filter-path", FILTER_BUDGET) | listed
    assert sorted(listed - ours) == [], "on the base list but not loaded"
    assert sorted(ours - allowed) == [], "loaded by base, unlisted"
    heavy = {"typing", "re", "json", "decimal", "argparse", "yaml", "dataclasses"}
    assert sorted(heavy & names) == []
