"""The steps every command handler shares: config -> refresh -> open -> answer -> output.

Only the stdlib is imported at module level: every import here costs every query. The handlers
live by job (``cli.lookup``; ``cli.questions``: search, health; ``cli.listings``: the other
queries; ``cli.writes``, ``cli.upkeep``, ``cli.integrations``), and ``notedex.cli.commands`` names which
one runs which command, imported when it runs (STYLE 7).
"""

import os
import sys

from notedex.errors import EXIT_FINDINGS, EXIT_OK, NotedexError

TYPE_CHECKING = False  # no `typing` import on the query path; mypy honours the name
if TYPE_CHECKING:
    import argparse
    import sqlite3
    from collections.abc import Callable
    from typing import Any

    from notedex.config import Config
    from notedex.indexing.freshness import Freshness
    from notedex.query.filters import NoteFilter

# -- shared steps ----------------------------------------------------------------------------


def silence_stdout() -> None:
    """Point stdout at /dev/null, so nothing more (not the flush at exit) meets the closed pipe."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _write(code: int, write: "Callable[[], object]") -> int:
    """Run ``write`` (the output) and return ``code``, the exit code known before any output:
    a reader that closes the pipe early never changes it (docs/cli.md, "Exit codes")."""
    try:
        write()
        sys.stdout.flush()
    except BrokenPipeError:
        silence_stdout()
        from notedex.error_kinds import StdoutClosed  # loaded only when the reader went away

        raise StdoutClosed(code) from None
    return code


def _config(args: "argparse.Namespace") -> "Config":
    from notedex.config import resolve_config

    return resolve_config(args.vault, args.db)


PROGRESS_ENV = "NOTEDEX_PROGRESS"
"""Set to ``lines`` (the MCP server's index child, ``mcp_server.keeper``): the apply's progress
goes to stderr as one ``PROGRESS_PREFIX`` line per chunk, "done total", for the parent to read."""
PROGRESS_PREFIX = "notedex: progress "


def note_filter(args: "argparse.Namespace", cfg: "Config") -> "NoteFilter | None":
    """The note filter of a command line, the one helper every command builds it with: the
    options in ``cli.commands.FILTER`` and ``SORT`` read by ``query.filters.from_options``; a
    bad one is a usage error (exit 2). None when no option was given: every note, and not one
    import more (the hot path)."""
    from notedex.cli.commands import FILTER, SORT  # loaded already: it named the handler

    if not any(getattr(args, option.dest, None) for option in (*FILTER, *SORT)):
        return None
    from notedex.query.filters import from_options

    declared = None
    if getattr(args, "where", None):
        from notedex.vault.properties import declared_types

        declared = declared_types(cfg.vault_dir)
    nf = from_options(lambda dest: getattr(args, dest, None), declared)
    return nf.replace(sort=None) if args.command == "search" else nf  # search: --paths order


def _progress_printer(label: str) -> "Callable[[int, int], None] | None":
    if os.environ.get(PROGRESS_ENV) == "lines":

        def line(done: int, total: int) -> None:
            sys.stderr.write(f"{PROGRESS_PREFIX}{done} {total}\n")
            sys.stderr.flush()

        return line
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


def refresh(cfg: "Config", *, full: bool = False, force: bool = False) -> "Freshness":
    """Without a running daemon, bring the index up to date first (ARCHITECTURE "Freshness").

    What ``ensure_fresh`` found; its ``report`` is the apply report (with a daemon, that of the
    rescan `index` asked for), or None. ``force`` is the `index` command.
    """
    from notedex.cli import preload

    preload(("notedex.indexing.freshness",))  # the check every query without a daemon runs
    from notedex.indexing.freshness import ensure_fresh

    progress = _progress_printer("indexing")
    fresh = ensure_fresh(cfg, index=force, full=full, progress=progress)
    _reported(fresh.report, fresh.notices)
    if not force:  # a query's check, not `index`'s job
        from notedex.indexing.freshness import slow_check_notice

        notice = slow_check_notice(cfg, fresh)
        if notice is not None:
            print(f"notedex: {notice}", file=sys.stderr)
    return fresh


def _reported(report: "dict[str, Any] | None", notices: list[str]) -> None:
    for line in notices:
        print(f"notedex: warning: {line}", file=sys.stderr)
    for reason in report["kept"] if report else ():
        print(f"notedex: {reason}", file=sys.stderr)


def _open(cfg: "Config", args: "argparse.Namespace") -> "sqlite3.Connection":
    """Refresh (unless ``--no-refresh``) and open read-only; `_answered` adds the recovery."""
    from notedex.store.connect import connect_readonly

    if not getattr(args, "no_refresh", False):
        refresh(cfg)
    # `status` answers while the daemon rebuilds (and says so); other readers exit 75 then.
    return connect_readonly(cfg.db_file, rebuilding_ok=args.command == "status")


def _emitted_json(args: "argparse.Namespace", data: "Any") -> bool:
    """Under ``--json``, print ``data`` as the one JSON document of stdout."""
    if not args.json:
        return False
    from notedex.query.output import emit_json

    emit_json(data)
    return True


def _output(
    args: "argparse.Namespace", cfg: "Config", data: "Any", render: "Callable[..., None]"
) -> None:
    if not _emitted_json(args, data):
        from notedex.query.output import Renderer

        render(Renderer(cfg.vault_dir, color=getattr(args, "color", "auto")), data)


def _report(args: "argparse.Namespace", data: "Any", text: "Callable[[], str]") -> None:
    """The output of a command that is not a query: its JSON, or one plain line of text."""
    if not _emitted_json(args, data):
        print(text())


def answer(
    args: "argparse.Namespace",
    cfg: "Config",
    query: "Callable[[sqlite3.Connection], Any]",
    render: "Callable[..., None]",
    *,
    findings: "Callable[[Any], Any] | None" = None,
    compact: "Callable[[sqlite3.Connection], tuple[bytes, Any]] | None" = None,
    paths: "Callable[[Any], list[str]] | None" = None,
    lists: tuple[str, ...] = (),
) -> int:
    """The steps every query command shares: refresh, open read-only, query, output, exit code.

    ``findings`` says whether the answer exits 1 (ARCHITECTURE "CLI contract"); ``compact``
    builds the piped ``--json`` document in SQLite and says the same. ``paths`` gives the vault
    paths ``--paths`` and ``-0`` print; ``lists`` are the lists ``--limit``/``--offset`` page.
    """
    pick = paths if paths is not None and (args.paths or args.nul) else None
    if pick is not None and args.json:
        raise _usage("give --json or --paths/-0, not both")
    paged = bool(lists) and (args.limit is not None or args.offset)
    if paged:
        query = _paged(query, lists, args.offset, args.limit)
    if compact is not None and pick is None and not paged and args.json and not sys.stdout.isatty():
        document, found = _answered(cfg, args, compact)
        code = EXIT_FINDINGS if found else EXIT_OK
        return _write(code, lambda: _write_utf8(document))
    data = _answered(cfg, args, query)
    code = EXIT_FINDINGS if findings is not None and findings(data) else EXIT_OK
    if pick is not None:
        from notedex.query.render import emit_paths

        listed = pick(data)
        return _write(code, lambda: emit_paths(listed, nul=args.nul))
    return _write(code, lambda: _output(args, cfg, data, render))


def _streams(args: "argparse.Namespace", *, paged: bool = False) -> bool:
    """Whether the whole-vault answer goes out as it is read (ARCHITECTURE "Streaming
    answers"): ``--json`` of the whole answer (on a terminal indented as it goes,
    ``stream_indented.Indented``), not ``--paths``, and not paged unless the command streams
    its pages too (``paged``)."""
    return (
        args.json
        and not (getattr(args, "paths", False) or getattr(args, "nul", False))
        and (paged or _unpaged(args))
    )


def _unpaged(args: "argparse.Namespace") -> bool:
    return getattr(args, "limit", None) is None and not getattr(args, "offset", 0)


def _streams_text(args: "argparse.Namespace", *, paged: bool = False) -> bool:
    """Whether the whole-vault text answer goes out as it is read: no terminal (whose
    rendering may differ: hyperlinks, cut columns), and not paged unless ``paged``."""
    return (
        not args.json
        and not (getattr(args, "paths", False) or getattr(args, "nul", False))
        and (paged or _unpaged(args))
        and not sys.stdout.isatty()
    )


def _utf8_buffer() -> "Callable[[memoryview], object] | None":
    """The write of stdout's binary buffer when stdout encodes to UTF-8 (else None): text
    already in UTF-8 can go there as it is, the bytes the text stream would write."""
    import codecs

    buffer = getattr(sys.stdout, "buffer", None)
    try:
        utf8 = codecs.lookup(getattr(sys.stdout, "encoding", None) or "").name == "utf-8"
    except LookupError:
        return None
    return buffer.write if utf8 and buffer is not None else None


def _streams_paths(args: "argparse.Namespace") -> bool:
    """Whether ``--paths``/``-0`` goes out as it is read: not paged (``--json`` with them is
    ``answer``'s usage error)."""
    return (
        (getattr(args, "paths", False) or getattr(args, "nul", False))
        and not args.json
        and getattr(args, "limit", None) is None
        and not getattr(args, "offset", 0)
    )


def _streamed(
    args: "argparse.Namespace",
    cfg: "Config",
    body: "Callable[[sqlite3.Connection, Any], None]",
    end: str = "\n",
) -> int:
    """Write ``body``'s document while it reads the index. The exit code is known before the
    first byte (``Document.findings``, which the body sets first): 1 for findings, else 0, as
    long as the document is whole or the reader closed the pipe; a failure's code otherwise."""
    from notedex.query.stream import Document, streamed

    docs: list[Document] = []
    indented = args.json and sys.stdout.isatty()  # for people: as emit_json shows it

    def attempt(conn: "sqlite3.Connection") -> None:
        # A fresh one if a corrupt index is rebuilt; UTF-8 from the index goes to the buffer.
        if indented:
            from notedex.query.stream_indented import Indented

            docs.append(Document(Indented(sys.stdout.write)))
        else:
            docs.append(Document(sys.stdout.write, raw=_utf8_buffer(), sync=sys.stdout.flush))
        streamed(conn, body, doc=docs[-1], end=end)

    def code() -> int:
        return EXIT_FINDINGS if docs and docs[-1].findings else EXIT_OK

    try:
        _answered(cfg, args, attempt)
        sys.stdout.flush()
    except BrokenPipeError:
        silence_stdout()
        from notedex.error_kinds import StdoutClosed

        raise StdoutClosed(code()) from None
    return code()


def _write_utf8(document: bytes) -> None:
    """A compact document (UTF-8 JSON) and its newline, past the text layer when stdout is
    UTF-8 with plain newlines, as it is everywhere but odd locales: health's 18 MB at 100k notes
    would otherwise be decoded, copied for the newline and encoded again (a third of its time)."""
    out = sys.stdout
    if os.linesep == "\n" and (out.encoding or "").lower().replace("-", "") == "utf8":
        out.flush()
        out.buffer.write(document)
        out.buffer.write(b"\n")
        return
    out.write(document.decode())
    out.write("\n")


def _paged(
    query: "Callable[[sqlite3.Connection], Any]",
    lists: tuple[str, ...],
    offset: int,
    limit: int | None,
) -> "Callable[[sqlite3.Connection], Any]":
    """``query`` whose answer is paged (``--limit``/``--offset``), as the MCP tools page."""
    from notedex.query.paging import paginate

    return lambda conn: paginate(query(conn), lists, offset, limit)


def _usage(message: str) -> NotedexError:
    from notedex.errors import UsageError

    return UsageError(message)


def _answered(
    cfg: "Config", args: "argparse.Namespace", query: "Callable[[sqlite3.Connection], Any]"
) -> "Any":
    """Open and query; a corrupt index is set aside and rebuilt once (ARCHITECTURE "Recovery")."""
    from notedex.store.connect import SQLITE_NOTADB, connect_readonly, is_corrupt, sqlite_code

    try:
        conn = _open(cfg, args)
        with conn:
            return query(conn)
    except Exception as exc:
        # A file that is no SQLite database may be someone's (a --db typo): only `index` moves it.
        if getattr(exc, "not_a_database", False) or sqlite_code(exc) == SQLITE_NOTADB:
            raise
        if not is_corrupt(exc):
            raise
        if getattr(args, "no_refresh", False):
            from notedex.error_kinds import IndexCorrupt
            from notedex.indexing.freshness import corrupt_advice

            reason = getattr(exc, "reason", None) or str(exc)
            raise IndexCorrupt(
                cfg.db_file, f"{reason}; {corrupt_advice(cfg)}", not_a_database=False
            ) from exc
    from notedex.indexing.freshness import recover_corrupt

    fresh = recover_corrupt(cfg, _progress_printer("rebuilding"))
    _reported(fresh.report, fresh.notices)
    conn = connect_readonly(cfg.db_file)
    with conn:
        return query(conn)
