"""The command handlers, and the steps they share: config -> refresh -> open -> answer -> output.

Only the stdlib is imported at module level: every import here costs every query. A handler
imports what it needs when it runs (STYLE 7); ``notedex.cli.commands`` names which handler runs
which command.
"""

from __future__ import annotations

import sys

from notedex.errors import EXIT_FINDINGS, EXIT_OK, NotedexError

TYPE_CHECKING = False  # no `typing` import on the query path; mypy honours the name
if TYPE_CHECKING:
    import argparse
    import sqlite3
    from collections.abc import Callable
    from typing import Any

    from notedex.config import Config

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


def _emitted_json(args: argparse.Namespace, data: Any) -> bool:
    """Under ``--json``, print ``data`` as the one JSON document of stdout."""
    if not args.json:
        return False
    from notedex.query.render import emit_json

    emit_json(data)
    return True


def _output(args: argparse.Namespace, cfg: Config, data: Any, render: Callable[..., None]) -> None:
    if not _emitted_json(args, data):
        from notedex.query.render import Renderer

        render(Renderer(cfg.vault_dir), data)


def _report(args: argparse.Namespace, data: Any, text: Callable[[], str]) -> None:
    """The output of a command that is not a query: its JSON, or one plain line of text."""
    if not _emitted_json(args, data):
        print(text())


def answer(
    args: argparse.Namespace,
    cfg: Config,
    query: Callable[[sqlite3.Connection], Any],
    render: Callable[..., None],
    *,
    findings: Callable[[Any], Any] | None = None,
    compact: Callable[[sqlite3.Connection], tuple[str, Any]] | None = None,
) -> int:
    """The steps every query command shares: refresh, open read-only, query, output, exit code.

    ``findings`` says whether the answer exits 1 (ARCHITECTURE "CLI contract"); ``compact``
    builds the piped ``--json`` document in SQLite and says the same.
    """
    conn = _open(cfg, args)
    if compact is not None and args.json and not sys.stdout.isatty():
        with conn:
            document, found = compact(conn)
        sys.stdout.write(document + "\n")
        return EXIT_FINDINGS if found else EXIT_OK
    with conn:
        data = query(conn)
    _output(args, cfg, data, render)
    return EXIT_FINDINGS if findings is not None and findings(data) else EXIT_OK


# -- commands ---------------------------------------------------------------------------------


def cmd_lookup(args: argparse.Namespace) -> int:
    from notedex.query.lookup import lookup
    from notedex.query.render import render_lookup

    question = " ".join(args.question)
    return answer(
        args,
        _config(args),
        lambda conn: lookup(
            conn, question, limit=args.limit, tag=args.tag, note_type=args.note_type
        ),
        render_lookup,
    )


def cmd_health(args: argparse.Namespace) -> int:
    from notedex.query.render import render_health
    from notedex.query.reports import findings_count, health, health_json

    # Piped --json: compact JSON built by SQLite, as emit_json writes it to a pipe; at 100k
    # notes the report has tens of thousands of findings.
    return answer(
        args,
        _config(args),
        health,
        render_health,
        findings=findings_count,
        compact=health_json,
    )


def cmd_scan(args: argparse.Namespace) -> int:
    from notedex.query.listing import scan
    from notedex.query.render import render_scan

    return answer(
        args,
        _config(args),
        lambda conn: scan(conn, tag=args.tag, note_type=args.note_type),
        render_scan,
    )


def cmd_tags(args: argparse.Namespace) -> int:
    from notedex.query.render import render_tags
    from notedex.query.reports import tags

    return answer(args, _config(args), tags, render_tags)


def cmd_mentions(args: argparse.Namespace) -> int:
    from notedex.query.mentions import mentions
    from notedex.query.render import render_mentions

    cfg = _config(args)
    return answer(
        args,
        cfg,
        lambda conn: mentions(conn, cfg.vault, args.note, max_bytes=cfg.max_bytes),
        render_mentions,
    )


def cmd_graph(args: argparse.Namespace) -> int:
    from notedex.query.listing import graph
    from notedex.query.render import render_graph

    return answer(args, _config(args), graph, render_graph)


def cmd_show(args: argparse.Namespace) -> int:
    from notedex.query.listing import parse_line_range, show
    from notedex.query.render import render_show

    lines = parse_line_range(args.lines) if args.lines is not None else None
    cfg = _config(args)
    return answer(
        args,
        cfg,
        lambda conn: show(
            conn, cfg.vault, args.note, body=args.body, lines=lines, max_bytes=cfg.max_bytes
        ),
        render_show,
    )


def cmd_quote(args: argparse.Namespace) -> int:
    from notedex.errors import UsageError
    from notedex.query.quote import checked_quote, load_quotes, quote, quote_check
    from notedex.query.render import render_quote, render_quote_check

    if args.check is not None:
        if args.note is not None:
            raise UsageError("give either NOTE TEXT or --check FILE, not both")
        items = load_quotes(args.check)
        cfg = _config(args)
        return answer(
            args,
            cfg,
            lambda conn: quote_check(conn, cfg.vault, items, max_bytes=cfg.max_bytes),
            render_quote_check,
            findings=lambda data: data["notFound"],
        )
    if args.note is None or args.text is None:
        raise UsageError("quote needs a NOTE and the TEXT to look for (or --check FILE)")
    checked_quote(args.text)  # an empty quote is a usage error before any indexing work
    cfg = _config(args)
    return answer(
        args,
        cfg,
        lambda conn: quote(conn, cfg.vault, args.note, args.text, max_bytes=cfg.max_bytes),
        render_quote,
        findings=lambda data: not data["found"],
    )


def cmd_status(args: argparse.Namespace) -> int:
    from notedex.query.listing import status
    from notedex.query.render import render_status

    cfg = _config(args)
    return answer(
        args, cfg, lambda conn: status(conn, cfg.vault, cfg.db, cfg.lock_path), render_status
    )


def cmd_eval(args: argparse.Namespace) -> int:
    from notedex.query.evaluate import evaluate, load_cases
    from notedex.query.render import render_eval

    cfg = _config(args)
    cases = load_cases(args.cases)
    return answer(
        args,
        cfg,
        lambda conn: evaluate(conn, cases),
        render_eval,
        findings=lambda data: data["failed"] != 0,
    )


def cmd_search(args: argparse.Namespace) -> int:
    from notedex.errors import UsageError
    from notedex.query.search import parse_query, render_search, search

    cfg = _config(args)
    text = " ".join(args.text)
    parse_query(text)  # a bad query is a usage error before any indexing work
    if not cfg.body_index:
        raise UsageError("full-text search is off: body_index = false in the config file")
    return answer(
        args, cfg, lambda conn: search(conn, cfg.vault, text, limit=args.limit), render_search
    )


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
    _report(
        args,
        report,
        lambda: (
            f"added {report['added']}, changed {report['changed']}, removed {report['removed']}, "
            f"moved {report['moved']}, unchanged {report['unchanged']} (rehashed {report['rehashed']}), "
            f"errors {report['errors']}, {report['seconds']:.2f}s"
        ),
    )
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
        _report(
            args,
            summary,
            lambda: f"wrote {summary['records']} records to {target} ({len(skipped)} skipped)",
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
    _report(args, data, lambda: data["text"])
    return EXIT_OK


def cmd_mcp(args: argparse.Namespace) -> int:
    from notedex.errors import UsageError
    from notedex.mcp_server import require_sdk, serve

    require_sdk()  # without the extra: one line saying how to install it, exit 2
    if not args.timeout > 0:
        raise UsageError("--timeout must be a positive number of seconds")
    cfg = _config(args)
    return serve(cfg, timeout=args.timeout, refresh=not args.no_refresh)
