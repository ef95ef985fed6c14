"""Which note the user named (``find_note``), and how a command that quotes a note reads it
(``read_note_text``): shared by show, graph, quote, mentions and MCP.

On the mentions path (ARCHITECTURE, the mentions budget), so written with ``os.path`` strings
and no ``typing``, ``pathlib`` or ``sqlite3`` package at run time: ``listing`` (show's module,
with ``json``, ``datetime`` and the outline's dataclasses) would cost ``mentions`` more than
its answer.
"""

from __future__ import annotations

import os

from notedex.errors import UsageError
from notedex.store import one_note
from notedex.vault.files import is_note_name, note_text, over_the_cap, without_note_suffix
from notedex.vault.text import fold, nfc

TYPE_CHECKING = False  # no `typing` on the mentions path (ARCHITECTURE); mypy honours the name
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterator
    from typing import NoReturn

    from notedex.vault.reading import VaultReader

__all__ = ["find_note", "read_note_text"]


def find_note(
    conn: sqlite3.Connection,
    given: str,
    *,
    vault: str | os.PathLike[str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
) -> sqlite3.Row:
    """The note ``given`` names (docs/cli.md, ``show``): with ``vault`` and ``cwd`` (the CLI), a
    file path relative to ``cwd`` or absolute; then a vault path (with or without .md), a title,
    an alias, an id.

    The first form that names a note wins; several notes of one form is an error listing them.
    """
    typed = nfc(given.strip())
    on_disk, outside = (
        _vault_path_of_file(typed, os.fspath(vault), os.fspath(cwd))
        if vault and cwd
        else (None, False)
    )
    if outside:  # a file outside the vault
        if _explicit_file(typed):
            from notedex.error_kinds import NoteNotFound  # a failure's path only

            raise NoteNotFound(f"{given!r} is not inside the vault {os.fspath(vault or '')}")
        on_disk = None
    # As typed first (a backslash is a legal name character on Linux and macOS), then with
    # Windows-style separators; NFC like every stored path (SEMANTICS 1).
    wanted = typed.lstrip("/")
    by_path = None
    for spelling in dict.fromkeys((wanted, wanted.replace("\\", "/"))):
        by_path = one_note.note_by_path(conn, spelling) or one_note.note_by_path(
            conn, spelling + ".md"
        )
        if by_path is not None:
            break
    if on_disk:
        row = one_note.note_by_path(conn, on_disk)
        if row is not None and by_path is not None and row["path"] != by_path["path"]:
            _ambiguous(given, [row, by_path], "give ./ for the file here, or the vault path")
        if row is not None or _explicit_file(typed):
            return row or _not_found(given)
    if by_path is not None:
        return by_path
    for matches in _named(conn, typed):
        if len(matches) > 1:
            _ambiguous(given, matches, "give the path")
        if matches:
            return matches[0]
    return _not_found(given)


def _named(conn: sqlite3.Connection, typed: str) -> Iterator[list[sqlite3.Row]]:
    """The notes ``typed`` names by title, then by alias, then by id: one list per form."""
    yield one_note.notes_by_title(conn, without_note_suffix(typed))
    from notedex.vault.resolve import name_key  # here: a title (the usual form) needs none

    yield one_note.notes_by_alias(conn, name_key(typed), fold(typed))
    yield one_note.notes_by_note_id(conn, typed)


def _explicit_file(typed: str) -> bool:
    """``./x``, ``../x``, ``/abs``, ``~/x``: the user means a file, never a title."""
    return typed.startswith(("./", "../", "/", "~/")) or typed in (".", "..")


def _pure(path: str) -> str:
    """``path`` as ``pathlib`` spells it: no empty or ``.`` parts, no trailing separator."""
    parts = [part for part in path.split(os.sep) if part not in ("", ".")]
    head = os.sep if path.startswith(os.sep) else ""
    return head + os.sep.join(parts) if parts or head else "."


def _vault_path_of_file(typed: str, vault: str, cwd: str) -> tuple[str | None, bool]:
    """(the vault path of the file ``typed`` names from ``cwd`` or absolutely, whether that
    file lies outside the vault).

    (None, False) when no such file exists (and the form is not explicit); (None, True) when it
    exists, or is explicit, but lies outside the vault.
    """
    if not typed:
        return None, False
    path = _pure(os.path.join(cwd, os.path.expanduser(typed)))
    name = os.path.basename(path)
    candidates = [path] if is_note_name(name) or not name else [path + ".md", path]
    found = next((c for c in candidates if os.path.isfile(c)), None)
    if found is None:
        return None, _explicit_file(typed) and _outside(path, vault)
    absolute = os.path.normpath(os.path.abspath(found))
    for base in dict.fromkeys((os.path.abspath(vault), os.path.realpath(vault))):
        for form in dict.fromkeys((absolute, os.path.realpath(absolute))):
            inside = _relative_to(form, base)
            if inside:
                return nfc(inside), False
    return None, True


def _relative_to(path: str, base: str) -> str:
    """``path`` relative to ``base`` (both absolute and normal); "" when not strictly under it."""
    prefix = base if base.endswith(os.sep) else base + os.sep
    return path[len(prefix) :] if path.startswith(prefix) else ""


def _outside(path: str, vault: str) -> bool:
    absolute = os.path.normpath(os.path.abspath(path))
    return not any(
        absolute == base or _relative_to(absolute, base)
        for base in (os.path.abspath(vault), os.path.realpath(vault))
    )


def _ambiguous(given: str, matches: list[sqlite3.Row], advice: str) -> NoReturn:
    listed = ", ".join(m["path"] for m in matches[:10])
    more = f" and {len(matches) - 10} more" if len(matches) > 10 else ""
    raise UsageError(f"{given!r} matches {len(matches)} notes: {listed}{more}; {advice}")


def _not_found(given: str) -> NoReturn:
    from notedex.error_kinds import NoteNotFound  # a failure's path only

    raise NoteNotFound(f"no note matches {given!r}; try `notedex lookup` to search")


def read_note_text(files: VaultReader, path: str, disk_rel: str | None, max_bytes: int) -> str:
    """The text of the note at vault path ``path`` (``disk_rel``: its spelling on disk, when
    another), frontmatter included, read as the indexer reads it: never blocking on a FIFO,
    never loading more than the size cap, and only through a file the symlink policy allows at
    this moment (``vault.reading``), whatever the index says."""
    try:
        raw, info = files.read(disk_rel or path, max_bytes)
    except OSError as exc:
        from notedex.error_kinds import NoteNotFound  # a failure's path only

        raise NoteNotFound(f"cannot read {path}: {exc.strerror or exc}") from exc
    if len(raw) > max_bytes:
        from notedex.error_kinds import NoteNotFound  # a failure's path only

        raise NoteNotFound(f"cannot read {path}: {over_the_cap(info.st_size, max_bytes)}")
    return note_text(raw)
