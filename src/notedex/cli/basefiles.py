"""``notedex base``: which base a command line names (a ``.base`` file or a note's
```` ```base ```` block), read with vault/bases.py, run through query/bases (STYLE 1)."""

from __future__ import annotations

import os

from notedex.errors import UsageError

TYPE_CHECKING = False  # no `typing` on the base path (design/bases.md); mypy honours the name
if TYPE_CHECKING:
    import argparse
    import sqlite3
    from collections.abc import Callable
    from typing import Any

    from notedex.config import Config
    from notedex.query.bases.run import Base


def _located(cfg: Config, name: str) -> tuple[str, str | None]:
    """The file's path on disk and its vault path (None outside the vault)."""
    vault = os.path.realpath(cfg.vault_dir)
    candidates = [name] if os.path.isabs(name) else [name, os.path.join(vault, name)]
    for candidate in candidates:
        if os.path.isfile(candidate):
            real = os.path.realpath(candidate)
            inside = real.startswith(vault + os.sep)
            return candidate, os.path.relpath(real, vault).replace(os.sep, "/") if inside else None
    raise UsageError(f"no such base file: {name}")


def load(disk_path: str, shown: str) -> Base:
    """The base of a ``.base`` file, or of a note's first ```` ```base ```` block, parsed now
    (PyYAML): for a file the index has no current copy of."""
    from notedex.query.bases.run import Base
    from notedex.vault.bases import BadBase, base_document

    try:
        with open(disk_path, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {shown}: {exc}") from None
    try:
        return Base(base_document(text, note=not disk_path.lower().endswith(".base")), shown)
    except BadBase as exc:
        raise UsageError(f"{shown}: {exc}") from None


def _unchanged(disk_path: str, size: int, mtime_ns: int) -> bool:
    try:
        info = os.stat(disk_path)
    except OSError:
        return False
    return (info.st_size, info.st_mtime_ns) == (size, mtime_ns)


def base_of(conn: sqlite3.Connection, disk_path: str, vault_path: str | None, shown: str) -> Base:
    """The base a file holds: the index's copy of a ``.base`` file when it is the file on disk
    now (same size and mtime: no YAML parser is loaded), else the file parsed now."""
    from notedex.query.bases.run import Base
    from notedex.store.bases import stored_base
    from notedex.vault.files import _json_loads  # json's C scanner: no `json`, no `re`

    row = None
    if vault_path is not None and vault_path.lower().endswith(".base"):
        row = stored_base(conn, vault_path)
    if row is not None and _unchanged(disk_path, row["size"], row["mtime_ns"]):
        if row["error"] is not None:
            raise UsageError(f"{shown}: {row['error']}")
        return Base(_json_loads(row["doc"]), shown)
    return load(disk_path, shown)


def base_answer(
    args: argparse.Namespace,
    cfg: Config,
    answer: Callable[..., int],
) -> int:
    from notedex.query.bases import render
    from notedex.query.bases.run import checked, listing, run

    if args.list:
        vault = cfg.vault_dir
        return answer(
            args,
            cfg,
            lambda conn: listing(conn, lambda p: base_of(conn, os.path.join(vault, p), p, p)),
            render.render_list,
            paths=lambda data: [b["path"] for b in data["bases"]],
        )
    if not args.file:
        raise UsageError("name a .base file or a note with a ```base block (or give --list)")
    disk_path, vault_path = _located(cfg, args.file)
    shown = vault_path or args.file
    if args.check:
        return answer(
            args,
            cfg,
            lambda conn: checked(base_of(conn, disk_path, vault_path, shown)),
            render.render_check,
            findings=lambda data: any(v["refuses"] for v in data["views"]),
        )

    from notedex.vault.properties import declared_types

    declared = declared_types(cfg.vault_dir)  # SEMANTICS 14.4, as the note filter reads them

    def query(conn: sqlite3.Connection) -> dict[str, Any]:
        base = base_of(conn, disk_path, vault_path, shown)
        return run(conn, base, args.view, this_path=vault_path, declared=declared)

    return answer(
        args,
        cfg,
        query,
        render.render_base,
        paths=lambda data: [row["path"] for row in data["rows"]],
    )
