"""The command handlers, and the steps they share: config -> refresh -> open -> answer -> output.

Only the stdlib is imported at module level: every import here costs every query. A handler
imports what it needs when it runs (STYLE 7); ``notedex.cli.commands`` names which handler runs
which command. Over 400 lines on purpose: the command table imports every handler, so a second
module would be one more import on every query's path.
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

    from notedex.codes import Selection
    from notedex.config import Config
    from notedex.indexing.freshness import Freshness
    from notedex.query.filters import NoteFilter

# -- shared steps ----------------------------------------------------------------------------


class StdoutClosed(Exception):
    """The reader of stdout went away (`| head -1`); the command's exit code still stands."""

    def __init__(self, exit_code: int) -> None:
        super().__init__(exit_code)
        self.exit_code = exit_code


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
    from notedex.cli.commands import FILTER, SORT  # loaded already: it imported this module

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
    ``stream.Indented``), not ``--paths``, and not paged unless the command streams its pages
    too (``paged``)."""
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
    from notedex.query.stream import Document, Indented, streamed

    docs: list[Document] = []
    indented = args.json and sys.stdout.isatty()  # for people: as emit_json shows it

    def attempt(conn: "sqlite3.Connection") -> None:
        # A fresh one if a corrupt index is rebuilt; UTF-8 from the index goes to the buffer.
        if indented:
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
            from notedex.errors import IndexCorrupt
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


# -- commands ---------------------------------------------------------------------------------


def cmd_lookup(args: "argparse.Namespace") -> int:
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


def cmd_health(args: "argparse.Namespace") -> int:
    from notedex.query.render import render_health
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
        from notedex.query.stream import health_paths

        end = "\0" if args.nul else "\n"
        active = nf if nf is not None and nf.active else None
        return _streamed(
            args, cfg, lambda conn, doc: health_paths(conn, doc, active, choice, end=end), ""
        )
    page = (args.offset, args.limit) if not _unpaged(args) else None
    chosen = choice is not None or (nf is not None and nf.active)
    if (chosen or page is not None) and (
        _streams(args, paged=True) or _streams_text(args, paged=True)
    ):  # finding after finding (query.stream)
        from notedex.query import stream

        body = stream.health_chosen_json if args.json else stream.health_chosen_text
        return _streamed(args, cfg, lambda conn, doc: body(conn, doc, nf, choice, page))
    if chosen:
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
        from notedex.query.stream import health_json as streamed_health

        return _streamed(args, cfg, streamed_health)
    if _streams_text(args):
        from notedex.query.stream import health_text

        return _streamed(args, cfg, health_text)
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


def cmd_scan(args: "argparse.Namespace") -> int:
    cfg = _config(args)
    nf = note_filter(args, cfg)
    if _streams_paths(args):
        from notedex.query.stream import scan_paths

        end = "\0" if args.nul else "\n"
        return _streamed(args, cfg, lambda conn, doc: scan_paths(conn, doc, nf, end=end), "")
    # In any order (a sort is SQLite's: query.stream.scan_notes), paged or not.
    page = (args.offset, args.limit) if args.limit is not None or args.offset else None
    if _streams(args, paged=True):
        from notedex.query.stream import scan_json

        return _streamed(args, cfg, lambda conn, doc: scan_json(conn, doc, nf, page))
    if _streams_text(args, paged=True):
        from notedex.query.stream import scan_text

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
    from pathlib import Path

    from notedex.query.find import find_note
    from notedex.query.listing import graph
    from notedex.query.render import render_dot, render_graph

    if args.graph_format == "dot" and args.json:
        raise _usage("give --json or --format dot, not both")
    cfg = _config(args)
    nf = note_filter(args, cfg)
    if nf is not None and args.around is not None:
        raise _usage("give --around or a note filter, not both")

    def query(conn: "sqlite3.Connection") -> "dict[str, Any]":
        if args.around is None:
            return graph(conn, nf)
        from notedex.query.neighbourhood import MAX_DEPTH, MAX_NODES, neighbourhood

        if not 1 <= args.depth <= MAX_DEPTH:
            raise _usage(f"--depth must be 1-{MAX_DEPTH}")
        centre = find_note(conn, args.around, vault=cfg.vault, cwd=Path.cwd())["path"]
        return neighbourhood(conn, centre, depth=args.depth, max_nodes=MAX_NODES)

    if args.around is None and (_streams(args, paged=True) or _streams_text(args, paged=True)):
        from notedex.query import stream

        body = stream.graph_json if args.json else stream.graph_text
        if args.graph_format == "dot" and not args.json:
            body = stream.graph_dot
        page = None if _unpaged(args) else (args.offset, args.limit)
        return _streamed(args, cfg, lambda conn, doc: body(conn, doc, nf, page))
    render = render_dot if args.graph_format == "dot" else render_graph
    return answer(args, cfg, query, render, lists=("nodes", "edges"))


def cmd_show(args: "argparse.Namespace") -> int:
    from pathlib import Path

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


def cmd_search(args: "argparse.Namespace") -> int:
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
    if not (args.paths or args.nul or sys.stdout.isatty()):  # piped: hits written as located
        from notedex.query.search import search_parts, stream_search

        def streamed_search(conn: "sqlite3.Connection", doc: "Any") -> None:
            head, hits = search_parts(
                conn,
                cfg.vault_dir,
                text,
                limit=args.limit,
                offset=args.offset,
                follow_symlinks=cfg.follow_symlinks,
                nf=nf,
            )
            stream_search(doc, head, hits, as_json=args.json, vault=cfg.vault_dir, color=args.color)

        return _streamed(args, cfg, streamed_search)
    return answer(
        args,
        cfg,
        lambda conn: search(
            conn,
            cfg.vault_dir,
            text,
            limit=args.limit,
            offset=args.offset,
            follow_symlinks=cfg.follow_symlinks,
            nf=nf,
        ),
        render_search,
        paths=lambda data: [hit["path"] for hit in data["hits"]],
    )


def cmd_capture(args: "argparse.Namespace") -> int:
    from notedex.edit.capture import capture
    from notedex.errors import UsageError
    from notedex.query.listing import indexed_ids
    from notedex.query.render import render_captured

    cfg = _config(args)
    # stdin may hold any bytes: undecodable ones become U+FFFD rather than a crash.
    text = sys.stdin.buffer.read().decode("utf-8", "replace") if args.text == "-" else args.text
    if not text.strip():
        raise UsageError("capture needs some text")
    try:
        captured = capture(
            cfg.vault,
            cfg.inbox,
            text,
            indexed_ids=lambda prefix: indexed_ids(cfg.db_file, prefix),
        )
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


def cmd_fix(args: "argparse.Namespace") -> int:
    """`fix`: the plan (edit.fix), its diff or its writes, then the index refreshed (exit 1:
    something to fix without --apply, or a file skipped with it; docs/cli.md)."""
    from notedex.edit.fix import CODES, apply, plan_fixes
    from notedex.edit.safewrite import VaultWriter
    from notedex.vault.fixes import SUGGESTION_THRESHOLD

    cfg = _config(args)
    least = SUGGESTION_THRESHOLD if args.min_confidence is None else args.min_confidence
    if not 0 <= least <= 1:
        raise _usage(f"--min-confidence must be between 0 and 1, not {least}")
    only = CODES if args.only is None else (args.only,)
    plan = _answered(
        cfg,
        args,
        lambda conn: plan_fixes(
            conn, cfg.vault_dir, only=only, path_glob=args.path, min_confidence=least
        ),
    )
    data: dict[str, Any] = {
        "applied": bool(args.apply),
        "edits": [edit.as_json() for edit in plan.edits],
        "files": [file.source for file in plan.files],
        "written": [],
        "skipped": plan.skipped,
        "changed": [],
    }
    code = EXIT_FINDINGS if plan.files and not args.apply else EXIT_OK
    if args.apply and plan.files:
        written, changed = apply(plan, VaultWriter(cfg.vault_dir))
        data["written"], data["changed"] = written, changed
        if changed:
            code = EXIT_FINDINGS
        if written and not args.no_refresh:
            try:
                refresh(cfg)
            except NotedexError as exc:
                print(
                    f"notedex: warning: fixed, but the index was not updated: {exc}",
                    file=sys.stderr,
                )
    for skip in plan.skipped:
        print(
            f"notedex: skipped {skip['source']}:{skip['line']}:{skip['column']}: {skip['reason']}",
            file=sys.stderr,
        )
    for skip in data["changed"]:
        print(f"notedex: not written {skip['path']}: {skip['reason']}", file=sys.stderr)
    if not args.apply:
        data["diff"] = plan.diff()

    def text() -> None:
        if not args.apply:
            sys.stdout.write(data["diff"])
            return
        for path in data["written"]:
            edits = sum(1 for edit in plan.edits if edit.source == path)
            print(f"fixed {path} ({edits} link{'s' if edits != 1 else ''})")

    def output() -> None:
        if not _emitted_json(args, data):
            text()

    return _write(code, output)


def _broken_total(conn: "sqlite3.Connection") -> int:
    from notedex.query.reports import broken_count

    return broken_count(conn)


def cmd_mv(args: "argparse.Namespace") -> int:
    """`mv`: the plan (edit.move), the moves and their diff, or the move, the index refreshed,
    and health's broken links and anchors compared (exit 1 when one more broke; docs/cli.md)."""
    from notedex.edit.move import MoveError, carry_out, plan_move
    from notedex.vault.reading import OutsideVault

    cfg = _config(args)

    def plan_and_count(conn: "sqlite3.Connection") -> "Any":
        return plan_move(conn, cfg.vault_dir, args.src, args.dst), _broken_total(conn)

    try:
        plan, broken_before = _answered(cfg, args, plan_and_count)
    except (MoveError, OutsideVault) as exc:
        raise _usage(f"cannot move {args.src}: {exc}") from exc
    data: dict[str, Any] = {
        "dryRun": bool(args.dry_run),
        "moves": [{"from": old, "to": new} for old, new in plan.moves],
        "files": [item.source for item in plan.rewrites],
        "links": sum(item.links for item in plan.rewrites),
        "written": [],
        "changed": [],
        "skipped": plan.skipped,
    }
    for skip in plan.skipped:
        print(f"notedex: skipped a link in {skip['source']}: {skip['reason']}", file=sys.stderr)
    code = EXIT_OK
    if args.dry_run:
        data["diff"] = plan.diff()
    else:
        try:
            written, changed = carry_out(plan, cfg.vault_dir)
        except (OSError, OutsideVault) as exc:
            raise _usage(f"cannot move {args.src}: {exc}") from exc
        data["written"], data["changed"] = written, changed
        for skip in changed:
            print(f"notedex: not written {skip['path']}: {skip['reason']}", file=sys.stderr)
        after = _answered(cfg, _after_move(cfg, args, [*plan.top, *written]), _broken_total)
        data["newBroken"] = max(0, after - broken_before)
        if changed or data["newBroken"]:
            code = EXIT_FINDINGS

    def text() -> None:
        if args.dry_run:
            for move in data["moves"]:
                print(f"{move['from']} -> {move['to']}")
            sys.stdout.write(data["diff"])
            return
        print(
            f"moved {len(data['moves'])} file{'s' if len(data['moves']) != 1 else ''}; "
            f"rewrote {data['links']} link{'s' if data['links'] != 1 else ''} in "
            f"{len(data['written'])} file{'s' if len(data['written']) != 1 else ''}"
        )
        for path in data["written"]:
            print(f"  {path}")
        if data["newBroken"]:
            print(f"{data['newBroken']} more broken links or anchors than before: see health")
        else:
            print("no new broken link or anchor")

    def output() -> None:
        if not _emitted_json(args, data):
            text()

    return _write(code, output)


def _after_move(
    cfg: "Config", args: "argparse.Namespace", paths: list[str]
) -> "argparse.Namespace":
    """The index brought in line for the paths `mv` moved and wrote (indexing.freshness
    .apply_written: the cost of the changed files, not a walk of the vault), and ``args`` for
    the query after it: without its refresh when that was done, else as they were (the
    query's own check then runs)."""
    import argparse

    from notedex.indexing.freshness import APPLIED, apply_written

    if getattr(args, "no_refresh", False):
        return args
    fresh = apply_written(cfg, paths)
    _reported(fresh.report, fresh.notices)
    if fresh.state != APPLIED:
        return args
    return argparse.Namespace(**{**vars(args), "no_refresh": True})


def cmd_index(args: "argparse.Namespace") -> int:
    cfg = _config(args)
    report = refresh(cfg, full=args.full, force=True).report
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


def cmd_daemon(args: "argparse.Namespace") -> int:
    from notedex.daemon.service import run_daemon

    cfg = _config(args)
    return run_daemon(cfg, poll=args.poll)


def cmd_service(args: "argparse.Namespace") -> int:
    from notedex.daemon.install import service_command, service_failure
    from notedex.errors import ServiceManagerFailed

    cfg = _config(args)
    data = service_command(cfg, args.action, dry_run=args.dry_run)
    failure = service_failure(data)
    if failure is not None:
        raise ServiceManagerFailed(failure)
    _report(args, data, lambda: data["text"])
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


def cmd_base(args: "argparse.Namespace") -> int:
    from notedex.cli.basefiles import base_answer

    return base_answer(args, _config(args), answer)
