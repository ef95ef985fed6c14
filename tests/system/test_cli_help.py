"""`notedex help [COMMAND]` and "did you mean" for a mistyped command, option or choice (issue
34), through the real `python -m notedex` (exit codes and stdout purity are contracts)."""

from __future__ import annotations

import pytest

from notedex.cli import COMMANDS
from tests.helpers import run_cli


@pytest.mark.parametrize("command", ["search", "daemon", "export"])
def test_help_command_prints_what_command_help_prints(command: str) -> None:
    via_help = run_cli("help", command, env={"COLUMNS": "100"})
    via_option = run_cli(command, "--help", env={"COLUMNS": "100"})
    assert via_help.code == 0 and via_help.stderr == ""
    assert via_help.stdout == via_option.stdout
    assert via_help.stdout.startswith(f"usage: notedex {command} ")


def test_help_alone_prints_notedex_help_and_names_itself() -> None:
    result = run_cli("help", env={"COLUMNS": "100"})
    assert result.code == 0 and result.stderr == ""
    assert result.stdout == run_cli("--help", env={"COLUMNS": "100"}).stdout
    assert "notedex help COMMAND shows a command's help" in result.stdout
    assert all(name in result.stdout for name in COMMANDS)


@pytest.mark.parametrize(
    ("argv", "hint"),
    [
        (["help", "serch"], "hint: did you mean search?"),
        (["serch", "cobra"], "hint: did you mean search?"),
        (["lokup", "cobra"], "hint: did you mean lookup?"),
        (["search", "cobra", "--limt", "3"], "hint: did you mean --limit?"),
        (["lookup", "cobra", "--jsno"], "hint: did you mean --json?"),
        (["tags", "--vualt", "v"], "hint: did you mean --vault?"),
        (["tags", "--qqqzzz=3", "--vualt", "v"], "hint: did you mean --vault (not --vualt)?"),
        (["export", "--format", "conector-v1"], "hint: did you mean connector-v1?"),
    ],
)
def test_a_mistyped_word_exits_2_with_did_you_mean(argv: list[str], hint: str) -> None:
    result = run_cli(*argv)
    assert result.code == 2 and result.stdout == ""
    assert hint in result.stderr.splitlines(), result.stderr


@pytest.mark.parametrize(
    "argv", [["qqqzzz"], ["help", "qqqzzz"], ["search", "cobra", "--qqqzzz"], ["help", "a", "b"]]
)
def test_nothing_close_is_a_plain_usage_error(argv: list[str]) -> None:
    result = run_cli(*argv)
    assert result.code == 2 and result.stdout == ""
    assert "error:" in result.stderr and "did you mean" not in result.stderr
