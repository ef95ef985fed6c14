"""The handlers that serve other programs: `eval` (canary scoring), `export` (the
connector's format), `mcp` (the agents' server) and `completion` (the shells'). Off the query
path: these commands load ``typing`` anyway.
"""

import sys
from typing import TYPE_CHECKING

from notedex.cli.handlers import _config, _open, _report, answer, note_filter
from notedex.errors import EXIT_OK

if TYPE_CHECKING:
    import argparse
    import sqlite3
    from typing import Any

# The handlers the command table names (``cli.commands.Command.handler``).
__all__ = ["cmd_completion", "cmd_eval", "cmd_export", "cmd_mcp"]


def cmd_eval(args: "argparse.Namespace") -> int:
    from notedex.query.evaluate import evaluate, load_cases
    from notedex.query.render import render_eval

    cfg = _config(args)
    cases = load_cases(args.cases)

    def run(conn: "sqlite3.Connection") -> "dict[str, Any]":
        data = evaluate(conn, cases)
        for miss in data["unmatchedTargets"]:
            print(
                f"notedex: warning: case {miss['case']!r}: {miss['target']!r} matches no note "
                "(a vault path, with or without .md, or an id prefix)",
                file=sys.stderr,
            )
        return data

    return answer(
        args,
        cfg,
        run,
        render_eval,
        findings=lambda data: data["failed"] != 0,
    )


def cmd_export(args: "argparse.Namespace") -> int:
    from notedex.query.export import export_connector, parse_since, resolve_out, write_export

    cfg = _config(args)
    since = parse_since(args.changed_since) if args.changed_since else None
    nf = note_filter(args, cfg)
    target = resolve_out(args.out, cfg.vault)
    conn = _open(cfg, args)
    with conn:
        records, skipped = write_export(
            conn,
            target,
            lambda doc: export_connector(
                conn,
                doc,
                cfg.vault,
                changed_since=since,
                max_bytes=cfg.max_bytes,
                follow_symlinks=cfg.follow_symlinks,
                nf=nf,
                skip=lambda line: print(f"notedex: skipped {line}", file=sys.stderr),
            ),
        )
    if target is not None:
        summary = {"out": str(target), "records": records, "skipped": skipped}
        _report(
            args,
            summary,
            lambda: f"wrote {summary['records']} records to {target} ({skipped} skipped)",
        )
    return EXIT_OK


def cmd_mcp(args: "argparse.Namespace") -> int:
    from notedex.errors import UsageError
    from notedex.mcp_server import require_sdk, serve

    require_sdk()  # without the extra: one line saying how to install it, exit 2
    if not args.timeout > 0:
        raise UsageError("--timeout must be a positive number of seconds")
    cfg = _config(args)
    return serve(
        cfg, timeout=args.timeout, refresh=not args.no_refresh, allow_capture=args.allow_capture
    )


def cmd_completion(args: "argparse.Namespace") -> int:
    from notedex.cli.completion import script

    sys.stdout.write(script(args.shell))
    return EXIT_OK
