"""Fix suggestions for broken links (issue 12): the link Obsidian would write to a file, and
which reason applies. Pure functions over paths, no I/O (STYLE 9); never applied, since
notedex never writes the vault."""

from __future__ import annotations

from collections.abc import Sequence

from notedex.vault.files import is_note_name
from notedex.vault.resolve import file_name_key, file_stem_key

__all__ = ["link_to", "same_name"]


def same_name(path: str, key: str) -> bool:
    """Whether ``path`` is filed under the link key ``key`` (its name, or a note's stem)."""
    return key in (file_name_key(path), file_stem_key(path))


def link_to(path: str, others: Sequence[str], display: str | None = None) -> str:
    """``[[Name]]`` when no other file in ``others`` shares the name (Obsidian's shortest
    form), else ``[[Folder/Name]]``; a note without ``.md``; ``display`` kept after ``|``."""
    is_note = is_note_name(path.rpartition("/")[2])
    target = path[:-3] if is_note else path
    name = target.rpartition("/")[2]
    key = file_stem_key(path) if is_note else file_name_key(path)
    shared = any(other != path and key is not None and same_name(other, key) for other in others)
    bar = "" if display is None else "|" + display
    return f"[[{target if shared else name}{bar}]]"
