"""`capture`: create a new inbox note. The only place notedex writes into a vault.

Whatever the text holds, the file lands inside the inbox folder under a fresh name: the name
is built from a safe subset of characters, and the file is created with O_EXCL so nothing
is ever overwritten.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import unicodedata
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


def _name_from_text(text: str) -> str:
    first_line = next((line for line in text.splitlines() if line.strip()), "")
    name = unicodedata.normalize("NFC", first_line)
    name = _UNSAFE.sub(" ", name)
    # Control characters (C0 and C1), surrogates and non-characters: not in a file name, and
    # YAML refuses them in the title scalar.
    name = "".join(" " if unicodedata.category(ch) in ("Cc", "Cs", "Cn") else ch for ch in name)
    name = re.sub(r"\s+", " ", name).strip(" .-_")
    if len(name) > MAX_NAME_CHARS:
        name = name[:MAX_NAME_CHARS].rstrip(" .-_")
    return name or "capture"


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


def capture(vault: Path, inbox: str, text: str, *, now: dt.datetime | None = None) -> Captured:
    """Write ``text`` as a new note in ``vault/inbox``; never overwrite, never leave the vault."""
    moment = now or dt.datetime.now().astimezone()
    note_id = moment.strftime("%Y%m%d-%H%M%S")
    inbox_parts = [p for p in inbox.replace("\\", "/").split("/") if p not in ("", ".", "..")]
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
    title = _name_from_text(text)
    clean = text.replace("\x00", "")
    data = note_text(clean, note_id, title, moment).encode("utf-8", errors="replace")
    # SEMANTICS 1: names are compared in NFC. An NFD `été.md` already takes the name `été.md`
    # (the walker would skip one of the two), so such a name counts as taken too.
    taken = {unicodedata.normalize("NFC", name) for name in os.listdir(real_folder)}
    for attempt in range(1, 10_000):
        suffix = "" if attempt == 1 else f" {attempt}"
        candidate = real_folder / f"{title}{suffix}.md"
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
    raise FileExistsError(f"could not find a free name for {title!r} in {inbox}")
