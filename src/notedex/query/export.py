"""`notedex export --format connector-v1`: the vault as a RecallNest connector-v1 document.

One record per reportable note (Obsidian-excluded files are left out, as in every report):
``id`` ``obsidian:<path>``, ``title`` the stem, ``text`` the body without frontmatter, ``tags``
(frontmatter and inline tags, ``link:<target path or broken key>`` per referenced target,
``folder:<folder>``), ``timestamp`` (mtime), ``contentHash`` (first 16 hex digits of the
sha256 of the raw file) and ``sourceMetadata`` (``relativePath``, ``frontmatter``).

Frontmatter comes from the index (``notes.properties``, already JSON); only the text and hash
are read from disk, so the query path never needs the YAML stack. The document is written
while the notes are read, one note in memory at a time (ARCHITECTURE "Streaming answers").
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from notedex.errors import UsageError
from notedex.query.filters import NoteFilter
from notedex.query.stream import ByPath, Document, streamed
from notedex.store import fulltext, listing_rows, read
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
    doc: Document,
    vault: Path,
    *,
    changed_since: dt.datetime | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    now: dt.datetime | None = None,
    follow_symlinks: bool = False,
    nf: NoteFilter | None = None,
    skip: Callable[[str], object] | None = None,
) -> tuple[int, int]:
    """Write the connector-v1 document to ``doc`` record by record, as
    ``json.dumps(document, ensure_ascii=False, indent=2)`` would write it whole (issue 35: one
    note's text and file in memory at a time); ``skip`` gets one line per note that was left
    out (and why). (records written, notes left out); ``follow_symlinks``: the setting, for the
    reads (``vault.reading``)."""
    produced = now or dt.datetime.now(dt.UTC)
    after = _epoch_ns(changed_since) if changed_since is not None else None
    if after is not None:
        after = min(after, (1 << 63) - 1)  # past 2262 no mtime is newer, nor fits SQLite
    encode = json.JSONEncoder(ensure_ascii=False, indent=2).encode
    head = {
        "version": "connector-v1",
        "source": "obsidian",
        "scope": f"vault:{vault.name}",
        "producedAt": iso_utc(_epoch_ns(produced)),
    }
    doc.add("{\n" + "".join(f"  {encode(k)}: {encode(v)},\n" for k, v in head.items()))
    doc.add('  "records": [')
    records = skipped = 0
    files = VaultReader(vault, follow_outside=follow_symlinks)
    read.unmapped(conn)
    with read_transaction(conn):
        # With a filter (SEMANTICS 14), the kept notes' rows, tags and links only (issue 32).
        tags = ByPath(listing_rows.names_in_path_order(conn, "tags", nf))
        links = ByPath(fulltext.link_targets_in_path_order(conn, nf), whole=True)
        for row in fulltext.export_notes(conn, modified_after_ns=after, nf=nf):
            labels = tags.take(row["path"])
            references = links.take(row["path"])
            raw, mtime_ns, problem = _read(files, row["disk_rel"] or row["path"], max_bytes)
            if problem is not None or raw is None:
                skipped += 1
                if skip is not None:
                    skip(f"{row['path']}: {problem}")
                continue
            record = _record(row, raw, mtime_ns, labels, references)
            # A record at depth 2: json's own indentation, shifted; no string holds a raw newline.
            doc.add(("," if records else "") + "\n    " + encode(record).replace("\n", "\n    "))
            records += 1
    doc.add("\n  ]\n}" if records else "]\n}")
    return records, skipped


def _record(
    row: sqlite3.Row,
    raw: bytes,
    mtime_ns: int,
    labels: list[str],
    references: list[tuple[str, str | None, str]],
) -> dict[str, Any]:
    """One note's record: ``labels`` its tags, ``references`` its (source, target, linkpath)."""
    for _source, target, linkpath in references:
        labels.append(f"link:{target if target is not None else broken_key(linkpath)}")
    folder = row["path"].rpartition("/")[0]
    if folder:
        labels.append(f"folder:{folder}")
    return {
        "id": f"obsidian:{row['path']}",
        "title": row["stem"],
        "text": strip_frontmatter(note_text(raw)),
        "tags": list(dict.fromkeys(labels)),
        "timestamp": iso_utc(mtime_ns),
        "contentHash": hashlib.sha256(raw).hexdigest()[:16],
        "sourceMetadata": {
            "relativePath": row["path"],
            "frontmatter": json.loads(row["properties"]) if row["properties"] else {},
        },
    }


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


def write_export(
    conn: sqlite3.Connection, target: Path | None, body: Callable[[Document], tuple[int, int]]
) -> tuple[int, int]:
    """Write ``body``'s document and its newline to stdout as it is made (a failure after the
    first chunk: ``StreamCut``), or to ``target`` atomically (a temporary file beside it,
    renamed when whole); what ``body`` returns."""
    result: list[tuple[int, int]] = []
    if target is None:
        streamed(conn, lambda _conn, doc: result.append(body(doc)))
        return result[0]
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as out:
            doc = Document(out.write)
            result.append(body(doc))
            doc.add("\n")
            doc.flush()
        os.replace(tmp, target)
    except OSError as exc:
        raise UsageError(f"cannot write {target}: {exc.strerror or exc}") from exc
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()
    return result[0]
