"""daemon/logging.py: JSON lines off a TTY, readable text on one, journal priority prefixes."""

from __future__ import annotations

import io
import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog

from notedex.daemon.logging import JournalPrefix, configure_logging, on_journal


@pytest.fixture
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for extra in [h for h in root.handlers if h not in handlers]:
        root.removeHandler(extra)
    root.setLevel(level)
    structlog.reset_defaults()


def test_logging_writes_json_lines_off_a_tty(restore_logging: None) -> None:
    out = io.StringIO()
    configure_logging(out, environ={})
    structlog.stdlib.get_logger("test.json").info("batch", paths=3, sample=["a.md"], seconds=0.01)
    logging.getLogger("watchdog.observers.inotify_c").warning("Inotify queue overflowed")
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert lines[0]["event"] == "batch" and lines[0]["paths"] == 3 and lines[0]["level"] == "info"
    assert lines[1]["logger"] == "watchdog.observers.inotify_c" and lines[1]["level"] == "warning"


def test_logging_prefixes_the_priority_on_the_journal(
    restore_logging: None, tmp_path: Path
) -> None:
    with open(tmp_path / "journal", "w+", encoding="utf-8") as stream:
        info = os.fstat(stream.fileno())
        env = {"JOURNAL_STREAM": f"{info.st_dev}:{info.st_ino}"}
        assert on_journal(stream, env) and not on_journal(stream, {"JOURNAL_STREAM": "1:2"})
        configure_logging(stream, environ=env)
        structlog.stdlib.get_logger("test.journal").info("ready")
        structlog.stdlib.get_logger("test.journal").error("batch failed")
        stream.flush()
        stream.seek(0)
        lines = stream.read().splitlines()
    assert lines[0].startswith("<6>{") and json.loads(lines[0][3:])["event"] == "ready"
    assert lines[1].startswith("<3>{")


def test_journal_prefix_wraps_any_renderer() -> None:
    render = JournalPrefix(lambda logger, name, event_dict: "line")
    assert render(None, "warning", {"level": "warning"}) == "<4>line"


def test_logging_is_readable_on_a_tty(restore_logging: None) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Terminal()
    configure_logging(out, environ={})
    structlog.stdlib.get_logger("test.tty").info("batch", paths=3)
    text = out.getvalue()
    assert not text.startswith("{") and "batch" in text and "paths" in text


def test_warnings_and_thread_exceptions_are_json_lines(
    restore_logging: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """watchdog warns with `warnings.warn`; a dying thread prints a traceback: both are JSON."""
    import threading
    import warnings

    monkeypatch.setattr(threading, "excepthook", threading.excepthook)
    out = io.StringIO()
    configure_logging(out, environ={})
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            warnings.warn("Callback with id 'x' already exists", RuntimeWarning, stacklevel=1)

        def boom() -> None:
            raise RuntimeError("observer died")

        thread = threading.Thread(target=boom, name="observer")
        thread.start()
        thread.join()
    finally:
        logging.captureWarnings(False)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [line["logger"] for line in lines] == ["py.warnings", "notedex.daemon.thread"]
    assert "already exists" in lines[0]["event"]
    assert lines[1]["thread"] == "observer" and "observer died" in lines[1]["error"]


@pytest.mark.parametrize("no_color", ["1", "0", "yes"])
def test_no_color_is_honoured_on_a_tty(restore_logging: None, no_color: str) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    coloured = Terminal()
    configure_logging(coloured, environ={})
    structlog.stdlib.get_logger("test.tty").warning("batch", paths=3)
    assert "\x1b[" in coloured.getvalue()  # the twin: colours are on without NO_COLOR
    plain = Terminal()
    configure_logging(plain, environ={"NO_COLOR": no_color})  # any non-empty value
    structlog.stdlib.get_logger("test.tty").warning("batch", paths=3)
    text = plain.getvalue()
    assert "batch" in text and "\x1b[" not in text
