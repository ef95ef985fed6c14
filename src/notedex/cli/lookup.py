"""The handler of the hot path's first query, `lookup`.

On the path of every lookup (ARCHITECTURE "The hot-path import budget"): the stdlib alone at
module level, the handler importing what it needs when it runs (STYLE 7). A module of its own,
not ``cli.questions`` (search and health), so that a lookup does not load their handlers'
code, nor they this one's (issue 30's speed budget). The steps they share (config, refresh,
open, answer, output) are ``cli.handlers``.
"""

from notedex.cli.handlers import _config, answer, note_filter

TYPE_CHECKING = False  # no `typing` import on the query path; mypy honours the name
if TYPE_CHECKING:
    import argparse
    import sqlite3
    from typing import Any

# The handler the command table names (``cli.commands.Command.handler``).
__all__ = ["cmd_lookup"]


LOOKUP_MODULES = (
    "notedex.vault.text",
    "notedex.query.terms",
    "notedex.store.schema_head",
    "notedex.store.read",
    "notedex.store.lookup_terms",
    "notedex.store.lookup",
    "notedex.query.lookup_stage1",
    "notedex.query.lookup_terms",
    "notedex.store.connect",
    "notedex.query.lookup",
    "notedex.query.output",
    "notedex.config",
)
"""What a lookup loads of ours beyond the CLI whatever its options, each module after those it
imports: ``notedex.cli.preload`` reads them without the import system's search
(tests/system/test_preload.py: a lookup loads nothing else of ours by ``import``, and nothing
more than without the preload)."""


def cmd_lookup(args: "argparse.Namespace") -> int:
    from notedex.cli import preload

    preload(LOOKUP_MODULES)
    from notedex.query.lookup import lookup
    from notedex.query.output import render_lookup
    from notedex.query.terms import checked_query

    question = checked_query(" ".join(args.question), "question")  # before any indexing work
    cfg = _config(args)
    nf = note_filter(args, cfg)

    def query(conn: "sqlite3.Connection") -> "dict[str, Any]":
        if not args.offset:
            return lookup(conn, question, limit=args.limit, nf=nf)
        from notedex.query.lookup import lookup_page

        return lookup_page(conn, question, offset=args.offset, limit=args.limit, nf=nf)

    return answer(
        args,
        cfg,
        query,
        render_lookup,
        paths=lambda data: [c["path"] for c in data["candidates"]],
    )
