"""The MCP tools' and resources' handlers: a read-only connection per call, its deadline, results.

``VaultTools`` runs a call synchronously (the SDK shim puts it in a worker thread): it checks
the arguments against the tool table, learns whether the index may be stale, opens a read-only
connection whose progress handler interrupts SQLite at the deadline, and shapes the ``query``
function's answer, the CLI's ``--json`` document, with ``stale`` and, for lists,
``offset``/``limit``/``hasMore``. Every failure leaves as a ``ToolError`` with a message for the
client. ``capture``, listed only with ``--allow-capture``, is the one handler that writes: a new
note in the inbox through ``edit.capture``, with no connection at all.

Over 400 lines on purpose: a short method per tool, all sharing ``VaultTools``' connection.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from notedex.config import Config
from notedex.errors import EXIT_TEMPFAIL, NotedexError
from notedex.mcp_server.catalog import tool_table
from notedex.mcp_server.keeper import IndexKeeper
from notedex.mcp_server.paths import refuse_outside_paths
from notedex.mcp_server.resources import list_resources, read_resource
from notedex.mcp_server.tools import DeadlineExceeded, ToolError, check_arguments
from notedex.query.filters import NoteFilter, from_mapping
from notedex.query.find import find_note
from notedex.query.listing import parse_line_range, scan, show, status
from notedex.query.lookup import lookup_page
from notedex.query.neighbourhood import neighbourhood
from notedex.query.paging import paginate as _paginate
from notedex.query.quote import quote
from notedex.query.reports import HEALTH_LISTS, health
from notedex.query.search import search
from notedex.store.connect import connect_readonly, read_transaction

DEFAULT_TIMEOUT = 30.0
REFRESH_WAIT = 2.0
"""How long a call waits for a running index update before answering with ``stale: true``."""
FIRST_BUILD_WAIT = 0.5
"""How long a call waits for the first index to be built before answering that it is being
built, and how far (issue 31: a client is never kept waiting for a whole build)."""
RETRY_AFTER = 1.0
"""Seconds after which the "being built" answer suggests trying again."""


class VaultTools:
    """The tools, synchronous: each call runs in a worker thread with its own connection."""

    def __init__(
        self,
        cfg: Config,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        refresh: bool = True,
        allow_capture: bool = False,
    ) -> None:
        self.cfg = cfg
        self.timeout = timeout
        self.keeper = IndexKeeper(cfg, enabled=refresh)
        self.specs = tool_table(allow_capture=allow_capture)
        """The tools this server lists and answers: ``capture`` only when allowed."""
        self._handlers: dict[
            str, Callable[[sqlite3.Connection, dict[str, Any]], dict[str, Any]]
        ] = {
            "lookup": self._lookup,
            "search": self._search,
            "show": self._show,
            "health": self._health,
            "scan": self._scan,
            "tasks": self._tasks,
            "quote": self._quote,
            "status": self._status,
            "graph": self._graph,
            "tags": self._tags,
            "mentions": self._mentions,
            "base": self._base,
            "properties": self._properties,
        }

    def start(self) -> None:
        self.keeper.start()

    def close(self) -> None:
        self.keeper.stop()

    # -- dispatch --

    def call(
        self, name: str, arguments: dict[str, Any] | None, deadline: float | None = None
    ) -> dict[str, Any]:
        """Run one tool; raises ToolError with a message meant for the client."""
        spec = next((t for t in self.specs if t.name == name), None)
        if spec is None:
            names = ", ".join(t.name for t in self.specs)
            raise ToolError(f"unknown tool {name!r}; the tools are {names}")
        args = check_arguments(spec, arguments)
        if name == "capture":
            return self._capture(args)
        if deadline is None:
            deadline = time.monotonic() + self.timeout
        stale = self._stale(deadline)
        result = self._answer(name, lambda conn: self._handlers[name](conn, args), deadline)
        result["stale"] = stale
        return result

    def list_resources(self, cursor: str | None, deadline: float | None = None) -> dict[str, Any]:
        """``resources/list``: one page of notes; raises ResourceError (or ToolError)."""
        deadline = time.monotonic() + self.timeout if deadline is None else deadline
        self._stale(deadline)  # brings the index up to date as a tool call does
        return self._answer("resources/list", lambda conn: list_resources(conn, cursor), deadline)

    def read_resource(self, uri: str, deadline: float | None = None) -> dict[str, Any]:
        """``resources/read``: one note's text; raises ResourceError (or ToolError)."""
        deadline = time.monotonic() + self.timeout if deadline is None else deadline
        self._stale(deadline)
        return self._answer(
            "resources/read",
            lambda conn: read_resource(
                conn,
                self.cfg.vault,
                uri,
                max_bytes=self.cfg.max_bytes,
                follow_symlinks=self.cfg.follow_symlinks,
            ),
            deadline,
        )

    def _answer(
        self,
        name: str,
        answer: Callable[[sqlite3.Connection], dict[str, Any]],
        deadline: float,
    ) -> dict[str, Any]:
        """``answer`` on a read-only connection that SQLite interrupts at the deadline."""
        try:
            conn = connect_readonly(self.cfg.db)
        except NotedexError as exc:
            raise ToolError(str(exc)) from None

        def past_deadline() -> int:
            return 1 if time.monotonic() > deadline else 0

        conn.set_progress_handler(past_deadline, 1000)
        try:
            return answer(conn)
        except NotedexError as exc:
            raise ToolError(str(exc)) from None
        except sqlite3.OperationalError as exc:
            if time.monotonic() > deadline:
                raise DeadlineExceeded(self.deadline_message(name)) from None
            raise ToolError(f"cannot read the index: {exc}") from None
        except sqlite3.DatabaseError as exc:
            raise ToolError(f"cannot read the index: {exc}") from None
        finally:
            conn.close()

    def deadline_message(self, name: str) -> str:
        return (
            f"{name} did not finish within the {self.timeout:g}s deadline and was stopped; "
            "try a narrower query or a smaller limit (the server is still running)"
        )

    def _stale(self, deadline: float) -> bool:
        """True when no daemon keeps the index fresh and it may lag behind the vault.

        Raises ToolError when there is no usable index yet and none arrived before the deadline.
        """
        from notedex.indexing.freshness import daemon_keeps_fresh, ensure_fresh
        from notedex.query.listing import rebuilding
        from notedex.store.connect import lock_holder

        if rebuilding(self.cfg.db, lock_holder(self.cfg.lock_file)) and _has_schema(self.cfg.db):
            return True  # answered from the old index while a full one is built (issue 13)
        if daemon_keeps_fresh(self.cfg):
            return False
        if not self.keeper.enabled:
            return not ensure_fresh(self.cfg, apply=False).current
        ticket = self.keeper.request()
        if _has_schema(self.cfg.db):
            # An index to answer from: wait briefly for the update, else answer with it as is.
            wait = min(REFRESH_WAIT, (deadline - time.monotonic()) / 2)
            finished, ok, _ = self.keeper.wait(ticket, wait)
            return not (finished and ok)
        # Nothing to answer from yet: a small vault is built in a moment, else say how far.
        wait = min(FIRST_BUILD_WAIT, deadline - time.monotonic() - 0.2)
        finished, ok, error = self.keeper.wait(ticket, wait)
        if finished and ok:
            return False
        if finished and error:
            raise ToolError(f"there is no usable index yet: {error}")
        if _has_schema(self.cfg.db):
            return True  # the first build committed meanwhile; the update after it still runs
        raise building_error(self.keeper.progress)

    # -- tools --

    def _filter(
        self, args: dict[str, Any], tag: str | None = None, note_type: str | None = None
    ) -> NoteFilter:
        """The ``filter`` argument as a NoteFilter (query/filters.py), with ``scan``'s own
        ``tag`` and ``type`` added to it; a bad one is a ToolError saying what was expected."""
        from notedex.errors import UsageError
        from notedex.vault.properties import declared_types

        spec = args.get("filter")
        try:
            nf = from_mapping(spec, declared_types(self.cfg.vault_dir) if spec else None)
        except UsageError as exc:
            raise ToolError(str(exc)) from None
        if tag:
            nf = nf.replace(tags=(*nf.tags, tag))
        if note_type and not nf.note_type:
            nf = nf.replace(note_type=note_type)
        return nf

    def _lookup(self, conn: sqlite3.Connection, args: dict[str, Any]) -> dict[str, Any]:
        return lookup_page(
            conn,
            args["question"],
            offset=args["offset"],
            limit=args["limit"],
            nf=self._filter(args, args["tag"], args["type"]),
        )

    def _search(self, conn: sqlite3.Connection, args: dict[str, Any]) -> dict[str, Any]:
        if not self.cfg.body_index:
            raise ToolError(
                "full-text search is off: body_index = false in the notedex config file"
            )
        # A hit whose file the symlink policy refuses now gets no position: no text from outside
        # the vault, only that it matched (vault.reading, as for `show`).
        data = search(
            conn,
            self.cfg.vault,
            args["query"],
            limit=args["limit"],
            offset=args["offset"],
            follow_symlinks=self.cfg.follow_symlinks,
            nf=self._filter(args),
        )
        data["hasMore"] = data["total"] > data["offset"] + data["shown"]
        return data

    def _note_path(self, conn: sqlite3.Connection, wanted: str) -> str:
        """The vault path of the note ``wanted`` names; a name that climbs out of the vault is
        refused before any lookup (the read itself refuses a file outside: vault.reading)."""
        refuse_outside_paths(wanted)
        with read_transaction(conn):
            row = find_note(conn, wanted)
        path: str = row["path"]
        return path

    def _show(self, conn: sqlite3.Connection, args: dict[str, Any]) -> dict[str, Any]:
        lines = parse_line_range(args["lines"]) if args["lines"] is not None else None
        path = self._note_path(conn, args["note"])
        data = show(
            conn,
            self.cfg.vault,
            path,
            body=args["body"] and lines is None,  # a line range replaces the body
            lines=lines,
            max_bytes=self.cfg.max_bytes,
            follow_symlinks=self.cfg.follow_symlinks,
        )
        limit = args["limit"]
        totals = {"links": len(data["links"]), "backlinks": len(data["backlinks"])}
        data["links"] = data["links"][:limit]
        data["backlinks"] = data["backlinks"][:limit]
        data["totals"] = totals
        data["limit"] = limit
        data["hasMore"] = any(n > limit for n in totals.values())
        if "body" in data:
            body: str = data["body"]
            start, size = args["bodyOffset"], args["maxBodyChars"]
            data["body"] = body[start : start + size]
            data["bodyChars"] = len(body)
            data["bodyOffset"] = start
            data["bodyTruncated"] = start + size < len(body)
        return data

    def _quote(self, conn: sqlite3.Connection, args: dict[str, Any]) -> dict[str, Any]:
        path = self._note_path(conn, args["note"])
        return quote(
            conn,
            self.cfg.vault,
            path,
            args["text"],
            max_bytes=self.cfg.max_bytes,
            follow_symlinks=self.cfg.follow_symlinks,
        )

    def _health(self, conn: sqlite3.Connection, args: dict[str, Any]) -> dict[str, Any]:
        data = health(conn, self._filter(args))
        return _paginate(data, HEALTH_LISTS, args["offset"], args["limit"])

    def _tags(self, conn: sqlite3.Connection, args: dict[str, Any]) -> dict[str, Any]:
        from notedex.query.reports import tags

        data = tags(conn, self._filter(args))
        return _paginate(data, ("tags",), args["offset"], args["limit"])

    def _properties(self, conn: sqlite3.Connection, args: dict[str, Any]) -> dict[str, Any]:
        from notedex.query.reports import properties, property_values
        from notedex.vault.properties import declared_types

        nf = self._filter(args)
        declared = declared_types(self.cfg.vault_dir)
        if args["name"] is not None:
            data = property_values(conn, args["name"], declared, nf)
            return _paginate(data, ("values",), args["offset"], args["limit"])
        data = properties(conn, declared, nf)
        return _paginate(data, ("properties",), args["offset"], args["limit"])

    def _mentions(self, conn: sqlite3.Connection, args: dict[str, Any]) -> dict[str, Any]:
        from notedex.query.mentions import mentions

        path = self._note_path(conn, args["note"])
        data = mentions(
            conn,
            self.cfg.vault,
            path,
            max_bytes=self.cfg.max_bytes,
            follow_symlinks=self.cfg.follow_symlinks,
        )
        return _paginate(data, ("mentions",), args["offset"], args["limit"])

    def _scan(self, conn: sqlite3.Connection, args: dict[str, Any]) -> dict[str, Any]:
        data = scan(conn, self._filter(args, args["tag"], args["type"]))
        return _paginate(data, ("notes", "errors"), args["offset"], args["limit"])

    def _tasks(self, conn: sqlite3.Connection, args: dict[str, Any]) -> dict[str, Any]:
        from notedex.query.tasks import TaskFilter, tasks_page

        states = [s.strip() for s in (args["state"] or "").split(",") if s.strip()]
        wanted = TaskFilter(  # a UsageError becomes the tool's error (self._answer)
            states=states,
            statuses=list(args["status"] or ""),
            due_before=args["dueBefore"],
            due_after=args["dueAfter"],
            note_filter=self._filter(args, args["tag"], args["type"]),
        )
        return tasks_page(conn, wanted, args["offset"], args["limit"])  # the page cut in SQL

    def _status(self, conn: sqlite3.Connection, args: dict[str, Any]) -> dict[str, Any]:
        return status(conn, self.cfg.vault, self.cfg.db, self.cfg.lock_path)

    def _graph(self, conn: sqlite3.Connection, args: dict[str, Any]) -> dict[str, Any]:
        path = self._note_path(conn, args["note"])
        return neighbourhood(conn, path, depth=args["depth"], max_nodes=args["maxNodes"])

    def _base(self, conn: sqlite3.Connection, args: dict[str, Any]) -> dict[str, Any]:
        import json

        from notedex.query.bases.run import Base, checked, run
        from notedex.store.bases import stored_base
        from notedex.vault.bases import BadBase, base_document
        from notedex.vault.properties import declared_types
        from notedex.vault.reading import VaultReader

        path = args["base"]
        refuse_outside_paths(path)
        files = VaultReader(self.cfg.vault, follow_outside=self.cfg.follow_symlinks)
        try:
            raw, info = files.read(path, self.cfg.max_bytes)
            row = stored_base(conn, path) if path.lower().endswith(".base") else None
            if row is not None and (row["size"], row["mtime_ns"]) == (
                info.st_size,
                info.st_mtime_ns,
            ):  # the index's copy is this file: no YAML parser needed
                if row["error"] is not None:
                    raise BadBase(row["error"])
                base = Base(json.loads(row["doc"]), path)
            else:
                text = raw.decode("utf-8")
                base = Base(base_document(text, note=not path.lower().endswith(".base")), path)
        except (OSError, UnicodeDecodeError, BadBase) as exc:
            raise ToolError(f"base: cannot read {path}: {exc}") from None
        if args["check"]:
            return checked(base)
        declared = declared_types(self.cfg.vault_dir)  # SEMANTICS 14.4, as the filter reads them
        with read_transaction(conn):
            data = run(conn, base, args["view"], this_path=path, declared=declared)
        return _paginate(data, ("rows",), args["offset"], args["limit"])

    def _capture(self, args: dict[str, Any]) -> dict[str, Any]:
        """A new note in the inbox (``edit.capture``: a fresh name, O_EXCL, inside the inbox)."""
        from notedex.edit.capture import capture

        try:
            captured = capture(self.cfg.vault, self.cfg.inbox, args["text"])
        except (OSError, ValueError) as exc:
            raise ToolError(f"cannot capture into {self.cfg.inbox}: {exc}") from None
        self.keeper.request()  # the index catches up in the background (a daemon sees it anyway)
        return {"path": captured.path, "id": captured.id}


def building_error(progress: tuple[int, int] | None) -> ToolError:
    """The answer while the first index is built: its progress in words and as data, with the
    CLI's exit code for "try again" (75, EX_TEMPFAIL), so an agent can wait and retry."""
    done, total = progress if progress is not None else (0, None)
    so_far = f"{done} of {total} files" if total is not None else "listing the files"
    return ToolError(
        f"the index is still being built for the first time ({so_far}); try again in a "
        "moment (the server keeps building it)",
        {
            "error": "building",
            "exitCode": EXIT_TEMPFAIL,
            "done": done,
            "total": total,
            "retryAfter": RETRY_AFTER,
        },
    )


def _has_schema(db: Path) -> bool:
    """True when the index can be read (a first build has committed its schema)."""
    try:
        connect_readonly(db).close()
    except NotedexError:
        return False
    return True
