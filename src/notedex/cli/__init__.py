"""The `notedex` command line: parse (fast path, else argparse), run the handler, map errors to exit codes.

This is the entry point (``notedex.cli.main``) and the one place that turns an exception into
an exit code (STYLE 8). Only the stdlib is imported at module level: every import here costs
every query (STYLE 7).
"""

import sys

from notedex.cli.commands import COMMANDS
from notedex.cli.fastpath import FAST_COMMANDS, fast_parse, hoist_globals
from notedex.cli.handlers import StdoutClosed, silence_stdout
from notedex.errors import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, NotedexError

TYPE_CHECKING = False  # no `typing` import on the query path; mypy honours the name
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

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
