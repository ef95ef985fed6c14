"""The error classes of the hierarchy beyond ``notedex.errors``' root and ``UsageError``.

Each is imported where it is raised or caught, never at the top of a module a query loads
(``notedex.errors`` says why: a class costs about 0.15M instructions to make, on every query
that loads it). The exit codes stay in ``notedex.errors``, defined once.
"""

import os

from notedex.errors import EXIT_INTERNAL, EXIT_TEMPFAIL, EXIT_UNAVAILABLE, NotedexError


class VaultNotFound(NotedexError):
    """The vault root is missing, not a folder, or cannot be looked at."""

    def __init__(self, root: str | os.PathLike[str], reason: str = "no such folder") -> None:
        super().__init__(f"vault not found: {os.fspath(root)} ({reason})")
        self.root = os.fspath(root)
        self.reason = reason


class NoVaultConfigured(NotedexError):
    """No ``--vault``, no ``NOTEDEX_VAULT``, no config file entry, no ``.obsidian/`` above."""

    def __init__(self) -> None:
        super().__init__(
            "no vault configured: pass --vault PATH, set NOTEDEX_VAULT, or run inside a "
            "folder that contains .obsidian/"
        )


class NoteNotFound(NotedexError):
    """``show PATH|TITLE`` named no note, or the note could not be read."""


class IndexUnavailable(NotedexError):
    """The index is missing, unreadable or of another schema version."""


class ServiceManagerFailed(NotedexError):
    """systemctl or launchctl failed or is missing: the service is not (un)installed."""

    exit_code = EXIT_UNAVAILABLE


class DaemonAlreadyRunning(NotedexError):
    """Another daemon holds the writer lock of this vault."""

    exit_code = EXIT_TEMPFAIL


class IndexCorrupt(IndexUnavailable):
    """SQLite says the index file is damaged (SQLITE_CORRUPT) or is no database (SQLITE_NOTADB).

    The index is a cache: a writer sets the file aside and rebuilds (ARCHITECTURE "Recovery").
    """

    def __init__(
        self, db_path: str | os.PathLike[str], reason: str, *, not_a_database: bool
    ) -> None:
        what = "is not an SQLite database" if not_a_database else "is corrupt"
        super().__init__(f"the index {os.fspath(db_path)} {what} ({reason})")
        self.db_path = os.fspath(db_path)
        self.reason = reason
        self.not_a_database = not_a_database


class IndexDiskFull(NotedexError):
    """The disk (or quota) holding the index is full (SQLITE_FULL): nothing lost, retry later."""

    exit_code = EXIT_TEMPFAIL


class IndexRepairing(IndexUnavailable):
    """A daemon holds the lock and the index file has no tables (its -wal was deleted): wait."""

    exit_code = EXIT_TEMPFAIL


class StreamCut(NotedexError):
    """A streamed ``--json`` answer failed after its first byte: stdout holds a cut document
    (no final newline, not valid JSON), so the exit code says it (ARCHITECTURE, "Streaming
    answers")."""

    exit_code = EXIT_INTERNAL


class StdoutClosed(Exception):
    """The reader of stdout went away (`| head -1`); the command's exit code still stands.

    No ``NotedexError`` (nothing to report): ``cli.main`` returns its ``exit_code``."""

    def __init__(self, exit_code: int) -> None:
        super().__init__(exit_code)
        self.exit_code = exit_code
