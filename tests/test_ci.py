"""`.ci/run` and the README agree (issue 34): CI runs the README's test command itself, then
the slow tier and the thorough hypothesis profile, the other interpreters' fast subset, and the
daemon tests on the oldest watchdog release; the README and pyproject name the same versions."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
CI = (REPO / ".ci" / "run").read_text(encoding="utf-8")
CI_LINES = {line.strip() for line in CI.splitlines()}
SUPPORTED = ("3.11", "3.12", "3.13")


def _readme_test_command() -> str:
    """The pytest invocation at the end of the README's install-and-test block."""
    blocks = re.findall(r"```(?:sh|bash|console)?\n(.*?)```", README, re.DOTALL)
    (block,) = [b for b in blocks if ".[test]" in b and "pytest" in b][:1]
    return block.strip().rsplit("&&", 1)[1].strip()


def test_ci_runs_the_readmes_test_command_as_written() -> None:
    command = _readme_test_command()
    assert command.startswith("python -m pytest"), command
    assert command in CI_LINES, command
    assert shlex.split(command)[-2:] == ["-m", "not slow"], command


def test_ci_runs_the_slow_tier_and_the_thorough_profile() -> None:
    assert 'python -m pytest -m "slow or hypothesis" --hypothesis-profile thorough' in CI_LINES


def test_ci_tries_every_supported_interpreter_and_says_what_it_skipped() -> None:
    loop = re.search(r"^for minor in (.*); do$", CI, re.MULTILINE)
    assert loop, "no loop over the other interpreters"
    assert ("3.11", *loop[1].split()) == SUPPORTED
    assert "skipped+=" in CI and "printf 'skipped: %s\\n'" in CI


def test_supported_versions_agree_in_pyproject_and_readme() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    classified = tuple(
        c.rsplit(" :: ", 1)[1]
        for c in project["classifiers"]
        if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)
    )
    assert classified == SUPPORTED
    assert project["requires-python"] == ">=3.11"
    assert "Supported Python versions: 3.11, 3.12 and 3.13" in " ".join(README.split())


VULTURE = "vulture src/notedex .ci/vulture_allow.py --min-confidence 60"
"""The dead-code check (issue 34), as .ci/run runs it."""


def test_ci_checks_for_dead_code() -> None:
    assert VULTURE in CI_LINES
    test_extra = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert any(
        r.startswith("vulture") for r in test_extra["project"]["optional-dependencies"]["test"]
    )


@pytest.mark.slow  # two vulture runs over the tree (2.5-8 s); .ci/run runs the check first anyway
def test_the_tree_has_no_dead_code(tmp_path: Path) -> None:
    import subprocess
    import sys

    command = [sys.executable, "-m", *shlex.split(VULTURE)]
    clean = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    # The twin: a dead function beside the tree is reported, so the check can fail.
    dead = tmp_path / "dead.py"
    dead.write_text("def never_called_anywhere() -> None:\n    pass\n", encoding="utf-8")
    at = command.index(".ci/vulture_allow.py")
    with_dead = [*command[:at], str(dead), *command[at:]]
    found = subprocess.run(with_dead, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert found.returncode != 0 and "never_called_anywhere" in found.stdout
