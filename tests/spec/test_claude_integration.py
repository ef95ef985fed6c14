"""The Claude Code integration files keep to the CLI contract: read-only commands, JSON only."""

from __future__ import annotations

import json
import re

from tests.helpers import REPO

READ_ONLY_COMMANDS = {"lookup", "search", "show", "quote", "scan", "health", "graph", "status"}


def test_claude_permissions_allow_exactly_read_only_command_prefixes() -> None:
    from notedex.cli import COMMANDS

    settings = json.loads(
        (REPO / "integrations" / "claude" / "settings.json").read_text(encoding="utf-8")
    )
    assert set(settings) == {"permissions"} and set(settings["permissions"]) == {"allow"}
    commands = []
    for rule in settings["permissions"]["allow"]:
        match = re.fullmatch(r"Bash\(notedex ([a-z]+):\*\)", rule)
        assert match, f"not a fixed `notedex <command>` prefix: {rule}"
        commands.append(match[1])
    assert set(commands) == READ_ONLY_COMMANDS and len(commands) == len(set(commands))
    assert set(commands) <= set(COMMANDS)


def test_ask_vault_command_reads_only_candidates_through_json() -> None:
    text = (REPO / "integrations" / "claude" / "ask-vault.md").read_text(encoding="utf-8")
    match = re.match(r"---\n(.*?)\n---\n(.*)", text, re.DOTALL)
    assert match, "Claude Code commands start with a frontmatter block"
    fields = dict(line.split(": ", 1) for line in match[1].splitlines())
    assert set(fields) == {"description", "argument-hint", "allowed-tools"}
    allowed = [tool.strip() for tool in fields["allowed-tools"].split(",")]
    assert allowed == [
        "Bash(notedex lookup:*)",
        "Bash(notedex search:*)",
        "Bash(notedex show:*)",
        "Bash(notedex quote:*)",
    ]
    settings = json.loads(
        (REPO / "integrations" / "claude" / "settings.json").read_text(encoding="utf-8")
    )
    assert set(allowed) <= set(settings["permissions"]["allow"])
    body = match[2]
    assert "$ARGUMENTS" in body
    assert "notedex lookup '<the question>' --json" in body
    assert "notedex search '<term>' --json" in body
    assert "notedex show '<path>' --json" in body
    assert "notedex show '<path>' --body --json" in body
    assert "notedex show '<path>' --lines <A>-<B> --json" in body
    assert "notedex quote '<path>' '<passage>' --json" in body
    assert "[path:line]" in body and "[path:first-last]" in body
    for duty in (
        "non-zero exit",
        "narrowed",
        "Sources",
        "Never parse its text output",
        "NOTEDEX_VAULT",
        "config.toml",
        "fall back to full-text search",
        "Size cap:",
        "lines per command",
    ):
        assert duty in body, duty
