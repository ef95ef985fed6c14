"""``notedex base``: which base a command line names (a ``.base`` file or a note's
```` ```base ```` block), read with vault/bases.py, run through query/bases (STYLE 1)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from notedex.errors import EXIT_FINDINGS, EXIT_OK, UsageError

if TYPE_CHECKING:
    import argparse
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
    """The base of a ``.base`` file, or of a note's first ```` ```base ```` block."""
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


def base_answer(
    args: argparse.Namespace,
    cfg: Config,
    answer: Callable[..., int],
    emitted_json: Callable[[argparse.Namespace, Any], bool],
    write: Callable[[int, Callable[[], object]], int],
) -> int:
    from notedex.query.bases import render
    from notedex.query.bases.run import checked, listing, run

    if args.list:
        vault = cfg.vault_dir
        return answer(
            args,
            cfg,
            lambda conn: listing(conn, lambda p: load(os.path.join(vault, p), p)),
            render.render_list,
            paths=lambda data: [b["path"] for b in data["bases"]],
        )
    if not args.file:
        raise UsageError("name a .base file or a note with a ```base block (or give --list)")
    disk_path, vault_path = _located(cfg, args.file)
    base = load(disk_path, vault_path or args.file)
    if args.check:
        report = checked(base)
        code = EXIT_FINDINGS if any(v["refuses"] for v in report["views"]) else EXIT_OK

        def show() -> None:
            if not emitted_json(args, report):
                from notedex.query.output import Renderer

                render.render_check(Renderer(cfg.vault_dir), report)

        return write(code, show)
    base.view(args.view)  # an unknown view is a usage error before any indexing work
    return answer(
        args,
        cfg,
        lambda conn: run(conn, base, args.view, this_path=vault_path),
        render.render_base,
        paths=lambda data: [row["path"] for row in data["rows"]],
    )
