"""cli.commands: the table's handlers, named by module and imported when their command runs."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from notedex.cli.commands import COMMANDS, Command

HANDLER_MODULES = ("lookup", "questions", "listings", "writes", "upkeep", "integrations")


def test_every_handler_the_table_names_is_its_module_s_export() -> None:
    """Each command's handler is a function of the module it names, and each handler module
    exports (``__all__``) exactly the handlers the table names from it: a typo in a module or
    a name, or a handler no command runs, fails here rather than when the command runs."""
    named: dict[str, set[str]] = {module: set() for module in HANDLER_MODULES}
    for name, command in COMMANDS.items():
        handler_module, handler_name = command.handler
        module = importlib.import_module(f"notedex.cli.{handler_module}")
        assert callable(getattr(module, handler_name)), name
        named[handler_module].add(handler_name)
    for module in HANDLER_MODULES:
        exported = set(importlib.import_module(f"notedex.cli.{module}").__all__)
        assert exported == named[module], module


def test_a_missing_handler_fails_when_called() -> None:
    with pytest.raises(AttributeError):
        Command("nothing", "", (), ("questions", "cmd_no_such_command")).run(None)


def test_the_table_imports_no_handler_module() -> None:
    """Loading the table (every query does) loads the shared step, not the handlers by job."""
    code = (
        "import sys, notedex.cli.commands; "
        "print(*sorted(m for m in sys.modules if m.startswith('notedex.cli.')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    loaded = out.split()
    assert "notedex.cli.commands" in loaded  # the probe sees the table
    assert [m for m in loaded if m.rsplit(".", 1)[1] in HANDLER_MODULES] == []
