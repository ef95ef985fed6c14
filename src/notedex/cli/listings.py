"""The handlers of the other read commands: `scan`, `recent`, `tasks`, `tags`, `properties`,
`mentions`, `graph`, `show`, `quote`, `status` and `base`, over ``cli.handlers``' shared steps.

Such a query imports this module alone of the handlers' (``cli.commands.Command.handler``): the stdlib
at module level, each handler importing what it needs when it runs (STYLE 7), so it is on the
budgets of design/imports.md, design/tasks.md and design/bases.md.
"""

import os
import sys

from notedex.cli.handlers import (
    _config,
    _streamed,
    _streams,
    _streams_paths,
    _streams_text,
    _unpaged,
    _usage,
    answer,
    note_filter,
    refresh,
)

TYPE_CHECKING = False  # no `typing` import on the query path; mypy honours the name
if TYPE_CHECKING:
    import argparse
    import sqlite3
    from typing import Any

# The handlers the command table names (``cli.commands.Command.handler``).
__all__ = [
    "cmd_base",
    "cmd_graph",
    "cmd_mentions",
    "cmd_properties",
    "cmd_quote",
    "cmd_recent",
    "cmd_scan",
    "cmd_show",
    "cmd_status",
    "cmd_tags",
    "cmd_tasks",
]


def cmd_scan(args: "argparse.Namespace") -> int:
    cfg = _config(args)
    nf = note_filter(args, cfg)
    if _streams_paths(args):
        from notedex.query.stream_scan import scan_paths

        end = "\0" if args.nul else "\n"
        return _streamed(args, cfg, lambda conn, doc: scan_paths(conn, doc, nf, end=end), "")
    # In any order (a sort is SQLite's: query.stream_scan.scan_notes), paged or not.
    page = (args.offset, args.limit) if args.limit is not None or args.offset else None
    if _streams(args, paged=True):
        from notedex.query.stream_scan import scan_json

        return _streamed(args, cfg, lambda conn, doc: scan_json(conn, doc, nf, page))
    if _streams_text(args, paged=True):
        from notedex.query.stream_scan import scan_text

        return _streamed(args, cfg, lambda conn, doc: scan_text(conn, doc, nf, page))
    from notedex.query.listing import scan
    from notedex.query.render import render_scan

    return answer(
        args,
        cfg,
        lambda conn: scan(conn, nf),
        render_scan,
        paths=lambda data: [n["path"] for n in data["notes"]],
        lists=("notes", "errors"),
    )


def cmd_tasks(args: "argparse.Namespace") -> int:
    from notedex.query.render import render_tasks
    from notedex.query.tasks import (
        TaskFilter,
        task_lines,
        task_paths,
        tasks,
        tasks_json,
        tasks_page,
    )

    cfg = _config(args)
    states = [state for state, wanted in (("open", args.open), ("done", args.done)) if wanted]
    wanted = TaskFilter(  # checked before the index is opened: a bad date is exit 2 at once
        states=states,
        statuses=args.status or (),
        due_before=args.due_before,
        due_after=args.due_after,
        note_filter=note_filter(args, cfg),
    )
    if (args.limit is not None or args.offset) and not (args.paths or args.nul):
        page = args.offset, args.limit  # the page is cut in SQL (query.tasks.tasks_page)
        return answer(args, cfg, lambda conn: tasks_page(conn, wanted, *page), render_tasks)
    text = not (args.json or args.paths or args.nul)  # reads only what it prints (task_lines)
    return answer(
        args,
        cfg,
        (lambda conn: task_lines(conn, wanted)) if text else (lambda conn: tasks(conn, wanted)),
        render_tasks,
        compact=lambda conn: tasks_json(conn, wanted),  # piped --json: built by SQLite
        paths=task_paths,
        lists=("tasks",),
    )


def cmd_recent(args: "argparse.Namespace") -> int:
    from notedex.query.listing import recent
    from notedex.query.render import render_recent

    cfg = _config(args)
    nf = note_filter(args, cfg)
    return answer(
        args,
        cfg,
        lambda conn: recent(conn, nf, limit=args.limit),
        render_recent,
        paths=lambda data: [n["path"] for n in data["notes"]],
    )


def cmd_properties(args: "argparse.Namespace") -> int:
    from notedex.query.reports import properties, property_values, render_properties
    from notedex.vault.properties import declared_types

    cfg = _config(args)
    nf = note_filter(args, cfg)
    declared = declared_types(cfg.vault_dir)
    if args.name is not None:
        return answer(
            args,
            cfg,
            lambda conn: property_values(conn, args.name, declared, nf),
            render_properties,
        )
    return answer(args, cfg, lambda conn: properties(conn, declared, nf), render_properties)


def cmd_tags(args: "argparse.Namespace") -> int:
    from notedex.query.render import render_tags
    from notedex.query.reports import tags

    cfg = _config(args)
    nf = note_filter(args, cfg)
    return answer(args, cfg, lambda conn: tags(conn, nf), render_tags, lists=("tags",))


def cmd_mentions(args: "argparse.Namespace") -> int:
    from notedex.query.find import find_note
    from notedex.query.mentions import mentions
    from notedex.query.render import render_mentions

    cfg = _config(args)

    def query(conn: "sqlite3.Connection") -> "dict[str, Any]":
        # As show names a note; strings, not pathlib (ARCHITECTURE, the mentions budget).
        note = find_note(conn, args.note, vault=cfg.vault_dir, cwd=os.getcwd())["path"]
        return mentions(
            conn,
            cfg.vault_dir,
            note,
            max_bytes=cfg.max_bytes,
            follow_symlinks=cfg.follow_symlinks,
        )

    return answer(args, cfg, query, render_mentions, lists=("mentions",))


def cmd_graph(args: "argparse.Namespace") -> int:
    if args.graph_format == "dot" and args.json:
        raise _usage("give --json or --format dot, not both")
    cfg = _config(args)
    nf = note_filter(args, cfg)
    if nf is not None and args.around is not None:
        raise _usage("give --around or a note filter, not both")

    def query(conn: "sqlite3.Connection") -> "dict[str, Any]":
        if args.around is None:
            from notedex.query.listing import graph

            return graph(conn, nf)
        from pathlib import Path

        from notedex.query.find import find_note
        from notedex.query.neighbourhood import MAX_DEPTH, MAX_NODES, neighbourhood

        if not 1 <= args.depth <= MAX_DEPTH:
            raise _usage(f"--depth must be 1-{MAX_DEPTH}")
        centre = find_note(conn, args.around, vault=cfg.vault, cwd=Path.cwd())["path"]
        return neighbourhood(conn, centre, depth=args.depth, max_nodes=MAX_NODES)

    if args.around is None and (_streams(args, paged=True) or _streams_text(args, paged=True)):
        from notedex.query import stream_graph

        body = stream_graph.graph_json if args.json else stream_graph.graph_text
        if args.graph_format == "dot" and not args.json:
            body = stream_graph.graph_dot
        page = None if _unpaged(args) else (args.offset, args.limit)
        return _streamed(args, cfg, lambda conn, doc: body(conn, doc, nf, page))
    from notedex.query.render import render_dot, render_graph  # not for the streamed forms

    render = render_dot if args.graph_format == "dot" else render_graph
    return answer(args, cfg, query, render, lists=("nodes", "edges"))


SHOW_MODULES = (
    "notedex.vault.properties",
    "notedex.query.filters",
    "notedex.store.schema_head",
    "notedex.store.read",
    "notedex.store.schema",
    "notedex.store.one_note",
    "notedex.vault.files",
    "notedex.vault.text",
    "notedex.query.find",
    "notedex.query.output",
    "notedex.query.stream",
    "notedex.store.connect",
    "notedex.query.stream_scan",
    "notedex.vault.reading",
    "notedex.query.listing",
    "notedex.codes",
    "notedex.query.render",
    "notedex.config",
    "notedex.vault.resolve",
)
"""What ``show`` loads of ours beyond the CLI whatever its options, each module after those it
imports: ``notedex.cli.preload`` reads them (``cli.lookup.LOOKUP_MODULES`` says more)."""


def cmd_show(args: "argparse.Namespace") -> int:
    from pathlib import Path

    from notedex.cli import preload

    preload(SHOW_MODULES)

    from notedex.query.listing import parse_line_range, show
    from notedex.query.render import render_show

    lines = parse_line_range(args.lines) if args.lines is not None else None
    cfg = _config(args)

    def query(conn: "sqlite3.Connection") -> "dict[str, Any]":
        data = show(
            conn,
            cfg.vault,
            args.note,
            body=args.body,
            lines=lines,
            max_bytes=cfg.max_bytes,
            body_bytes=args.max_bytes,
            cwd=Path.cwd(),
            follow_symlinks=cfg.follow_symlinks,
        )
        if lines is not None:  # what the range could not show: a line on stderr each
            from notedex.query.listing import lines_left_out

            for sentence in lines_left_out(data, lines):
                print(f"notedex: {sentence}", file=sys.stderr)
        return data

    return answer(args, cfg, query, render_show)


def cmd_quote(args: "argparse.Namespace") -> int:
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
            lambda conn: quote_check(
                conn,
                cfg.vault,
                items,
                max_bytes=cfg.max_bytes,
                follow_symlinks=cfg.follow_symlinks,
            ),
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
        lambda conn: quote(
            conn,
            cfg.vault,
            args.note,
            args.text,
            max_bytes=cfg.max_bytes,
            follow_symlinks=cfg.follow_symlinks,
        ),
        render_quote,
        findings=lambda data: not data["found"],
    )


def cmd_status(args: "argparse.Namespace") -> int:
    from notedex.query.listing import status
    from notedex.query.render import render_status

    cfg = _config(args)
    checked = None
    if not args.no_refresh:
        import time

        from notedex.indexing.freshness import APPLIED, CURRENT

        if refresh(cfg).state in (CURRENT, APPLIED):
            checked = time.time()  # the index matched the vault just now: lastIndexed moves
        args.no_refresh = True  # refreshed just now
    return answer(
        args,
        cfg,
        lambda conn: status(conn, cfg.vault, cfg.db, cfg.lock_path, checked_at=checked),
        render_status,
    )


def cmd_base(args: "argparse.Namespace") -> int:
    from notedex.cli.basefiles import base_answer

    return base_answer(args, _config(args), answer)
