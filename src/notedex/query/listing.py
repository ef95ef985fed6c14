"""`scan`, `graph`, `show` and `status`: read-only answers as JSON-ready dicts.

``show`` also reads a note's lines as numbered in the file (``--lines A-B``). Which note a
command names (``find_note``) and how it reads it (``read_note_text``) live in ``query.find``.
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
import time

from notedex.errors import UsageError
from notedex.query.filters import EVERY_NOTE, NoteFilter
from notedex.query.find import find_note, read_note_text
from notedex.query.stream_scan import scan_entry, scan_error
from notedex.store import one_note, read
from notedex.store.connect import REBUILDING, LockHolder, lock_holder, read_transaction
from notedex.store.schema import REBUILD_SUFFIX, SCHEMA_VERSION
from notedex.vault.files import (
    DEFAULT_MAX_BYTES,
    body_start_line,
    file_lines,
    strip_frontmatter,
)
from notedex.vault.reading import VaultReader

TYPE_CHECKING = False  # no `typing` (3 ms) or `pathlib` (3 ms) on the query path; mypy honours it
if TYPE_CHECKING:
    from collections.abc import Container
    from pathlib import Path
    from typing import Any


def scan(
    conn: sqlite3.Connection, nf: NoteFilter | None = None, *, limit: int | None = None
) -> dict[str, Any]:
    """Every note ``nf`` keeps, in its order (path by default); ``limit`` stops the read."""
    nf = nf or EVERY_NOTE
    with read_transaction(conn):
        rows = read.notes_in_path_order(conn, nf, limit=limit).fetchall()
        ids = [r["file_id"] for r in rows] if (nf.active or limit is not None) else None
        tags = read.tags_by_note(conn, ids)
        aliases = read.aliases_by_note(conn, ids)
        errors = read.problems(conn, "error")
    return {
        "notes": [
            scan_entry(r, tags.get(r["file_id"], []), aliases.get(r["file_id"], [])) for r in rows
        ],
        "errors": [scan_error(r) for r in errors],
        "noteCount": len(rows),
        "errorCount": len(errors),
    }


def recent(
    conn: sqlite3.Connection, nf: NoteFilter | None = None, *, limit: int = 20
) -> dict[str, Any]:
    """The notes ``nf`` keeps by modification time, newest first (``--reverse``: oldest first;
    a ``--sort`` of its own wins), at most ``limit``, each with its ``modified`` time (UTC)."""
    nf = nf or EVERY_NOTE
    if nf.sort is None:
        nf = nf.replace(sort="modified", reverse=not nf.reverse)
    data = scan(conn, nf, limit=limit)
    with read_transaction(conn):
        times = {r["path"]: r["mtime_ns"] for r in read.notes_in_path_order(conn, nf, limit=limit)}
    for entry in data["notes"]:
        seconds = times[entry["path"]] / 1e9
        entry["modified"] = (
            dt.datetime.fromtimestamp(seconds, dt.UTC).isoformat(timespec="seconds")
        ).replace("+00:00", "Z")
    return {"notes": data["notes"], "noteCount": len(data["notes"])}


def graph(conn: sqlite3.Connection, nf: NoteFilter | None = None) -> dict[str, Any]:
    """The link graph; with an active ``nf``, of the notes it keeps and what they link to."""
    from notedex.store import graph_rows
    from notedex.vault.resolve import broken_key  # graph and show only (its NamedTuple: typing)

    nf = nf or EVERY_NOTE
    with read_transaction(conn):
        note_rows = read.notes(conn, nf)
        edge_rows = graph_rows.graph_edges(conn)
    if nf.active:
        kept = {r["path"] for r in note_rows}
        edge_rows = [r for r in edge_rows if r["source"] in kept]
    nodes: dict[str, dict[str, str]] = {
        r["path"]: {"id": r["path"], "label": r["title"], "kind": "note"} for r in note_rows
    }
    for r in edge_rows:
        target = r["target"]
        if target is not None and target not in nodes:
            nodes[target] = linked_file_node(target, bool(r["target_is_note"]))
    # An unresolved key can spell a file's path ([[Gone.md.md]] has the key Gone.md): its node
    # gets an id of its own, so a broken link never looks like an edge to that file.
    unresolved: dict[str, str] = {}
    # One edge per (source, target) node pair: [[Foo]] and [[Foo.md]] share the broken key Foo.
    edges: dict[tuple[str, str], dict[str, Any]] = {}
    for r in edge_rows:
        target = r["target"]
        if target is None:
            key = broken_key(r["linkpath"])
            target = unresolved.get(key)
            if target is None:
                target = unresolved_node_id(key, nodes)
                nodes[target] = {"id": target, "label": key, "kind": "unresolved"}
                unresolved[key] = target
        edge = edges.setdefault(
            (r["source"], target), {"source": r["source"], "target": target, "count": 0}
        )
        edge["count"] += r["count"]
    return {"nodes": list(nodes.values()), "edges": list(edges.values())}


def linked_file_node(target: str, is_note: bool) -> dict[str, str]:
    """The graph node of a link target that is not a listed note: an attachment, or a note
    left out by "Excluded files" (it still resolves links), a note labelled by its name without
    .md, a file by its name."""
    name = target.rpartition("/")[2]
    if is_note:
        dot = name.rfind(".")  # pathlib's stem: a leading or trailing dot stays
        return {
            "id": target,
            "label": name[:dot] if 0 < dot < len(name) - 1 else name,
            "kind": "note",
        }
    return {"id": target, "label": name, "kind": "attachment"}


def unresolved_node_id(key: str, taken: Container[str]) -> str:
    """The node id of a broken key: the key, with " (unresolved)" until no file node has it."""
    node_id = key
    while node_id in taken:
        node_id += " (unresolved)"
    return node_id


def show(
    conn: sqlite3.Connection,
    vault: Path,
    path_or_title: str,
    *,
    body: bool = False,
    lines: tuple[int, int | None] | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    body_bytes: int | None = None,
    cwd: Path | None = None,
    follow_symlinks: bool = False,
) -> dict[str, Any]:
    """One note's document; ``body`` adds its text (at most ``body_bytes`` of UTF-8, then
    ``truncated``), ``lines`` (``parse_line_range``) the body's lines in that range, both with
    ``bodyStartLine`` so a reader can number lines itself. ``cwd``: see ``find_note``;
    ``follow_symlinks``: the setting, for the read (``vault.reading``)."""
    from notedex.vault.resolve import broken_key  # graph and show only (its NamedTuple: typing)

    with read_transaction(conn):
        row = find_note(conn, path_or_title, vault=vault, cwd=cwd)
        file_id = row["file_id"]
        tags = read.tags_by_note(conn, [file_id]).get(file_id, [])
        aliases = read.aliases_by_note(conn, [file_id]).get(file_id, [])
        links = one_note.outgoing_links(conn, file_id)
        back = one_note.backlinks(conn, file_id)
        problems = one_note.note_problems(conn, row["path"])
        unread = one_note.unread_above(conn, row["path"])
        # Only `show` decodes an outline: its model's dataclasses cost `scan --sort`, `recent`,
        # `graph` and `status` about 10 ms of imports they never use.
        from notedex.store.outline import decode_outline

        headings, block_ids = decode_outline(one_note.note_outline(conn, file_id))
    result: dict[str, Any] = {
        "path": row["path"],
        "title": row["title"],
        "id": row["id"],
        "type": row["type"],
        "status": row["status"],
        "stem": row["stem"],
        "frontmatterTitle": row["frontmatter_title"],
        "firstH1": row["first_h1"],
        "tags": tags,
        "aliases": aliases,
        "properties": json.loads(row["properties"]) if row["properties"] else {},
        "modified": iso_from_ns(row["mtime_ns"]),
        "size": row["size"],
        "links": [
            {
                "kind": r["kind"],
                "text": r["raw"],
                "line": r["line"],
                "column": r["column"],
                "target": r["target"],
                "broken": r["target"] is None and bool(r["linkpath"]),
                "key": broken_key(r["linkpath"]) if r["target"] is None and r["linkpath"] else None,
            }
            for r in links
        ],
        "backlinks": [
            {"source": r["source"], "line": r["line"], "column": r["column"], "text": r["raw"]}
            for r in back
        ],
        "headings": [
            {"level": h.level, "text": h.text, "line": h.line, "column": h.column} for h in headings
        ],
        "blockIds": [{"id": b.id, "line": b.line, "column": b.column} for b in block_ids],
        "errors": [
            {"path": row["path"], "message": p["message"]}
            for p in problems
            if p["severity"] == "error"
        ],
        "possiblyStale": bool(unread),
        "staleBecause": [{"path": p["path"], "message": p["message"]} for p in unread],
        "warnings": [
            {"path": row["path"], "message": p["message"]}
            for p in problems
            if p["severity"] == "warning"
        ],
    }
    if body or lines is not None:
        files = VaultReader(vault, follow_outside=follow_symlinks)
        text = read_note_text(files, row["path"], row["disk_rel"], max_bytes)
        start = body_start_line(text)
        if body:
            result["body"], result["truncated"] = capped_text(strip_frontmatter(text), body_bytes)
        result["bodyStartLine"] = start
        if lines is not None:
            numbered = file_lines(text)
            first, last = max(lines[0], start), len(numbered) if lines[1] is None else lines[1]
            result["lineCount"] = len(numbered)
            result["lines"] = [
                {"line": n, "text": numbered[n - 1]}
                for n in range(first, min(last, len(numbered)) + 1)
            ]
    return result


def indexed_ids(db_file: str, prefix: str) -> list[str]:
    """The ids of the index that start with ``prefix``; none without a readable index."""
    from notedex.error_kinds import IndexUnavailable
    from notedex.store.connect import connect_readonly

    try:
        conn = connect_readonly(db_file)
    except IndexUnavailable:
        return []
    with conn:
        return one_note.note_ids_with_prefix(conn, prefix)


def capped_text(text: str, cap: int | None) -> tuple[str, bool]:
    """``text`` cut to at most ``cap`` bytes of UTF-8 (never inside a character), and whether
    it was cut; ``None`` is no cap."""
    if cap is None or len(text) * 4 <= cap:
        return text, False
    data = text.encode("utf-8", "replace")
    if len(data) <= cap:
        return text, False
    return data[:cap].decode("utf-8", "ignore"), True


def parse_line_range(text: str) -> tuple[int, int | None]:
    """``"12"``, ``"12-20"`` or ``"12-"`` (to the end) -> (first, last or None).

    Lines are 1-based and counted as in the file; anything else is a usage error (exit 2).
    """
    first, dash, last = text.strip().partition("-")
    try:
        low = int(first)
        high = (int(last) if last.strip() else None) if dash else low
    except ValueError:
        raise UsageError(
            f"bad line range {text!r}: use A-B, A or A- with whole numbers, e.g. 12-20"
        ) from None
    if low < 1:
        raise UsageError(f"bad line range {text!r}: lines start at 1")
    if high is not None and high < low:
        raise UsageError(f"bad line range {text!r}: the last line {high} is before the first {low}")
    return low, high


def lines_left_out(data: dict[str, Any], wanted: tuple[int, int | None]) -> list[str]:
    """What ``show --lines`` could not show of ``wanted``, one sentence each: the lines of the
    frontmatter, the lines past the end (issue 34; docs/cli.md "show ... --lines")."""
    first, last = wanted
    start, count, path = data["bodyStartLine"], data["lineCount"], data["path"]
    said = []
    if first < start:
        upto = start - 1 if last is None else min(last, start - 1)
        said.append(
            f"{_span(first, upto)} of {path} {'is' if first == upto else 'are'} its frontmatter "
            f"(lines 1-{start - 1}); the body starts at line {start}"
        )
    if last is not None and last > count:
        low = max(first, count + 1)
        said.append(
            f"{path} has {count} line{'s' if count != 1 else ''}: {_span(low, last)} "
            f"{'is' if low == last else 'are'} past its end"
        )
    elif last is None and first > count:
        said.append(
            f"{path} has {count} line{'s' if count != 1 else ''}: line {first} is past its end"
        )
    return said


def _span(first: int, last: int) -> str:
    return f"line {first}" if first == last else f"lines {first}-{last}"


def iso_from_ns(ns: int | None) -> str | None:
    if ns is None:
        return None
    return dt.datetime.fromtimestamp(ns / 1e9, tz=dt.UTC).isoformat(timespec="seconds")


def status(
    conn: sqlite3.Connection,
    vault: Path,
    db: Path,
    lock_path: Path,
    *,
    checked_at: float | None = None,
) -> dict[str, Any]:
    """``checked_at``: when this command's refresh found the index matching the vault; then
    ``lastIndexed`` is that moment, not the last write (docs/cli.md, ``status``)."""
    with read_transaction(conn):
        info = read.meta(conn)
        totals = read.counts(conn)
    holder = lock_holder(lock_path)
    daemon = holder is not None and holder.role == "daemon"
    last_indexed = float(info["last_indexed"]) if "last_indexed" in info else None
    if checked_at is not None:
        last_indexed = max(last_indexed or checked_at, checked_at)
    last_batch = float(info["last_batch"]) if "last_batch" in info else None
    unwatched = _unwatched(info.get("unwatched_folders")) if daemon else None
    return {
        "vault": str(vault),
        "db": str(db),
        "schemaVersion": SCHEMA_VERSION,
        "counts": totals,
        "lastIndexed": _iso(last_indexed),
        "lastBatch": _iso(last_batch),
        "secondsSinceIndexed": round(time.time() - last_indexed, 1) if last_indexed else None,
        "daemon": {
            "running": daemon,
            "pid": holder.pid if holder and daemon else None,
            "since": _iso(holder.since) if holder and daemon else None,
            "foldersNotWatched": unwatched["count"] if unwatched is not None else None,
            "notWatchedSample": unwatched["sample"] if unwatched is not None else [],
        },
        "dbBytes": _size(db) + _size(db.with_name(db.name + "-wal")),
        "rebuilding": rebuilding(db, holder),
    }


def _unwatched(raw: str | None) -> dict[str, Any]:
    """The running daemon's folders without a watch (meta ``unwatched_folders``, written by
    ``daemon.indexer``): ``{"count", "sample"}``; 0 before its first batch wrote it."""
    try:
        data = json.loads(raw) if raw else {}
        return {"count": int(data["count"]), "sample": [str(p) for p in data["sample"]]}
    except (ValueError, TypeError, KeyError):
        return {"count": 0, "sample": []}


def rebuilding(db: Path, holder: LockHolder | None) -> bool:
    """A full index is being built to be swapped in (store.swap): its file exists and a live
    writer holds the lock (a build file left by a killed writer does not count); or a daemon
    repairs or rebuilds the index in place (its lock record says so)."""
    if holder is not None and holder.state == REBUILDING:
        return True
    return holder is not None and db.with_name(db.name + REBUILD_SUFFIX).exists()


def _iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return dt.datetime.fromtimestamp(ts, tz=dt.UTC).isoformat(timespec="seconds")


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
