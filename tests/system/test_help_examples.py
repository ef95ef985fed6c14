"""Every example in the help text runs on the bundled demo vault (issue 34).

Each command's `examples:` (``Command.examples``) and the top-level help's (``EPILOG``) run in
bash, as a user would paste them, with ``notedex`` on the PATH, ``$NOTEDEX_VAULT`` naming a copy
of examples/demo-vault (also at ``~/notes`` and, for the `eval` example, at
``examples/demo-vault`` under the working directory). An example must exit as documented
(0; 1 only where the command's findings make it: health, eval, quote) and print something, and
an answer that finds nothing ("no matching notes", an empty list) fails it: an example that
shows nothing teaches nothing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from notedex.cli.commands import COMMANDS, EPILOG
from tests.helpers import DEMO_VAULT, REPO


def _examples() -> list[tuple[str, str]]:
    pairs = [
        (command.name, example) for command in COMMANDS.values() for example in command.examples
    ]
    for line in EPILOG.split("\n\n", 1)[0].splitlines():
        if line.startswith("  notedex "):
            example = line.strip()
            pairs.append((example.split()[1], example))
    return pairs


EXAMPLES = _examples()

SERVES_UNTIL_STOPPED = ("daemon", "mcp")
"""Commands that run until stopped: their examples start a server, which the daemon and MCP
tests run for real (tests/system/test_daemon_lifecycle.py, tests/system/test_mcp.py)."""
FINDINGS = ("health", "eval", "quote", "fix")
"""Commands whose exit 1 is an answer (docs/cli.md, "Exit codes")."""
SERVICE_UNREACHABLE = 69
"""`service` without a reachable service manager (a container): its documented exit code."""
FOUND_NOTHING = re.compile(
    r"no matching notes|^0 (notes|unlinked mentions|candidates|matching)|\"(hits|candidates|"
    r"notes|mentions|lines|tasks|rows|edits)\":\[\]|no note matches|^\[\]$|^0$|^0 tasks",
    re.MULTILINE,
)
TOOLS = ("jq", "xargs", "wc", "dot", "zsh", "fish", "claude")
WRITES_VAULT = ("--apply",)
"""Examples that change the vault (`fix --apply`) run on a copy of their own, so that every
other example, in any order, sees the demo vault as shipped."""


@pytest.fixture(scope="module")
def place(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """(working directory, environment) for the examples: a copy of the demo vault."""
    base = tmp_path_factory.mktemp("examples")
    vault = base / "examples" / "demo-vault"
    shutil.copytree(DEMO_VAULT, vault)
    shutil.copy(REPO / "examples" / "demo-cases.json", base / "examples" / "demo-cases.json")
    shutil.copytree(REPO / "examples" / "bases", base / "examples" / "bases")  # `base`'s examples
    home = base / "home"
    (home / ".config" / "fish" / "completions").mkdir(parents=True)
    (home / "notes").symlink_to(vault, target_is_directory=True)
    bin_dir = base / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "notedex"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m notedex "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(base / "state"),
        "NOTEDEX_VAULT": str(vault),
        "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p),
    }
    env.pop("NOTEDEX_DB", None)
    env.pop("NOTEDEX_CONFIG", None)
    return base, env


@pytest.mark.slow  # about 45 subprocesses and shells: 20-45 s (.ci/run runs the slow tier)
@pytest.mark.parametrize(("command", "example"), EXAMPLES, ids=[e for _, e in EXAMPLES])
def test_every_help_example_works_on_the_demo_vault(
    place: tuple[Path, dict[str, str]], command: str, example: str, tmp_path: Path
) -> None:
    if command in SERVES_UNTIL_STOPPED and example.lstrip().startswith("notedex"):
        pytest.skip(f"`notedex {command}` serves until stopped (its own tests run it)")
    programs = [part.split()[0] for part in re.split(r"\||\$\(|--\s", example) if part.split()]
    missing = [tool for tool in TOOLS if tool in programs and shutil.which(tool) is None]
    if missing:
        pytest.skip(f"needs {', '.join(missing)}, not installed here")
    base, env = place
    if any(flag in example for flag in WRITES_VAULT):
        base = _private_copy(base, tmp_path)
        env = {**env, "NOTEDEX_VAULT": str(base / "examples" / "demo-vault")}
        env["XDG_STATE_HOME"] = str(base / "state")
    # Vault paths are relative to the vault (`scan -0 | xargs -0 wc -w` is run from inside it);
    # the rest run beside it (`export --out` refuses a file inside the vault), where the `eval`
    # example finds the files of a clone of the repository.
    cwd = Path(env["NOTEDEX_VAULT"]) if "xargs" in example else base
    shell = "zsh" if "completion zsh" in example else "bash"
    if shutil.which(shell) is None:
        pytest.skip(f"needs {shell}, not installed here")
    proc = subprocess.run(
        [shell, "-c", f"set -o pipefail\n{example}"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    allowed = {0, 1} if command in FINDINGS else {0}
    if command == "service":
        allowed.add(SERVICE_UNREACHABLE)
    assert proc.returncode in allowed, f"exit {proc.returncode}\n{proc.stderr}"
    assert "Traceback" not in proc.stderr
    written = re.search(r"(?:>|--out)\s*(\S+)\s*$", example.split("#")[0].strip())
    if written:
        output = Path(cwd, written[1].replace("~", env["HOME"], 1)).read_text(encoding="utf-8")
    elif example.startswith("eval "):
        return  # sets up the shell: nothing to print
    else:
        output = proc.stdout
    assert output.strip(), f"printed nothing\n{proc.stderr}"
    assert not FOUND_NOTHING.search(output), f"found nothing:\n{output[:2000]}"
    listed = ANSWER_LISTS.get(command)
    if listed and re.fullmatch(r"notedex [^|>]*", example) and "--format dot" not in example:
        # The same line's JSON: the list the example is about is not empty.
        again = example if "--json" in example else example + " --json"
        proc = subprocess.run(
            ["bash", "-c", again], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
        )
        assert json.loads(proc.stdout)[listed], f"{again}: no {listed}"


def _private_copy(base: Path, tmp_path: Path) -> Path:
    """The examples' place, copied (the shared one stays as shipped); its state is not copied."""
    copy = tmp_path / "place"
    shutil.copytree(base / "examples", copy / "examples")
    return copy


ANSWER_LISTS = {
    "lookup": "candidates",
    "search": "hits",
    "scan": "notes",
    "tags": "tags",
    "mentions": "mentions",
    "graph": "nodes",
}
"""The list of each command's answer that its examples must not leave empty."""
