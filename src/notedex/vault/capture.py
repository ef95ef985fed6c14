"""`capture`: create a new inbox note. The only place notedex writes into a vault.

Whatever the text holds, the file lands inside the inbox folder under a fresh name: the name
is built from a safe subset of characters, and the file is created with O_EXCL so nothing
is ever overwritten. The title keeps the first line as written (YAML quotes it). The id is the
capture's second, ``YYYYMMDD-HHMMSS``, with ``-2``, ``-3``... when that id is taken (docs/cli.md,
``capture``): choosing it and creating the file happen under a lock on the inbox folder, so
captures at once never share an id.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import os
import re
import unicodedata
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from notedex.vault.files import is_hidden_name

MAX_NAME_CHARS = 60
_OTHER_SURROGATES = re.compile("[\ud800-\udc7f\udd00-\udfff]")
_UNSAFE = re.compile(r"[\x00-\x1f\x7f/\\:*?\"<>|#^\[\]%`$!&;{}]+")


@dataclass(frozen=True)
class Captured:
    path: str
    """Vault-relative, '/'-separated."""
    id: str
    disk_path: Path


def title_from_text(text: str) -> str:
    """The note's title: the first non-blank line as written, NFC, its runs of whitespace one
    space. Control characters, surrogates and non-characters become spaces: YAML refuses them."""
    first_line = next((line for line in _valid_unicode(text).splitlines() if line.strip()), "")
    title = unicodedata.normalize("NFC", first_line)
    title = "".join(" " if unicodedata.category(ch) in ("Cc", "Cs", "Cn") else ch for ch in title)
    return re.sub(r"\s+", " ", title).strip() or "capture"


def _name_from_title(title: str) -> str:
    """The file name (without .md): the title without the characters a file name or a link
    cannot hold, at most ``MAX_NAME_CHARS`` long."""
    name = re.sub(r"\s+", " ", _UNSAFE.sub(" ", title)).strip(" .-_")
    if len(name) > MAX_NAME_CHARS:
        name = name[:MAX_NAME_CHARS].rstrip(" .-_")
    return name or "capture"


def _free_id(moment: dt.datetime, taken: Collection[str]) -> str:
    """``YYYYMMDD-HHMMSS``, or with ``-2``, ``-3``... the first that is not ``taken``."""
    base = moment.strftime("%Y%m%d-%H%M%S")
    suffix = 1
    while (base if suffix == 1 else f"{base}-{suffix}") in taken:
        suffix += 1
    return base if suffix == 1 else f"{base}-{suffix}"


def _inbox_ids(folder: Path, since: float) -> set[str]:
    """The frontmatter ids of the inbox notes changed since ``since`` (an earlier capture of
    this second, even one the index has not seen yet)."""
    from notedex.vault.files import DEFAULT_MAX_BYTES, read_capped
    from notedex.vault.parse import parse_note

    ids: set[str] = set()
    with os.scandir(folder) as entries:
        for entry in entries:
            try:
                if not entry.name.endswith(".md") or not entry.is_file(follow_symlinks=False):
                    continue
                if entry.stat(follow_symlinks=False).st_mtime < since:
                    continue
                raw, _ = read_capped(entry.path, DEFAULT_MAX_BYTES)
            except OSError:
                continue
            note_id = parse_note(raw, entry.name).id
            if note_id:
                ids.add(note_id)
    return ids


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """An exclusive lock on the inbox folder: one capture at a time picks an id and a name."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _valid_unicode(text: str) -> str:
    """Undecodable argv bytes arrive as lone surrogates: make them U+FFFD, never file-name bytes."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # os.fsdecode's escapes (U+DC80..U+DCFF) back to their bytes; any other lone surrogate
        # is replaced outright; then the bytes are decoded as UTF-8 with replacement.
        text = _OTHER_SURROGATES.sub("\ufffd", text)
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return text


def note_text(body: str, note_id: str, title: str, moment: dt.datetime) -> str:
    """The new note: python-frontmatter writes the block, so the YAML is quoted as YAML needs."""
    import frontmatter  # not on the query path: only `capture` pays for the YAML stack

    post = frontmatter.Post(
        body.rstrip(),
        id=note_id,
        title=title,
        type="inbox-draft",
        status="seed",
        created=moment.isoformat(timespec="seconds"),
    )
    # Keys in the order written; no line folding of a long title; the body ends with a newline.
    return frontmatter.dumps(post, sort_keys=False, width=1_000_000) + "\n"


def capture(
    vault: Path,
    inbox: str,
    text: str,
    *,
    now: dt.datetime | None = None,
    indexed_ids: Callable[[str], Collection[str]] | None = None,
) -> Captured:
    """Write ``text`` as a new note in ``vault/inbox``; never overwrite, never leave the vault.

    ``indexed_ids(prefix)``: the ids the index knows that start with ``prefix`` (the notes
    elsewhere in the vault); the inbox's own recent notes are read here.
    """
    moment = now or dt.datetime.now().astimezone()
    written = inbox.replace("\\", "/")
    if written.startswith("/") or ".." in written.split("/"):
        # Never rewritten into another folder (issue 34): the user says where instead.
        raise ValueError(
            f"the inbox folder {inbox!r} leads outside the vault; give a folder relative to the "
            'vault (`inbox` in the config file, e.g. inbox = "00_Inbox")'
        )
    inbox_parts = [p for p in written.split("/") if p not in ("", ".")]
    if any(is_hidden_name(part) for part in inbox_parts):
        # SEMANTICS 1: a dot-prefixed folder is not part of the vault; the note would be lost.
        raise ValueError(f"the inbox folder {inbox!r} is hidden (a name starts with '.')")
    folder = vault.joinpath(*inbox_parts) if inbox_parts else vault
    real_vault = vault.resolve()

    def check_inside() -> Path:
        real = folder.resolve()
        if real != real_vault and real_vault not in real.parents:
            raise ValueError(f"the inbox folder {inbox!r} leads outside the vault")
        return real

    check_inside()  # before mkdir: a symlinked parent must not make us create folders outside
    folder.mkdir(parents=True, exist_ok=True)
    real_folder = check_inside()

    text = _valid_unicode(text)
    title = title_from_text(text)
    name = _name_from_title(title)
    clean = text.replace("\x00", "")
    with _locked(real_folder):
        prefix = moment.strftime("%Y%m%d-%H%M%S")
        taken_ids = set(indexed_ids(prefix)) if indexed_ids is not None else set()
        taken_ids |= _inbox_ids(real_folder, since=int(moment.timestamp()) - 1)
        note_id = _free_id(moment, taken_ids)
        data = note_text(clean, note_id, title, moment).encode("utf-8", errors="replace")
        return _create(real_vault, real_folder, name, inbox, note_id, data)


def _create(
    real_vault: Path, real_folder: Path, name: str, inbox: str, note_id: str, data: bytes
) -> Captured:
    """Create ``name.md`` (or ``name 2.md``...) in the inbox with O_EXCL and write ``data``."""
    # SEMANTICS 1: names are compared in NFC. An NFD `été.md` already takes the name `été.md`
    # (the walker would skip one of the two), so such a name counts as taken too.
    taken = {unicodedata.normalize("NFC", entry) for entry in os.listdir(real_folder)}
    for attempt in range(1, 10_000):
        suffix = "" if attempt == 1 else f" {attempt}"
        candidate = real_folder / f"{name}{suffix}.md"
        if candidate.name in taken:
            continue
        try:
            fd = os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            continue
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        rel = candidate.relative_to(real_vault).as_posix()
        return Captured(path=unicodedata.normalize("NFC", rel), id=note_id, disk_path=candidate)
    raise FileExistsError(f"could not find a free name for {name!r} in {inbox}")
