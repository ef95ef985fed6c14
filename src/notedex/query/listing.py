"""`scan`, `graph`, `show` and `status`: read-only answers as JSON-ready dicts.

``show`` also reads a note's lines as numbered in the file (``--lines A-B``), and
``read_note_text`` is how every command that quotes a note reads it from disk.
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
import time
from pathlib import Path
from typing import Any

from notedex.errors import NoteNotFound, UsageError
from notedex.store import read
from notedex.store.connect import LockHolder, lock_holder, read_transaction
from notedex.store.outline import decode_outline
from notedex.store.schema import REBUILD_SUFFIX, SCHEMA_VERSION
from notedex.vault.files import (
    DEFAULT_MAX_BYTES,
    body_start_line,
    file_lines,
    note_text,
    over_the_cap,
    read_capped,
    strip_frontmatter,
)
from notedex.vault.resolve import broken_key
from notedex.vault.text import nfc


def scan(
    conn: sqlite3.Connection, *, tag: str | None = None, note_type: str | None = None
) -> dict[str, Any]:
    with read_transaction(conn):
        rows = read.notes(conn, tag=tag, note_type=note_type)
        ids = [r["file_id"] for r in rows] if (tag or note_type) else None
        tags = read.tags_by_note(conn, ids)
        aliases = read.aliases_by_note(conn, ids)
        errors = read.problems(conn, "error")
    return {
        "notes": [
            {
                "id": r["id"],
                "title": r["title"],
                "type": r["type"],
                "status": r["status"],
                "path": r["path"],
                "tags": tags.get(r["file_id"], []),
                "aliases": aliases.get(r["file_id"], []),
            }
            for r in rows
        ],
        "errors": [{"path": r["path"], "message": r["message"]} for r in errors],
        "noteCount": len(rows),
        "errorCount": len(errors),
    }


def graph(conn: sqlite3.Connection) -> dict[str, Any]:
    with read_transaction(conn):
        note_rows = read.notes(conn)
        edge_rows = read.graph_edges(conn)
    nodes: dict[str, dict[str, str]] = {
        r["path"]: {"id": r["path"], "label": r["title"], "kind": "note"} for r in note_rows
    }
    for r in edge_rows:
        target = r["target"]
        if target is not None and target not in nodes:
            # An attachment, or a note left out by "Excluded files" (it still resolves links):
            # labelled like other nodes, a note by its name without .md, a file by its name.
            if r["target_is_note"]:
                nodes[target] = {"id": target, "label": Path(target).stem, "kind": "note"}
            else:
                nodes[target] = {"id": target, "label": Path(target).name, "kind": "attachment"}
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
                target = key
                while target in nodes:
                    target += " (unresolved)"
                nodes[target] = {"id": target, "label": key, "kind": "unresolved"}
                unresolved[key] = target
        edge = edges.setdefault(
            (r["source"], target), {"source": r["source"], "target": target, "count": 0}
        )
        edge["count"] += r["count"]
    return {"nodes": list(nodes.values()), "edges": list(edges.values())}


def find_note(conn: sqlite3.Connection, path_or_title: str) -> sqlite3.Row:
    """A note by vault path (with or without .md) or by title; ambiguity is an error."""
    # As typed first (a backslash is a legal name character on Linux and macOS), then with
    # Windows-style separators; NFC like every stored path (SEMANTICS 1).
    typed = nfc(path_or_title.strip()).lstrip("/")
    spellings = dict.fromkeys((typed, typed.replace("\\", "/")))
    for wanted in spellings:
        row = read.note_by_path(conn, wanted) or read.note_by_path(conn, wanted + ".md")
        if row is not None:
            return row
    matches = read.notes_by_title(conn, typed.removesuffix(".md"))
    if not matches:
        raise NoteNotFound(f"no note matches {path_or_title!r}; try `notedex lookup` to search")
    if len(matches) > 1:
        listed = ", ".join(m["path"] for m in matches[:10])
        raise UsageError(f"{path_or_title!r} matches {len(matches)} notes: {listed}; give the path")
    return matches[0]


def show(
    conn: sqlite3.Connection,
    vault: Path,
    path_or_title: str,
    *,
    body: bool = False,
    lines: tuple[int, int | None] | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> dict[str, Any]:
    """One note's document; ``body`` adds its text, ``lines`` (``parse_line_range``) the body's
    lines in that range, both with ``bodyStartLine`` so a reader can number lines itself."""
    with read_transaction(conn):
        row = find_note(conn, path_or_title)
        file_id = row["file_id"]
        tags = read.tags_by_note(conn, [file_id]).get(file_id, [])
        aliases = read.aliases_by_note(conn, [file_id]).get(file_id, [])
        links = read.outgoing_links(conn, file_id)
        back = read.backlinks(conn, file_id)
        problems = read.note_problems(conn, row["path"])
        headings, block_ids = decode_outline(read.note_outline(conn, file_id))
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
        "warnings": [
            {"path": row["path"], "message": p["message"]}
            for p in problems
            if p["severity"] == "warning"
        ],
    }
    if body or lines is not None:
        text = read_note_text(vault / (row["disk_rel"] or row["path"]), row["path"], max_bytes)
        start = body_start_line(text)
        if body:
            result["body"] = strip_frontmatter(text)
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


def read_note_text(disk: Path, path: str, max_bytes: int) -> str:
    """A note's whole text, frontmatter included, read as the indexer reads it: never blocking
    on a FIFO, never loading more than the size cap."""
    try:
        raw, info = read_capped(disk, max_bytes)
    except OSError as exc:
        raise NoteNotFound(f"cannot read {path}: {exc.strerror or exc}") from exc
    if len(raw) > max_bytes:
        raise NoteNotFound(f"cannot read {path}: {over_the_cap(info.st_size, max_bytes)}")
    return note_text(raw)


def iso_from_ns(ns: int | None) -> str | None:
    if ns is None:
        return None
    return dt.datetime.fromtimestamp(ns / 1e9, tz=dt.UTC).isoformat(timespec="seconds")


def status(conn: sqlite3.Connection, vault: Path, db: Path, lock_path: Path) -> dict[str, Any]:
    with read_transaction(conn):
        info = read.meta(conn)
        totals = read.counts(conn)
    holder = lock_holder(lock_path)
    daemon = holder is not None and holder.role == "daemon"
    last_indexed = float(info["last_indexed"]) if "last_indexed" in info else None
    last_batch = float(info["last_batch"]) if "last_batch" in info else None
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
        },
        "dbBytes": _size(db) + _size(db.with_name(db.name + "-wal")),
        "rebuilding": rebuilding(db, holder),
    }


def rebuilding(db: Path, holder: LockHolder | None) -> bool:
    """A full index is being built to be swapped in (store.swap): its file exists and a live
    writer holds the lock (a build file left by a killed writer does not count)."""
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
