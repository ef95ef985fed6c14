"""Path safety for the MCP tools: an agent's note name stays inside the vault.

A note name is refused before any lookup when it is absolute, climbs out with ``..`` or starts
at ``~``. A note that is found is read through ``vault.reading``, which refuses a file outside
the vault (a symlink that leads out) at the moment of the read, so no text from outside the
vault reaches the client, whatever the index says.
"""

from __future__ import annotations

import os
import re

from notedex.mcp_server.tools import ToolError

# A drive letter makes a Windows path absolute, which os.path.isabs misses on POSIX.
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
