"""Where the vault and the index are: --vault/--db > NOTEDEX_VAULT/NOTEDEX_DB > config file (TOML)
> detection (the nearest folder above the working directory that holds .obsidian/).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from notedex.config import Config, default_db_path, resolve_config
from notedex.error_kinds import NoVaultConfigured, VaultNotFound
from notedex.errors import EXIT_USAGE, NotedexError, UsageError
from tests.helpers import run_inprocess
from tests.indexcheck import fts_sound_after, make_vault

__all__ = ["fts_sound_after"]  # autouse: FTS integrity-check after every test


@pytest.fixture
def vaults(tmp_path: Path) -> dict[str, Path]:
    return {
        name: make_vault(tmp_path / name, {f"{name}.md": ""})
        for name in ("flag", "env", "file", "found")
    }


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "cfg" / "config.toml"
    path.parent.mkdir()
    monkeypatch.setenv("NOTEDEX_CONFIG", str(path))
    return path


def test_precedence_flag_env_file_detection(
    vaults: dict[str, Path], config: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config.write_text(
        f'vault = "{vaults["file"]}"\ndb = "{tmp_path / "file.db"}"\n', encoding="utf-8"
    )
    monkeypatch.setenv("NOTEDEX_VAULT", str(vaults["env"]))
    monkeypatch.setenv("NOTEDEX_DB", str(tmp_path / "env.db"))
    monkeypatch.chdir(vaults["found"])

    cfg = resolve_config(str(vaults["flag"]), str(tmp_path / "flag.db"))
    assert (cfg.vault, cfg.db) == (vaults["flag"].resolve(), tmp_path / "flag.db")
    cfg = resolve_config()
    assert (cfg.vault, cfg.db) == (vaults["env"].resolve(), tmp_path / "env.db")
    monkeypatch.delenv("NOTEDEX_VAULT")
    monkeypatch.delenv("NOTEDEX_DB")
    cfg = resolve_config()
    assert (cfg.vault, cfg.db) == (vaults["file"].resolve(), tmp_path / "file.db")
    config.unlink()
    cfg = resolve_config()
    assert cfg.vault == vaults["found"].resolve()
    assert cfg.db == Path(default_db_path(cfg.vault))


def test_detection_walks_up_to_the_obsidian_folder(
    vaults: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    deep = vaults["found"] / "a" / "b" / "c"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    assert resolve_config().vault == vaults["found"].resolve()
    result = subprocess.run(
        [sys.executable, "-m", "notedex", "scan", "--json"],
        cwd=deep,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert '"found.md"' in result.stdout


def test_default_index_lives_in_the_state_dir_per_vault(vaults: dict[str, Path]) -> None:
    state = Path(os.environ["XDG_STATE_HOME"]) / "notedex"
    one = Path(default_db_path(vaults["flag"]))
    two = Path(default_db_path(vaults["env"]))
    assert one.parent == state == two.parent
    assert one != two and one.suffix == ".db" and one.name.startswith("flag-")
    assert Path(default_db_path(vaults["flag"])) == one  # stable


def test_tilde_is_expanded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = Path(os.environ["HOME"])
    make_vault(home / "notes", {})
    cfg = resolve_config("~/notes", "~/idx/notes.db")
    assert cfg.vault == (home / "notes").resolve()
    assert cfg.db == home / "idx" / "notes.db"


@pytest.mark.parametrize("source", ["flag", "env", "file"])
def test_a_missing_vault_is_exit_2_with_one_line_saying_how(
    source: str, config: Path, tmp_path: Path
) -> None:
    missing = tmp_path / "no such vault"
    args: list[str | Path] = ["health", "--json", "--db", tmp_path / "i.db"]
    env: dict[str, str] = {}
    if source == "flag":
        args += ["--vault", missing]
    elif source == "env":
        env["NOTEDEX_VAULT"] = str(missing)
    else:
        config.write_text(f'vault = "{missing}"\n', encoding="utf-8")
    result = run_inprocess(*args, env=env)
    assert (result.code, result.stdout) == (EXIT_USAGE, "")
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert str(missing) in lines[0] and "--vault" in lines[0] and "NOTEDEX_VAULT" in lines[0]
    assert {"flag": "--vault", "env": "NOTEDEX_VAULT", "file": str(config)}[source] in lines[0]
    assert not (tmp_path / "i.db").exists()


def test_a_vault_that_is_a_file_is_refused(tmp_path: Path) -> None:
    note = tmp_path / "note.md"
    note.write_text("x", encoding="utf-8")
    with pytest.raises(VaultNotFound, match="not a folder"):
        resolve_config(str(note))


def test_no_vault_at_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(NoVaultConfigured) as caught:
        resolve_config()
    assert caught.value.exit_code == EXIT_USAGE
    assert "--vault" in str(caught.value) and ".obsidian" in str(caught.value)


@pytest.mark.parametrize(
    "text, message",
    [
        ("vault = [unclosed", "cannot read config file"),
        ("vault = 42", "vault must be a string"),
        ('inbox = ["a"]', "inbox must be a string"),
        ("max_bytes = -1", "max_bytes"),
        ("max_bytes = true", "max_bytes"),
        ('body_index = "false"', "body_index"),
    ],
)
def test_bad_config_file_values_are_usage_errors(
    text: str, message: str, config: Path, vaults: dict[str, Path], tmp_path: Path
) -> None:
    config.write_text(text + "\n", encoding="utf-8")
    with pytest.raises(UsageError, match=message):
        resolve_config(str(vaults["flag"]), str(tmp_path / "i.db"))
    result = run_inprocess("scan", "--json", "--vault", vaults["flag"], "--db", tmp_path / "i.db")
    assert (result.code, result.stdout) == (EXIT_USAGE, "")
    assert "Traceback" not in result.stderr


def test_config_file_settings_reach_the_writer(
    config: Path, vaults: dict[str, Path], tmp_path: Path
) -> None:
    big = vaults["flag"] / "big.md"
    big.write_text("# Big\n" + "x" * 2000 + "\n[[flag]]\n", encoding="utf-8")
    config.write_text(
        'max_bytes = 1000\nbody_index = false\ninbox = "Captured"\n', encoding="utf-8"
    )
    cfg = resolve_config(str(vaults["flag"]), str(tmp_path / "i.db"))
    assert isinstance(cfg, Config)
    assert (cfg.max_bytes, cfg.body_index, cfg.inbox) == (1000, False, "Captured")
    scan = run_inprocess("scan", "--json", "--vault", vaults["flag"], "--db", tmp_path / "i.db")
    assert scan.code == 0, scan.stderr
    assert [e["path"] for e in scan.json()["errors"]] == ["big.md"]  # over the 1000-byte cap
    import sqlite3

    conn = sqlite3.connect(tmp_path / "i.db")
    try:
        # The body index: its texts (body_store) and its rows (body_fts reads body_store back
        # only through the writer's nx_inflate, so its shadow table is counted).
        assert conn.execute("SELECT count(*) FROM body_store").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM body_fts_docsize").fetchone()[0] == 0
    finally:
        conn.close()


def test_db_inside_the_vault_is_refused_from_every_source(
    config: Path, vaults: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = vaults["flag"]
    with pytest.raises(UsageError, match="outside the vault"):
        resolve_config(str(vault), str(vault / "sub" / "i.db"))
    with pytest.raises(UsageError, match="outside the vault"):
        resolve_config(str(vault), str(vault))
    monkeypatch.setenv("NOTEDEX_DB", str(vault / "i.db"))
    with pytest.raises(UsageError):
        resolve_config(str(vault))
    monkeypatch.delenv("NOTEDEX_DB")
    config.write_text(f'db = "{vault / "i.db"}"\n', encoding="utf-8")
    with pytest.raises(NotedexError):
        resolve_config(str(vault))
    # A sibling whose name merely starts with the vault's is outside.
    sibling = vault.parent / (vault.name + "-index") / "i.db"
    config.unlink()
    assert resolve_config(str(vault), str(sibling)).db == sibling
