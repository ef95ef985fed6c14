"""The argparse side of the command line, built from the command table in ``notedex.cli.commands``.

Imported only when the fast path declines an argv (help, an error, a rarely used command):
argparse and its gettext look-ups cost a query several milliseconds.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from notedex.cli.commands import (
    APPEND,
    COMMANDS,
    COUNT,
    COUNT0,
    DESCRIPTION,
    EPILOG,
    FLAG,
    PROG,
    SECONDS,
    Command,
    Option,
    parse_count,
)
from notedex.errors import EXIT_USAGE


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """argparse's formatter, minus its `import shutil` (and bz2, lzma...) for the width.

    argparse builds a formatter inside every ``add_argument``, so the stock one costs every
    query a few milliseconds even when no help is printed.
    """

    def __init__(self, prog: str, **kwargs: Any) -> None:
        if kwargs.get("width") is None:
            try:
                columns = int(os.environ.get("COLUMNS", "")) or os.get_terminal_size(2).columns
            except (ValueError, OSError):
                columns = 80
            kwargs["width"] = max(columns - 2, 40)
        super().__init__(prog, **kwargs)


class Parser(argparse.ArgumentParser):
    """argparse that exits 2 with a one-line message (and nothing on stdout)."""

    options: tuple[str, ...] = ()
    """The option strings of the commands this parser was built with: "did you mean" draws on
    them (argparse reports an unknown option from the top-level parser)."""

    def error(self, message: str) -> Any:
        self.print_usage(sys.stderr)
        hint = usage_hint(message, self.options)
        self.exit(
            EXIT_USAGE, f"{self.prog}: error: {message}\n" + (f"hint: {hint}\n" if hint else "")
        )


def usage_hint(message: str, options: Sequence[str] = ()) -> str | None:
    """A second line for argparse's messages: "did you mean" for a mistyped command, choice or
    option (one of ``options``), else a word about a word that starts with "-".

    ``search cobra -zsh`` reads ``-zsh`` as an option; ``--json`` after ``daemon`` is refused.
    """
    invalid = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)$", message)
    if invalid:
        choices = [c.strip().strip("'\"") for c in invalid[2].split(",")]
        return did_you_mean([invalid[1]], choices)
    if "unrecognized arguments:" not in message:
        return None
    words = message.split("unrecognized arguments:", 1)[1].split()
    if "--json" in words:
        from notedex.cli.fastpath import no_json_message

        return no_json_message()
    dashed = [word.partition("=")[0] for word in words if word.startswith("-") and word != "-"]
    suggestion = did_you_mean(dashed, options)
    if suggestion:
        return suggestion
    if dashed:
        return (
            "a command's own options go after it; a query word that starts with - must be quoted "
            "with the rest (notedex search 'cobra -zsh') or follow -- (notedex search -- cobra -zsh)"
        )
    return None


def did_you_mean(words: Sequence[str], known: Sequence[str]) -> str | None:
    """ "did you mean --limit?" for the first of ``words`` close to one of ``known``."""
    import difflib  # only on an error

    for word in words:
        close = difflib.get_close_matches(word, known, n=1, cutoff=0.6)
        if close:
            return f"did you mean {close[0]}" + (f" (not {word})?" if len(words) > 1 else "?")
    return None


def positive_int(text: str) -> int:
    value = parse_count(text)
    if isinstance(value, str):
        raise argparse.ArgumentTypeError(value)
    return value


def whole_number(text: str) -> int:
    value = parse_count(text, 0)
    if isinstance(value, str):
        raise argparse.ArgumentTypeError(value)
    return value


TYPES: dict[str, Callable[[str], Any]] = {
    COUNT: positive_int,
    COUNT0: whole_number,
    SECONDS: float,
}


def add_option(target: Any, option: Option) -> None:
    """One table entry as ``add_argument`` (a parser or an argument group)."""
    kwargs: dict[str, Any] = {}
    if option.help is not None:
        kwargs["help"] = option.help
    if option.kind == FLAG:
        kwargs["action"] = "store_true"
    elif option.kind == APPEND:
        kwargs.update(action="append", metavar=option.metavar)
    else:
        extra = {"type": TYPES.get(option.kind), "default": option.default}
        extra.update(choices=option.choices, metavar=option.metavar, nargs=option.nargs)
        kwargs.update((key, value) for key, value in extra.items() if value is not None)
    if not option.positional:
        kwargs["dest"] = option.dest  # argparse refuses a dest for a positional
    target.add_argument(option.name, **kwargs)


def _common(options: Sequence[Option]) -> argparse.ArgumentParser:
    """The parent parser of the global options (``--vault``, ``--db``, ``--json``...)."""
    common = argparse.ArgumentParser(add_help=False, formatter_class=HelpFormatter)
    groups: dict[str, Any] = {}
    for option in options:
        target: Any = common
        if option.group is not None:
            if option.group not in groups:
                groups[option.group] = common.add_argument_group(option.group)
            target = groups[option.group]
        add_option(target, option)
    return common


def build_parser(only: str | None = None) -> Parser:
    """The full parser, or (``only``) just the top level plus one subcommand.

    Every argparse object costs gettext look-ups; a query builds only the parser it runs.
    """
    parser = Parser(
        prog=PROG,
        description=DESCRIPTION,
        epilog=f"{EPILOG}\n{HELP_LINE}",
        formatter_class=HelpFormatter,
    )
    from notedex import __version__

    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    parents: dict[bool, argparse.ArgumentParser] = {}
    options = {"--help", "--version"}
    for command in COMMANDS.values():
        if only is not None and command.name != only:
            continue
        if command.json not in parents:
            parents[command.json] = _common(command.common)
        _add_command(sub, command, parents[command.json])
        options.update(o.name for o in command.all_options() if o.name.startswith("-"))
    parser.options = tuple(sorted(options))
    return parser


def _add_command(sub: Any, command: Command, parent: argparse.ArgumentParser) -> None:
    parser = sub.add_parser(
        command.name,
        parents=[parent],
        help=command.help,
        description=command.help,
        epilog="examples:\n" + "\n".join(f"  {example}" for example in command.examples),
        formatter_class=HelpFormatter,
    )
    for option in command.options:
        add_option(parser, option)
    parser.options = tuple(
        sorted({"--help", *(o.name for o in command.all_options() if o.name.startswith("-"))})
    )


def parse_args(argv: Sequence[str]) -> argparse.Namespace | None:
    """argparse's reading of ``argv`` (it exits on help and errors); None without a command."""
    first = next((a for a in argv if not a.startswith("-")), None)
    if first == "help":
        show_help(argv)
    parser = build_parser(first if first in COMMANDS else None)
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help(sys.stderr)
        return None
    return args


HELP_LINE = "notedex help COMMAND shows a command's help, as notedex COMMAND --help does."


def show_help(argv: Sequence[str]) -> NoReturn:
    """``notedex help [COMMAND]``: the help of COMMAND, or of notedex, on stdout; exits 0.

    A command that does not exist, or anything more on the line, is a usage error (exit 2).
    """
    usage = Parser(prog=f"{PROG} help", usage=f"{PROG} help [COMMAND]", add_help=False)
    usage.options = ("--help",)
    rest = list(argv)
    rest.remove("help")
    if rest in ([], ["-h"], ["--help"]):
        build_parser().print_help(sys.stdout)
        usage.exit(0)
    if len(rest) > 1 or rest[0].startswith("-"):
        usage.error(f"help takes one command, not: {' '.join(rest)}")
    (name,) = rest
    if name not in COMMANDS:
        hint = did_you_mean([name], [*COMMANDS, "help"])
        usage.print_usage(sys.stderr)
        usage.exit(
            EXIT_USAGE,
            f"{usage.prog}: error: no such command: {name!r}\n"
            + (f"hint: {hint}\n" if hint else ""),
        )
    build_parser(name).parse_args([name, "--help"])  # prints it and exits 0, as --help does
    raise AssertionError("argparse's --help returned")
