"""Which event hints a path-by-path update cannot settle alone (issue 13.9).

An event names one path; some facts live elsewhere. ``other_names`` adds the other names of a
file an event named (hard links, and symlinks to it, share its inode: an edit through one name
changes them all). ``needs_vault_walk`` says when only the vault-wide walk can tell, because
what changed is a walk problem (SEMANTICS 1.4-1.6) that the walk records for the whole vault:
a file name that is not UTF-8, a hinted path or folder that holds a walk problem (a loop, a
FIFO, a dangling symlink that was removed), a dangling symlink whose target now exists, a new
NFC twin. The daemon then runs the incremental reconcile instead of ``apply_paths``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from notedex.indexing.reconcile import _at_or_under  # the one "at or under" rule of the diff
from notedex.store.writer import IndexWriter
from notedex.vault.text import nfc
from notedex.vault.walk import DANGLING_MESSAGE, has_nfc_twin, is_storable_name


def other_names(writer: IndexWriter, hints: Sequence[str]) -> list[str]:
    """``hints`` and, after them, the other names of the indexed files they name."""
    storable = [nfc(hint) for hint in hints if is_storable_name(hint)]
    seen = set(hints)
    return [*hints, *(name for name in writer.other_names(storable) if name not in seen)]


def needs_vault_walk(writer: IndexWriter, hints: Sequence[str]) -> str | None:
    """Why only the vault-wide walk can settle ``hints``, or None."""
    vault = os.fspath(writer.vault)
    by_folder: dict[str, list[str]] = {}
    for hint in hints:
        if not is_storable_name(hint):
            return "a file name that is not valid UTF-8"
        folder, _, name = hint.strip("/").rpartition("/")
        by_folder.setdefault(folder, []).append(name)
    for folder, names in by_folder.items():
        if has_nfc_twin(os.path.join(vault, folder), names):
            return "two names with one NFC form"
    problems = writer.walk_problems()
    if not problems:
        return None
    tops = {nfc(hint.strip("/")) for hint in hints}
    for path, message in problems.items():
        if _at_or_under(path, tops):
            return "a path with a walk problem changed"
        if message == DANGLING_MESSAGE and os.path.exists(os.path.join(vault, path)):
            return "a dangling symlink's target appeared"
    return None
