"""One symlink policy everywhere (issue 13.14, SEMANTICS 1.6): a symlink out of the vault is a
warning naming the setting and is not followed, unless ``follow_symlinks = true``, which every
command, the daemon and MCP honour alike; symlinks inside the vault follow Obsidian."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from notedex.vault.walk import OUTSIDE_MESSAGE
from tests.helpers import cli_json, run_cli, write
from tests.system.daemons import Daemons, assert_converges, note


def _vault_with_links_out(tmp_path: Path) -> tuple[Path, Path]:
    outside = tmp_path / "outside"
    write(outside / "secret.md", "# Secret\n\nTOPSECRET outside the vault\n")
    write(outside / "folder" / "inner.md", "# Inner\n\nTOPSECRET inner\n")
    vault = tmp_path / "vault"
    write(vault / "a.md", note("Alpha", links="[[inside-link]]"))
    (vault / "leak.md").symlink_to(outside / "secret.md")
    (vault / "linked").symlink_to(outside / "folder", target_is_directory=True)
    (vault / "inside-link.md").symlink_to("a.md")  # inside the vault: followed
    return vault, tmp_path / "index.db"


def _config(tmp_path: Path, follow: bool) -> dict[str, str]:
    path = tmp_path / "config.toml"
    path.write_text(f"follow_symlinks = {'true' if follow else 'false'}\n", encoding="utf-8")
    return {"NOTEDEX_CONFIG": str(path)}


def test_a_symlink_out_of_the_vault_is_a_warning_naming_the_setting(tmp_path: Path) -> None:
    vault, db = _vault_with_links_out(tmp_path)
    scan = cli_json(vault, db, "scan", "--json")
    paths = {n["path"] for n in scan["notes"]}
    assert "inside-link.md" in paths and "a.md" in paths
    assert "leak.md" not in paths and not any(p.startswith("linked/") for p in paths)
    health = cli_json(vault, db, "health", "--json", ok=(0, 1))
    warned = {w["path"]: w["message"] for w in health["warnings"]}
    assert warned == {"leak.md": OUTSIDE_MESSAGE, "linked": OUTSIDE_MESSAGE}
    assert "follow_symlinks" in OUTSIDE_MESSAGE
    assert not [e for e in health["errors"] if e["path"] in warned]
    search = cli_json(vault, db, "search", "TOPSECRET", "--json", ok=(0, 1))
    assert search["hits"] == []


@pytest.mark.slow
def test_follow_symlinks_opts_in_for_every_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault, db = _vault_with_links_out(tmp_path)
    assert cli_json(vault, db, "scan", "--json")  # indexed with the default first
    for key, value in _config(tmp_path, True).items():
        monkeypatch.setenv(key, value)
    scan = cli_json(vault, db, "scan", "--json")  # the setting changed: followed now
    assert {"leak.md", "linked/inner.md"} <= {n["path"] for n in scan["notes"]}
    health = cli_json(vault, db, "health", "--json", ok=(0, 1))
    assert not [w for w in health["warnings"] if w["message"] == OUTSIDE_MESSAGE]
    hits = cli_json(vault, db, "search", "TOPSECRET", "--json")["hits"]
    assert {h["path"] for h in hits} == {"leak.md", "linked/inner.md"}
    shown = run_cli("show", "leak.md", "--body", "--json", "--vault", vault, "--db", db)
    assert shown.code == 0 and "TOPSECRET" in shown.stdout
    # And back off: the rows go, the warnings come back.
    monkeypatch.setenv("NOTEDEX_CONFIG", _config(tmp_path, False)["NOTEDEX_CONFIG"])
    scan = cli_json(vault, db, "scan", "--json")
    assert not {"leak.md", "linked/inner.md"} & {n["path"] for n in scan["notes"]}


def test_the_config_value_must_be_a_boolean(tmp_path: Path) -> None:
    vault, db = _vault_with_links_out(tmp_path)
    config = tmp_path / "bad.toml"
    config.write_text('follow_symlinks = "yes"\n', encoding="utf-8")
    result = run_cli(
        "scan", "--json", "--vault", vault, "--db", db, env={"NOTEDEX_CONFIG": str(config)}
    )
    assert result.code == 2 and "follow_symlinks must be true or false" in result.stderr


@pytest.mark.slow
def test_the_daemon_applies_the_same_policy(
    daemons: Daemons, vault: Path, db_path: Path, tmp_path: Path
) -> None:
    write(vault / "a.md", note("Alpha"))
    outside = tmp_path / "elsewhere"
    write(outside / "x.md", note("Outside"))
    run = daemons.start()
    (vault / "out-link").symlink_to(outside, target_is_directory=True)
    (vault / "out.md").symlink_to(outside / "x.md")
    assert_converges(vault, db_path, tmp_path, run=run)
    health = cli_json(vault, db_path, "health", "--json", ok=(0, 1))
    assert {w["path"] for w in health["warnings"]} >= {"out-link", "out.md"}
    assert json.dumps(health).count(OUTSIDE_MESSAGE.replace('"', '\\"')) == 2
    os.unlink(vault / "out.md")
    assert_converges(vault, db_path, tmp_path, run=run)
