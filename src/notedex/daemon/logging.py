"""Daemon logging with structlog: JSON lines for machines, readable lines on a terminal.

Everything goes to stderr. Under systemd, stderr is the journal: when ``JOURNAL_STREAM``
names our stderr, each line starts with a syslog priority (``<6>``) so journald keeps the
level. The stdlib loggers of watchdog and apscheduler, Python warnings (watchdog warns with
them) and uncaught exceptions in threads go through the same renderer. The ``exit_code`` field
of the "stopped" and "cannot run" lines is the process's exit code.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Mapping
from typing import TextIO

import structlog
from structlog.typing import EventDict, Processor, WrappedLogger

# syslog(3) priorities, as journald reads them from a "<N>" line prefix.
SYSLOG_PRIORITY = {
    "critical": 2,
    "exception": 3,
    "error": 3,
    "warning": 4,
    "warn": 4,
    "info": 6,
    "debug": 7,
}

_installed: logging.Handler | None = None


def on_journal(stream: TextIO, environ: Mapping[str, str] | None = None) -> bool:
    """True when ``stream`` is the journal stream systemd told us about (``JOURNAL_STREAM``)."""
    env = os.environ if environ is None else environ
    expected = env.get("JOURNAL_STREAM", "")
    if not expected:
        return False
    try:
        info = os.fstat(stream.fileno())
    except (OSError, ValueError, AttributeError):
        return False
    return expected == f"{info.st_dev}:{info.st_ino}"


class JournalPrefix:
    """Wraps a renderer and puts the syslog priority in front of each line."""

    def __init__(self, render: Processor) -> None:
        self._render = render

    def __call__(self, logger: WrappedLogger, method_name: str, event_dict: EventDict) -> str:
        level = str(event_dict.get("level", method_name)).lower()
        line = self._render(logger, method_name, event_dict)
        text = line.decode("utf-8", "replace") if isinstance(line, bytes) else str(line)
        return f"<{SYSLOG_PRIORITY.get(level, 6)}>{text}"


def configure_logging(
    stream: TextIO | None = None,
    *,
    level: int = logging.INFO,
    environ: Mapping[str, str] | None = None,
) -> None:
    """Route structlog and the stdlib ``logging`` tree to ``stream`` (stderr by default)."""
    global _installed
    out = sys.stderr if stream is None else stream
    env = os.environ if environ is None else environ
    tty = _isatty(out)
    shared: list[Processor] = [
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        # A terminal shows local wall-clock time up front; machines get UTC ISO 8601.
        structlog.processors.TimeStamper(fmt="%H:%M:%S", utc=False)
        if tty
        else structlog.processors.TimeStamper(fmt="iso", utc=True, key="ts"),
    ]
    renderer: Processor
    if tty:
        # https://no-color.org: set and not empty means no ANSI colour, whatever its value.
        renderer = structlog.dev.ConsoleRenderer(colors=not env.get("NO_COLOR"))
        extra: list[Processor] = []
    else:
        renderer = structlog.processors.JSONRenderer(default=str, sort_keys=False)
        extra = [structlog.processors.format_exc_info]
        if on_journal(out, environ):
            renderer = JournalPrefix(renderer)
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=shared,
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, *extra, renderer],
    )
    handler = logging.StreamHandler(out)
    handler.setFormatter(formatter)
    root = logging.getLogger()
    if _installed is not None:
        root.removeHandler(_installed)
    root.addHandler(handler)
    root.setLevel(level)
    _installed = handler
    # Their INFO lines ("Added job", "Scheduler started") are noise in a journal.
    logging.getLogger("apscheduler").setLevel(logging.WARNING)
    # watchdog reports some problems with `warnings.warn` (RuntimeWarning), and a thread that
    # dies prints a traceback: both become log lines in the same format, never bare text.
    logging.captureWarnings(False)  # re-install: someone may have put their own showwarning back
    logging.captureWarnings(True)
    threading.excepthook = _log_thread_exception
    structlog.configure(
        processors=[*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )


def _log_thread_exception(args: threading.ExceptHookArgs) -> None:
    if args.exc_type is SystemExit:
        return
    thread = args.thread.name if args.thread is not None else None
    get_logger("notedex.daemon.thread").error(
        "thread failed",
        thread=thread,
        error=repr(args.exc_value),
        exc_info=(args.exc_type, args.exc_value, args.exc_traceback),
    )


def get_logger(name: str = "notedex.daemon") -> structlog.stdlib.BoundLogger:
    return structlog.stdlib.get_logger(name)


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
