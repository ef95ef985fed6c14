"""Every command has help text with examples, and appears in the README (STYLE 12)."""

from __future__ import annotations

import re

import pytest

from notedex.arguments import build_parser
from notedex.cli import COMMANDS
from tests.helpers import REPO, run_cli

README = (REPO / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_command_has_help_with_examples(command: str) -> None:
    result = run_cli(command, "--help")
    assert result.code == 0
    assert "examples:" in result.stdout
    assert f"notedex {command}" in result.stdout


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_command_is_documented_in_readme(command: str) -> None:
    assert re.search(rf"notedex {command}\b", README), (
        f"README does not mention `notedex {command}`"
    )


def test_every_subparser_is_registered() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert set(sub.choices) == set(COMMANDS)  # type: ignore[attr-defined]


def test_readme_opens_with_the_demo_and_test_commands() -> None:
    blocks = re.findall(r"```(?:sh|bash|console)?\n(.*?)```", README, re.DOTALL)
    assert len(blocks) >= 2
    assert "examples/demo-vault" in blocks[0]
    assert ".[test]" in blocks[1] and "pytest" in blocks[1]
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "python -m pytest" in blocks[1] and "python -m pytest" in ci
