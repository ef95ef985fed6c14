"""Frozen values produced by parsing a vault (STYLE 9). No I/O here."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import Any, Literal

LinkKind = Literal["wikilink", "embed", "markdown", "markdown-embed", "frontmatter"]
TagSource = Literal["frontmatter", "inline"]


class _Value:
    """Pickled as a call of its class with its fields, in order: parsed notes cross from the
    parse workers to the writer (indexing.pool), and the dataclasses' own ``__getstate__`` and
    ``__setstate__`` (a Python loop over ``fields()`` per object) cost the writer's process
    more than its inserts of the same rows (docs/benchmarks.md)."""

    __slots__ = ()

    def __reduce__(self) -> tuple[type, tuple[Any, ...]]:
        return type(self), _FIELDS_OF[type(self)](self)


_FIELDS_OF: dict[type, attrgetter[Any]] = {}


@dataclass(frozen=True, slots=True)
class Link(_Value):
    """One reference occurrence in a note (SEMANTICS 6).

    ``linkpath`` is the normalised target without subpath (NFC, trimmed, NBSP -> space,
    percent-decoded for Markdown links). ``subpath`` keeps its leading ``#`` (``"#H1#H2"``,
    ``"#^blk"``) or is ``None``. ``line`` and ``column`` are 1-based and point at the
    occurrence's first character (``[`` or ``!``), counted in code points.
    """

    kind: LinkKind
    raw: str
    linkpath: str
    subpath: str | None
    display: str | None
    line: int
    column: int
    in_comment: bool = False
    """Inside a ``%%comment%%`` or an inline ``<!-- HTML comment -->``: a link all the same,
    as Obsidian counts it (SEMANTICS 6.9); health flags its findings ``in-comment``."""

    @property
    def is_self(self) -> bool:
        """``[[#Heading]]`` and ``[[#^id]]``: not broken, not an edge (SEMANTICS 6)."""
        return self.linkpath == ""


@dataclass(frozen=True, slots=True)
class Tag(_Value):
    """A tag as written (without ``#``), first-seen spelling (SEMANTICS 4)."""

    name: str
    source: TagSource

    @property
    def key(self) -> str:
        return self.name.lower()

    def prefixes(self) -> tuple[str, ...]:
        """``a/b/c`` -> ``("a", "a/b", "a/b/c")``: nested tags count for their parents."""
        parts = self.name.split("/")
        return tuple("/".join(parts[: i + 1]) for i in range(len(parts)) if parts[i])


@dataclass(frozen=True, slots=True)
class Problem(_Value):
    """A warning or error attached to a note; never an exception (SEMANTICS 2, 8)."""

    kind: str
    message: str


@dataclass(frozen=True, slots=True)
class Heading(_Value):
    """A heading (SEMANTICS 10.1): level 1-6, its raw text, 1-based line and column."""

    level: int
    text: str
    line: int
    column: int


@dataclass(frozen=True, slots=True)
class BlockId(_Value):
    """A block id (SEMANTICS 10.2) as written, without ``^``, and where it is (1-based)."""

    id: str
    line: int
    column: int


@dataclass(frozen=True, slots=True)
class Task(_Value):
    """A Markdown task (SEMANTICS 13): a list item that opens with ``[C]``, one status
    character. ``line`` and ``column`` are 1-based and point at the ``[``; ``text`` is the
    rest of the line as written (trimmed); ``tags`` are its inline tags, in order; the dates
    are ISO ``YYYY-MM-DD`` or None."""

    line: int
    column: int
    status: str
    text: str
    tags: tuple[str, ...] = ()
    due: str | None = None
    scheduled: str | None = None
    start: str | None = None
    created: str | None = None
    done: str | None = None
    cancelled: str | None = None

    @property
    def state(self) -> TaskState:
        """SEMANTICS 13.3: ``x``/``X`` done, ``-`` cancelled, every other status open."""
        return task_state(self.status)


TaskState = Literal["open", "done", "cancelled"]


def task_state(status: str) -> TaskState:
    """SEMANTICS 13.3, the one place the rule lives: a task's state from its status character."""
    if status in ("x", "X"):
        return "done"
    return "cancelled" if status == "-" else "open"


@dataclass(frozen=True, slots=True)
class Note(_Value):
    path: str
    """Vault-relative, ``/``-separated, NFC."""
    stem: str
    frontmatter_title: str | None
    first_h1: str | None
    title: str
    """Frontmatter ``title`` if a non-empty string, else the stem (SEMANTICS 3)."""
    id: str | None
    type: str | None
    status: str | None
    tags: tuple[Tag, ...]
    """Unique case-insensitively, first-seen spelling, frontmatter tags first."""
    aliases: tuple[str, ...]
    links: tuple[Link, ...]
    """In document order: frontmatter links first, then body occurrences."""
    warnings: tuple[Problem, ...]
    errors: tuple[Problem, ...]
    content_hash: str
    """sha256 hex of the raw bytes."""
    body: str
    """Decoded text without the frontmatter block."""
    properties: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    """The frontmatter mapping, JSON-safe (dates as ISO strings); empty when absent or invalid."""
    headings: tuple[Heading, ...] = ()
    """SEMANTICS 10.1, in document order."""
    block_ids: tuple[BlockId, ...] = ()
    """SEMANTICS 10.2, in document order."""
    tasks: tuple[Task, ...] = ()
    """SEMANTICS 13, in document order."""


for _class in (Link, Tag, Problem, Heading, BlockId, Task, Note):
    _FIELDS_OF[_class] = attrgetter(*(f.name for f in fields(_class)))


@dataclass(frozen=True, slots=True)
class VaultFile:
    """A file found by the walker (SEMANTICS 1)."""

    path: str
    """Vault-relative, ``/``-separated, NFC (for identity and links)."""
    disk_path: str
    """Absolute on-disk path with the original (possibly NFD) name, for I/O."""
    is_note: bool
    size: int
    mtime_ns: int
    inode: int
    ctime_ns: int = 0
    """The change time: every write moves it and ``touch`` cannot set it back (issue 31.7)."""


@dataclass(frozen=True, slots=True)
class WalkProblem:
    """An entry the walker could not read or refused to follow."""

    path: str
    message: str
    severity: str = "error"
    """"error", or "warning" for a symlink out of the vault left alone by choice."""


@dataclass(frozen=True, slots=True)
class WalkResult:
    files: tuple[VaultFile, ...]
    problems: tuple[WalkProblem, ...]
    unreadable_dirs: tuple[str, ...]
    """Vault-relative paths the walk could not look at (folders it could not list, entries it
    could not stat or follow): rows at or under them must not be deleted."""
    linked_dirs: tuple[str, ...] = ()
    """Symlinks to folders the walk met, followed or not: a walk of part of the vault cannot
    tell a loop or a repeat from the vault-wide rules (SEMANTICS 1.6) by itself."""
