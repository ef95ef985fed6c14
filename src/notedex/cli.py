"""The `notedex` command line: argparse, lazy imports, one place that maps errors to exit codes.

Only the stdlib is imported at module level: every import here costs every query. A command
imports what it needs when it runs (STYLE 7).
"""

from __future__ import annotations

import os
import sys

from notedex.errors import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, NotedexError

TYPE_CHECKING = False  # no `typing` import on the query path; mypy honours the name
if TYPE_CHECKING:
    import argparse
    import sqlite3
    from collections.abc import Callable, Sequence
    from typing import Any

    from notedex.config import Config

EXIT_INTERNAL = 70  # EX_SOFTWARE: a bug, not a user error

# -- shared steps ----------------------------------------------------------------------------


def _config(args: argparse.Namespace) -> Config:
    from notedex.config import resolve_config

    return resolve_config(args.vault, args.db)


def _progress_printer(label: str) -> Callable[[int, int], None] | None:
    if not sys.stderr.isatty():
        return None

    def show(done: int, total: int) -> None:
        width = 30
        filled = int(width * done / total) if total else width
        sys.stderr.write(f"\r{label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    return show


def refresh(cfg: Config, *, full: bool = False, force: bool = False) -> dict[str, Any] | None:
    """Without a running daemon, bring the index up to date first (ARCHITECTURE "Freshness").

    Returns the apply report, or None when a daemon (or another writer) keeps it fresh. The
    policy is indexing.freshness.ensure_fresh; ``force`` is the `index` command.
    """
    from notedex.indexing.freshness import ensure_fresh

    progress = _progress_printer("indexing")
    report = ensure_fresh(cfg, index=force, full=full, progress=progress).report
    for reason in report["kept"] if report else ():
        print(f"notedex: {reason}", file=sys.stderr)
    return report


def _open(cfg: Config, args: argparse.Namespace) -> sqlite3.Connection:
    from notedex.store.connect import connect_readonly

    if not getattr(args, "no_refresh", False):
        refresh(cfg)
    return connect_readonly(cfg.db_file)


def _output(args: argparse.Namespace, cfg: Config, data: Any, render: Callable[..., None]) -> None:
    if args.json:
        from notedex.query.render import emit_json

        emit_json(data)
    else:
        from notedex.query.render import Renderer

        render(Renderer(cfg.vault_dir), data)


# -- commands ---------------------------------------------------------------------------------


def cmd_lookup(args: argparse.Namespace) -> int:
    from notedex.query.lookup import lookup
    from notedex.query.render import render_lookup

    cfg = _config(args)
    conn = _open(cfg, args)
    with conn:
        data = lookup(
            conn, " ".join(args.question), limit=args.limit, tag=args.tag, note_type=args.note_type
        )
    _output(args, cfg, data, render_lookup)
    return EXIT_OK


def cmd_health(args: argparse.Namespace) -> int:
    from notedex.query.render import render_health
    from notedex.query.reports import health

    cfg = _config(args)
    conn = _open(cfg, args)
    if args.json and not sys.stdout.isatty():
        # Compact JSON, as emit_json writes it to a pipe, built by SQLite: at 100k notes the
        # report has tens of thousands of findings.
        from notedex.query.reports import health_json

        with conn:
            document, broken = health_json(conn)
        sys.stdout.write(document + "\n")
        return EXIT_FINDINGS if broken else EXIT_OK
    with conn:
        data = health(conn)
    _output(args, cfg, data, render_health)
    return EXIT_FINDINGS if data["brokenLinkCount"] else EXIT_OK


def cmd_scan(args: argparse.Namespace) -> int:
    from notedex.query.listing import scan
    from notedex.query.render import render_scan

    cfg = _config(args)
    conn = _open(cfg, args)
    with conn:
        data = scan(conn, tag=args.tag, note_type=args.note_type)
    _output(args, cfg, data, render_scan)
    return EXIT_OK


def cmd_graph(args: argparse.Namespace) -> int:
    from notedex.query.listing import graph
    from notedex.query.render import render_graph

    cfg = _config(args)
    conn = _open(cfg, args)
    with conn:
        data = graph(conn)
    _output(args, cfg, data, render_graph)
    return EXIT_OK


def cmd_show(args: argparse.Namespace) -> int:
    from notedex.query.listing import show
    from notedex.query.render import render_show

    cfg = _config(args)
    conn = _open(cfg, args)
    with conn:
        data = show(conn, cfg.vault, args.note, body=args.body)
    _output(args, cfg, data, render_show)
    return EXIT_OK


def cmd_status(args: argparse.Namespace) -> int:
    from notedex.query.listing import status
    from notedex.query.render import render_status

    cfg = _config(args)
    conn = _open(cfg, args)
    with conn:
        data = status(conn, cfg.vault, cfg.db, cfg.lock_path)
    _output(args, cfg, data, render_status)
    return EXIT_OK


def cmd_capture(args: argparse.Namespace) -> int:
    from notedex.errors import UsageError
    from notedex.query.render import render_captured
    from notedex.vault.capture import capture

    cfg = _config(args)
    # stdin may hold any bytes: undecodable ones become U+FFFD rather than a crash.
    text = sys.stdin.buffer.read().decode("utf-8", "replace") if args.text == "-" else args.text
    if not text.strip():
        raise UsageError("capture needs some text")
    try:
        captured = capture(cfg.vault, cfg.inbox, text)
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot capture into {cfg.inbox}: {exc}") from exc
    if not args.no_refresh:
        try:
            refresh(cfg)
        except NotedexError as exc:
            # The note exists now: its path must still reach the caller.
            print(
                f"notedex: warning: captured, but the index was not updated: {exc}", file=sys.stderr
            )
    _output(args, cfg, {"path": captured.path, "id": captured.id}, render_captured)
    return EXIT_OK


def cmd_index(args: argparse.Namespace) -> int:
    cfg = _config(args)
    report = refresh(cfg, full=args.full, force=True)
    assert report is not None
    if args.json:
        from notedex.query.render import emit_json

        emit_json(report)
    else:
        print(
            f"added {report['added']}, changed {report['changed']}, removed {report['removed']}, "
            f"errors {report['errors']}, {report['seconds']:.2f}s",
        )
    return EXIT_OK


def cmd_daemon(args: argparse.Namespace) -> int:
    from notedex.daemon.service import run_daemon

    cfg = _config(args)
    return run_daemon(cfg, poll=args.poll)


def cmd_service(args: argparse.Namespace) -> int:
    from notedex.daemon.install import service_command

    cfg = _config(args)
    data = service_command(cfg, args.action, dry_run=args.dry_run)
    if args.json:
        from notedex.query.render import emit_json

        emit_json(data)
    else:
        print(data["text"])
    return EXIT_OK


def cmd_eval(args: argparse.Namespace) -> int:
    from notedex.query.evaluate import evaluate, load_cases
    from notedex.query.render import render_eval

    cfg = _config(args)
    cases = load_cases(args.cases)
    conn = _open(cfg, args)
    with conn:
        data = evaluate(conn, cases)
    _output(args, cfg, data, render_eval)
    return EXIT_OK if data["failed"] == 0 else EXIT_FINDINGS


def cmd_search(args: argparse.Namespace) -> int:
    from notedex.errors import UsageError
    from notedex.query.search import parse_query, render_search, search

    cfg = _config(args)
    text = " ".join(args.text)
    parse_query(text)  # a bad query is a usage error before any indexing work
    if not cfg.body_index:
        raise UsageError("full-text search is off: body_index = false in the config file")
    conn = _open(cfg, args)
    with conn:
        data = search(conn, cfg.vault, text, limit=args.limit)
    _output(args, cfg, data, render_search)
    return EXIT_OK


def cmd_export(args: argparse.Namespace) -> int:
    from notedex.query.export import export_connector, parse_since, resolve_out, write_document

    cfg = _config(args)
    since = parse_since(args.changed_since) if args.changed_since else None
    target = resolve_out(args.out, cfg.vault)
    conn = _open(cfg, args)
    with conn:
        document, skipped = export_connector(
            conn, cfg.vault, changed_since=since, max_bytes=cfg.max_bytes
        )
    for line in skipped:
        print(f"notedex: skipped {line}", file=sys.stderr)
    write_document(document, target)
    if target is not None:
        summary = {"out": str(target), "records": len(document["records"]), "skipped": len(skipped)}
        if args.json:
            from notedex.query.render import emit_json

            emit_json(summary)
        else:
            print(f"wrote {summary['records']} records to {target} ({len(skipped)} skipped)")
    return EXIT_OK


def cmd_mcp(args: argparse.Namespace) -> int:
    from notedex.errors import UsageError
    from notedex.mcp_server import require_sdk, serve

    require_sdk()  # without the extra: one line saying how to install it, exit 2
    if not args.timeout > 0:
        raise UsageError("--timeout must be a positive number of seconds")
    cfg = _config(args)
    return serve(cfg, timeout=args.timeout, refresh=not args.no_refresh)


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "lookup": cmd_lookup,
    "health": cmd_health,
    "scan": cmd_scan,
    "graph": cmd_graph,
    "show": cmd_show,
    "capture": cmd_capture,
    "status": cmd_status,
    "index": cmd_index,
    "daemon": cmd_daemon,
    "service": cmd_service,
    "eval": cmd_eval,
    "search": cmd_search,
    "export": cmd_export,
    "mcp": cmd_mcp,
}


# -- the fast path ------------------------------------------------------------------------------
# The query commands in their ordinary forms are parsed without argparse (about 5 ms of
# imports and gettext look-ups per run). Anything unusual (help, an error, an abbreviated or
# unknown option, ``--``, a value that starts with "-") is declined and argparse handles it,
# so every message and exit code stays argparse's. A property test checks that whatever is
# accepted here parses to exactly what `notedex.arguments.build_parser` gives.

COMMON_VALUES = {"--vault": "vault", "--db": "db"}
COMMON_FLAGS = {"--json": "json", "--no-refresh": "no_refresh", "--debug": "debug"}
FILTERS = {"--tag": "tag", "--type": "note_type"}
# command -> (positional dest, "+" or "1" or None, {option: dest}, {flag: dest}, {dest: default})
FAST_COMMANDS: dict[
    str, tuple[str | None, str | None, dict[str, str], dict[str, str], dict[str, Any]]
] = {
    "lookup": ("question", "+", {"--limit": "limit", **FILTERS}, {}, {"limit": 10}),
    "health": (None, None, {}, {}, {}),
    "scan": (None, None, dict(FILTERS), {}, {}),
    "graph": (None, None, {}, {}, {}),
    "show": ("note", "1", {}, {"--body": "body"}, {}),
    "status": (None, None, {}, {}, {}),
    "search": ("text", "+", {"--limit": "limit"}, {}, {"limit": 20}),
}


class Args:
    """A parsed command line (argparse.Namespace's shape, without importing argparse)."""

    def __init__(self, **values: Any) -> None:
        self.__dict__.update(values)


def fast_parse(argv: Sequence[str]) -> Args | None:
    """Parse a query command's ordinary argv, or None to leave it to argparse."""
    if not argv or argv[0] not in FAST_COMMANDS:
        return None
    command = argv[0]
    positional, nargs, options, flags, defaults = FAST_COMMANDS[command]
    values: dict[str, Any] = {
        "command": command,
        "vault": None,
        "db": None,
        "json": False,
        "no_refresh": False,
        "debug": False,
    }
    values.update(dict.fromkeys(options.values()))
    values.update(dict.fromkeys(flags.values(), False))
    values.update(defaults)
    words: list[str] = []
    run_ended = False  # argparse takes one contiguous run of positionals
    i = 1
    while i < len(argv):
        token = argv[i]
        i += 1
        if not token.startswith("-"):
            if run_ended:
                return None
            words.append(token)
            continue
        if words:
            run_ended = True
        name, eq, inline = token.partition("=")
        if name in COMMON_FLAGS or name in flags:
            if eq:
                return None  # "--json=1": argparse's error
            values[COMMON_FLAGS.get(name) or flags[name]] = True
            continue
        dest: str | None = COMMON_VALUES.get(name) or options.get(name)
        if dest is None:
            return None  # help, --, an abbreviation, an unknown option: argparse's business
        if eq:
            value = inline
        elif i < len(argv) and not argv[i].startswith("-"):
            value = argv[i]
            i += 1
        else:
            return None
        if dest == "limit":
            count = _count(value)
            if count is None:
                return None
            values[dest] = count
        else:
            values[dest] = value
    if positional is not None:
        if not words or (nargs == "1" and len(words) != 1):
            return None
        values[positional] = words if nargs == "+" else words[0]
    elif words:
        return None
    return Args(**values)


def _count(text: str) -> int | None:
    """`arguments.positive_int` without the error: None where argparse would complain."""
    try:
        value = int(text)
    except ValueError:
        return None
    return value if value >= 1 else None


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args: Any = fast_parse(argv)
    if args is None:
        from notedex.arguments import build_parser

        first = next((a for a in argv if not a.startswith("-")), None)
        parser = build_parser(first if first in COMMANDS else None)
        args = parser.parse_args(argv)
        if not args.command:
            parser.print_help(sys.stderr)
            return EXIT_USAGE
    try:
        return COMMANDS[args.command](args)
    except NotedexError as exc:
        print(f"notedex: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`| head`): not an error of ours.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except Exception as exc:
        if getattr(args, "debug", False):
            raise
        print(
            f"notedex: internal error: {type(exc).__name__}: {exc} (run with --debug for the traceback)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


if __name__ == "__main__":
    raise SystemExit(main())
