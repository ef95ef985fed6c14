"""The whole tool table a server lists: ``tools.TOOLS``, then ``status``, ``graph`` and
``tasks``, and ``capture`` only when the server was started with ``--allow-capture``.

Kept apart from ``tools`` (the read-only query tools and the argument checks) so that each file
stays one job: this one decides what a server offers, including the one tool that writes.
"""

from __future__ import annotations

from notedex.mcp_server.tools import (
    MAX_BODY_CHARS,
    MAX_LIST_LIMIT,
    TOOLS,
    ToolSpec,
    note_filter_schema,
)
from notedex.mcp_server.tools import _filters as note_filters
from notedex.mcp_server.tools import _object as object_schema
from notedex.mcp_server.tools import _paging as paging

NOTE_ARGUMENT = {
    "type": "string",
    "minLength": 1,
    "maxLength": 1000,
    "description": "A vault-relative path such as 'Projects/Cobra CLI 框架.md', or a note title.",
}
MAX_GRAPH_DEPTH = 3
MAX_GRAPH_NODES = MAX_LIST_LIMIT

MORE_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "status",
        "Index status",
        "Where the vault and the index are, the index's counts (notes, excluded notes, "
        "attachments, links, broken links, errors, warnings), when it was last updated and "
        "whether a daemon keeps it fresh. Same JSON as `notedex status --json`.",
        object_schema({}),
    ),
    ToolSpec(
        "graph",
        "Links around one note",
        "The link graph around one note: the nodes within `depth` hops (links in both "
        "directions, walked through notes only; attachments and broken keys are leaves) and "
        "the edges between them, as in `notedex graph --json`, each node with its `distance`. "
        "At most `maxNodes` nodes, nearest first; `truncated` is true when the cap left some "
        "out (lower `depth` or raise `maxNodes`).",
        object_schema(
            {
                "note": NOTE_ARGUMENT,
                "depth": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_GRAPH_DEPTH,
                    "default": 1,
                    "description": f"Hops from the note (default 1, at most {MAX_GRAPH_DEPTH}).",
                },
                "maxNodes": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_GRAPH_NODES,
                    "default": 100,
                    "description": f"Return at most this many nodes (default 100, at most "
                    f"{MAX_GRAPH_NODES}).",
                },
            },
            ("note",),
        ),
    ),
    ToolSpec(
        "tasks",
        "List tasks",
        "The Markdown tasks of the vault's notes (`- [ ]`, `- [x]`, custom statuses such as "
        "`- [/]`), each with path, line, column, status (the character between the brackets), "
        "state (open; done for x or X; cancelled for -), text as written, tags, and the dates "
        "the Tasks plugin (📅 ⏳ 🛫 ➕ ✅ ❌) or Dataview ([due:: YYYY-MM-DD]) write: due, "
        "scheduled, start, created, done, cancelled. Sorted by due date (none last), then path "
        "and line. Same JSON as `notedex tasks --json`; `taskCount` and `counts` cover every "
        "task selected, `offset`/`limit` page through `tasks`.",
        object_schema(
            {
                "state": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 40,
                    "description": "Only tasks in these states, comma-separated: open, done, "
                    "cancelled (default: all).",
                },
                "status": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 40,
                    "description": "Only tasks with one of these status characters, e.g. '/' or "
                    "'/-' (with `state`: a task that matches either).",
                },
                "dueBefore": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 20,
                    "description": "Only tasks due before this date: YYYY-MM-DD, 'today', 'Nd' "
                    "(N days from today) or '-Nd'.",
                },
                "dueAfter": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 20,
                    "description": "Only tasks due after this date (as dueBefore).",
                },
                **note_filters(),
                **note_filter_schema(),
                **paging(100),
            }
        ),
    ),
)

BASE_TOOL = ToolSpec(
    "base",
    "Run an Obsidian base",
    "Evaluate an Obsidian Bases file (`.base`, or a note's ```base block) over the index: its "
    "filters, formulas, sort, limit, groupBy and summaries. Returns `columns`, `rows` (each "
    "with its `path` and a value per column id), `groups` and `summaries`, as `notedex base "
    "--json`; `offset`/`limit` page through `rows`. With `check`, returns per view what it "
    "evaluates and what it refuses instead. A construct notedex does not implement is an "
    "error naming it, never a guessed answer.",
    object_schema(
        {
            "base": {
                "type": "string",
                "minLength": 1,
                "maxLength": 1000,
                "description": "A vault-relative path such as 'Reading.base' or "
                "'Projects/Board.md' (a note with a ```base block).",
            },
            "view": {
                "type": "string",
                "minLength": 1,
                "maxLength": 200,
                "description": "The view to run, by name (default: the first).",
            },
            "check": {
                "type": "boolean",
                "default": False,
                "description": "Report what each view evaluates and refuses, without running it.",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_LIST_LIMIT,
                "default": 100,
                "description": f"Return at most this many rows (default 100, at most "
                f"{MAX_LIST_LIMIT}).",
            },
            "offset": {
                "type": "integer",
                "minimum": 0,
                "default": 0,
                "description": "Skip this many rows first (default 0).",
            },
        },
        ("base",),
    ),
)
MORE_TOOLS = (*MORE_TOOLS, BASE_TOOL)

PROPERTIES_TOOL = ToolSpec(
    "properties",
    "List properties and their values",
    "Every frontmatter property with its type as Obsidian has it (text, list, number, "
    "checkbox, date, datetime; from .obsidian/types.json when the vault sets one) and how many "
    "notes have it; with `name`, that property's values (list items one by one, text without "
    "case) and the notes with each, most first. Same JSON as `notedex properties [NAME] "
    "--json`; `offset`/`limit` page through the list; `filter` counts the notes it keeps only.",
    object_schema(
        {
            "name": {
                "type": "string",
                "minLength": 1,
                "maxLength": 1000,
                "description": "One property (any case): list its values instead.",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_LIST_LIMIT,
                "default": 200,
                "description": f"Return at most this many items (default 200, at most "
                f"{MAX_LIST_LIMIT}).",
            },
            "offset": {
                "type": "integer",
                "minimum": 0,
                "default": 0,
                "description": "Skip this many items first (default 0).",
            },
            **note_filter_schema(),
        }
    ),
)
MORE_TOOLS = (*MORE_TOOLS, PROPERTIES_TOOL)

MAX_CAPTURE_CHARS = MAX_BODY_CHARS

CAPTURE_TOOL = ToolSpec(
    "capture",
    "Capture a new inbox note",
    "Create a NEW note in the vault's inbox folder from `text` (its first line becomes the "
    "title and the file name). It never changes or overwrites a note and writes nowhere but "
    "the inbox. Same JSON as `notedex capture --json`: the new note's `path` and `id`.",
    object_schema(
        {
            "text": {
                "type": "string",
                "minLength": 1,
                "maxLength": MAX_CAPTURE_CHARS,
                "description": "The note's text (Markdown); the first non-empty line is its title.",
            }
        },
        ("text",),
    ),
    read_only=False,
)


def tool_table(*, allow_capture: bool = False) -> tuple[ToolSpec, ...]:
    """The tools a server lists: the read-only ones, and ``capture`` only when allowed."""
    return TOOLS + MORE_TOOLS + ((CAPTURE_TOOL,) if allow_capture else ())


ALL_TOOL_NAMES = tuple(t.name for t in TOOLS + MORE_TOOLS)
"""The read-only tools, always listed; ``capture`` joins them with ``--allow-capture``."""
