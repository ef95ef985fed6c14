"""The handlers of two of the hot path's three queries: `search` and `health`.

`lookup`'s is ``cli.lookup``, so that neither loads the other's code (issue 30's speed budget:
each function a module holds costs every query that loads it, as unmarshalled bytecode).
On the path of every such query (ARCHITECTURE "The hot-path import budget"): the stdlib alone at
module level, each handler importing what it needs when it runs (STYLE 7). The steps they
share (config, refresh, open, answer, output, streaming) are ``cli.handlers``.
"""

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
)

TYPE_CHECKING = False  # no `typing` import on the query path; mypy honours the name
if TYPE_CHECKING:
    import argparse
    import sqlite3
    from typing import Any

    from notedex.codes import Selection
    from notedex.config import Config

# The handlers the command table names (``cli.commands.Command.handler``).
__all__ = ["cmd_health", "cmd_search"]


HEALTH_MODULES = (
    "notedex.codes",
    "notedex.store.schema_head",
    "notedex.store.read",
    "notedex.store.connect",
    "notedex.query.reports",
    "notedex.config",
    "notedex.query.output",
)
SEARCH_MODULES = (
    "notedex.vault.text",
    "notedex.query.terms",
    "notedex.store.schema_head",
    "notedex.store.connect",
    "notedex.store.schema",
    "notedex.store.fulltext",
    "notedex.query.search",
    "notedex.config",
    "notedex.query.output",
)
"""What each of the two loads of ours beyond the CLI whatever its options, each module after
those it imports, as ``cli.lookup.LOOKUP_MODULES`` for a lookup: ``notedex.cli.preload`` reads
them without the import system's search (tests/system/test_preload.py: a search and a health
report load nothing else of ours by ``import``, and nothing more than without the preload)."""


def cmd_health(args: "argparse.Namespace") -> int:
    from notedex.cli import preload

    preload(HEALTH_MODULES)
    from notedex.query.reports import (
        HEALTH_LISTS,
        finding_paths,
        findings_count,
        health,
        health_json,
    )

    cfg = _config(args)
    nf = note_filter(args, cfg)
    choice = _health_selection(args, cfg)
    if _streams_paths(args):
        from notedex.query.stream_health import health_paths

        end = "\0" if args.nul else "\n"
        active = nf if nf is not None and nf.active else None
        return _streamed(
            args, cfg, lambda conn, doc: health_paths(conn, doc, active, choice, end=end), ""
        )
    page = (args.offset, args.limit) if not _unpaged(args) else None
    chosen = choice is not None or (nf is not None and nf.active)
    if (chosen or page is not None) and (
        _streams(args, paged=True) or _streams_text(args, paged=True)
    ):  # finding after finding (query.stream_health)
        from notedex.query import stream_health

        body = stream_health.health_chosen_json if args.json else stream_health.health_chosen_text
        return _streamed(args, cfg, lambda conn, doc: body(conn, doc, nf, choice, page))
    if chosen:
        from notedex.query.render import render_health
        from notedex.query.reports import selected

        def built(conn: "sqlite3.Connection") -> "dict[str, Any]":
            # The notes the filter keeps, then the codes --only/--ignore keep: the report is
            # built, then cut down; the exit code counts what is left.
            data = health(conn, nf)
            return selected(data, choice) if choice is not None else data

        return answer(
            args,
            cfg,
            built,
            render_health,
            findings=findings_count,
            paths=finding_paths,
            lists=HEALTH_LISTS,
        )
    if _streams(args):
        from notedex.query.stream_health import health_json as streamed_health

        return _streamed(args, cfg, streamed_health)
    if _streams_text(args):
        from notedex.query.stream_health import health_text

        return _streamed(args, cfg, health_text)
    from notedex.query.render import render_health  # not for the streamed forms above

    # Piped --json: compact JSON built by SQLite, as emit_json writes it to a pipe; at 100k
    # notes the report has tens of thousands of findings.
    return answer(
        args,
        cfg,
        health,
        render_health,
        findings=findings_count,
        compact=health_json,
        paths=finding_paths,
        lists=HEALTH_LISTS,
    )


def _health_selection(args: "argparse.Namespace", cfg: "Config") -> "Selection | None":
    """``--only``, ``--ignore`` and the config file's ``ignore`` (None: nothing filtered). An
    unknown code on the command line is a usage error; in the config file, a warning."""
    only = getattr(args, "only", None) or ()
    ignore = getattr(args, "ignore", None) or ()
    if not (only or ignore or cfg.ignore):
        return None
    from notedex.codes import selection

    try:
        choice, warnings = selection(only, ignore, cfg.ignore)
    except ValueError as exc:
        raise _usage(str(exc)) from None
    for warning in warnings:
        print(f"notedex: warning: {warning}", file=sys.stderr)
    return None if choice.empty else choice


def cmd_search(args: "argparse.Namespace") -> int:
    from notedex.cli import preload

    preload(SEARCH_MODULES)
    from notedex.errors import UsageError
    from notedex.query.search import parse_query, render_search, search, search_paths

    cfg = _config(args)
    text = " ".join(args.text)
    parse_query(text)  # a bad query is a usage error before any indexing work
    nf = note_filter(args, cfg)
    if not cfg.body_index:
        raise UsageError("full-text search is off: body_index = false in the config file")
    if args.sort is not None and not (args.paths or args.nul):
        raise UsageError("--sort path lists paths: give it with --paths or -0")
    if (args.paths or args.nul) and not args.json:  # --json with them is answer()'s usage error
        path_order = args.sort == "path"
        return answer(
            args,
            cfg,
            lambda conn: search_paths(
                conn, text, limit=args.limit, offset=args.offset, nf=nf, path_order=path_order
            ),
            render_search,
            paths=lambda paths: paths,
        )
    # The streamed answer and the whole one ask the same question.
    options: dict[str, Any] = {
        "limit": args.limit,
        "offset": args.offset,
        "follow_symlinks": cfg.follow_symlinks,
        "nf": nf,
    }
    if not (args.paths or args.nul or sys.stdout.isatty()):  # piped: hits written as located
        from notedex.query.search import search_parts, stream_search

        def streamed_search(conn: "sqlite3.Connection", doc: "Any") -> None:
            head, hits = search_parts(conn, cfg.vault_dir, text, **options)
            stream_search(doc, head, hits, as_json=args.json, vault=cfg.vault_dir, color=args.color)

        return _streamed(args, cfg, streamed_search)
    return answer(
        args,
        cfg,
        lambda conn: search(conn, cfg.vault_dir, text, **options),
        render_search,
        paths=lambda data: [hit["path"] for hit in data["hits"]],
    )
