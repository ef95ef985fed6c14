"""The `notedex` command line: parse (fast path, else argparse), run the handler, map errors to exit codes.

This is the entry point (``notedex.cli.main``) and the one place that turns an exception into
an exit code (STYLE 8). Only the stdlib is imported at module level: every import here costs
every query (STYLE 7).
"""

import sys

from notedex.cli.commands import COMMANDS, COMMON, COUNT, COUNT0, FLAG, TEXT, parse_count
from notedex.cli.handlers import StdoutClosed, silence_stdout
from notedex.errors import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, NotedexError

TYPE_CHECKING = False  # no `typing` import on the query path; mypy honours the name
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from notedex.cli.commands import Command, Option

__all__ = ["COMMANDS", "main"]


def main(argv: "Sequence[str] | None" = None) -> int:
    """Run one command line; ``argv`` None: the process's own (the launcher, ``-m notedex``),
    which then ends without the interpreter's shutdown when it safely can (``_exit_now``)."""
    ran: list[str] = []
    code = _run(sys.argv[1:] if argv is None else argv, ran)
    if argv is None and ran and ran[0] in FAST_COMMANDS:
        _exit_now(code)
    return code


_SHUTDOWN_WORK = ("threading", "tempfile", "notedex.store.database")
"""Modules whose presence means the interpreter's shutdown may have work to do: threads to
join (``threading`` comes with logging, multiprocessing, concurrent.futures, asyncio and the
writer's parse pool), temporary files to remove, a writer's connection to close."""


def _exit_now(code: int) -> None:
    """End a query's process at once, with ``code``, when the shutdown has nothing to do.

    The interpreter's shutdown (finalising every module and object) costs about 4 ms: a
    quarter of interpreter start-up, on every query (ARCHITECTURE "The hot-path import
    budget"). A query command (``FAST_COMMANDS``) that ran no writer leaves nothing to clean
    up: its read-only connection holds no lock the exit does not release, and stdout and
    stderr are flushed here first. Anything else (another command, a thread, a temporary
    file, a writer, a flush that fails) ends the ordinary way.
    """
    if any(name in sys.modules for name in _SHUTDOWN_WORK):
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        return  # the ordinary exit reports or silences it
    import os

    os._exit(code)


def _run(argv: "Sequence[str]", ran: list[str]) -> int:
    """The command line's exit code; ``ran`` gets the name of the command that ran."""
    hoisted = hoist_globals(argv)
    if isinstance(hoisted, str):
        print(f"notedex: error: {hoisted}", file=sys.stderr)
        return EXIT_USAGE
    argv = hoisted
    args: Any = fast_parse(argv)
    if args is None:
        from notedex.cli.parser import parse_args

        args = parse_args(argv)
        if args is None:
            return EXIT_USAGE
    ran.append(args.command)
    try:
        code = COMMANDS[args.command].handler(args)
        sys.stdout.flush()  # a closed pipe shows here, not at exit where it would cost the code
        return code
    except StdoutClosed as closed:
        return closed.exit_code
    except NotedexError as exc:
        print(f"notedex: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`| head`) before the command knew its exit code: not an error.
        silence_stdout()
        return EXIT_OK
    except Exception as exc:
        if _interrupted():
            # Ctrl-C inside SQLite (one of our SQL functions) surfaces as "user-defined
            # function raised exception": the user's, not a bug.
            return EXIT_INTERRUPTED
        if getattr(args, "debug", False):
            raise
        print(
            f"notedex: internal error: {type(exc).__name__}: {exc} (run with --debug for the traceback)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL
    finally:
        _settled()


def _settled() -> None:
    """The exit code is decided. After a writer ran, the interpreter still joins its parse pool
    at exit; a Ctrl-C in that window would end the process by the signal (-2) instead of with the
    code (docs/cli.md, "Exit codes"), so it is ignored from here on."""
    if "notedex.indexing.pool" in sys.modules:
        import signal

        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _interrupted() -> bool:
    """Ctrl-C reached one of the writer's SQL functions (store.database records it)."""
    database = sys.modules.get("notedex.store.database")
    return database is not None and bool(database.take_interrupt())


# -- the fast path ----------------------------------------------------------------------------
# The query commands' ordinary argv parsed without argparse, from the same table. argparse costs
# about 5 ms of imports and gettext look-ups per run. Anything unusual (help, an error, an
# abbreviated or unknown option, ``--``, a value that starts with "-", a kind of value not read
# here) is declined and argparse handles it, so every message and exit code stays argparse's. A
# property test checks that whatever is accepted here parses to exactly what
# ``notedex.cli.parser.build_parser`` gives. It lives in this module, not a module of its own,
# because every query imports it (issue 11: one module less on the hot path).

FAST_COMMANDS = frozenset(name for name, command in COMMANDS.items() if command.fast)
FAST_KINDS = (TEXT, COUNT, COUNT0, FLAG)
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


class Args:
    """A parsed command line (argparse.Namespace's shape, without importing argparse)."""

    def __init__(self, **values: "Any") -> None:
        self.__dict__.update(values)


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
        values[option.dest] = value
    return words


def _convert(option: "Option", raw: str) -> "Any":
    """The option's value as argparse would store it, or None where argparse may differ."""
    if option.kind in (COUNT, COUNT0):
        count = parse_count(raw, 0 if option.kind == COUNT0 else 1)
        return None if isinstance(count, str) else count
    if option.kind != TEXT or (option.choices is not None and raw not in option.choices):
        return None
    return raw


def _place_words(words: list[str], command: "Command", values: "dict[str, Any]") -> bool:
    """Give the positional words to the command's positional; False where argparse would object."""
    positional = next((o for o in command.options if o.positional), None)
    if positional is None:
        return not words
    if not words or (positional.nargs is None and len(words) != 1):
        return False
    values[positional.dest] = words if positional.nargs == "+" else words[0]
    return True
