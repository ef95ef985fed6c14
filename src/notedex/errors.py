"""Every exit code and the root of the one error hierarchy (STYLE 8): the CLI maps these in one place.

Every user-facing failure is a ``NotedexError``; its ``exit_code`` is what the process exits
with (ARCHITECTURE "CLI contract": 2 usage or input error, 75 try again later). Each
exit code is defined here once and imported wherever a process ends with it.

Every command loads this module, so it holds only what a query needs at hand: the codes,
``NotedexError`` and ``UsageError``. The other classes of the hierarchy are in
``notedex.error_kinds``, imported where they are raised or caught: making a class costs about
0.15M instructions (an exception class's slots are looked up along its whole MRO), and a query
that does not fail raises none of them (issue 30's speed budget; docs/design/imports.md).
"""

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
