"""`notedex service install|uninstall|status`: the systemd unit and the launchd plist.

Nothing here talks to a real service manager: HOME/XDG are per-test (conftest), and the
non-dry-run tests put a fake `systemctl` first on PATH.
"""

from __future__ import annotations

import json
import os
import plistlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from notedex.config import Config
from notedex.daemon import install
from notedex.daemon.install import (
    TEMPLATES,
    daemon_argv,
    render_plist,
    render_unit,
    service_command,
    systemd_quote,
    template_text,
)
from tests.helpers import REPO, run_cli


@pytest.fixture
def cfg(tmp_path: Path) -> Config:
    vault = tmp_path / "My Vault 100%"
    (vault / ".obsidian").mkdir(parents=True)
    return Config(vault=vault.resolve(), db=(tmp_path / "state" / "index.db").resolve())


def _unit_lines(text: str) -> dict[str, str]:
    return dict(
        line.split("=", 1) for line in text.splitlines() if "=" in line and not line.startswith("#")
    )


@pytest.mark.parametrize("name", TEMPLATES)
def test_repo_templates_are_the_packaged_ones(name: str) -> None:
    assert (REPO / "systemd" / name).read_text(encoding="utf-8") == template_text(name)


def test_unit_has_the_service_settings(cfg: Config) -> None:
    unit = _unit_lines(render_unit(cfg))
    assert unit["Type"] == "notify"
    assert unit["Restart"] == "on-failure"
    assert unit["RestartPreventExitStatus"] == "2 75"
    assert int(unit["WatchdogSec"]) > 0
    assert unit["IOSchedulingClass"] == "idle"
    assert unit["NoNewPrivileges"] == "yes"
    assert unit["UMask"] == "0077"
    assert "Nice" in unit
    assert unit["WantedBy"] == "default.target"
    exec_start = unit["ExecStart"]
    assert exec_start.startswith(
        systemd_quote(os.path.abspath(sys.executable)) + " -m notedex daemon --vault "
    )
    # the vault path has a space and a %: quoted, % doubled (systemd specifiers)
    assert f'"{str(cfg.vault).replace("%", "%%")}"' in exec_start
    assert str(cfg.db) in exec_start


def test_systemd_quoting() -> None:
    assert systemd_quote("/usr/bin/python3") == "/usr/bin/python3"
    assert systemd_quote("/a b") == '"/a b"'
    assert systemd_quote('/a"b') == '"/a\\"b"'
    assert systemd_quote("/x/100%") == "/x/100%%"
    assert systemd_quote("/x/$HOME") == "/x/$$HOME"


@pytest.mark.skipif(
    shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed"
)
def test_unit_passes_systemd_analyze_verify(cfg: Config, tmp_path: Path) -> None:
    path = tmp_path / "units" / "notedex-test.service"
    path.parent.mkdir()
    path.write_text(render_unit(cfg), encoding="utf-8")
    proc = subprocess.run(
        ["systemd-analyze", "verify", str(path)], capture_output=True, text=True, timeout=60
    )
    if proc.returncode != 0 and "Failed to initialize manager" in proc.stderr:
        pytest.skip(f"systemd-analyze cannot run here: {proc.stderr.strip()}")
    complaints = [line for line in proc.stderr.splitlines() if path.name in line]
    assert proc.returncode == 0 and not complaints, proc.stderr


def test_plist_loads_with_plistlib(cfg: Config) -> None:
    data = plistlib.loads(render_plist(cfg).encode("utf-8"))
    assert data["Label"].startswith("org.notedex.")
    assert data["ProgramArguments"] == daemon_argv(cfg)
    assert data["ProgramArguments"][0] == os.path.abspath(sys.executable)
    assert data["RunAtLoad"] is True
    assert data["KeepAlive"] == {"SuccessfulExit": False}
    assert data["ProcessType"] == "Background"
    assert data["StandardOutPath"] == data["StandardErrorPath"]
    assert data["StandardErrorPath"].endswith(".log")


def test_plist_escapes_xml(tmp_path: Path) -> None:
    vault = tmp_path / "R&D <notes>"
    vault.mkdir()
    data = plistlib.loads(render_plist(Config(vault=vault, db=tmp_path / "x.db")).encode("utf-8"))
    assert str(vault) in data["ProgramArguments"]


def test_full_disk_access_is_explained_for_protected_folders() -> None:
    home = Path.home()
    note = install.full_disk_access_note(
        home / "Library" / "Mobile Documents" / "iCloud~md~obsidian" / "Vault"
    )
    assert "Full Disk Access" in note and note.startswith("Your vault")
    assert not install.full_disk_access_note(home / "notes").startswith("Your vault")


def test_dry_run_prints_the_unit_and_writes_nothing(cfg: Config, tmp_path: Path) -> None:
    result = run_cli("service", "install", "--dry-run", "--vault", cfg.vault, "--db", cfg.db)
    assert result.code == 0, result.stderr
    assert "would write" in result.stdout and "Type=notify" in result.stdout
    assert "systemctl --user enable --now notedex-" in result.stdout
    assert f"{os.path.abspath(sys.executable)} -m notedex daemon --vault" in result.stdout
    home = Path(os.environ["HOME"])
    config_home = Path(os.environ["XDG_CONFIG_HOME"])
    assert not (config_home / "systemd").exists() and not (home / ".config" / "systemd").exists()


def test_dry_run_json(cfg: Config) -> None:
    result = run_cli(
        "service", "install", "--dry-run", "--json", "--vault", cfg.vault, "--db", cfg.db
    )
    assert result.code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["dryRun"] is True and data["written"] is False and data["ran"] == []
    assert data["content"].startswith("# notedex")
    assert data["path"].endswith(".service") and not Path(data["path"]).exists()


@pytest.mark.skipif(sys.platform == "darwin", reason="systemd install path")
def test_install_status_uninstall_with_a_fake_systemctl(cfg: Config, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "systemctl-calls"
    fake = bin_dir / "systemctl"
    fake.write_text(f'#!/bin/sh\necho "$@" >> "{calls}"\n', encoding="utf-8")
    fake.chmod(0o755)
    env = {"PATH": str(bin_dir)}
    installed = run_cli(
        "service", "install", "--json", "--vault", cfg.vault, "--db", cfg.db, env=env
    )
    assert installed.code == 0, installed.stderr
    data = installed.json()
    unit = Path(data["path"])
    assert data["written"] and unit.exists()
    assert unit.read_text(encoding="utf-8") == data["content"]
    assert unit.parent == Path(os.environ["XDG_CONFIG_HOME"]) / "systemd" / "user"
    assert calls.read_text().splitlines() == [
        "--user daemon-reload",
        f"--user enable --now {unit.name}",
    ]

    status = run_cli("service", "status", "--vault", cfg.vault, "--db", cfg.db, env=env)
    assert status.code == 0 and "installed at" in status.stdout and "not running" in status.stdout

    removed = run_cli(
        "service", "uninstall", "--json", "--vault", cfg.vault, "--db", cfg.db, env=env
    )
    assert removed.code == 0 and removed.json()["removed"] and not unit.exists()
    assert calls.read_text().splitlines()[-2:] == [
        f"--user disable --now {unit.name}",
        "--user daemon-reload",
    ]


@pytest.mark.skipif(sys.platform == "darwin", reason="systemd install path")
def test_install_without_systemctl_prints_the_commands(cfg: Config, tmp_path: Path) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    result = run_cli(
        "service", "install", "--vault", cfg.vault, "--db", cfg.db, env={"PATH": str(empty)}
    )
    # Not installed as a service: exit 69 (EX_UNAVAILABLE), the reason and what to run.
    assert (result.code, result.stdout) == (69, ""), result.stderr
    assert result.stderr.startswith("notedex: error: wrote ")
    assert (
        "systemctl was not found; run it yourself: systemctl --user daemon-reload" in result.stderr
    )


@pytest.mark.skipif(sys.platform == "darwin", reason="systemd install path")
def test_install_exits_non_zero_with_the_reason_when_systemctl_fails(
    cfg: Config, tmp_path: Path
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "systemctl"
    fake.write_text("#!/bin/sh\necho 'Failed to connect to bus: No medium found' >&2\nexit 1\n")
    fake.chmod(0o755)
    for as_json in ((), ("--json",)):
        result = run_cli(
            "service",
            "install",
            *as_json,
            "--vault",
            cfg.vault,
            "--db",
            cfg.db,
            env={"PATH": str(bin_dir)},
        )
        assert (result.code, result.stdout) == (69, ""), result.stderr
        assert "`systemctl --user daemon-reload` failed (exit 1: Failed to connect to bus" in (
            result.stderr
        )
        assert "run it yourself" in result.stderr and "Traceback" not in result.stderr
    dry = run_cli(
        "service",
        "install",
        "--dry-run",
        "--vault",
        cfg.vault,
        "--db",
        cfg.db,
        env={"PATH": str(bin_dir)},
    )
    assert dry.code == 0  # a dry run runs nothing, so nothing failed


def test_launchd_plan_on_macos(cfg: Config, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(install.sys, "platform", "darwin")
    data = service_command(cfg, "install", dry_run=True)
    assert data["platform"] == "launchd"
    assert data["path"].endswith(".plist") and "/Library/LaunchAgents/" in data["path"]
    assert plistlib.loads(data["content"].encode("utf-8"))["Label"] == data["name"]
    assert any(c.startswith("launchctl bootstrap gui/") for c in data["commands"])
    assert "Full Disk Access" in data["text"]
