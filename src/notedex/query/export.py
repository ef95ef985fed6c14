"""`notedex export --format connector-v1`: the vault as a RecallNest connector-v1 document.

One record per reportable note (Obsidian-excluded files are left out, as in every report):
``id`` ``obsidian:<path>``, ``title`` the stem, ``text`` the body without frontmatter, ``tags``
(frontmatter and inline tags, ``link:<target path or broken key>`` per referenced target,
``folder:<folder>``), ``timestamp`` (mtime), ``contentHash`` (first 16 hex digits of the
sha256 of the raw file) and ``sourceMetadata`` (``relativePath``, ``frontmatter``).

Frontmatter comes from the index (``notes.properties``, already JSON); only the text and hash
are read from disk, so the query path never needs the YAML stack.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
import sqlite3
import sys
from pathlib import Path
from typing import Any

from notedex.errors import UsageError
from notedex.query.filters import NoteFilter
from notedex.store import fulltext, read
from notedex.store.connect import read_transaction
from notedex.vault.files import (
    DEFAULT_MAX_BYTES,
    NotARegularFile,
    looks_binary,
    note_text,
    strip_frontmatter,
)
from notedex.vault.reading import VaultReader
from notedex.vault.resolve import broken_key

FORMATS = ("connector-v1",)


def parse_since(text: str) -> dt.datetime:
    """``--changed-since``: an ISO 8601 date or date-time; without a zone, local time."""
    try:
        when = dt.datetime.fromisoformat(text.strip())
    except ValueError:
        raise UsageError(
            f"--changed-since: not an ISO 8601 date or time: {text!r} "
            "(for example 2026-04-13 or 2026-04-13T12:00:00Z)"
        ) from None
    return when if when.tzinfo is not None else when.astimezone()


def iso_utc(ns: int) -> str:
    """Nanoseconds since the epoch as ISO 8601 UTC with milliseconds (JavaScript's format)."""
    seconds, rest = divmod(ns, 1_000_000_000)
    moment = dt.datetime.fromtimestamp(seconds, tz=dt.UTC)
    return f"{moment:%Y-%m-%dT%H:%M:%S}.{rest // 1_000_000:03d}Z"


def _epoch_ns(when: dt.datetime) -> int:
    delta = when - dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1_000


def export_connector(
    conn: sqlite3.Connection,
    vault: Path,
    *,
    changed_since: dt.datetime | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    now: dt.datetime | None = None,
    follow_symlinks: bool = False,
    nf: NoteFilter | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """The connector-v1 document, and one line per note that was left out (and why);
    ``follow_symlinks``: the setting, for the reads (``vault.reading``)."""
    produced = now or dt.datetime.now(dt.UTC)
    after = _epoch_ns(changed_since) if changed_since is not None else None
    with read_transaction(conn):
        rows = fulltext.export_notes(conn, modified_after_ns=after)
        if nf is not None and nf.active:  # the notes the filter keeps (SEMANTICS 15)
            kept = {r["file_id"] for r in read.notes(conn, nf)}
            rows = [r for r in rows if r["file_id"] in kept]
        ids = [r["file_id"] for r in rows]
        tags = read.tags_by_note(conn, ids)
        links = fulltext.link_targets(conn, ids)
    records: list[dict[str, Any]] = []
    skipped: list[str] = []
    files = VaultReader(vault, follow_outside=follow_symlinks)
    for row in rows:
        raw, mtime_ns, problem = _read(files, row["disk_rel"] or row["path"], max_bytes)
        if problem is not None or raw is None:
            skipped.append(f"{row['path']}: {problem}")
            continue
        text = strip_frontmatter(note_text(raw))
        labels = list(tags.get(row["file_id"], []))
        for link in links.get(row["file_id"], []):
            target = link["target"] if link["target"] is not None else broken_key(link["linkpath"])
            labels.append(f"link:{target}")
        folder = row["path"].rpartition("/")[0]
        if folder:
            labels.append(f"folder:{folder}")
        records.append(
            {
                "id": f"obsidian:{row['path']}",
                "title": row["stem"],
                "text": text,
                "tags": list(dict.fromkeys(labels)),
                "timestamp": iso_utc(mtime_ns),
                "contentHash": hashlib.sha256(raw).hexdigest()[:16],
                "sourceMetadata": {
                    "relativePath": row["path"],
                    "frontmatter": json.loads(row["properties"]) if row["properties"] else {},
                },
            }
        )
    document = {
        "version": "connector-v1",
        "source": "obsidian",
        "scope": f"vault:{vault.name}",
        "producedAt": iso_utc(_epoch_ns(produced)),
        "records": records,
    }
    return document, skipped


def _read(files: VaultReader, rel: str, max_bytes: int) -> tuple[bytes | None, int, str | None]:
    """(raw bytes, mtime_ns, None) or (None, 0, why it was left out). Never blocks on a FIFO."""
    try:
        raw, info = files.read(rel, max_bytes)
    except NotARegularFile:
        return None, 0, "not a regular file"
    except OSError as exc:
        return None, 0, f"cannot read it: {exc.strerror or exc}"
    if info.st_size > max_bytes:
        return None, 0, f"over the size cap ({info.st_size} > {max_bytes} bytes)"
    if looks_binary(raw):
        return None, 0, "binary content (NUL bytes), not Markdown"
    return raw, info.st_mtime_ns, None


def resolve_out(out: str | None, vault: Path) -> Path | None:
    """The ``--out`` file as an absolute path (None for stdout); never inside the vault."""
    if out is None or out == "-":
        return None
    target = Path(os.path.expanduser(out)).absolute()
    try:
        target.resolve().relative_to(vault.resolve())
    except ValueError:
        return target
    # ARCHITECTURE: notedex never writes into the vault (only `capture` creates notes there).
    raise UsageError(f"--out must be outside the vault: {target}")


def write_document(document: dict[str, Any], target: Path | None) -> None:
    """Write the document to ``target`` atomically (write, then rename), or to stdout."""
    payload = json.dumps(document, ensure_ascii=False, indent=2) + "\n"
    if target is None:
        sys.stdout.write(payload)
        return
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(payload, encoding="utf-8")
        os.replace(tmp, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise UsageError(f"cannot write {target}: {exc.strerror or exc}") from exc
