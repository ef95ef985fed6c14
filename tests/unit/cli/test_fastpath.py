"""cli (the fast path): the argparse-free fast path parses exactly like argparse, or declines."""

from __future__ import annotations

import contextlib
import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notedex.cli.commands import COMMANDS
from notedex.cli.fastpath import FAST_COMMANDS, FAST_KINDS, fast_parse, hoist_globals
from notedex.cli.parser import build_parser

TOKENS = [
    "cobra",
    "cli framework",
    "框架",
    "",
    "x=y",
    "-",
    "--",
    "-5",
    "5",
    "0",
    "-1",
    "03",
    "abc",
    "--json",
    "--json=1",
    "--no-refresh",
    "--no-ref",
    "--debug",
    "--vault",
    "--vault=v",
    "--db",
    "--db=",
    "--limit",
    "--limit=2",
    "--limit=0",
    "--lim",
    "--tag",
    "--tag=a/b",
    "--tag=-x",
    "--type",
    "--body",
    "--full",
    "-h",
    "--help",
    "--version",
    "-x y",
    "--nope",
    "--limit=",
    "books.base",
    "--view",
    "--view=By rating",
    "--check",
    "--list",
    "--status",
    "--status=/",
    "--open",
    "--due-before",
]
COMMAND_NAMES = [*sorted(COMMANDS), "", "--json", "lookups"]


def argparse_result(argv: list[str]) -> dict[str, object] | None:
    """argparse's namespace as a dict, or None when it exits (help, version, an error)."""
    first = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser(first if first in COMMANDS else None)
    sink = io.StringIO()
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            return vars(parser.parse_args(argv))
    except SystemExit:
        return None


@settings(max_examples=3000, deadline=None)
@given(
    st.sampled_from(COMMAND_NAMES),
    st.lists(st.sampled_from(TOKENS), max_size=7),
)
def test_fast_path_agrees_with_argparse_or_declines(command: str, rest: list[str]) -> None:
    argv = [command, *rest] if command else rest
    fast = fast_parse(argv)
    if fast is None:
        return
    expected = argparse_result(argv)
    assert expected is not None, f"fast path accepted what argparse rejects: {argv}"
    assert vars(fast) == expected, argv


@pytest.mark.parametrize(
    "argv",
    [
        ["lookup", "cobra"],
        ["lookup", "which", "notes", "discuss", "cobra?", "--json"],
        ["lookup", "--json", "--limit", "5", "--tag", "go", "golang"],
        ["lookup", "cobra", "--limit=3", "--type=project", "--vault", "v", "--db", "d.db"],
        ["lookup", "vault 裡有哪些跟 Cobra 這個 CLI 框架相關的筆記？", "--no-refresh"],
        ["health", "--json"],
        ["health"],
        ["scan", "--tag", "project", "--json"],
        ["graph", "--json", "--no-refresh"],
        ["show", "PARA method", "--body", "--json"],
        ["status"],
        ["search", "shell completion", "--limit", "5"],
        ["base", "books.base", "--view", "By rating", "--json"],
        ["base", "books.base", "--check", "--paths"],
        ["tasks", "--open", "--json"],
        ["tasks", "--status", "/", "--status=?", "--due-before", "7d", "--tag", "x"],
    ],
)
def test_ordinary_forms_take_the_fast_path(argv: list[str]) -> None:
    fast = fast_parse(argv)
    assert fast is not None, argv
    assert vars(fast) == argparse_result(argv)


@pytest.mark.parametrize(
    "argv",
    [
        ["lookup"],  # the question is required
        ["lookup", "a", "--json", "b"],  # a second run of words is argparse's error
        ["lookup", "cobra", "--limit", "0"],
        ["lookup", "cobra", "--limit", "-3"],
        ["lookup", "cobra", "--lim", "3"],  # abbreviation
        ["lookup", "--", "-cobra"],
        ["lookup", "cobra", "--help"],
        ["show", "a", "b"],
        ["health", "extra"],
        ["health", "--json=yes"],
        ["index"],  # not a fast command
        ["--version"],
    ],
)
def test_unusual_forms_are_left_to_argparse(argv: list[str]) -> None:
    assert fast_parse(argv) is None


def test_the_query_commands_people_repeat_take_the_fast_path() -> None:
    """Dropping `fast` from one of these would put argparse (about 5 ms) back on its path."""
    assert {"lookup", "health", "search", "scan", "show"} <= FAST_COMMANDS
    assert fast_parse(["lookup", "cobra", "--json"]) is not None
    assert fast_parse(["health", "--json", "--no-refresh"]) is not None


def test_fast_commands_take_only_what_the_fast_path_reads() -> None:
    """One positional at most, of one word (perhaps optional) or a run of words; options of the
    kinds it reads."""
    for name in FAST_COMMANDS:
        options = COMMANDS[name].all_options()
        positionals = [o for o in options if o.positional]
        assert len(positionals) <= 1, name
        assert all(o.nargs in (None, "?", "+") for o in positionals), name
        assert all(o.kind in FAST_KINDS for o in options), name


GLOBAL_UNITS = [
    ["--json"],
    ["--no-refresh"],
    ["--debug"],
    ["--vault", "v"],
    ["--vault=v w"],
    ["--db", "d.db"],
    ["--db="],
]


@settings(max_examples=2000, deadline=None)
@given(
    st.sampled_from(sorted(COMMANDS)),
    st.lists(st.sampled_from(TOKENS), max_size=6),
    st.lists(st.sampled_from(GLOBAL_UNITS), min_size=1, max_size=3),
)
def test_global_options_before_the_command_parse_as_after_it(
    command: str, rest: list[str], before: list[list[str]]
) -> None:
    """Both positions, both parsers: what the fast path accepts argparse reads the same, and
    global options before the command mean what they mean right after it."""
    moved = [token for unit in before for token in unit]
    argv = [*moved, command, *rest]
    hoisted = hoist_globals(argv)
    if isinstance(hoisted, str):  # --json before daemon or mcp: refused with a message
        assert not COMMANDS[command].json and "--json" in moved
        assert "--json" in hoisted
        return
    assert hoisted == [command, *moved, *rest]
    assert argparse_result(hoisted) == argparse_result([command, *moved, *rest])
    fast = fast_parse(hoisted)
    if fast is not None:
        assert vars(fast) == argparse_result(hoisted), argv


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (["--vault", "v", "lookup", "sync"], ["lookup", "sync", "--vault", "v"]),
        (["--json", "scan"], ["scan", "--json"]),
        (["--json", "--no-refresh", "health"], ["health", "--json", "--no-refresh"]),
        (
            ["--db=d.db", "--debug", "show", "x", "--body"],
            ["show", "x", "--body", "--db=d.db", "--debug"],
        ),
        (["--vault", "v", "index", "--full"], ["index", "--full", "--vault", "v"]),
        (["--vault", "v", "daemon", "--poll"], ["daemon", "--poll", "--vault", "v"]),
    ],
)
def test_both_positions_give_one_command_line(before: list[str], after: list[str]) -> None:
    hoisted = hoist_globals(before)
    assert isinstance(hoisted, list)
    assert argparse_result(hoisted) == argparse_result(after) is not None
    fast_before, fast_after = fast_parse(hoisted), fast_parse(after)
    assert (fast_before is None) == (fast_after is None)
    if fast_before is not None and fast_after is not None:
        assert vars(fast_before) == vars(fast_after)


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--limit", "3", "lookup", "x"], "--limit is an option of `lookup`, `health`"),
        (["--lines", "2-3", "show", "x"], "e.g. notedex show ... --lines 2-3"),
        (["--full", "index"], "put it after the command, e.g. notedex index ... --full"),
        (["--json", "daemon"], "`completion`, `daemon` and `mcp` do not take --json"),
        (["--tag=go", "scan"], "e.g. notedex lookup ... --tag=go"),
    ],
)
def test_a_misplaced_option_says_where_it_goes(argv: list[str], says: str) -> None:
    message = hoist_globals(argv)
    assert isinstance(message, str) and says in message


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["--version"],
        ["--nope", "scan"],
        ["--vault"],
        ["--json"],
        ["--", "scan"],
        ["scan"],
    ],
)
def test_hoisting_leaves_the_rest_to_argparse(argv: list[str]) -> None:
    assert hoist_globals(argv) == argv
