"""The one error hierarchy and every exit code (STYLE 8): the CLI maps these in one place.

Every user-facing failure is a ``NotedexError``; its ``exit_code`` is what the process exits
with (ARCHITECTURE "CLI contract": 2 usage or input error, 75 try again later). Each
exit code is defined here once and imported wherever a process ends with it.
"""

import os

EXIT_OK = 0
EXIT_FINDINGS = 1
"""``health`` found broken links (same rule with and without ``--json``); eval cases failed."""
EXIT_USAGE = 2
"""A bad flag, option or input; the message is one line on stderr."""
EXIT_UNAVAILABLE = 69
"""EX_UNAVAILABLE: ``service install|uninstall`` could not reach the service manager."""
EXIT_INTERNAL = 70
"""EX_SOFTWARE: a bug, not a user error (the CLI's internal error, a daemon that failed)."""
EXIT_TEMPFAIL = 75
"""EX_TEMPFAIL, try again later: a daemon already keeps this vault's index (a second daemon,
``index``), the disk holding the index is full, or the daemon is repairing the index."""
EXIT_INTERRUPTED = 130
"""128 + SIGINT: the user pressed Ctrl-C."""


class NotedexError(Exception):
    """A user or input error: a message on stderr, no traceback (unless ``--debug``)."""

    exit_code: int = EXIT_USAGE


class UsageError(NotedexError):
    """A bad flag, option or configuration value."""


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
