"""One note's bytes -> ``Note`` (SEMANTICS 2-6).

``parse_note`` is pure and never raises, whatever the bytes; every problem becomes a
``Problem`` on the note. ``read_note`` is the only function here that touches the disk.
"""

from __future__ import annotations

import hashlib
import os

from notedex.vault.files import (
    DEFAULT_MAX_BYTES,
    NotARegularFile,
    looks_binary,
    note_stem,
    note_text,
    over_the_cap,
    read_capped,
)
from notedex.vault.frontmatter import (
    Frontmatter,
    frontmatter_aliases,
    frontmatter_tags,
    load_frontmatter,
    locate_frontmatter,
    text_property,
)
from notedex.vault.markdown.scan import scan_body
from notedex.vault.model import Heading, Note, Problem, Tag
from notedex.vault.text import nfc

__all__ = ["DEFAULT_MAX_BYTES", "hash_note", "note_stem", "parse_note", "read_note"]

_TEXT_KEYS = ("id", "type", "status")


def parse_note(data: bytes, path: str, *, max_bytes: int = DEFAULT_MAX_BYTES) -> Note:
    """Parse a note's raw bytes; ``path`` is vault-relative, ``/``-separated, NFC."""
    content_hash = hashlib.sha256(data).hexdigest()
    if len(data) > max_bytes:
        return _name_only(path, content_hash, _size_problem(len(data), max_bytes))
    try:
        return _parse(data, path, content_hash)
    except Exception as exc:  # a parser bug must cost one note, not the whole index
        message = f"parser failure ({type(exc).__name__}: {exc}); indexed by name only"
        return _name_only(path, content_hash, Problem("internal-error", message))


def read_note(
    disk_path: str | os.PathLike[str], path: str, *, max_bytes: int = DEFAULT_MAX_BYTES
) -> Note:
    """Read at most ``max_bytes + 1`` bytes of ``disk_path`` and parse them; never raises."""
    try:
        data, info = read_capped(disk_path, max_bytes)
    except NotARegularFile as exc:
        return _unreadable(path, f"it is {exc.what}")
    except OSError as exc:
        return _unreadable(path, exc.strerror or str(exc))
    if len(data) > max_bytes:
        content_hash = _capped_hash(data, info)
        return _name_only(path, content_hash, _size_problem(info.st_size, max_bytes))
    return parse_note(data, path, max_bytes=max_bytes)


def hash_note(
    disk_path: str | os.PathLike[str], *, max_bytes: int = DEFAULT_MAX_BYTES
) -> tuple[str, os.stat_result] | None:
    """The ``content_hash`` that ``read_note`` would give the file, without parsing it, and
    the ``fstat`` of what was read; None when it cannot be read (never raises)."""
    try:
        data, info = read_capped(disk_path, max_bytes)
    except OSError:
        return None
    if len(data) > max_bytes:
        return _capped_hash(data, info), info
    return hashlib.sha256(data).hexdigest(), info


def _capped_hash(prefix: bytes, info: os.stat_result) -> str:
    # Only a prefix was read, so this is not the file's sha256; size and mtime make it
    # change whenever the file changes, which is all the index needs from it.
    digest = hashlib.sha256(prefix)
    digest.update(f"\0{info.st_size}\0{info.st_mtime_ns}".encode())
    return digest.hexdigest()


def _parse(data: bytes, path: str, content_hash: str) -> Note:
    if looks_binary(data):
        problem = Problem("binary", "binary content (NUL bytes); not parsed as Markdown")
        return _name_only(path, content_hash, problem)
    errors: list[Problem] = []
    text = note_text(data)
    if "\ufffd" in text:  # a replacement character: bad UTF-8, or a real U+FFFD in the file
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            errors.append(
                Problem(
                    "bad-encoding",
                    f"invalid UTF-8 at byte {exc.start}; decoded with replacement characters",
                )
            )

    block = locate_frontmatter(text)
    if block is None:
        frontmatter, body, first_line = Frontmatter(), text, 1
    else:
        frontmatter = load_frontmatter(block)
        body, first_line = text[block.body_offset :], block.body_line
    errors.extend(frontmatter.errors)
    warnings = list(frontmatter.warnings)
    values = frontmatter.values

    scan = scan_body(body, first_line)

    candidates = [Tag(name, "frontmatter") for name in frontmatter_tags(values, warnings)]
    candidates.extend(Tag(name, "inline") for name in scan.tags)
    tags: list[Tag] = []
    seen: set[str] = set()
    for tag in candidates:
        if tag.key not in seen:  # SEMANTICS 4: case-insensitive, first-seen spelling
            seen.add(tag.key)
            tags.append(tag)
    aliases = frontmatter_aliases(values, warnings)
    note_id, note_type, status = (text_property(values, key, warnings) for key in _TEXT_KEYS)

    stem = note_stem(path)
    raw_title = values.get("title")
    # Text as macOS may write it (NFD) is compared and filtered NFC, like paths and tags.
    frontmatter_title = nfc(raw_title.strip()) or None if isinstance(raw_title, str) else None
    return Note(
        path=path,
        stem=stem,
        frontmatter_title=frontmatter_title,
        first_h1=nfc(scan.first_h1) if scan.first_h1 else None,
        title=frontmatter_title or stem,  # SEMANTICS 3
        id=note_id,
        type=note_type,
        status=status,
        tags=tuple(tags),
        aliases=tuple(aliases),
        links=(*frontmatter.links, *scan.links),
        warnings=tuple(warnings),
        errors=tuple(errors),
        content_hash=content_hash,
        body=body,
        properties=frontmatter.properties,
        headings=tuple(
            h if h.text.isascii() else Heading(h.level, nfc(h.text), h.line, h.column)
            for h in scan.headings
        ),
        block_ids=scan.block_ids,
        tasks=scan.tasks,
    )


def _name_only(path: str, content_hash: str, error: Problem) -> Note:
    """A note indexed by its name alone: unreadable, binary or over the size cap."""
    stem = note_stem(path)
    return Note(
        path=path,
        stem=stem,
        frontmatter_title=None,
        first_h1=None,
        title=stem,
        id=None,
        type=None,
        status=None,
        tags=(),
        aliases=(),
        links=(),
        warnings=(),
        errors=(error,),
        content_hash=content_hash,
        body="",
    )


def _unreadable(path: str, reason: str) -> Note:
    return _name_only(path, "", Problem("read", f"cannot read file: {reason}"))


def _size_problem(size: int, max_bytes: int) -> Problem:
    return Problem("too-large", f"{over_the_cap(size, max_bytes)}; indexed by name only")
