"""The `notedex` command line: argparse, lazy imports, one place that maps errors to exit codes.

Only the stdlib is imported at module level: every import here costs every query. A command
imports what it needs when it runs (STYLE 7).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from notedex.errors import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, NotedexError

TYPE_CHECKING = False  # no `typing` import on the query path; mypy honours the name
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Sequence
    from typing import Any

    from notedex.config import Config

EXIT_INTERNAL = 70  # EX_SOFTWARE: a bug, not a user error

EPILOG = """\
examples:
  notedex lookup "which notes discuss the Cobra CLI framework?"
  notedex health --json
  notedex scan --tag golang
  notedex show "PARA method" --body
  notedex capture "Idea: try the PARA method for the inbox"
  notedex daemon --vault ~/notes

The vault is --vault, else $NOTEDEX_VAULT, else `vault` in the config file, else the nearest
folder above the working directory that holds .obsidian/. Exit codes: 0 ok, 1 findings
(health found broken links; eval had failing cases), 2 usage or input error, 75 a daemon is
already running, 70 internal error.
"""


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

    def error(self, message: str) -> Any:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _common(json_flag: bool = True) -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False, formatter_class=HelpFormatter)
    group = common.add_argument_group("vault and index")
    group.add_argument("--vault", metavar="PATH", help="the vault folder (default: see below)")
    group.add_argument("--db", metavar="PATH", help="the index file (default: per-vault, in the state dir)")
    if json_flag:
        common.add_argument("--json", action="store_true", help="print exactly one JSON document on stdout")
    common.add_argument(
        "--no-refresh",
        action="store_true",
        help="answer from the index as it is (by default, without a running daemon, "
        "changed files are re-indexed first)",
    )
    common.add_argument("--debug", action="store_true", help="show tracebacks for internal errors")
    return common


class _Unbuilt:
    """Stands in for a subcommand's parser that this run does not need."""

    def add_argument(self, *args: Any, **kwargs: Any) -> None:
        return None


def build_parser(only: str | None = None) -> Parser:
    """The full parser, or (``only``) just the top level plus one subcommand.

    Every argparse object costs gettext look-ups; a query builds only the parser it runs.
    """
    parser = Parser(
        prog="notedex",
        description="An always-fresh SQLite index of a Markdown (Obsidian) vault, and instant answers from it.",
        epilog=EPILOG,
        formatter_class=HelpFormatter,
    )
    from notedex import __version__

    parser.add_argument("--version", action="version", version=f"notedex {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    common = _common()

    def add(name: str, help_text: str, examples: str, **kw: Any) -> Any:
        if only is not None and name != only:
            return _Unbuilt()
        return sub.add_parser(
            name,
            parents=[kw.pop("parent", common)],
            help=help_text,
            description=help_text,
            epilog="examples:\n" + examples,
            formatter_class=HelpFormatter,
            **kw,
        )

    p = add(
        "lookup",
        "Find the notes a question or keywords are about: titles and tags first, then aliases, "
        "link texts and one hop along the links.",
        '  notedex lookup cobra\n  notedex lookup "vault 裡有哪些跟 Cobra 這個 CLI 框架相關的筆記？" --json\n'
        "  notedex lookup golang --limit 5 --tag go",
    )
    p.add_argument("question", nargs="+", help="a question in English or Chinese, or keywords")
    p.add_argument("--limit", type=_positive_int, default=10, help="show at most N candidates (default 10)")
    p.add_argument("--tag", help="only notes with this tag (nested tags count for their parents)")
    p.add_argument("--type", dest="note_type", help="only notes of this frontmatter type")

    p = add(
        "health",
        "Report orphans, unlinked notes, broken links, warnings and errors. Exits 1 when links are broken.",
        "  notedex health\n  notedex health --json | jq .brokenLinkCount",
    )

    p = add(
        "scan",
        "List every note with its id, title, type, status, tags and aliases, and the parse errors.",
        "  notedex scan\n  notedex scan --tag project --json",
    )
    p.add_argument("--tag", help="only notes with this tag")
    p.add_argument("--type", dest="note_type", help="only notes of this frontmatter type")

    add("graph", "Print the link graph: notes, attachments and unresolved targets, with edge counts.",
        "  notedex graph --json")

    p = add(
        "show",
        "Show one note's metadata, links and backlinks (and with --body its text).",
        '  notedex show "PARA method"\n  notedex show Projects/cobra.md --body --json',
    )
    p.add_argument("note", help="a vault path (with or without .md) or a title")
    p.add_argument("--body", action="store_true", help="include the note's text (without frontmatter)")

    p = add(
        "capture",
        "Write a new note into the inbox folder (never overwrites an existing file).",
        '  notedex capture "Look into spf13/cobra for the new CLI"\n  echo "text" | notedex capture -',
    )
    p.add_argument("text", help="the note's text; - reads standard input")

    add("status", "Show the vault, the index, counts, freshness and whether a daemon is running.",
        "  notedex status\n  notedex status --json")

    p = add(
        "index",
        "Bring the index up to date with the vault now (incremental unless --full).",
        "  notedex index\n  notedex index --full",
    )
    p.add_argument("--full", action="store_true", help="rebuild the index from scratch")

    p = add(
        "daemon",
        "Run in the foreground, watching the vault and keeping the index fresh (for systemd/launchd).",
        "  notedex daemon --vault ~/notes",
        parent=_common(json_flag=False),
    )
    p.add_argument("--poll", action="store_true", help="use the polling observer (network file systems)")

    p = add(
        "service",
        "Install, remove or inspect the background service (systemd user unit or launchd agent).",
        "  notedex service install --dry-run\n  notedex service status",
    )
    p.add_argument("action", choices=("install", "uninstall", "status"))
    p.add_argument("--dry-run", action="store_true", help="print what would be written and run")

    p = add(
        "eval",
        "Run retrieval cases (RecallNest canary format) against lookup and score them.",
        "  notedex eval examples/demo-cases.json --vault examples/demo-vault",
    )
    p.add_argument("cases", help="a JSON file with a list of cases (or {\"cases\": [...]})")

    p = add(
        "search",
        'Full-text search of note bodies: words, "exact phrases", prefix* and -excluded words; '
        "each hit with its line, column and a snippet. Quote the whole query when it has -words.",
        "  notedex search cobra\n  notedex search '\"shell completion\" -zsh' --json\n"
        "  notedex search 'comple*' --limit 5\n  notedex search 框架",
    )
    p.add_argument("text", nargs="+", help='words (all must occur), "exact phrase", prefix*, -word')
    p.add_argument("--limit", type=_positive_int, default=20, help="show at most N notes (default 20)")

    p = add(
        "export",
        "Write every note as RecallNest connector-v1 JSON (text, tags, links, folder, hash) "
        "to stdout or a file.",
        "  notedex export --format connector-v1 > vault.json\n"
        "  notedex export --format connector-v1 --changed-since 2026-04-01T00:00:00Z --out new.json",
    )
    p.add_argument("--format", choices=("connector-v1",), default="connector-v1",
                   help="the output format (default connector-v1)")
    p.add_argument("--changed-since", metavar="ISO",
                   help="only notes modified after this ISO 8601 date or time (no zone: local time)")
    p.add_argument("--out", metavar="FILE", help="write to FILE (outside the vault) instead of stdout")

    p = add(
        "mcp",
        "Serve the index to AI agents as an MCP server on stdio: read-only tools lookup, search, "
        "show, health and scan (needs the extra: pip install 'notedex[mcp]').",
        "  notedex mcp --vault ~/notes\n  claude mcp add notedex -- notedex mcp --vault ~/notes",
        parent=_common(json_flag=False),
    )
    p.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS",
                   help="the deadline of every tool call (default 30)")
    return parser


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


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
    writer stack is imported only when the stdlib etag check finds something to do.
    """
    from notedex.errors import DaemonAlreadyRunning
    from notedex.store.connect import WriterLock, lock_holder

    holder = lock_holder(cfg.lock_file)
    if holder is not None and holder.role == "daemon":
        if not force:
            return None
        # Waiting would be pointless: a daemon holds the lock for as long as it runs.
        raise DaemonAlreadyRunning(
            f"a notedex daemon (pid {holder.pid}) keeps this index fresh; stop it to run `index`"
        )
    from notedex.store.freshness import current_file_count

    started = time.perf_counter()
    unchanged = None if full else current_file_count(cfg.vault_dir, cfg.db_file)
    if unchanged is not None:
        if not force:
            return None
        # `index` with nothing to do answers from the stdlib check, without the writer stack.
        seconds = round(time.perf_counter() - started, 3)
        return {"added": 0, "changed": 0, "removed": 0, "unchanged": unchanged, "errors": 0,
                "seconds": seconds, "kept": []}
    lock = WriterLock(cfg.lock_file)
    # Another writer at work on an index that does not exist yet (two first queries at once):
    # wait for it rather than answer "no index".
    wait = 30.0 if force or not os.path.exists(cfg.db_file) else 0.0
    if not lock.acquire("index", wait=wait):
        if force:
            who = lock_holder(cfg.lock_file)
            raise DaemonAlreadyRunning(
                f"another notedex process is writing this index (pid {who.pid if who else '?'})"
            )
        return None
    try:
        from notedex.store.reconcile import reconcile
        from notedex.store.writer import IndexWriter

        with IndexWriter(cfg.db, cfg.vault, max_bytes=cfg.max_bytes, body_index=cfg.body_index) as writer:
            report = reconcile(writer, full=full, progress=_progress_printer("indexing"))
        for reason in report.kept:
            print(f"notedex: {reason}", file=sys.stderr)
        return report.as_dict()
    finally:
        lock.release()


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
        data = lookup(conn, " ".join(args.question), limit=args.limit, tag=args.tag, note_type=args.note_type)
    _output(args, cfg, data, render_lookup)
    return EXIT_OK


def cmd_health(args: argparse.Namespace) -> int:
    from notedex.query.render import render_health
    from notedex.query.reports import health

    cfg = _config(args)
    conn = _open(cfg, args)
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
            print(f"notedex: warning: captured, but the index was not updated: {exc}", file=sys.stderr)
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
        document, skipped = export_connector(conn, cfg.vault, changed_since=since, max_bytes=cfg.max_bytes)
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


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
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
