"""cli.handlers: the shared steps of the commands, in-process (the subprocess side is tests/system/test_cli.py)."""

from __future__ import annotations

import io
import sys

import pytest

from notedex.cli.handlers import _progress_printer


def test_progress_printer_draws_on_a_tty_only(monkeypatch: pytest.MonkeyPatch) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert _progress_printer("indexing") is None
    screen = Terminal()
    monkeypatch.setattr(sys, "stderr", screen)
    show = _progress_printer("indexing")
    assert show is not None
    show(0, 4)
    show(2, 4)
    show(4, 4)
    out = screen.getvalue()
    assert "\rindexing [" + "." * 30 + "] 0/4" in out
    assert "\rindexing [" + "#" * 15 + "." * 15 + "] 2/4" in out
    assert out.endswith("\rindexing [" + "#" * 30 + "] 4/4\n")
