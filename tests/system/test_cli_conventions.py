"""The command-line conventions of issue 14: global options before or after the command, exit
codes that a closed pipe never changes, and `show` finding a note however it is named (docs/cli.md,
"Invocation", "Exit codes", ``show``). Closed pipes, ``-0``'s bytes and shell completion run as
subprocesses; the rest in-process (``run_inprocess``: the same ``main`` and exit codes; the
child-process checks of stdout's one document are test_exit_codes.py's and test_cli.py's)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import run_cli, run_inprocess, write
from tests.indexcheck import make_vault
from tests.system.daemons import Daemons

GLOBALS_AFTER = ("--json", "--no-refresh")

# One ordinary line per command that takes --json; NOTE and CASES are filled in per vault.
EVERY_COMMAND = [
    ("lookup", "cobra"),
    ("health",),
    ("scan", "--tag", "project"),
    ("graph",),
    ("show", "PARA method"),
    ("quote", "Areas/PARA 方法.md", "PARA"),
    ("status",),
    ("search", "cobra"),
    ("eval", "CASES"),
    ("service", "status", "--dry-run"),
]


@pytest.mark.parametrize("line", EVERY_COMMAND, ids=lambda line: line[0])
def test_global_options_work_before_and_after_the_command(
    demo: tuple[Path, Path], line: tuple[str, ...]
) -> None:
    vault, db = demo
    cases = Path(__file__).resolve().parents[2] / "examples" / "demo-cases.json"
    line = tuple(str(cases) if word == "CASES" else word for word in line)
    where = ("--vault", str(vault), "--db", str(db))
    before = run_inprocess(*where, *GLOBALS_AFTER, *line)
    after = run_inprocess(*line, *GLOBALS_AFTER, *where)
    assert before.code == after.code and before.code in (0, 1), before.stderr
    assert before.stdout.startswith("{"), before.stderr
    drop = ("secondsSinceIndexed",)  # status: seconds move on between the two runs
    assert _without(before.stdout, drop) == _without(after.stdout, drop)


def _without(document: str, keys: tuple[str, ...]) -> object:
    import json

    data = json.loads(document)
    for key in keys:
        data.pop(key, None)
    return data


def test_the_writer_commands_take_global_options_first_too(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", {"a.md": "# A\n"})
    db = tmp_path / "i.db"
    index = run_inprocess("--vault", vault, "--db", db, "--json", "index", "--full")
    assert index.code == 0 and '"added":1' in index.stdout, index.stderr
    captured = run_inprocess("--vault", vault, "--db", db, "capture", "an idea")
    assert captured.code == 0 and captured.stdout.startswith("captured "), captured.stderr
    export = run_inprocess(
        "--json", "--vault", vault, "--db", db, "export", "--out", tmp_path / "e.json"
    )
    assert export.code == 0 and '"records":2' in export.stdout, export.stderr


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("--body", "show", "x"), "--body is an option of `show`: put it after the command"),
        (("--json", "daemon"), "`completion`, `daemon` and `mcp` do not take --json"),
        (("mcp", "--json"), "hint: `completion`, `daemon` and `mcp` do not take --json"),
        (("search", "cobra", "-zsh"), "notedex search -- cobra -zsh"),
    ],
)
def test_a_misplaced_option_is_exit_2_saying_where_it_goes(
    tmp_path: Path, args: tuple[str, ...], says: str
) -> None:
    vault = make_vault(tmp_path / "v", {"a.md": "# A\n"})
    result = run_inprocess(*args, "--vault", vault, "--db", tmp_path / "i.db")
    assert result.code == 2 and result.stdout == ""
    assert says in result.stderr and "Traceback" not in result.stderr


# -- exit status independent of stdout -------------------------------------------------------


@pytest.fixture
def broken_vault(tmp_path: Path) -> tuple[Path, Path]:
    """A vault whose health report (about 150 kB of text) is longer than a pipe's buffer."""
    links = "\n".join(f"see [[missing note number {i}]]" for i in range(2000))
    vault = make_vault(tmp_path / "v", {"a.md": f"# A\n{links}\n", "b.md": "# B\n[[a]]\n"})
    db = tmp_path / "i.db"
    assert run_inprocess("index", "--vault", vault, "--db", db).code == 0
    return vault, db


@pytest.mark.slow
def test_health_into_head_exits_1_every_time(broken_vault: tuple[Path, Path]) -> None:
    """`health | head -c1`, 20 times: the findings' exit 1 each time, never a traceback."""
    vault, db = broken_vault
    script = (
        f'"{sys.executable}" -m notedex health --vault "{vault}" --db "{db}" "$@" | head -c1 '
        '>/dev/null; echo "${PIPESTATUS[0]}"'
    )
    for flags in ([], ["--json"]):
        codes = []
        for _ in range(10):
            proc = subprocess.run(
                ["bash", "-c", script, "health", *flags], capture_output=True, text=True, timeout=60
            )
            assert proc.stderr == "", proc.stderr
            codes.append(proc.stdout.strip())
        assert codes == ["1"] * 10, (flags, codes)


@pytest.mark.parametrize("flags", [(), ("--json",)], ids=["text", "json"])
def test_a_pipe_closed_before_any_output_keeps_the_exit_code(
    broken_vault: tuple[Path, Path], flags: tuple[str, ...]
) -> None:
    """The reader is gone before the first write: every write meets EPIPE, the code stands."""
    vault, db = broken_vault
    proc = subprocess.Popen(
        [sys.executable, "-m", "notedex", "health", *flags, "--vault", vault, "--db", db],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 1
    assert stderr == ""


def test_a_closed_pipe_keeps_exit_0_of_a_clean_vault(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", {"a.md": "# A\n[[b]]\n", "b.md": "# B\n[[a]]\n"})
    db = tmp_path / "i.db"
    proc = subprocess.Popen(
        [sys.executable, "-m", "notedex", "scan", "--vault", vault, "--db", db],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    assert proc.wait(timeout=60) == 0
    assert proc.stderr.read() == b""


# -- show: every way of naming a note ---------------------------------------------------------


def _named(base: Path) -> tuple[Path, Path]:
    vault = make_vault(
        base / "vault",
        {
            "Canvas.md": "---\nid: 20261201-1\naliases: [Painting]\n---\n# Canvas\n",
            "Bases/Views.md": "# Views\n",
            "Bases/Canvas.md": "# Bases canvas\n",
            "Same/One.md": "---\ntitle: Twin\n---\n",
            "Same/Two.md": "---\ntitle: Twin\n---\n",
            "Big.md": "# Big\n" + "é" * 300_000 + "\n",
        },
    )
    db = base / "i.db"
    assert run_inprocess("index", "--vault", vault, "--db", db).code == 0
    return vault, db


@pytest.fixture(scope="module")
def named_vault(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Read-only, shared by the module's tests (the `show` lookups change nothing)."""
    return _named(tmp_path_factory.mktemp("named"))


@pytest.fixture
def named_vault_copy(tmp_path: Path) -> tuple[Path, Path]:
    """Its own, for a test that rewrites a note."""
    return _named(tmp_path)


@pytest.mark.parametrize(
    ("cwd", "given", "path"),
    [
        ("Bases", "./Canvas.md", "Bases/Canvas.md"),  # relative to the working directory
        ("Bases", "Views.md", "Bases/Views.md"),
        ("Bases", "../Canvas.md", "Canvas.md"),
        ("Bases", "Views", "Bases/Views.md"),  # a file here, without .md
        (".", "ABS:Bases/Views.md", "Bases/Views.md"),  # an absolute path inside the vault
        ("OUT", "Bases/Views.md", "Bases/Views.md"),  # a vault path, from outside the vault
        ("OUT", "Bases/Views", "Bases/Views.md"),
        ("OUT", "Views", "Bases/Views.md"),  # a title
        ("OUT", "painting", "Canvas.md"),  # an alias, folded
        ("OUT", "20261201-1", "Canvas.md"),  # an id
    ],
)
def test_show_finds_a_note_however_it_is_named(
    named_vault: tuple[Path, Path], tmp_path: Path, cwd: str, given: str, path: str
) -> None:
    vault, db = named_vault
    here = tmp_path / "elsewhere" if cwd == "OUT" else vault / cwd
    here.mkdir(exist_ok=True)
    given = str(vault / given.removeprefix("ABS:")) if given.startswith("ABS:") else given
    result = run_inprocess("show", given, "--json", "--vault", vault, "--db", db, cwd=here)
    assert result.code == 0, result.stderr
    assert result.json()["path"] == path


@pytest.mark.parametrize(
    ("cwd", "given", "says"),
    [
        ("OUT", "Twin", "'Twin' matches 2 notes: Same/One.md, Same/Two.md; give the path"),
        ("Bases", "Canvas.md", "matches 2 notes: Bases/Canvas.md, Canvas.md; give ./"),
        ("OUT", "/etc/hostname", "is not inside the vault"),
        ("Bases", "./Nothing.md", "no note matches './Nothing.md'"),
        ("OUT", "nothing at all", "no note matches"),
    ],
)
def test_show_lists_the_matches_or_says_why_none(
    named_vault: tuple[Path, Path], tmp_path: Path, cwd: str, given: str, says: str
) -> None:
    vault, db = named_vault
    here = tmp_path / "elsewhere" if cwd == "OUT" else vault / cwd
    here.mkdir(exist_ok=True)
    result = run_inprocess("show", given, "--json", "--vault", vault, "--db", db, cwd=here)
    assert result.code == 2 and result.stdout == ""
    assert says in result.stderr


@pytest.mark.slow
def test_show_body_is_capped_and_says_so(named_vault_copy: tuple[Path, Path]) -> None:
    vault, db = named_vault_copy
    where = ("--vault", vault, "--db", db)
    capped = run_inprocess("show", "Big", "--body", "--json", *where).json()
    assert capped["truncated"] is True
    assert len(capped["body"].encode()) <= 100_000 and capped["body"].startswith("# Big\né")
    small = run_inprocess("show", "Big", "--body", "--max-bytes", "9", "--json", *where).json()
    assert small["body"] == "# Big\né" and small["truncated"] is True  # never half a character
    whole = run_inprocess("show", "Big", "--body", "--max-bytes", "700000", "--json", *where).json()
    assert whole["truncated"] is False and whole["body"].endswith("é\n")
    text = run_inprocess("show", "Big", "--body", "--max-bytes", "9", *where)
    assert text.code == 0 and "[truncated:" in text.stdout
    write(vault / "Big.md", "# Big\n")  # never read past the cap: the file is read as it is now
    assert run_inprocess("show", "Big", "--body", "--json", *where).json()["truncated"] is False


# -- index while a daemon runs ---------------------------------------------------------------

SUMMARY = re.compile(
    r"^added (\d+), changed (\d+), removed (\d+), moved (\d+), unchanged (\d+) "
    r"\(rehashed (\d+)\), errors (\d+), \d+\.\d\ds$"
)


@pytest.mark.slow
def test_index_with_a_daemon_asks_it_to_rescan_and_waits(
    daemons: Daemons, small_vault: Path, db_path: Path
) -> None:
    run = daemons.start()
    where = ("--vault", small_vault, "--db", db_path)
    text = run_inprocess("index", *where)
    assert text.code == 0, text.stderr
    assert SUMMARY.match(text.stdout.strip()), text.stdout
    assert run.find("rescan", cause="SIGHUP"), run.log_text()
    assert len(run.find("rescan done", cause="SIGHUP")) == 1  # it waited for that rescan
    report = run_inprocess("index", "--json", *where)
    assert report.code == 0, report.stderr
    assert set(report.json()) == {
        "added",
        "changed",
        "removed",
        "moved",
        "unchanged",
        "rehashed",
        "errors",
        "seconds",
        "kept",
    }
    assert report.json()["unchanged"] == 5  # four notes and img.png, all current
    assert len(run.find("rescan done", cause="SIGHUP")) == 2
    full = run_inprocess("index", "--full", *where)
    assert (full.code, full.stdout) == (75, "")
    assert "stop the daemon" in full.stderr and f"pid {run.pid}" in full.stderr


# -- output control: --paths, -0, --limit/--offset, graph --around, --format dot -------------


def _where(demo: tuple[Path, Path]) -> tuple[str, ...]:
    return ("--vault", str(demo[0]), "--db", str(demo[1]))


@pytest.mark.parametrize(
    ("line", "key", "field"),
    [
        (("lookup", "cobra"), "candidates", "path"),
        (("scan", "--type", "adr"), "notes", "path"),
        # A page that leaves a match out, and one of every match: best first either way
        # (docs/cli.md "search"; tests/unit/query/test_search_paths.py).
        (("search", "cobra", "--limit", "2"), "hits", "path"),
        (("search", "cobra", "--limit", "100"), "hits", "path"),
    ],
    ids=lambda v: v[0] if isinstance(v, tuple) else v,
)
def test_paths_and_nul_list_what_the_json_lists(
    demo: tuple[Path, Path], line: tuple[str, ...], key: str, field: str
) -> None:
    where = _where(demo)
    listed = [item[field] for item in run_inprocess(*line, "--json", *where).json()[key]]
    assert listed
    paths = run_inprocess(*line, "--paths", *where)
    assert (paths.code, paths.stdout) == (0, "".join(p + "\n" for p in listed))
    nul = subprocess.run(
        [sys.executable, "-m", "notedex", *line, "-0", *where], capture_output=True, timeout=60
    )
    assert nul.returncode == 0 and nul.stdout == "".join(p + "\0" for p in listed).encode()


def test_health_paths_keep_exit_1_and_name_every_note_of_the_report(
    demo: tuple[Path, Path],
) -> None:
    where = _where(demo)
    report = run_inprocess("health", "--json", *where)
    data = report.json()
    named = {b["source"] for b in data["brokenLinks"]} | {o["path"] for o in data["orphanNotes"]}
    named |= {e["path"] for e in data["errors"]}
    paths = run_inprocess("health", "--paths", *where)
    assert paths.code == report.code == 1
    lines = paths.stdout.splitlines()
    assert named <= set(lines) and len(lines) == len(set(lines))


def test_paths_with_json_is_a_usage_error(demo: tuple[Path, Path]) -> None:
    for line in (("scan", "--paths", "--json"), ("graph", "--format", "dot", "--json")):
        result = run_inprocess(*line, *_where(demo))
        assert (result.code, result.stdout) == (2, ""), line
        assert "not both" in result.stderr


@pytest.mark.parametrize(
    ("command", "lists"),
    [
        ("scan", ("notes", "errors")),
        (
            "health",
            (
                "orphanNotes",
                "unlinkedNotes",
                "brokenLinks",
                "brokenAnchors",
                "deadEnds",
                "unusedAttachments",
                "selfLinks",  # issue 33: a declared finding, paged like the others
                "warnings",
                "errors",
            ),
        ),
        ("graph", ("nodes", "edges")),
    ],
)
def test_limit_and_offset_page_every_list_with_totals(
    demo: tuple[Path, Path], command: str, lists: tuple[str, ...]
) -> None:
    where = _where(demo)
    whole = run_inprocess(command, "--json", *where).json()
    assert "total" not in whole  # without paging the document is as before
    page = run_inprocess(command, "--json", "--limit", "2", "--offset", "1", *where)
    assert page.code in (0, 1), page.stderr
    data = page.json()
    for name in lists:
        assert data[name] == whole[name][1:3], name
        assert data["totals"][name] == len(whole[name])
    assert (data["offset"], data["limit"]) == (1, 2)
    assert data["hasMore"] == any(len(whole[name]) > 3 for name in data["totals"])
    assert set(data["totals"]) == set(lists)  # every list of the document is paged
    if command == "scan":
        assert data["total"] == whole["noteCount"]
    text = run_inprocess(command, "--limit", "1", *where)
    assert text.code == page.code
    bad = run_inprocess(command, "--offset", "-1", *where)
    assert (bad.code, bad.stdout) == (2, "")


def test_graph_around_a_note_keeps_the_nodes_within_depth(demo: tuple[Path, Path]) -> None:
    where = _where(demo)
    whole = run_inprocess("graph", "--json", *where).json()
    centre = "Areas/PARA 方法.md"
    one = run_inprocess("graph", "--around", "PARA method", "--json", *where).json()
    neighbours = {e["target"] for e in whole["edges"] if e["source"] == centre}
    neighbours |= {e["source"] for e in whole["edges"] if e["target"] == centre}
    assert {n["id"] for n in one["nodes"]} == neighbours | {centre}
    ids = {n["id"] for n in one["nodes"]}
    assert all(e["source"] in ids and e["target"] in ids for e in one["edges"])
    two = run_inprocess("graph", "--around", centre, "--depth", "2", "--json", *where).json()
    assert ids < {n["id"] for n in two["nodes"]}
    missing = run_inprocess("graph", "--around", "no such note", *where)
    assert (missing.code, missing.stdout) == (2, "")


def test_graph_format_dot_is_a_digraph_of_every_node_and_edge(tmp_path: Path) -> None:
    vault = make_vault(
        tmp_path / "v",
        {
            "a.md": "# A\n[[b]] [[b]] [[gone]] ![[pic.png]]\n",
            'b "q".md': "# B\n",
            "b.md": "[[a]]\n",
        },
    )
    (vault / "pic.png").write_bytes(b"\x89PNG")
    result = run_inprocess("graph", "--format", "dot", "--vault", vault, "--db", tmp_path / "i.db")
    assert result.code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "digraph notedex {" and lines[-1] == "}"
    assert '  "a.md" -> "b.md" [label=2];' in lines
    assert '  "b.md" -> "a.md";' in lines
    assert '  "gone" [label="gone", shape=box, style=dashed];' in lines
    assert '  "pic.png" [label="pic.png", shape=note];' in lines
    assert '  "b \\"q\\".md" [label="b \\"q\\""];' in lines


# -- shell completion -------------------------------------------------------------------------


def _complete(script: str, words: list[str], env: dict[str, str]) -> list[str]:
    """Source the bash script, complete ``words`` (the last one being typed), list the words."""
    import os
    import shlex

    line = " ".join(shlex.quote(w) for w in words)
    program = (
        f"{script}\nCOMP_WORDS=({line}); COMP_CWORD={len(words) - 1}\n"
        '_notedex; printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    bin_dir = Path(sys.executable).parent  # `notedex` as the completion script calls it
    full = {**os.environ, **env, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(
        ["bash", "-c", program], capture_output=True, text=True, env=full, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    return [w for w in proc.stdout.splitlines() if w]


def test_bash_completion_completes_commands_options_and_note_paths(
    demo: tuple[Path, Path],
) -> None:
    vault, db = demo
    result = run_cli("completion", "bash")
    assert result.code == 0 and "complete -F _notedex notedex" in result.stdout
    script = result.stdout
    env = {"NOTEDEX_VAULT": str(vault), "NOTEDEX_DB": str(db)}
    assert set(_complete(script, ["notedex", "s"], env)) == {
        "scan",
        "show",
        "status",
        "search",
        "service",
    }
    assert "--around" in _complete(script, ["notedex", "graph", "--"], env)
    assert "--max-bytes" in _complete(script, ["notedex", "--json", "show", "--"], env)
    assert _complete(script, ["notedex", "graph", "--format", ""], env) == ["text", "dot"]
    assert _complete(script, ["notedex", "completion", "z"], env) == ["zsh"]
    notes = _complete(script, ["notedex", "show", "Areas/"], env)
    assert "Areas/PARA 方法.md" in notes and all(n.startswith("Areas/") for n in notes)
    # --vault/--db on the line are used to find the notes.
    where = ["--vault", str(vault), "--db", str(db)]
    assert "Areas/PARA 方法.md" in _complete(script, ["notedex", *where, "show", "Areas/P"], {})


def test_zsh_and_fish_scripts_name_every_command() -> None:
    from notedex.cli.commands import COMMANDS

    zsh = run_cli("completion", "zsh")
    assert zsh.code == 0 and "bashcompinit" in zsh.stdout and "_notedex()" in zsh.stdout
    fish = run_cli("completion", "fish")
    assert fish.code == 0
    for name in COMMANDS:
        assert f"-n __fish_use_subcommand -a {name} " in fish.stdout
    assert (
        "'__fish_seen_subcommand_from show' -a '(notedex scan --paths --no-refresh" in fish.stdout
    )
    assert "-l max-bytes -x" in fish.stdout and "-s 0 " in fish.stdout
    bad = run_cli("completion", "tcsh")
    assert (bad.code, bad.stdout) == (2, "")
