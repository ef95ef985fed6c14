"""The handlers of the commands that write the vault (ARCHITECTURE "Writing the vault"):
`capture`, `fix` and `mv`, and what `fix` and `mv` do with the index after writing. Off the
query path: these commands load ``typing`` anyway.
"""

import sys
from typing import TYPE_CHECKING

from notedex.cli.handlers import (
    _answered,
    _config,
    _emitted_json,
    _output,
    _reported,
    _usage,
    _write,
    refresh,
)
from notedex.errors import EXIT_FINDINGS, EXIT_OK, NotedexError

if TYPE_CHECKING:
    import argparse
    import sqlite3
    from typing import Any

    from notedex.config import Config

# The handlers the command table names (``cli.commands.Command.handler``).
__all__ = ["cmd_capture", "cmd_fix", "cmd_mv"]


def cmd_capture(args: "argparse.Namespace") -> int:
    from notedex.edit.capture import capture
    from notedex.errors import UsageError
    from notedex.query.listing import indexed_ids
    from notedex.query.render import render_captured

    cfg = _config(args)
    # stdin may hold any bytes: undecodable ones become U+FFFD rather than a crash.
    text = sys.stdin.buffer.read().decode("utf-8", "replace") if args.text == "-" else args.text
    if not text.strip():
        raise UsageError("capture needs some text")
    try:
        captured = capture(
            cfg.vault,
            cfg.inbox,
            text,
            indexed_ids=lambda prefix: indexed_ids(cfg.db_file, prefix),
        )
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot capture into {cfg.inbox}: {exc}") from exc
    if not args.no_refresh:
        try:
            refresh(cfg)
        except NotedexError as exc:
            # The note exists now: its path must still reach the caller.
            print(
                f"notedex: warning: captured, but the index was not updated: {exc}", file=sys.stderr
            )
    _output(args, cfg, {"path": captured.path, "id": captured.id}, render_captured)
    return EXIT_OK


def cmd_fix(args: "argparse.Namespace") -> int:
    """`fix`: the plan (edit.fix), its diff or its writes, then the index refreshed (exit 1:
    something to fix without --apply, or a file skipped with it; docs/cli.md)."""
    from notedex.edit.fix import CODES, apply, plan_fixes
    from notedex.edit.safewrite import VaultWriter
    from notedex.vault.fixes import SUGGESTION_THRESHOLD

    cfg = _config(args)
    least = SUGGESTION_THRESHOLD if args.min_confidence is None else args.min_confidence
    if not 0 <= least <= 1:
        raise _usage(f"--min-confidence must be between 0 and 1, not {least}")
    only = CODES if args.only is None else (args.only,)
    plan = _answered(
        cfg,
        args,
        lambda conn: plan_fixes(
            conn, cfg.vault_dir, only=only, path_glob=args.path, min_confidence=least
        ),
    )
    data: dict[str, Any] = {
        "applied": bool(args.apply),
        "edits": [edit.as_json() for edit in plan.edits],
        "files": [file.source for file in plan.files],
        "written": [],
        "skipped": plan.skipped,
        "changed": [],
    }
    code = EXIT_FINDINGS if plan.files and not args.apply else EXIT_OK
    if args.apply and plan.files:
        written, changed = apply(plan, VaultWriter(cfg.vault_dir))
        data["written"], data["changed"] = written, changed
        if changed:
            code = EXIT_FINDINGS
        if written and not args.no_refresh:
            try:
                refresh(cfg)
            except NotedexError as exc:
                print(
                    f"notedex: warning: fixed, but the index was not updated: {exc}",
                    file=sys.stderr,
                )
    for skip in plan.skipped:
        print(
            f"notedex: skipped {skip['source']}:{skip['line']}:{skip['column']}: {skip['reason']}",
            file=sys.stderr,
        )
    for skip in data["changed"]:
        print(f"notedex: not written {skip['path']}: {skip['reason']}", file=sys.stderr)
    if not args.apply:
        data["diff"] = plan.diff()

    def text() -> None:
        if not args.apply:
            sys.stdout.write(data["diff"])
            return
        for path in data["written"]:
            edits = sum(1 for edit in plan.edits if edit.source == path)
            print(f"fixed {path} ({edits} link{'s' if edits != 1 else ''})")

    def output() -> None:
        if not _emitted_json(args, data):
            text()

    return _write(code, output)


def _broken_total(conn: "sqlite3.Connection") -> int:
    from notedex.query.reports import broken_count

    return broken_count(conn)


def cmd_mv(args: "argparse.Namespace") -> int:
    """`mv`: the plan (edit.move), the moves and their diff, or the move, the index refreshed,
    and health's broken links and anchors compared (exit 1 when one more broke; docs/cli.md)."""
    from notedex.edit.move import MoveError, carry_out, plan_move
    from notedex.vault.reading import OutsideVault

    cfg = _config(args)

    def plan_and_count(conn: "sqlite3.Connection") -> "Any":
        return plan_move(conn, cfg.vault_dir, args.src, args.dst), _broken_total(conn)

    try:
        plan, broken_before = _answered(cfg, args, plan_and_count)
    except (MoveError, OutsideVault) as exc:
        raise _usage(f"cannot move {args.src}: {exc}") from exc
    data: dict[str, Any] = {
        "dryRun": bool(args.dry_run),
        "moves": [{"from": old, "to": new} for old, new in plan.moves],
        "files": [item.source for item in plan.rewrites],
        "links": sum(item.links for item in plan.rewrites),
        "written": [],
        "changed": [],
        "skipped": plan.skipped,
    }
    for skip in plan.skipped:
        print(f"notedex: skipped a link in {skip['source']}: {skip['reason']}", file=sys.stderr)
    code = EXIT_OK
    if args.dry_run:
        data["diff"] = plan.diff()
    else:
        try:
            written, changed = carry_out(plan, cfg.vault_dir)
        except (OSError, OutsideVault) as exc:
            raise _usage(f"cannot move {args.src}: {exc}") from exc
        data["written"], data["changed"] = written, changed
        for skip in changed:
            print(f"notedex: not written {skip['path']}: {skip['reason']}", file=sys.stderr)
        after = _answered(cfg, _after_move(cfg, args, [*plan.top, *written]), _broken_total)
        data["newBroken"] = max(0, after - broken_before)
        if changed or data["newBroken"]:
            code = EXIT_FINDINGS

    def text() -> None:
        if args.dry_run:
            for move in data["moves"]:
                print(f"{move['from']} -> {move['to']}")
            sys.stdout.write(data["diff"])
            return
        print(
            f"moved {len(data['moves'])} file{'s' if len(data['moves']) != 1 else ''}; "
            f"rewrote {data['links']} link{'s' if data['links'] != 1 else ''} in "
            f"{len(data['written'])} file{'s' if len(data['written']) != 1 else ''}"
        )
        for path in data["written"]:
            print(f"  {path}")
        if data["newBroken"]:
            print(f"{data['newBroken']} more broken links or anchors than before: see health")
        else:
            print("no new broken link or anchor")

    def output() -> None:
        if not _emitted_json(args, data):
            text()

    return _write(code, output)


def _after_move(
    cfg: "Config", args: "argparse.Namespace", paths: list[str]
) -> "argparse.Namespace":
    """The index brought in line for the paths `mv` moved and wrote (indexing.freshness
    .apply_written: the cost of the changed files, not a walk of the vault), and ``args`` for
    the query after it: without its refresh when that was done, else as they were (the
    query's own check then runs)."""
    import argparse

    from notedex.indexing.freshness import APPLIED, apply_written

    if getattr(args, "no_refresh", False):
        return args
    fresh = apply_written(cfg, paths)
    _reported(fresh.report, fresh.notices)
    if fresh.state != APPLIED:
        return args
    return argparse.Namespace(**{**vars(args), "no_refresh": True})
