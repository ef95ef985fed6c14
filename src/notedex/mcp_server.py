"""`notedex mcp`: the index as read-only MCP tools over stdio.

The tools (``lookup``, ``health``, ``scan``, ``show``, ``search``) call the same ``query``
functions as the CLI, so a result is the CLI's ``--json`` document plus ``stale`` and, for lists,
``offset``/``limit``/``hasMore``. The MCP SDK (the optional extra ``notedex[mcp]``) is imported
only by :func:`serve`; everything else here is stdlib, so the tool logic is testable without it.

Rules this module keeps:
- The handshake is answered at once: the index is brought up to date by a background thread
  (a ``notedex index`` child process, so a slow or crashing build never blocks the event loop
  and is stopped with the server). A call waits a little for it, then answers from what is
  there with ``stale: true``; only a first build that is not finished makes a call fail.
- Every call has a deadline: SQLite is interrupted when it passes, and a call that still has
  not returned is answered with a clear error while the server keeps serving.
- Errors are tool errors (``isError``), never a crashed server.
- ``show`` reads only inside the vault: absolute paths, ``..`` and notes whose real file lies
  outside the vault (a symlink) are refused.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from notedex.errors import NotedexError, UsageError

if TYPE_CHECKING:
    from notedex.config import Config

DEFAULT_TIMEOUT = 30.0
REFRESH_WAIT = 2.0
"""How long a call waits for a running index update before answering with ``stale: true``."""
MAX_LIST_LIMIT = 500
INSTALL_HINT = "notedex mcp needs the MCP SDK, an optional extra: pip install 'notedex[mcp]'"

INSTRUCTIONS = (
    "Read-only access to the index of a Markdown (Obsidian) vault. Start with `lookup` "
    "(titles, tags, aliases, link texts) or `search` (full text of note bodies), then read only "
    "the few notes you need with `show`. Cite notes by their `path`. Results carry "
    "`stale: true` when the index may lag behind the vault; lists are paginated with "
    "`limit`/`offset` and report `total`."
)


class ToolError(Exception):
    """A failed tool call: the message goes back to the client as an ``isError`` result."""


class DeadlineExceeded(ToolError):
    """The call passed its deadline; SQLite was interrupted."""


# -- tool definitions ---------------------------------------------------------------------------


def _paging(default: int, maximum: int = MAX_LIST_LIMIT) -> dict[str, Any]:
    return {
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": maximum,
            "default": default,
            "description": f"Return at most this many items (default {default}, at most {maximum}).",
        },
        "offset": {
            "type": "integer",
            "minimum": 0,
            "default": 0,
            "description": "Skip this many items first, to page through a long list (default 0).",
        },
    }


def _object(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        schema["required"] = list(required)
    return schema


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    description: str
    input_schema: dict[str, Any]

    def wire(self) -> dict[str, Any]:
        """The tool as MCP sends it (camelCase), valid for every SDK version."""
        return {
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema,
            "annotations": {
                "title": self.title,
                "readOnlyHint": True,
                "destructiveHint": False,
                "idempotentHint": True,
                "openWorldHint": False,
            },
        }


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "lookup",
        "Find notes about a question",
        "Find the notes a question or keywords are about (English or Chinese). Stage 1 matches "
        "titles and tags; only if that finds nothing, stage 2 matches aliases, link texts and "
        "loose titles and adds their direct link neighbours. Note bodies are not read: use "
        "`show` on the candidates you need, or `search` for full text. Same JSON as "
        "`notedex lookup --json`; when `narrowed` is true, tell the user that only `shown` of "
        "`total` candidates were returned (the `message`).",
        _object(
            {
                "question": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 2000,
                    "description": "A question or keywords, e.g. 'which notes discuss the Cobra CLI framework?'",
                },
                **_paging(10, 100),
                "tag": {
                    "type": "string",
                    "description": "Only notes with this tag (nested tags count for their parents).",
                },
                "type": {
                    "type": "string",
                    "description": "Only notes whose frontmatter `type` is this.",
                },
            },
            ("question",),
        ),
    ),
    ToolSpec(
        "search",
        "Full-text search of note bodies",
        "Full-text search over note bodies, best match first, each hit with path, title, "
        "line, column and a snippet of the line. Syntax: words (all must occur; English words "
        'match their stem), "exact phrase", prefix*, -excluded. Nothing else is special: '
        "AND/OR/NOT/NEAR, colons and parentheses are ordinary text. Same JSON as "
        "`notedex search --json`.",
        _object(
            {
                "query": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 2000,
                    "description": "Search text, e.g. 'cobra \"shell completion\" -zsh' or '框架'.",
                },
                **_paging(20, 100),
            },
            ("query",),
        ),
    ),
    ToolSpec(
        "show",
        "Read one note",
        "One note's metadata (title, id, type, status, tags, aliases, properties, modified), "
        "its links and backlinks, and its text without frontmatter (`body`). `note` is a "
        "vault-relative path (with or without .md) or a title; absolute paths, '..' and files "
        "outside the vault are refused. Long bodies come in pieces: see `bodyTruncated`, "
        "`bodyChars` and `bodyOffset`. Same JSON as `notedex show --body --json`.",
        _object(
            {
                "note": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 1000,
                    "description": "A vault-relative path such as 'Projects/Cobra CLI 框架.md', or a note title.",
                },
                "body": {
                    "type": "boolean",
                    "default": True,
                    "description": "Include the note's text (default true).",
                },
                "bodyOffset": {
                    "type": "integer",
                    "minimum": 0,
                    "default": 0,
                    "description": "Start the text at this character (to read a long note in pieces).",
                },
                "maxBodyChars": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 1_000_000,
                    "default": 100_000,
                    "description": "Return at most this many characters of text (default 100000).",
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 2000,
                    "default": 200,
                    "description": "Return at most this many links and backlinks each (default 200).",
                },
            },
            ("note",),
        ),
    ),
    ToolSpec(
        "health",
        "Vault health report",
        "Broken links (source, line, column, link text, target key), orphan notes (no links "
        "in or out), unlinked notes (nothing links to them), warnings and parse errors. Same "
        "JSON as `notedex health --json`; `offset`/`limit` apply to each list and `totals` "
        "gives each list's full length.",
        _object(_paging(100)),
    ),
    ToolSpec(
        "scan",
        "List notes",
        "List notes with id, title, type, status, path, tags and aliases, plus parse errors, "
        "optionally filtered by tag or frontmatter type. Same JSON as `notedex scan --json`; "
        "`noteCount`/`errorCount` are the full totals, `offset`/`limit` page through both lists.",
        _object(
            {
                "tag": {
                    "type": "string",
                    "description": "Only notes with this tag (nested tags count for their parents).",
                },
                "type": {
                    "type": "string",
                    "description": "Only notes whose frontmatter `type` is this.",
                },
                **_paging(100),
            }
        ),
    ),
)
TOOL_NAMES = tuple(t.name for t in TOOLS)


def check_arguments(spec: ToolSpec, arguments: dict[str, Any] | None) -> dict[str, Any]:
    """Validate arguments against the (deliberately simple) schema and fill in defaults."""
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise ToolError(f"{spec.name}: arguments must be an object")
    properties: dict[str, Any] = spec.input_schema["properties"]
    unknown = sorted(set(arguments) - set(properties))
    if unknown:
        raise ToolError(
            f"{spec.name}: unknown argument {unknown[0]!r}; expected {', '.join(sorted(properties))}"
        )
    for name in spec.input_schema.get("required", []):
        if name not in arguments:
            raise ToolError(f"{spec.name}: missing required argument {name!r}")
    values: dict[str, Any] = {}
    for name, prop in properties.items():
        if name not in arguments or arguments[name] is None:
            values[name] = prop.get("default")
            continue
        value = arguments[name]
        kind = prop["type"]
        if kind == "string":
            if not isinstance(value, str):
                raise ToolError(f"{spec.name}: {name!r} must be a string")
            if prop.get("minLength") and not value.strip():
                raise ToolError(f"{spec.name}: {name!r} must not be empty")
            if len(value) > prop.get("maxLength", 1 << 30):
                raise ToolError(
                    f"{spec.name}: {name!r} is too long (at most {prop['maxLength']} characters)"
                )
        elif kind == "integer":
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ToolError(f"{spec.name}: {name!r} must be a whole number")
            if value < prop.get("minimum", -(1 << 62)) or value > prop.get("maximum", 1 << 62):
                bounds = f"{prop.get('minimum', '-inf')}..{prop.get('maximum', 'inf')}"
                raise ToolError(f"{spec.name}: {name!r} must be in {bounds}, not {value}")
        elif kind == "boolean" and not isinstance(value, bool):
            raise ToolError(f"{spec.name}: {name!r} must be true or false")
        values[name] = value
    return values


# -- freshness ------------------------------------------------------------------------------------


class IndexKeeper:
    """Brings the index up to date in the background when no daemon does.

    Each call asks for a check (an etag walk, stdlib only); when files changed, a
    ``notedex index`` child process applies them. Requests that arrive while one runs are
    coalesced into one more round.
    """

    def __init__(self, cfg: Config, *, enabled: bool = True) -> None:
        self.cfg = cfg
        self.enabled = enabled
        self._cond = threading.Condition()
        self._wanted = 0
        self._done = 0
        self._ok = False
        self._error: str | None = None
        self._stopping = False
        self._child: subprocess.Popen[bytes] | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if not self.enabled or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._loop, name="notedex-mcp-index", daemon=True)
        self._thread.start()
        self.request()

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            child = self._child
            self._cond.notify_all()
        if child is not None:
            with contextlib.suppress(OSError):
                child.terminate()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def request(self) -> int:
        with self._cond:
            self._wanted += 1
            self._cond.notify_all()
            return self._wanted

    def wait(self, ticket: int, timeout: float) -> tuple[bool, bool, str | None]:
        """(round finished, index is current, error) for a round that began after ``ticket``."""
        with self._cond:
            finished = self._cond.wait_for(
                lambda: self._done >= ticket or self._stopping, max(0.0, timeout)
            )
            finished = finished and self._done >= ticket
            return finished, self._ok if finished else False, self._error

    def _loop(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._stopping or self._wanted > self._done)
                if self._stopping:
                    return
                target = self._wanted
            ok, error = self._round()
            with self._cond:
                self._done, self._ok, self._error = target, ok, error
                self._cond.notify_all()

    def _round(self) -> tuple[bool, str | None]:
        from notedex.indexing.freshness import ensure_fresh

        try:
            # Check only: the `notedex index` child below applies (ARCHITECTURE "Freshness").
            if ensure_fresh(self.cfg, apply=False).current:
                return True, None
        except NotedexError as exc:
            return False, str(exc)
        except Exception as exc:  # a probe bug must not stop the keeper
            return False, f"{type(exc).__name__}: {exc}"
        vault, db = str(self.cfg.vault), str(self.cfg.db)
        command = [sys.executable, "-m", "notedex", "index", "--vault", vault, "--db", db]
        with self._cond:
            if self._stopping:
                return False, "stopping"
            # stdout is the MCP channel: the child must never write to it.
            self._child = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
            )
        child = self._child
        _, stderr = child.communicate()
        with self._cond:
            self._child = None
        if child.returncode == 0:
            return True, None
        lines = [ln for ln in stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
        reason = lines[-1] if lines else f"exit status {child.returncode}"
        return False, f"updating the index failed: {reason.removeprefix('notedex: ')}"


# -- the tools ------------------------------------------------------------------------------------


class VaultTools:
    """The five tools, synchronous: each call runs in a worker thread with its own connection."""

    def __init__(
        self, cfg: Config, *, timeout: float = DEFAULT_TIMEOUT, refresh: bool = True
    ) -> None:
        self.cfg = cfg
        self.timeout = timeout
        self.keeper = IndexKeeper(cfg, enabled=refresh)
        self._handlers: dict[
            str, Callable[[sqlite3.Connection, dict[str, Any]], dict[str, Any]]
        ] = {
            "lookup": self._lookup,
            "search": self._search,
            "show": self._show,
            "health": self._health,
            "scan": self._scan,
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
        from notedex.store.connect import connect_readonly

        spec = next((t for t in TOOLS if t.name == name), None)
        if spec is None:
            raise ToolError(f"unknown tool {name!r}; the tools are {', '.join(TOOL_NAMES)}")
        args = check_arguments(spec, arguments)
        if deadline is None:
            deadline = time.monotonic() + self.timeout
        stale = self._stale(deadline)
        try:
            conn = connect_readonly(self.cfg.db)
        except NotedexError as exc:
            raise ToolError(str(exc)) from None

        def past_deadline() -> int:
            return 1 if time.monotonic() > deadline else 0

        conn.set_progress_handler(past_deadline, 1000)
        try:
            result = self._handlers[name](conn, args)
        except NotedexError as exc:
            raise ToolError(str(exc)) from None
        except sqlite3.OperationalError as exc:
            if time.monotonic() > deadline:
                raise DeadlineExceeded(self._deadline_message(name)) from None
            raise ToolError(f"cannot read the index: {exc}") from None
        except sqlite3.DatabaseError as exc:
            raise ToolError(f"cannot read the index: {exc}") from None
        finally:
            conn.close()
        result["stale"] = stale
        return result

    def _deadline_message(self, name: str) -> str:
        return (
            f"{name} did not finish within the {self.timeout:g}s deadline and was stopped; "
            "try a narrower query or a smaller limit (the server is still running)"
        )

    def _stale(self, deadline: float) -> bool:
        """True when no daemon keeps the index fresh and it may lag behind the vault.

        Raises ToolError when there is no usable index yet and none arrived before the deadline.
        """
        from notedex.indexing.freshness import daemon_keeps_fresh, ensure_fresh

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
        # Nothing to answer from yet: wait for the first build, up to the deadline.
        finished, ok, error = self.keeper.wait(ticket, deadline - time.monotonic() - 0.2)
        if finished and ok:
            return False
        if finished and error:
            raise ToolError(f"there is no usable index yet: {error}")
        raise ToolError(
            "the index is still being built for the first time; try again in a moment "
            "(the server keeps building it)"
        )

    # -- tools --

    def _lookup(self, conn: sqlite3.Connection, args: dict[str, Any]) -> dict[str, Any]:
        from notedex.query.lookup import lookup

        offset, limit = args["offset"], args["limit"]
        data = lookup(
            conn, args["question"], limit=offset + limit, tag=args["tag"], note_type=args["type"]
        )
        page = data["candidates"][offset:]
        data["candidates"] = page
        data["shown"] = len(page)
        data["narrowed"] = data["total"] > offset + len(page) or offset > 0
        if offset:
            data["message"] = _page_message("candidates", offset, len(page), data["total"])
        data.update(offset=offset, limit=limit, hasMore=data["total"] > offset + len(page))
        return data

    def _search(self, conn: sqlite3.Connection, args: dict[str, Any]) -> dict[str, Any]:
        from notedex.query.search import search
        from notedex.store import read
        from notedex.store.connect import read_transaction

        if not self.cfg.body_index:
            raise ToolError(
                "full-text search is off: body_index = false in the notedex config file"
            )
        data = search(
            conn, self.cfg.vault, args["query"], limit=args["limit"], offset=args["offset"]
        )
        data["hasMore"] = data["total"] > data["offset"] + data["shown"]
        with read_transaction(conn):
            rows = {h["path"]: read.note_by_path(conn, h["path"]) for h in data["hits"]}
        for hit in data["hits"]:
            row = rows[hit["path"]]
            disk_rel = (row["disk_rel"] or row["path"]) if row is not None else hit["path"]
            try:
                check_inside_vault(self.cfg.vault, disk_rel, hit["path"])
            except ToolError:
                # As for `show`: no text from a file outside the vault, only that it matched.
                hit.update(
                    dict.fromkeys(("line", "column", "match", "snippet", "matchStart", "matchEnd"))
                )
        return data

    def _show(self, conn: sqlite3.Connection, args: dict[str, Any]) -> dict[str, Any]:
        from notedex.query.listing import find_note, show
        from notedex.store.connect import read_transaction

        wanted = args["note"]
        refuse_outside_paths(wanted)
        with read_transaction(conn):
            row = find_note(conn, wanted)
        check_inside_vault(self.cfg.vault, row["disk_rel"] or row["path"], row["path"])
        data = show(conn, self.cfg.vault, row["path"], body=args["body"])
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

    def _health(self, conn: sqlite3.Connection, args: dict[str, Any]) -> dict[str, Any]:
        from notedex.query.reports import health

        data = health(conn)
        lists = ("orphanNotes", "unlinkedNotes", "brokenLinks", "warnings", "errors")
        return _paginate(data, lists, args["offset"], args["limit"])

    def _scan(self, conn: sqlite3.Connection, args: dict[str, Any]) -> dict[str, Any]:
        from notedex.query.listing import scan

        data = scan(conn, tag=args["tag"], note_type=args["type"])
        return _paginate(data, ("notes", "errors"), args["offset"], args["limit"])


def _has_schema(db: Path) -> bool:
    """True when the index can be read (a first build has committed its schema)."""
    from notedex.store.connect import connect_readonly

    try:
        connect_readonly(db).close()
    except NotedexError:
        return False
    return True


def _paginate(
    data: dict[str, Any], lists: tuple[str, ...], offset: int, limit: int
) -> dict[str, Any]:
    totals = {name: len(data[name]) for name in lists}
    for name in lists:
        data[name] = data[name][offset : offset + limit]
    data["totals"] = totals
    data["total"] = totals[lists[0]] if lists[0] == "notes" else max(totals.values())
    data.update(
        offset=offset, limit=limit, hasMore=any(n > offset + limit for n in totals.values())
    )
    return data


def _page_message(what: str, offset: int, shown: int, total: int) -> str:
    if not shown:
        return f"no {what} past {offset}; {total} in all"
    return f"{what} {offset + 1}-{offset + shown} of {total}"


_DRIVE = re.compile(r"^[A-Za-z]:")


def refuse_outside_paths(note: str) -> None:
    """``show`` reads only inside the vault: no absolute paths, no ``..``, no ``~``."""
    candidate = note.strip().replace("\\", "/")
    if "\0" in candidate:
        raise ToolError("the note name contains a NUL character")
    if (
        candidate.startswith(("/", "~/"))
        or candidate == "~"
        or _DRIVE.match(candidate)
        or os.path.isabs(note)
    ):
        raise ToolError(
            f"refused {note!r}: absolute paths are not allowed; give a path relative to the "
            "vault root (e.g. 'Projects/Note.md') or a note title"
        )
    if ".." in candidate.split("/"):
        raise ToolError(f"refused {note!r}: '..' would leave the vault; give a path inside it")


def check_inside_vault(vault: Path, disk_rel: str, path: str) -> None:
    """Refuse a note whose real file is outside the vault (a symlink that leads out)."""
    root = os.path.realpath(vault)
    real = os.path.realpath(os.path.join(root, disk_rel))
    if os.path.commonpath([root, real]) != root:
        raise ToolError(f"refused {path!r}: it is a symlink to a file outside the vault")


# -- the MCP layer --------------------------------------------------------------------------------


def require_sdk() -> None:
    """UsageError (exit 2, one line) with the install command when the SDK is missing."""
    import importlib

    try:
        importlib.import_module("mcp.server.lowlevel")
        importlib.import_module("mcp.server.stdio")
    except ImportError:
        raise UsageError(INSTALL_HINT) from None


async def run_tool(
    tools: VaultTools, name: str, arguments: dict[str, Any] | None
) -> tuple[dict[str, Any] | None, str | None]:
    """One call with its deadline, off the event loop: (result, None) or (None, error message)."""
    import anyio
    import anyio.to_thread

    deadline = time.monotonic() + tools.timeout
    call = functools.partial(tools.call, name, arguments, deadline)
    try:
        # A little grace after the deadline: SQLite is interrupted at the deadline itself.
        with anyio.fail_after(tools.timeout + 1.0):
            return await anyio.to_thread.run_sync(call, abandon_on_cancel=True), None
    except TimeoutError:
        return None, tools._deadline_message(name)
    except ToolError as exc:
        return None, str(exc)
    except Exception as exc:  # a bug must cost one call, not the server
        return None, f"internal error in {name}: {type(exc).__name__}: {exc}"


def result_wire(result: dict[str, Any] | None, error: str | None) -> dict[str, Any]:
    """A CallToolResult as MCP sends it: the JSON as text, and as structured content."""
    if error is not None:
        return {"content": [{"type": "text", "text": f"notedex: {error}"}], "isError": True}
    text = json.dumps(result, ensure_ascii=False, default=str)
    return {
        "content": [{"type": "text", "text": text}],
        "structuredContent": result,
        "isError": False,
    }


def build_server(tools: VaultTools) -> Any:
    """A low-level MCP server for whichever SDK is installed (2.x ``on_*`` handlers or 1.x
    decorators); the tools, schemas and results are the same."""
    import inspect

    import mcp.types as types
    from mcp.server.lowlevel import Server

    from notedex import __version__

    tool_models = [types.Tool.model_validate(spec.wire()) for spec in TOOLS]
    params = inspect.signature(Server.__init__).parameters
    extra: dict[str, Any] = {"instructions": INSTRUCTIONS} if "instructions" in params else {}

    if "on_call_tool" in params:  # SDK 2.x

        async def on_list_tools(ctx: Any, params: Any) -> Any:
            return types.ListToolsResult(tools=tool_models)

        async def on_call_tool(ctx: Any, params: Any) -> Any:
            result, error = await run_tool(tools, params.name, params.arguments)
            return types.CallToolResult.model_validate(result_wire(result, error))

        return Server(
            "notedex",
            version=__version__,
            on_list_tools=on_list_tools,
            on_call_tool=on_call_tool,
            **extra,
        )

    server: Any = Server("notedex", version=__version__, **extra)  # SDK 1.x

    async def list_tools() -> list[Any]:
        return tool_models

    async def call_tool(name: str, arguments: dict[str, Any] | None) -> list[Any]:
        result, error = await run_tool(tools, name, arguments)
        if error is not None:
            raise ToolError(f"notedex: {error}")  # 1.x turns this into an isError result
        wire = result_wire(result, None)
        return [types.TextContent.model_validate(block) for block in wire["content"]]

    server.list_tools()(list_tools)
    decorator_params = inspect.signature(server.call_tool).parameters
    register = (
        server.call_tool(validate_input=False)
        if "validate_input" in decorator_params
        else server.call_tool()
    )
    register(call_tool)
    return server


def serve(cfg: Config, *, timeout: float = DEFAULT_TIMEOUT, refresh: bool = True) -> int:
    """Serve MCP over stdin/stdout until the client goes away."""
    require_sdk()
    import anyio
    from mcp.server.stdio import stdio_server

    tools = VaultTools(cfg, timeout=timeout, refresh=refresh)
    server = build_server(tools)

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    tools.start()
    try:
        anyio.run(main)
    finally:
        tools.close()
    return 0
