"""Path safety for the MCP tools: ``show`` and ``search`` give out text only from inside the vault.

An agent's note name is refused before any lookup when it is absolute, climbs out with ``..`` or
starts at ``~``; a note that is found is refused when its real file lies outside the vault (a
symlink that leads out), so no text from outside the vault reaches the client.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

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


def check_inside_vault(vault: Path, disk_rel: str, path: str, *, follow_symlinks: bool) -> None:
    """Refuse a note whose real file is outside the vault (a symlink that leads out), unless
    ``follow_symlinks`` (the setting) let the index follow it: search and show then agree."""
    if follow_symlinks:
        return
    root = os.path.realpath(vault)
    real = os.path.realpath(os.path.join(root, disk_rel))
    if os.path.commonpath([root, real]) != root:
        raise ToolError(f"refused {path!r}: it is a symlink to a file outside the vault")
