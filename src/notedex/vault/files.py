"""The vault's file rules, in one place: which names are notes, which paths are hidden, where
the frontmatter block ends, and how a vault file is read (size cap, FIFO guard, binary sniff).

The indexer (``vault.parse``, ``vault.walk``) and the commands that read notes from disk
(``show``, ``search``, ``export``) all use these functions, so the index and what a command
prints agree on every file. Only ``os`` is imported (already loaded at interpreter start-up):
the query path may use this module without paying for it.
"""

from __future__ import annotations

import os
import stat

__all__ = [
    "BINARY_SNIFF_BYTES",
    "DEFAULT_MAX_BYTES",
    "NOTE_SUFFIX",
    "NotARegularFile",
    "body_start_line",
    "excluded_filters_key",
    "file_lines",
    "frontmatter_bounds",
    "is_hidden_name",
    "is_hidden_path",
    "is_note_name",
    "load_excluded_filters",
    "looks_binary",
    "note_stem",
    "over_the_cap",
    "read_capped",
    "read_open_file",
    "strip_frontmatter",
    "without_note_suffix",
]

NOTE_SUFFIX = ".md"
DEFAULT_MAX_BYTES = 5_000_000
"""Notes larger than this are indexed by name only (``max_bytes`` in the config file)."""
BINARY_SNIFF_BYTES = 8192
"""A NUL byte this early means an image or a UTF-16 file saved as .md, not Markdown."""

# Never block on a FIFO that happens to be called x.md; no effect on regular files.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


# --- names (SEMANTICS 1) ---------------------------------------------------------------------


def is_note_name(name: str) -> bool:
    """SEMANTICS 1: a note is a file whose name ends in ``.md``, in any case."""
    return name[-3:].lower() == NOTE_SUFFIX


def without_note_suffix(path: str) -> str:
    """``path`` without its ``.md`` suffix, in any case (SEMANTICS 1); as it is without one."""
    return path[:-3] if is_note_name(path) else path


def note_stem(path: str) -> str:
    """``"A/B/Dup.md"`` -> ``"Dup"`` (the ``.md`` suffix in any case)."""
    name = path.rsplit("/", 1)[-1]
    return name[:-3] if is_note_name(name) else name


def is_hidden_name(name: str) -> bool:
    """SEMANTICS 1: ``.obsidian/``, ``.git/``, ``.trash/``, ``.hidden.md`` are not in the vault."""
    return name.startswith(".")


def is_hidden_path(path: str) -> bool:
    """Whether any segment of a ``/``-separated vault path is hidden (SEMANTICS 1)."""
    return any(is_hidden_name(part) for part in path.split("/"))


# --- Obsidian's "Excluded files" list ----------------------------------------------------


def load_excluded_filters(root: str | os.PathLike[str]) -> tuple[str, ...]:
    """Obsidian's "Excluded files" (``userIgnoreFilters`` in ``.obsidian/app.json``).

    A missing, unreadable or malformed file, or a value that is not a list, gives ``()``;
    non-string and empty entries are dropped (an empty prefix would exclude everything).
    """
    import unicodedata

    data = load_app_settings(root)
    if data is None:
        return ()
    filters = data.get("userIgnoreFilters")
    if not isinstance(filters, list):
        return ()
    return tuple(
        unicodedata.normalize("NFC", item) for item in filters if isinstance(item, str) and item
    )


def load_app_settings(root: str | os.PathLike[str]) -> dict[str, object] | None:
    """The vault's ``.obsidian/app.json`` (Obsidian's "Files and links" settings among others)
    as a dict; None when it is missing, unreadable, malformed or not a JSON object. Obsidian
    writes only the settings changed from their defaults."""
    config = os.path.join(os.fspath(root), ".obsidian", "app.json")
    try:
        with open(config, encoding="utf-8") as handle:
            data = _json_loads(handle.read())
    except (OSError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def excluded_filters_key(filters: tuple[str, ...]) -> str:
    """The list as the index stores it (meta ``excluded_filters``): ``json.dumps(list(filters))``,
    spelled with the C function ``json.dumps`` uses for each string, so the no-daemon freshness
    check compares it without importing ``json`` (and ``re``: about a tenth of that check at 10k
    notes, issue 15)."""
    try:
        from _json import encode_basestring_ascii
    except ImportError:  # an interpreter without the accelerator: the module itself
        import json

        return json.dumps(list(filters))
    return "[" + ", ".join([encode_basestring_ascii(item) for item in filters]) + "]"


class _JsonDefaults:
    """What ``json.JSONDecoder()`` hands its C scanner, without importing ``json``."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int

    @staticmethod
    def parse_constant(name: str) -> float:
        return float(name.lower().replace("infinity", "inf"))  # NaN, Infinity, -Infinity


_JSON_SPACE = " \t\n\r"  # json's WHITESPACE


def _json_loads(text: str) -> object:
    """``json.loads(text)`` with the C scanner ``json`` itself uses (``_json.make_scanner``), so a
    vault's ``app.json`` is read without importing ``json`` and ``re``. Malformed text raises a
    ``ValueError`` as ``json.loads`` does (the scanner imports ``json.decoder`` for its error)."""
    try:
        from _json import make_scanner
    except ImportError:
        import json

        return json.loads(text)
    if text.startswith("\ufeff"):
        raise ValueError("Unexpected UTF-8 BOM (decode using utf-8-sig)")
    start = len(text) - len(text.lstrip(_JSON_SPACE))
    try:
        value, end = make_scanner(_JsonDefaults())(text, start)  # type: ignore[arg-type]
    except StopIteration as exc:
        raise ValueError(f"Expecting value: char {exc.value}") from None
    if text[end:].strip(_JSON_SPACE):
        raise ValueError(f"Extra data: char {end}")
    return value


# --- the frontmatter locator (SEMANTICS 2) ---------------------------------------------------


def frontmatter_bounds(text: str) -> tuple[int, int, int] | None:
    """``(yaml_start, yaml_end, body_start)`` of the frontmatter block of decoded ``text``.

    SEMANTICS 2: only a block starting at offset 0 with ``---`` + newline counts, and it closes
    at the next line that is exactly ``---`` (CRLF accepted): ``--- `` does not close it.
    """
    if text.startswith("---\n"):
        yaml_start = 4
    elif text.startswith("---\r\n"):
        yaml_start = 5
    else:
        return None
    size = len(text)
    line_start = yaml_start
    while True:
        if text.startswith("---", line_start):
            after = line_start + 3
            if after < size and text[after] == "\r":
                after += 1
            if after == size:
                return yaml_start, line_start, size
            if text[after] == "\n":
                return yaml_start, line_start, after + 1
        newline = text.find("\n---", line_start)
        if newline < 0:
            return None
        line_start = newline + 1


def note_text(raw: bytes) -> str:
    """A note's bytes as text, as the indexer reads them: bad UTF-8 becomes U+FFFD and a leading
    BOM is dropped (invisible in every editor, and Obsidian drops it; SEMANTICS 2)."""
    return raw.decode("utf-8", errors="replace").removeprefix("\ufeff")


def strip_frontmatter(text: str) -> str:
    """The body: ``text`` without its frontmatter block, exactly as the indexer splits it."""
    bounds = frontmatter_bounds(text)
    return text if bounds is None else text[bounds[2] :]


def body_start_line(text: str) -> int:
    """The 1-based line of ``text`` at which its body starts (1 without frontmatter).

    Lines are counted as ``file_lines`` counts them, so the frontmatter is part of the count.
    """
    bounds = frontmatter_bounds(text)
    if bounds is None:
        return 1
    line = text.count("\n", 0, bounds[2]) + 1
    return line + 1 if bounds[2] == len(text) and not text.endswith("\n") else line


def file_lines(text: str) -> list[str]:
    """The lines of decoded ``text`` as numbered in the file (line 1 first): split at ``\\n``,
    a CRLF's ``\\r`` dropped, no empty line after a final newline."""
    lines = [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]
    if lines and lines[-1] == "":
        lines.pop()
    return lines


# --- reading a vault file --------------------------------------------------------------------


class NotARegularFile(OSError):
    """A folder, FIFO, socket or device where a note was expected."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what
        """``"a directory"`` or ``"not a regular file"``."""


def read_capped(disk_path: str | os.PathLike[str], max_bytes: int) -> tuple[bytes, os.stat_result]:
    """At most ``max_bytes + 1`` bytes of a regular file, and its ``fstat``.

    More than ``max_bytes`` bytes back means the file is over the cap: only a prefix was read.
    Opening never blocks (a FIFO named ``x.md``); raises ``NotARegularFile`` for anything but
    a regular file and ``OSError`` when the file cannot be opened or read.
    """
    fd = os.open(disk_path, _OPEN_FLAGS)
    try:
        return read_open_file(fd, max_bytes)
    finally:
        os.close(fd)


def read_open_file(fd: int, max_bytes: int) -> tuple[bytes, os.stat_result]:
    """``read_capped`` of a file already open (``vault.reading`` opened it under the symlink
    policy): its ``fstat``, ``NotARegularFile`` for anything but a regular file, then at most
    ``max_bytes + 1`` bytes. The caller closes ``fd``."""
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise NotARegularFile("a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file")
    return _read_to_cap(fd, info.st_size, max_bytes + 1), info


def _read_to_cap(fd: int, size: int, cap: int) -> bytes:
    """What ``read(cap)`` of a buffered file gives (up to ``cap`` bytes: until then or the end
    of the file), in ``os.read`` calls sized by the file's ``fstat`` size.

    A buffered ``read(max_bytes + 1)`` made a buffer of the whole cap (5 MB) for every note and
    shrank it: four fifths of the parse workers' reading time in a first index. The first read
    asks for one byte more than the file holds, the next ones (a file that grew since its
    ``fstat``, or one whose size says 0) for what is left up to the cap."""
    data = os.read(fd, min(size + 1, cap))
    if not data or len(data) >= cap:
        return data
    parts = [data]
    got = len(data)
    while got < cap:
        more = os.read(fd, min(max(size, 1 << 16), cap - got))
        if not more:
            break
        parts.append(more)
        got += len(more)
    return data if len(parts) == 1 else b"".join(parts)


def looks_binary(data: bytes) -> bool:
    """A NUL byte in the first ``BINARY_SNIFF_BYTES``: not Markdown, whatever the name says."""
    return b"\0" in data[:BINARY_SNIFF_BYTES]


def over_the_cap(size: int, max_bytes: int) -> str:
    """``file is 6.2 MB, over the 5.0 MB size cap``: one wording for the index and ``show``."""
    return f"file is {_human_size(size)}, over the {_human_size(max_bytes)} size cap"


def _human_size(size: int) -> str:
    if size >= 1_000_000:
        return f"{size / 1_000_000:.1f} MB"
    if size >= 1_000:
        return f"{size / 1_000:.1f} KB"
    return f"{size} bytes"
