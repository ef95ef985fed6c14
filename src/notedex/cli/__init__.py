"""The `notedex` command line: parse (fast path, else argparse), run the handler, map errors to exit codes.

This is the entry point (``notedex.cli.main``) and the one place that turns an exception into
an exit code (STYLE 8). Only the stdlib is imported at module level: every import here costs
every query (STYLE 7).
"""

import sys


def preload(names: "Sequence[str]") -> None:
    """Load the modules ``names`` (in this order, their packages first) from their cached
    bytecode without the import system's search, where that is plainly safe.

    Each module the import system loads costs about 0.3M instructions of its finders and
    loaders before the module's own code runs (an empty module: stat calls, spec, locks,
    attributes), and a lookup loads about twenty of ours: 4M instructions, a tenth of
    interpreter start-up, on every query (issue 30's speed budget, ARCHITECTURE "The hot-path
    import budget"). For a module beside its source, this reads the ``__pycache__`` file the
    import system wrote, checks its header as the import system does (magic number, the
    source's mtime and size), and runs its code in a module with the same spec, loader and
    attributes. Anything else stops the preload and leaves the rest to ``import``: a module
    loaded already, no cached file or a stale one (the next ``import`` rewrites it), a
    hash-based one, ``-O``, a pycache prefix, a package spread over several folders, a zip;
    and ``-X importtime``, whose report must show every import (tests/system/test_imports.py).
    """
    flags = sys.flags
    if flags.optimize or sys.pycache_prefix is not None or "importtime" in sys._xoptions:
        return
    for name in names:
        if name not in sys.modules and not _preloaded(name):
            return


def _read(path: str) -> bytes:
    """The whole file: ``os`` calls, lighter than a buffered file object."""
    import os

    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        data = b""
        while chunk := os.read(fd, 1 << 16):  # below malloc's mmap threshold; then the end
            data += chunk
        return data
    finally:
        os.close(fd)


PRELOADED = "preloaded"
"""The ``loader_state`` of a module's spec when ``preload`` loaded it."""


def _preloaded(name: str, *, package: bool = False) -> bool:
    """Load ``name`` (a package when ``package``, its parents first) as ``preload`` says; False
    where it declines."""
    parent, _, leaf = name.rpartition(".")
    if not parent:
        return False  # a top-level name: only the modules of a loaded package
    if parent not in sys.modules and not _preloaded(parent, package=True):
        return False
    folders = getattr(sys.modules[parent], "__path__", None)
    if folders is None or len(folders) != 1:
        return False
    folder = f"{folders[0]}/{leaf}" if package else folders[0]
    stem = "__init__" if package else leaf
    source = f"{folder}/{stem}.py"
    cached = f"{folder}/__pycache__/{stem}.{sys.implementation.cache_tag}.pyc"
    external = sys.modules["_frozen_importlib_external"]  # loaded with the interpreter
    import marshal  # built into the interpreter: no file to read
    import os

    try:
        info = os.stat(source)
        data = _read(cached)
    except OSError:
        return False
    if (
        data[:4] != external.MAGIC_NUMBER
        or data[4:8] != b"\0\0\0\0"  # a timestamp-based file, not a hash-based one
        or int.from_bytes(data[8:12], "little") != int(info.st_mtime) & 0xFFFFFFFF
        or int.from_bytes(data[12:16], "little") != info.st_size & 0xFFFFFFFF
    ):
        return False
    try:
        code = marshal.loads(memoryview(data)[16:])
    except (EOFError, ValueError, TypeError):
        return False  # a damaged file: `import` reads the source
    loader = external.SourceFileLoader(name, source)
    spec = sys.modules["_frozen_importlib"].ModuleSpec(
        name, loader, origin=source, loader_state=PRELOADED, is_package=package
    )
    spec.cached = cached
    spec.has_location = True
    module = type(sys)(name)
    module.__dict__.update(
        __spec__=spec,
        __loader__=loader,
        __package__=name if package else parent,
        __file__=source,
        __cached__=cached,
    )
    if package:
        module.__path__ = spec.submodule_search_locations = [folder]
    sys.modules[name] = module
    try:
        exec(code, module.__dict__)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    setattr(sys.modules[parent], leaf, module)
    return True


# The CLI's own modules, which every command loads (the launcher has loaded this package).
preload(("notedex.errors", "notedex.cli.commands", "notedex.cli.fastpath", "notedex.cli.handlers"))

from notedex.cli.commands import COMMANDS  # noqa: E402  (after the preload above)
from notedex.cli.fastpath import FAST_COMMANDS, fast_parse, hoist_globals  # noqa: E402
from notedex.cli.handlers import silence_stdout  # noqa: E402
from notedex.errors import (  # noqa: E402
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    NotedexError,
)

TYPE_CHECKING = False  # no `typing` import on the query path; mypy honours the name
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any


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
        code = COMMANDS[args.command].run(args)
        sys.stdout.flush()  # a closed pipe shows here, not at exit where it would cost the code
        return code
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
        # The reader of stdout went away: the command's code stands. Its class is made only
        # when it is raised (a class costs every query that loads it, notedex.errors).
        from notedex.error_kinds import StdoutClosed

        if isinstance(exc, StdoutClosed):
            return exc.exit_code
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
