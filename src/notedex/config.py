"""Where the vault, the index and the logs are: flag > environment > config file > detection.

Stdlib only (the query path imports this).
"""

from __future__ import annotations

import hashlib
import os
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from notedex.errors import NoVaultConfigured, UsageError, VaultNotFound

DEFAULT_INBOX = "00_Inbox"
DEFAULT_MAX_BYTES = 5_000_000


@dataclass(frozen=True)
class Config:
    vault: Path
    """Absolute, resolved vault root."""
    db: Path
    inbox: str = DEFAULT_INBOX
    max_bytes: int = DEFAULT_MAX_BYTES
    body_index: bool = True

    @property
    def lock_path(self) -> Path:
        return self.db.with_name(self.db.name + ".lock")


def config_home() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME")
    if base:
        return Path(base) / "notedex"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "notedex"
    return Path.home() / ".config" / "notedex"


def state_home() -> Path:
    base = os.environ.get("XDG_STATE_HOME")
    if base:
        return Path(base) / "notedex"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "notedex"
    return Path.home() / ".local" / "state" / "notedex"


def config_file() -> Path:
    explicit = os.environ.get("NOTEDEX_CONFIG")
    return Path(explicit) if explicit else config_home() / "config.toml"


def _read_config_file() -> dict[str, Any]:
    path = config_file()
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        return {}
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"cannot read config file {path}: {exc}") from exc


def detect_vault(start: Path) -> Path | None:
    """Walk up from ``start`` to the first folder holding ``.obsidian/``."""
    for folder in (start, *start.parents):
        if (folder / ".obsidian").is_dir():
            return folder
    return None


def default_db_path(vault: Path) -> Path:
    digest = hashlib.sha256(str(vault).encode("utf-8", "surrogateescape")).hexdigest()[:12]
    name = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in vault.name) or "vault"
    return state_home() / f"{name}-{digest}.db"


def resolve_config(vault: str | None = None, db: str | None = None) -> Config:
    """Build the configuration; raises a NotedexError (exit 2) with a how-to when it can't."""
    file_values = _read_config_file()
    raw_vault = vault or os.environ.get("NOTEDEX_VAULT") or file_values.get("vault")
    if raw_vault:
        root = Path(os.path.expanduser(str(raw_vault)))
        if not root.exists():
            raise VaultNotFound(root, "pass an existing folder with --vault or NOTEDEX_VAULT")
        if not root.is_dir():
            raise VaultNotFound(root, "it is not a folder")
    else:
        found = detect_vault(Path.cwd())
        if found is None:
            raise NoVaultConfigured()
        root = found
    root = root.resolve()

    raw_db = db or os.environ.get("NOTEDEX_DB") or file_values.get("db")
    db_path = Path(os.path.expanduser(str(raw_db))).absolute() if raw_db else default_db_path(root)
    try:
        db_path.resolve().relative_to(root)
    except ValueError:
        pass
    else:
        # ARCHITECTURE: a database inside the vault is synced and wakes the watcher.
        raise UsageError(f"the index must live outside the vault: {db_path}")

    inbox = str(file_values.get("inbox", DEFAULT_INBOX))
    max_bytes = file_values.get("max_bytes", DEFAULT_MAX_BYTES)
    if not isinstance(max_bytes, int) or max_bytes <= 0:
        raise UsageError("config: max_bytes must be a positive integer")
    body_index = file_values.get("body_index", True)
    return Config(
        vault=root,
        db=db_path,
        inbox=inbox,
        max_bytes=max_bytes,
        body_index=bool(body_index),
    )
