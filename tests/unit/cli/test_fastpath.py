"""cli.fastpath: the argparse-free fast path parses exactly like argparse, or declines."""

from __future__ import annotations

import contextlib
import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notedex.cli.commands import COMMANDS
from notedex.cli.fastpath import FAST_COMMANDS, FAST_KINDS, fast_parse
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
    """One positional at most, of one word or a run of words; options of the kinds it reads."""
    for name in FAST_COMMANDS:
        options = COMMANDS[name].all_options()
        positionals = [o for o in options if o.positional]
        assert len(positionals) <= 1, name
        assert all(o.nargs in (None, "+") for o in positionals), name
        assert all(o.kind in FAST_KINDS for o in options), name
