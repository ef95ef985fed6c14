"""The fast path: the query commands' ordinary argv parsed without argparse, from the same table.

argparse costs about 5 ms of imports and gettext look-ups per run. Anything unusual (help, an
error, an abbreviated or unknown option, ``--``, a value that starts with "-", a kind of value not
read here) is declined and argparse handles it, so every message and exit code stays argparse's.
A property test checks that whatever is accepted here parses to exactly what
``notedex.cli.parser.build_parser`` gives. Every query loads this module; ``notedex.cli`` reads
it with the CLI's other modules (``notedex.cli.preload``), which costs it no import search.
"""

import sys

from notedex.cli.commands import APPEND, COMMANDS, COMMON, COUNT, COUNT0, FLAG, TEXT, parse_count

TYPE_CHECKING = False  # no `typing` import on the query path; mypy honours the name
if TYPE_CHECKING:
    from collections.abc import Sequence
    from types import SimpleNamespace as Args
    from typing import Any

    from notedex.cli.commands import Command, Option
else:
    # A parsed command line (argparse.Namespace's shape, without importing argparse):
    # ``types.SimpleNamespace``, the type of ``sys.implementation``, which the interpreter has
    # made already (a class of our own costs every query about 0.1M instructions; `types`
    # itself is an import).
    Args = type(sys.implementation)

FAST_COMMANDS = frozenset(name for name, command in COMMANDS.items() if command.fast)
FAST_KINDS = (TEXT, COUNT, COUNT0, FLAG, APPEND)
"""The kinds of option this module reads; a value of any other kind is argparse's."""


GLOBAL_OPTIONS = {option.name: option for option in COMMON}
"""The options every command takes, written before or after the command (docs/cli.md)."""


def hoist_globals(argv: "Sequence[str]") -> list[str] | str:
    """``argv`` with the global options written before the command moved right after it.

    Both parsers read the result, so ``notedex --json scan`` and ``notedex scan --json`` are one
    command line. Returns a message instead when an option before the command cannot go there:
    a command's own option (``--limit``), or ``--json`` before a command that does not take it.
    Anything else unusual (help, ``--version``, an unknown option) is left as it is for argparse.
    """
    moved: list[str] = []
    i = 0
    while i < len(argv) and argv[i].startswith("-") and argv[i] != "-":
        name, eq, _ = argv[i].partition("=")
        option = GLOBAL_OPTIONS.get(name)
        if option is None:
            return _misplaced(argv, i) or list(argv)
        width = 1 if option.kind == FLAG or eq else 2
        if i + width > len(argv):
            return list(argv)  # `--vault` with no value: argparse's error
        moved += argv[i : i + width]
        i += width
    if not moved or i == len(argv):
        return list(argv)
    command = COMMANDS.get(argv[i])
    if command is None:
        return list(argv)  # argparse lists the commands
    if not command.json and "--json" in moved:
        return no_json_message()
    return [argv[i], *moved, *argv[i + 1 :]]


def _misplaced(argv: "Sequence[str]", i: int) -> str | None:
    """The message for a command's own option written before the command, else None."""
    name, eq, _ = argv[i].partition("=")
    owners = [
        (command.name, option)
        for command in COMMANDS.values()
        for option in command.options
        if option.name == name
    ]
    if not owners:
        return None  # --help, --version, --, a typo: argparse's business
    names = "`, `".join(owner for owner, _ in owners)
    first, option = owners[0]
    written = " ".join(argv[i : i + (1 if option.kind == FLAG or eq else 2)])
    return f"{name} is an option of `{names}`: put it after the command, e.g. notedex {first} ... {written}"


def no_json_message() -> str:
    """Why ``--json`` is refused: the commands that talk on stdout themselves do not take it."""
    return f"{commands_without_json()} do not take --json; every other command does"


def commands_without_json() -> str:
    """```completion`, `daemon` and `mcp```: the commands that print their own stdout."""
    names = sorted(f"`{c.name}`" for c in COMMANDS.values() if not c.json)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def fast_parse(argv: "Sequence[str]") -> Args | None:
    """Parse a query command's ordinary argv, or None to leave it to argparse."""
    command = COMMANDS.get(argv[0]) if argv else None
    if command is None or not command.fast:
        return None
    values: dict[str, Any] = {"command": command.name}
    options: dict[str, Option] = {}
    for option in command.all_options():
        values[option.dest] = option.default
        if not option.positional:
            options[option.name] = option
    words = _read_options(argv[1:], options, values)
    if words is None or not _place_words(words, command, values):
        return None
    return Args(**values)


def _read_options(
    tokens: "Sequence[str]", options: "dict[str, Option]", values: "dict[str, Any]"
) -> list[str] | None:
    """Store every option's value in ``values``; return the positional words, or None to decline."""
    words: list[str] = []
    run_ended = False  # argparse takes one contiguous run of positionals
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if not token.startswith("-"):
            if run_ended:
                return None
            words.append(token)
            continue
        run_ended = bool(words)
        name, eq, inline = token.partition("=")
        option = options.get(name)
        if option is None:
            return None  # help, --, an abbreviation, an unknown option: argparse's business
        if option.kind == FLAG:
            if eq:
                return None  # "--json=1": argparse's error
            values[option.dest] = True
            continue
        if eq:
            raw = inline
        elif i < len(tokens) and not tokens[i].startswith("-"):
            raw = tokens[i]
            i += 1
        else:
            return None
        value = _convert(option, raw)
        if value is None:
            return None
        if option.kind == APPEND:  # repeatable: argparse's append makes a list of them
            value = [*(values[option.dest] or ()), value]
        values[option.dest] = value
    return words


def _convert(option: "Option", raw: str) -> "Any":
    """The option's value as argparse would store it, or None where argparse may differ."""
    if option.kind in (COUNT, COUNT0):
        count = parse_count(raw, 0 if option.kind == COUNT0 else 1)
        return None if isinstance(count, str) else count
    if option.kind not in (TEXT, APPEND) or (
        option.choices is not None and raw not in option.choices
    ):
        return None
    return raw


def _place_words(words: list[str], command: "Command", values: "dict[str, Any]") -> bool:
    """Give the positional words to the command's positional; False where argparse would object."""
    positional = next((o for o in command.options if o.positional), None)
    if positional is None:
        return not words
    if not words or (positional.nargs in (None, "?") and len(words) != 1):
        return False
    values[positional.dest] = words if positional.nargs == "+" else words[0]
    return True
