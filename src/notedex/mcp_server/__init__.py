"""`notedex mcp`: the index as read-only MCP tools and resources over stdio.

The tools (``lookup``, ``search``, ``show``, ``quote``, ``health``, ``scan``, ``status``,
``graph``, ``tasks``) call the same ``query`` functions as the CLI, so a result is the CLI's ``--json``
document plus ``stale`` and, for lists, ``offset``/``limit``/``hasMore``; ``capture`` is listed
only with ``--allow-capture``. The package is split by job: ``tools`` (the tool table and the
argument checks), ``catalog`` (what a server lists: those, ``status``, ``graph``, ``tasks``
and, when allowed, ``capture``), ``handlers`` (``VaultTools``: one call, its connection and deadline),
``resources`` (the notes as resources), ``keeper`` (the background index update), ``paths``
(no note name climbs out of the vault; the reads themselves go through ``vault.reading``) and ``sdk`` (the only module that imports the MCP SDK, and
:func:`serve`). The names below are the package's public surface.
"""

from __future__ import annotations

from notedex.mcp_server.catalog import ALL_TOOL_NAMES, CAPTURE_TOOL, tool_table
from notedex.mcp_server.handlers import DEFAULT_TIMEOUT, REFRESH_WAIT, VaultTools
from notedex.mcp_server.keeper import IndexKeeper
from notedex.mcp_server.paths import refuse_outside_paths
from notedex.mcp_server.sdk import (
    INSTALL_HINT,
    build_server,
    require_sdk,
    result_wire,
    run_tool,
    serve,
)
from notedex.mcp_server.tools import (
    INSTRUCTIONS,
    MAX_LIST_LIMIT,
    TOOL_NAMES,
    TOOLS,
    DeadlineExceeded,
    ToolError,
    ToolSpec,
    check_arguments,
)

__all__ = [
    "ALL_TOOL_NAMES",
    "CAPTURE_TOOL",
    "DEFAULT_TIMEOUT",
    "INSTALL_HINT",
    "INSTRUCTIONS",
    "MAX_LIST_LIMIT",
    "REFRESH_WAIT",
    "TOOLS",
    "TOOL_NAMES",
    "DeadlineExceeded",
    "IndexKeeper",
    "ToolError",
    "ToolSpec",
    "VaultTools",
    "build_server",
    "check_arguments",
    "refuse_outside_paths",
    "require_sdk",
    "result_wire",
    "run_tool",
    "serve",
    "tool_table",
]
