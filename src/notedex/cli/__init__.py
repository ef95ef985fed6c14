"""The `notedex` command line: parse (fast path, else argparse), run the handler, map errors to exit codes.

This is the entry point (``notedex.cli.main``) and the one place that turns an exception into
an exit code (STYLE 8). Only the stdlib is imported at module level: every import here costs
every query (STYLE 7).
"""

import sys

from notedex.cli.commands import APPEND, COMMANDS, COMMON, COUNT, COUNT0, FLAG, TEXT, parse_count
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
    try:
        code = _run(sys.argv[1:] if argv is None else argv, ran, own_process=argv is None)
    except KeyboardInterrupt:  # a stop signal in the moment `_run` reported its code
        code = _say_interrupted()
    if argv is None and _stopped_by:
        _exit_now(code, stopped=True)  # a stopped command's parse pool is not waited for
    if argv is None and ran and ran[0] in FAST_COMMANDS:
        _exit_now(code)
    return code


_SHUTDOWN_WORK = ("threading", "tempfile", "notedex.store.database")
"""Modules whose presence means the interpreter's shutdown may have work to do: threads to
join (``threading`` comes with logging, multiprocessing, concurrent.futures, asyncio and the
writer's parse pool), temporary files to remove, a writer's connection to close."""


def _exit_now(code: int, *, stopped: bool = False) -> None:
    """End a query's process at once, with ``code``, when the shutdown has nothing to do.

    The interpreter's shutdown (finalising every module and object) costs about 4 ms: a
    quarter of interpreter start-up, on every query (ARCHITECTURE "The hot-path import
    budget"). A query command (``FAST_COMMANDS``) that ran no writer leaves nothing to clean
    up: its read-only connection holds no lock the exit does not release, and stdout and
    stderr are flushed here first. Anything else (another command, a thread, a temporary
    file, a writer, a flush that fails) ends the ordinary way.

    ``stopped``: a stop signal ended the command, whose ``finally`` blocks have run (the build
    file removed, the lock released); its parse pool may hold a half-written answer that the
    shutdown would wait on for good (issue 31.8), so the process ends here whatever is loaded.
    """
    if not stopped and any(name in sys.modules for name in _SHUTDOWN_WORK):
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        if not stopped:
            return  # the ordinary exit reports or silences it
    import os

    os._exit(code)


def _run(argv: "Sequence[str]", ran: list[str], *, own_process: bool = False) -> int:
    """The command line's exit code; ``ran`` gets the name of the command that ran.
    ``own_process``: the process is this command's (``main()``), so its signals are ours."""
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
    if own_process:
        restore_collector(fast=args.command in FAST_COMMANDS)
    if own_process and args.command not in _OWN_SIGNALS:
        _catch_stop_signals()
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
        return _say_interrupted()
    except BrokenPipeError:
        # The reader went away (`| head`) before the command knew its exit code: not an error.
        silence_stdout()
        return EXIT_OK
    except Exception as exc:
        if _interrupted():
            # Ctrl-C inside SQLite (one of our SQL functions) surfaces as "user-defined
            # function raised exception", a stop signal in a long statement as "interrupted"
            # (store.database's progress handler): the user's, not a bug.
            return _say_interrupted()
        if getattr(args, "debug", False):
            raise
        print(
            f"notedex: internal error: {type(exc).__name__}: {exc} (run with --debug for the traceback)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL
    finally:
        if own_process:
            _settled()


FAST_GC_THRESHOLD = 10_000
"""A query's first cyclic collection, in new container objects (the interpreter's is 700): a
lookup makes about 3,000 after its parse, so it runs none; a long query collects as often as
its garbage needs, each pass over only what it made itself (``gc.freeze``)."""


def restore_collector(*, fast: bool) -> None:
    """Turn the cyclic garbage collector back on, which the launcher (``scripts/notedex``,
    ``python -m notedex``) turns off while the CLI's modules load; a process whose collector is
    on (another caller of ``main``) is left as it is.

    Loading the CLI and a query's modules makes about 8,000 objects that all live until the
    process ends; the interpreter's collector walked them five times, about 1 ms of every
    query (7% of start-up; issue 30's speed budget, docs/design/lookup.md). A query command
    (``fast``) first moves what is loaded out of the collector's sight for good
    (``gc.freeze``) and collects only after ``FAST_GC_THRESHOLD`` new objects; any other
    command (the daemon, ``index``, the MCP server) gets the interpreter's settings back."""
    import gc  # built into the interpreter: no file to read

    if gc.isenabled():
        return
    if fast:
        gc.freeze()
        gc.set_threshold(FAST_GC_THRESHOLD)
    gc.enable()


def _interrupted() -> bool:
    """Ctrl-C reached one of the writer's SQL functions (store.database records it), or a
    stop signal aborted a statement."""
    database = sys.modules.get("notedex.store.database")
    return bool(_stopped_by) or (database is not None and bool(database.take_interrupt()))


# -- stop signals (ARCHITECTURE "Stop signals", issue 31.8) -------------------------------------
# The first SIGINT or SIGTERM stops the command: KeyboardInterrupt in the main thread, the parse
# pool's workers killed, a long SQLite statement aborted by the writer's progress handler; one
# line on stderr and exit 130 (143). A second signal while it stops ends the process at once.
# The C module `_signal` (loaded by every interpreter): `signal` would import enum, 2 ms a query.

INTERRUPTED_WHAT = {
    "": "the index is unchanged",
    "committed": "the index keeps the changes committed so far (each a consistent state); "
    "`notedex index` applies the rest",
    "installed": "the new index was already in place",
}
"""What the one line says, by what this process had done to the live index (store.database's
``live_index_change``)."""
_OWN_SIGNALS = frozenset({"daemon"})
"""Commands that handle SIGINT and SIGTERM themselves (the daemon drains its queue first)."""
_SIGINT, _SIGTERM = 2, 15
_stopped_by: list[int] = []
"""The signal that stopped the command, once one did."""
_said: list[bool] = []


def _c_signal() -> "Any":
    return sys.modules.get("_signal") or __import__("_signal")


def _catch_stop_signals() -> None:
    import os

    global _own_pid
    _own_pid = os.getpid()
    c_signal = _c_signal()
    for signum in (_SIGINT, _SIGTERM):
        c_signal.signal(signum, _on_stop_signal)


_own_pid = 0


def _on_stop_signal(signum: int, frame: object) -> None:
    import os

    if os.getpid() != _own_pid:
        # A parse worker forked a moment ago, before its initializer set its own handlers.
        os._exit(128 + signum)
    if _stopped_by:  # the second signal: no more waiting
        _say_interrupted()
        os._exit(128 + _stopped_by[0])
    _stopped_by.append(signum)
    pool = sys.modules.get("notedex.indexing.pool")
    if pool is not None:
        pool.stop_workers()
    database = sys.modules.get("notedex.store.database")
    if database is not None:
        database.request_stop()  # the writer's next long statement is aborted
    # Where Python cannot pass it on (an at-fork hook while the pool starts a worker, a
    # __del__), the KeyboardInterrupt is "ignored" with a traceback: kept quiet below; the
    # killed workers and the aborted statements stop the command all the same.
    sys.unraisablehook = _quiet_interrupts
    raise KeyboardInterrupt


def _quiet_interrupts(unraisable: "Any") -> None:
    if not isinstance(unraisable.exc_value, KeyboardInterrupt):
        sys.__unraisablehook__(unraisable)


def _say_interrupted() -> int:
    """Print the one line an interrupted command leaves (once); its exit code."""
    import os

    if not _said:
        _said.append(True)
        database = sys.modules.get("notedex.store.database")
        what = INTERRUPTED_WHAT[database.live_index_change() if database is not None else ""]
        try:
            sys.stderr.flush()
        except Exception:
            pass
        # On a terminal, a progress bar (or the echoed ^C) may hold the line: start a new one.
        start = "\n" if os.isatty(2) else ""
        try:
            os.write(2, f"{start}notedex: interrupted; {what}\n".encode())
        except OSError:
            pass
    return 128 + _stopped_by[0] if _stopped_by else EXIT_INTERRUPTED


def _settled() -> None:
    """The exit code is decided. The interpreter may still join a parse pool at exit (quickly:
    it was shut down); a signal in that window would end the process by the signal (-2)
    instead of with the code (docs/cli.md, "Exit codes"), so both are ignored from here on.
    Not a handler that exits: the interpreter's finalisation puts SIG_DFL back in place of
    Python handlers, not of SIG_IGN."""
    c_signal = _c_signal()
    try:
        for signum in (_SIGINT, _SIGTERM):
            c_signal.signal(signum, c_signal.SIG_IGN)
    except ValueError:
        pass  # not the main thread


# -- the fast path ----------------------------------------------------------------------------
# The query commands' ordinary argv parsed without argparse, from the same table. argparse costs
# about 5 ms of imports and gettext look-ups per run. Anything unusual (help, an error, an
# abbreviated or unknown option, ``--``, a value that starts with "-", a kind of value not read
# here) is declined and argparse handles it, so every message and exit code stays argparse's. A
# property test checks that whatever is accepted here parses to exactly what
# ``notedex.cli.parser.build_parser`` gives. It lives in this module, not a module of its own,
# because every query imports it (issue 11: one module less on the hot path).

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
