"""The MCP tool table: each tool's name, description and JSON schema, and the argument checks.

This is the contract an MCP client sees before it calls anything: ``TOOLS`` (sent as
``tools/list``), the server ``INSTRUCTIONS``, and :func:`check_arguments`, which holds a call's
arguments to its tool's (deliberately simple) schema and fills in the defaults. ``ToolError`` is
the failure every part of the server raises; its message goes back to the client as a tool error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

MAX_LIST_LIMIT = 500
MAX_BODY_CHARS = 100_000
"""The most text one answer carries by default: `show`'s body piece, a resource read."""

INSTRUCTIONS = (
    "Read-only access to the index of a Markdown (Obsidian) vault. Start with `lookup` "
    "(titles, tags, aliases, link texts) or `search` (full text of note bodies), then read only "
    "the few notes you need with `show` (a `lines` range gives numbered lines). Cite notes by "
    "their `path`, a passage as [path:line] or [path:first-last], and check every quoted "
    "passage with `quote` before you answer. `graph` gives the links around one note, "
    "`status` the state of the index; every note is also a resource (`notedex:///` + its "
    "path). Results carry "
    "`stale: true` when the index may lag behind the vault; lists are paginated with "
    "`limit`/`offset` and report `total`."
)


class ToolError(Exception):
    """A failed tool call: the message goes back to the client as an ``isError`` result, with
    ``data`` (when given) as its structured content."""

    def __init__(self, message: str, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.data = data


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


def _filters() -> dict[str, Any]:
    """The note filters that ``lookup`` and ``scan`` share, as their CLI options do."""
    return {
        "tag": {
            "type": "string",
            "description": "Only notes with this tag (nested tags count for their parents).",
        },
        "type": {
            "type": "string",
            "description": "Only notes whose frontmatter `type` is this.",
        },
    }


def note_filter_schema() -> dict[str, Any]:
    """``filter``: the command line's note filter (query/filters.py ``from_mapping``)."""
    return {
        "filter": {
            "type": "object",
            "description": (
                "Only the notes that meet every key given, as the CLI's options: tag (string "
                "or list: all of them), type, folder (string or list: any of them), where "
                "(string or list of expressions, all met: 'status=draft', 'status!=done', "
                "'priority>=2', 'due<2026-12-31', 'tags~=project' list contains, 'reviewed' "
                "set or true, '!reviewed' missing or false), modifiedSince, modifiedBefore, "
                "createdSince, createdBefore (2026-12-31, 2026-12-31T18:00 local time, or 7d), "
                "sort (modified, created, title, path or a property) and reverse (a boolean)."
            ),
        }
    }


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool = True
    """False only for ``capture``, which creates a note (and is listed only when allowed)."""

    def wire(self) -> dict[str, Any]:
        """The tool as MCP sends it (camelCase), valid for every SDK version."""
        return {
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema,
            "annotations": {
                "title": self.title,
                "readOnlyHint": self.read_only,
                "destructiveHint": False,
                "idempotentHint": self.read_only,
                "openWorldHint": False,
            },
        }


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "lookup",
        "Find notes about a question",
        "Find the notes a question or keywords are about (English or Chinese). Stage 1 matches "
        "titles and tags; only if that finds nothing, stage 2 matches aliases, link texts and "
        "loose titles and adds their direct link neighbours. Only when the words are in note "
        "text alone does the body index answer, as its own stage (`stage` `body`, no lines): "
        "use `show` on the candidates you need, or `search` for full text. Same JSON as "
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
                **_filters(),
                **note_filter_schema(),
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
                **note_filter_schema(),
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
                    "default": MAX_BODY_CHARS,
                    "description": "Return at most this many characters of text (default 100000).",
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 2000,
                    "default": 200,
                    "description": "Return at most this many links and backlinks each (default 200).",
                },
                "lines": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 40,
                    "description": "Only these lines of the body, numbered as in the file "
                    "(frontmatter included): 'A-B', 'A' or 'A-'. Returns `lines` "
                    "[{line, text}] instead of `body`; cite them as [path:line] or "
                    "[path:first-last].",
                },
            },
            ("note",),
        ),
    ),
    ToolSpec(
        "quote",
        "Check a quoted passage",
        "Check that a passage you quote is really in a note before you cite it. Compares on "
        "normalised text (NFC, whitespace and line breaks collapsed, Markdown emphasis and link "
        "syntax ignored, [[Target|shown]] read as 'shown', curly quotes as straight). Returns "
        "`found`, and `match` with line, column, firstLine, lastLine and `cite` "
        "('path:first-last'); when not found, `closest` is the most similar passage with its "
        "`similarity` (0-1): correct or drop the quote. Same JSON as `notedex quote --json`.",
        _object(
            {
                "note": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 1000,
                    "description": "A vault-relative path such as 'Projects/Cobra CLI 框架.md', or a note title.",
                },
                "text": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 5000,
                    "description": "The passage as you quote it.",
                },
            },
            ("note", "text"),
        ),
    ),
    ToolSpec(
        "health",
        "Vault health report",
        "Broken links (source, line, column, link text, target key, a suggested fix and why: "
        "alias, folder, renamed, typo), broken anchors (a #heading or #^block the target note "
        "lacks, with a suggested fix), orphan notes (no links in or out), unlinked notes "
        "(nothing links to them), dead ends (no links out), unused attachments (no note links to "
        "or embeds them), warnings and parse errors. Same "
        "JSON as `notedex health --json`; `offset`/`limit` apply to each list and `totals` "
        "gives each list's full length; `filter` keeps the findings of the notes it keeps.",
        _object({**_paging(100), **note_filter_schema()}),
    ),
    ToolSpec(
        "tags",
        "List tags",
        "Every tag with `count` (notes with it or a tag nested in it, as Obsidian's tag pane "
        "rolls nested tags up), `direct` (notes with exactly it), `parent` and `depth`, parents "
        "before their children. Same JSON as `notedex tags --json`; `offset`/`limit` page "
        "through `tags`; `filter` counts the notes it keeps only.",
        _object({**_paging(200), **note_filter_schema()}),
    ),
    ToolSpec(
        "mentions",
        "Unlinked mentions of a note",
        "The places where other notes name this note's title or one of its aliases as a phrase "
        "without linking to it (code, math, HTML and existing links are not mentions): source, "
        "line, column, the text as written and the name it matched. Candidates to link. Same "
        "JSON as `notedex mentions --json`; `offset`/`limit` page through `mentions`.",
        _object(
            {
                "note": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 1000,
                    "description": "A vault-relative path such as 'Projects/Roadmap.md', or a note title.",
                },
                **_paging(100),
            },
            ("note",),
        ),
    ),
    ToolSpec(
        "scan",
        "List notes",
        "List notes with id, title, type, status, path, tags and aliases, plus parse errors, "
        "optionally filtered by tag or frontmatter type, or by `filter` (properties, folders, "
        "dates, and the order). Same JSON as `notedex scan --json`; "
        "`noteCount`/`errorCount` are the full totals, `offset`/`limit` page through both lists.",
        _object(
            {
                **_filters(),
                **_paging(100),
                **note_filter_schema(),
            }
        ),
    ),
)
TOOL_NAMES = tuple(t.name for t in TOOLS)


# -- argument checks ------------------------------------------------------------------------------

Check = Callable[[str, str, dict[str, Any], Any], Any]
"""(tool, argument, its schema, value) -> the value to use, or ToolError."""


def _check_string(tool: str, name: str, prop: dict[str, Any], value: Any) -> Any:
    if not isinstance(value, str):
        raise ToolError(f"{tool}: {name!r} must be a string")
    if prop.get("minLength") and not value.strip():
        raise ToolError(f"{tool}: {name!r} must not be empty")
    if len(value) > prop.get("maxLength", 1 << 30):
        raise ToolError(f"{tool}: {name!r} is too long (at most {prop['maxLength']} characters)")
    return value


def _check_integer(tool: str, name: str, prop: dict[str, Any], value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # JSON has one number type: 5.0 is a whole number
    if isinstance(value, bool) or not isinstance(value, int):
        raise ToolError(f"{tool}: {name!r} must be a whole number")
    if value < prop.get("minimum", -(1 << 62)) or value > prop.get("maximum", 1 << 62):
        bounds = f"{prop.get('minimum', '-inf')}..{prop.get('maximum', 'inf')}"
        raise ToolError(f"{tool}: {name!r} must be in {bounds}, not {value}")
    return value


def _check_boolean(tool: str, name: str, prop: dict[str, Any], value: Any) -> Any:
    if not isinstance(value, bool):
        raise ToolError(f"{tool}: {name!r} must be true or false")
    return value


def _check_object(tool: str, name: str, prop: dict[str, Any], value: Any) -> Any:
    if not isinstance(value, dict):
        raise ToolError(f"{tool}: {name!r} must be an object")
    return value


CHECKS: dict[str, Check] = {
    "string": _check_string,
    "integer": _check_integer,
    "boolean": _check_boolean,
    "object": _check_object,
}
"""One check per JSON schema ``type`` that the tool table uses."""


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
        else:
            values[name] = CHECKS[prop["type"]](spec.name, name, prop, arguments[name])
    return values
