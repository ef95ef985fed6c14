"""Small things a new user trips on (issue 34), each through the CLI: the paging options, the
empty-query rule, the --lines messages, colour, escaped names and the config file's warnings
(docs/cli.md). Colour runs as a subprocess (a pipe, a pseudo-terminal); the rest in-process
(``run_inprocess``: the same ``main``, exit codes and captured streams; test_exit_codes.py and
test_cli.py hold the child-process checks of exit codes and of stdout's one document)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import run_cli, run_inprocess


def _where(demo: tuple[Path, Path]) -> tuple[str, ...]:
    return ("--vault", str(demo[0]), "--db", str(demo[1]), "--no-refresh")


# -- --offset wherever --limit is -------------------------------------------------------------

PAGED = [
    (("lookup", "cobra"), "candidates"),
    (("search", "cobra"), "hits"),
    (("tags",), "tags"),
    (("scan",), "notes"),
    (("health",), "unlinkedNotes"),
    (("graph",), "edges"),
]


@pytest.mark.parametrize(("line", "key"), PAGED, ids=lambda v: v[0] if isinstance(v, tuple) else v)
def test_offset_pages_every_list_command(
    demo: tuple[Path, Path], line: tuple[str, ...], key: str
) -> None:
    where = _where(demo)
    every = run_inprocess(*line, "--json", "--limit", "100", *where).json()[key]
    assert len(every) >= 3, "the demo vault must give this list three items for the test"
    page = run_inprocess(*line, "--json", "--limit", "2", "--offset", "1", *where)
    assert page.code in (0, 1), page.stderr  # health: 1 while links are broken
    assert page.json()[key] == every[1:3]
    if line[0] in ("lookup", "search", "scan"):  # --paths prints the same page's paths
        paths = run_inprocess(*line, "--paths", "--limit", "2", "--offset", "1", *where)
        assert paths.stdout.splitlines() == [item["path"] for item in every[1:3]]


def test_offset_pages_mentions(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Walrus.md").write_text("# Walrus\n", encoding="utf-8")
    for name in "abcd":
        (vault / f"{name}.md").write_text(f"# {name}\n\nA Walrus, said {name}.\n", "utf-8")
    where = ("--vault", vault, "--db", tmp_path / "index.db")
    every = run_inprocess("mentions", "Walrus", "--json", *where).json()["mentions"]
    page = run_inprocess("mentions", "Walrus", "--json", "--limit", "2", "--offset", "1", *where)
    assert len(every) == 4 and page.code == 0 and page.json()["mentions"] == every[1:3]


def test_offset_past_the_end_says_so(demo: tuple[Path, Path]) -> None:
    result = run_inprocess("lookup", "cobra", "--offset", "50", *_where(demo))
    assert result.code == 0 and "no candidates past 50" in result.stdout


# -- one rule for empty queries ------------------------------------------------------------------


@pytest.mark.parametrize("query", ["!!", "-", '" "', "？！"])
def test_a_query_without_a_word_is_a_usage_error_in_both(
    demo: tuple[Path, Path], query: str
) -> None:
    for command in ("lookup", "search"):
        result = run_inprocess(command, query, *_where(demo))
        assert result.code == 2 and result.stdout == "", (command, result)
        assert "nothing to search for" in result.stderr and "letters or digits" in result.stderr


def test_a_query_of_stop_words_only_is_an_answer_in_both(demo: tuple[Path, Path]) -> None:
    lookup = run_inprocess("lookup", "the of and", *_where(demo))
    search = run_inprocess("search", "the of and", *_where(demo))
    assert lookup.code == 0 and "no keywords left" in lookup.stdout
    assert search.code == 0 and search.stdout.strip()


# -- one error count -------------------------------------------------------------------------------


def test_index_and_health_count_errors_alike(tmp_path: Path) -> None:
    """`index` reports the errors the index holds, as `health` lists them and `status` counts
    them: not only the notes this run parsed (store.read.error_count owns the count)."""
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "bad.md").write_text("---\ntitle: [unclosed\n---\nbody\n", encoding="utf-8")
    (vault / "also bad.md").write_text("---\n: : :\n  - x\n---\nbody\n", encoding="utf-8")
    (vault / "good.md").write_text("# Good\n", encoding="utf-8")
    where = ("--vault", vault, "--db", tmp_path / "index.db")
    first = run_inprocess("index", "--json", *where).json()
    again = run_inprocess("index", "--json", *where).json()
    health = run_inprocess("health", "--json", *where).json()
    status = run_inprocess("status", "--json", *where).json()
    errors = len(health["errors"])
    assert errors >= 2  # the test's vault has errors to count
    assert first["errors"] == again["errors"] == errors == status["counts"]["errors"]
    text = run_inprocess("index", *where)
    assert f"errors {errors}," in text.stdout


# -- show --lines says what it could not show ------------------------------------------------------

FRONTED = "---\ntitle: Fronted\ntags: [a]\n---\n" + "".join(f"body line {n}\n" for n in range(1, 6))


@pytest.fixture(scope="module")
def fronted(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, ...]:
    """Read-only, shared by the module's tests (the first query builds its index)."""
    tmp_path = tmp_path_factory.mktemp("fronted")
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "fronted.md").write_text(FRONTED, encoding="utf-8")  # lines 1-4 frontmatter, 9 lines
    return ("--vault", str(vault), "--db", str(tmp_path / "index.db"))


@pytest.mark.parametrize("json", [False, True])
def test_lines_inside_the_frontmatter_say_so(fronted: tuple[str, ...], json: bool) -> None:
    result = run_inprocess("show", "fronted.md", "--lines", "1-3", *fronted, *(["--json"] * json))
    assert result.code == 0
    assert "lines 1-3 of fronted.md are its frontmatter" in result.stderr
    assert "the body starts at line 5" in result.stderr
    if json:
        assert result.json()["lines"] == []
    else:
        assert result.stdout == "" and "Lines (0)" not in result.stdout


def test_lines_past_the_end_say_so(fronted: tuple[str, ...]) -> None:
    result = run_inprocess("show", "fronted.md", "--lines", "20-30", *fronted)
    assert result.code == 0 and result.stdout == ""
    assert "fronted.md has 9 lines: lines 20-30 are past its end" in result.stderr
    part = run_inprocess("show", "fronted.md", "--lines", "3-12", *fronted)
    assert part.stdout.splitlines() == [f"{n:>1}  body line {n - 4}" for n in range(5, 10)]
    assert "lines 3-4 of fronted.md are its frontmatter" in part.stderr
    assert "lines 10-12 are past its end" in part.stderr


def test_lines_in_text_print_only_the_lines(fronted: tuple[str, ...]) -> None:
    result = run_inprocess("show", "fronted.md", "--lines", "6-7", *fronted)
    assert result.code == 0 and result.stderr == ""
    assert result.stdout == "6  body line 2\n7  body line 3\n"


# -- NO_COLOR and --color ----------------------------------------------------------------------


def _on_a_terminal(*args: str, env: dict[str, str]) -> str:
    """The CLI's stdout when stdout is a terminal (a pseudo-terminal), as text."""
    import os
    import pty
    import subprocess
    import sys

    leader, follower = pty.openpty()
    full_env = {**os.environ, "TERM": "xterm", "COLUMNS": "200", **env}
    for name in [k for k, v in env.items() if v == ""]:
        full_env.pop(name)
    proc = subprocess.Popen(
        [sys.executable, "-m", "notedex", *args],
        stdout=follower,
        stderr=subprocess.DEVNULL,
        env=full_env,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert proc.wait(timeout=60) == 0
    return b"".join(chunks).decode("utf-8", "replace")


STYLES = ("\x1b[1m", "\x1b]8;;")  # bold, a terminal hyperlink


def test_a_terminal_gets_bold_and_hyperlinks_unless_no_color(demo: tuple[Path, Path]) -> None:
    line = ("search", "cobra", *_where(demo))
    styled = _on_a_terminal(*line, env={"NO_COLOR": ""})
    assert all(style in styled for style in STYLES)  # the twin: the check can fail
    for plain in (
        _on_a_terminal(*line, env={"NO_COLOR": "1"}),
        _on_a_terminal(*line, "--color", "never", env={"NO_COLOR": ""}),
        _on_a_terminal("--color", "never", *line, env={"NO_COLOR": ""}),  # before the command
    ):
        assert "\x1b" not in plain and "cobra" in plain.lower() and "«" in plain


def test_color_always_styles_a_pipe_even_under_no_color(demo: tuple[Path, Path]) -> None:
    result = run_cli("search", "cobra", "--color", "always", *_where(demo), env={"NO_COLOR": "1"})
    assert result.code == 0 and all(style in result.stdout for style in STYLES)
    auto = run_cli("search", "cobra", "--color", "auto", *_where(demo))
    assert auto.code == 0 and "\x1b" not in auto.stdout  # a pipe is no terminal
    bad = run_cli("search", "cobra", "--color", "sometimes", *_where(demo))
    assert bad.code == 2 and "--color" in bad.stderr


# -- names escaped in text output -------------------------------------------------------------


@pytest.fixture(scope="module")
def odd_names(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, ...]:
    """Read-only, shared by the module's tests (the first query builds its index)."""
    tmp_path = tmp_path_factory.mktemp("oddnames")
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "two\nlines.md").write_text("walrus here\n[[plain]]\n", encoding="utf-8")
    (vault / "bell\x07tab\t.md").write_text("walrus there\n[[two\nlines]]\n", encoding="utf-8")
    (vault / "plain.md").write_text("# Plain\n\n[[two\nlines]]\n", encoding="utf-8")
    return ("--vault", str(vault), "--db", str(tmp_path / "index.db"))


@pytest.mark.parametrize(
    "line",
    [("scan",), ("search", "walrus"), ("graph",), ("lookup", "lines"), ("show", "plain.md")],
    ids=lambda line: line[0],
)
def test_control_characters_in_names_are_escaped_in_text(
    odd_names: tuple[str, ...], line: tuple[str, ...]
) -> None:
    result = run_inprocess(*line, *odd_names)
    assert result.code == 0, result.stderr
    assert "two\\nlines" in result.stdout
    assert "two\nlines" not in result.stdout and "\x07" not in result.stdout
    if line[0] in ("scan", "search"):
        assert "bell\\x07tab\\t.md" in result.stdout


def test_paths_and_json_keep_names_as_they_are(odd_names: tuple[str, ...]) -> None:
    nul = run_inprocess("scan", "-0", *odd_names)
    assert "two\nlines.md\0" in nul.stdout  # -0 is for names like these
    data = run_inprocess("scan", "--json", *odd_names).json()
    assert "two\nlines.md" in [n["path"] for n in data["notes"]]


# -- the config file: unknown keys warn -----------------------------------------------------------


def test_an_unknown_config_key_warns_with_a_suggestion(
    demo: tuple[Path, Path], tmp_path: Path
) -> None:
    config = tmp_path / "config.toml"
    config.write_text('inbx = "Captured"\nmax_byte = 10\nzzz_unrelated = 1\n', encoding="utf-8")
    result = run_inprocess("status", *_where(demo), env={"NOTEDEX_CONFIG": str(config)})
    assert result.code == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if "unknown key" in line]
    assert len(lines) == 3, result.stderr
    assert "'inbx'" in lines[0] and "did you mean 'inbox'?" in lines[0]
    assert "'max_byte'" in lines[1] and "did you mean 'max_bytes'?" in lines[1]
    assert "'zzz_unrelated'" in lines[2] and "did you mean" not in lines[2]
    assert all(str(config) in line and "ignored" in line for line in lines)
    config.write_text('inbox = "Captured"\n', encoding="utf-8")
    known = run_inprocess("status", *_where(demo), env={"NOTEDEX_CONFIG": str(config)})
    assert "unknown key" not in known.stderr


# -- a slow pre-query check says how to avoid it ---------------------------------------------------

SLOW = "NOTEDEX_SLOW_CHECK_SECONDS"


def test_a_slow_check_suggests_the_service_at_most_once_an_hour(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "a.md").write_text("# A\n", encoding="utf-8")
    db = tmp_path / "state" / "index.db"
    where = ("--vault", vault, "--db", db)
    assert run_inprocess("index", *where).code == 0
    every_check = {SLOW: "0"}  # any check is slower than 0 s: the test needs no big vault

    first = run_inprocess("scan", "--json", *where, env=every_check)
    assert first.code == 0 and first.json()["noteCount"] == 1  # stdout stays one document
    (said,) = [line for line in first.stderr.splitlines() if "notedex service install" in line]
    assert "checking the vault for changes took" in said and " s " in said
    assert list(vault.iterdir()) == [vault / "a.md"], "nothing is written into the vault"

    again = run_inprocess("scan", *where, env=every_check)
    assert "service install" not in again.stderr  # once an hour, remembered beside the index
    for state in db.parent.glob("index.db.slow-check"):
        state.unlink()
    later = run_inprocess("scan", *where, env=every_check)
    assert "service install" in later.stderr

    for line, env in (
        (("scan",), {}),  # the default threshold, 0.5 s: a one-note check is faster
        (("scan", "--no-refresh"), every_check),  # no check at all
        (("index",), every_check),  # checking is index's job
    ):
        (db.parent / "index.db.slow-check").unlink()
        assert "service install" not in run_inprocess(*line, *where, env=env).stderr
        (db.parent / "index.db.slow-check").touch()


# -- ".md" in any case (SEMANTICS 1), one helper ---------------------------------------------------


def test_an_upper_case_md_suffix_is_a_note_suffix_everywhere(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / "notes").mkdir(parents=True)
    (vault / "notes" / "Upper.MD").write_text("# Upper\n\nwalrus\n", encoding="utf-8")
    where = ("--vault", vault, "--db", tmp_path / "index.db")
    shown = run_inprocess("show", "Upper.MD", "--json", *where)  # a title typed with its suffix
    assert shown.code == 0 and shown.json()["path"] == "notes/Upper.MD", shown.stderr
    cases = tmp_path / "cases.json"
    cases.write_text('[{"query": "upper", "targets": ["notes/Upper"]}]', encoding="utf-8")
    scored = run_inprocess("eval", cases, "--json", *where)  # a target without its suffix
    assert scored.code == 0 and "matches no note" not in scored.stderr, scored.stderr
