"""Where the vault, the index and the logs are: flag > environment > config file > detection.

This module is on every query's path, so it uses ``os.path`` on strings and imports nothing
heavier than ``os``: ``pathlib`` alone costs about as much as a third of interpreter start-up
(it brings ``re`` and ``urllib.parse``; alternated runs on the demo vault: ``lookup
--no-refresh`` 82 -> 115 ms median, ``health --json --no-refresh`` 72 -> 104 ms). So
``Config.vault`` and ``Config.db`` hand out ``Path`` objects for the writer and daemon, and
the query path uses their string twins ``vault_dir`` and ``db_file``.
"""

import os
import sys

from notedex.errors import UsageError

TYPE_CHECKING = False  # no `typing` import on the query path; mypy honours the name
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

DEFAULT_INBOX = "00_Inbox"


class Config:
    """The resolved configuration. Immutable by convention."""

    __slots__ = (
        "_max_bytes",
        "body_index",
        "db_file",
        "follow_symlinks",
        "ignore",
        "inbox",
        "vault_dir",
    )

    def __init__(
        self,
        vault: str | os.PathLike[str],
        db: str | os.PathLike[str],
        inbox: str = DEFAULT_INBOX,
        max_bytes: int | None = None,
        body_index: bool = True,
        follow_symlinks: bool = False,
        ignore: "tuple[str, ...]" = (),
    ) -> None:
        self.vault_dir = os.fspath(vault)
        """Absolute, resolved vault root."""
        self.db_file = os.fspath(db)
        self.inbox = inbox
        self._max_bytes = max_bytes
        self.body_index = body_index
        self.follow_symlinks = follow_symlinks
        """Follow symlinks whose target is outside the vault: every command, the daemon and
        MCP alike (SEMANTICS 1.6). Off by default."""
        self.ignore = ignore
        """``ignore = [...]``: the codes and path globs ``health`` leaves out (docs/cli.md)."""

    @property
    def max_bytes(self) -> int:
        """The size cap of a note (``max_bytes`` in the config file), by default the vault's
        ``DEFAULT_MAX_BYTES``: imported only when read, as a lookup never does (STYLE 7)."""
        if self._max_bytes is not None:
            return self._max_bytes
        from notedex.vault.files import DEFAULT_MAX_BYTES  # the cap is a vault rule: one place

        return DEFAULT_MAX_BYTES

    @property
    def vault(self) -> "Path":
        from pathlib import Path

        return Path(self.vault_dir)

    @property
    def db(self) -> "Path":
        from pathlib import Path

        return Path(self.db_file)

    @property
    def lock_file(self) -> str:
        return self.db_file + ".lock"

    @property
    def lock_path(self) -> "Path":
        from pathlib import Path

        return Path(self.lock_file)

    def __repr__(self) -> str:
        return f"Config(vault={self.vault_dir!r}, db={self.db_file!r}, inbox={self.inbox!r})"


def _home() -> str:
    return os.path.expanduser("~")


def _app_dir(variable: str, *default: str) -> str:
    """``$variable/notedex``, else macOS's Application Support, else ``~/<default>/notedex``."""
    base = os.environ.get(variable)
    if base:
        return os.path.join(base, "notedex")
    if sys.platform == "darwin":
        return os.path.join(_home(), "Library", "Application Support", "notedex")
    return os.path.join(_home(), *default, "notedex")


def config_home() -> str:
    return _app_dir("XDG_CONFIG_HOME", ".config")


def state_home() -> str:
    return _app_dir("XDG_STATE_HOME", ".local", "state")


def config_file() -> str:
    return os.environ.get("NOTEDEX_CONFIG") or os.path.join(config_home(), "config.toml")


def _read_config_file() -> "dict[str, Any]":
    path = config_file()
    if not os.path.exists(path):
        return {}
    import tomllib  # only when there is a file to read

    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"cannot read config file {path}: {exc}") from exc


def detect_vault(start: str) -> str | None:
    """Walk up from ``start`` to the first folder holding ``.obsidian/``."""
    folder = os.path.abspath(start)
    while True:
        if os.path.isdir(os.path.join(folder, ".obsidian")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def default_db_path(vault: str | os.PathLike[str]) -> str:
    """``<state>/notedex/<name>-<digest>.db``: one index per vault, outside it."""
    import zlib  # a builtin module: cheaper than hashlib on every query

    vault = os.fspath(vault)
    encoded = vault.encode("utf-8", "surrogateescape")
    digest = f"{zlib.crc32(encoded):08x}{zlib.adler32(encoded):08x}"
    base = os.path.basename(vault.rstrip(os.sep))
    name = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in base) or "vault"
    return os.path.join(state_home(), f"{name}-{digest}.db")


def _inside(path: str, real_folder: str) -> bool:
    """Whether ``path`` resolves to ``real_folder`` (already resolved: one realpath less per
    query) or into it."""
    path = os.path.realpath(path)
    return path == real_folder or path.startswith(real_folder.rstrip(os.sep) + os.sep)


CONFIG_KEYS = ("vault", "db", "inbox", "max_bytes", "body_index", "follow_symlinks", "ignore")
"""Every key the config file may hold (README "Which vault, which index")."""


def _warn_unknown_keys(file_values: "dict[str, Any]") -> None:
    """One warning on stderr per key the config file holds that notedex does not read, with
    the known key it is closest to (issue 34): a typo must not be ignored silently."""
    unknown = [key for key in file_values if key not in CONFIG_KEYS]
    if not unknown:
        return
    import difflib  # only for a file with a stray key

    for key in unknown:
        close = difflib.get_close_matches(key, CONFIG_KEYS, n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else f" (known: {', '.join(CONFIG_KEYS)})"
        print(
            f"notedex: warning: config file {config_file()}: unknown key {key!r} ignored{hint}",
            file=sys.stderr,
        )


def resolve_config(vault: str | None = None, db: str | None = None) -> Config:
    """Build the configuration; raises a NotedexError (exit 2) with a how-to when it can't."""
    file_values = _read_config_file()
    _warn_unknown_keys(file_values)
    for key in ("vault", "db", "inbox"):
        if key in file_values and not isinstance(file_values[key], str):
            raise UsageError(f"config file {config_file()}: {key} must be a string")
    for key in ("body_index", "follow_symlinks"):
        if not isinstance(file_values.get(key, False), bool):
            raise UsageError(f"config file {config_file()}: {key} must be true or false")
    raw_vault: str | None
    if vault:
        raw_vault, source = vault, "--vault"
    elif os.environ.get("NOTEDEX_VAULT"):
        raw_vault, source = os.environ["NOTEDEX_VAULT"], "NOTEDEX_VAULT"
    else:
        raw_vault, source = file_values.get("vault"), f"vault in {config_file()}"
    if raw_vault:
        root = os.path.expanduser(str(raw_vault))
        if not os.path.isdir(root):
            from notedex.error_kinds import VaultNotFound  # a failure's path only

            how = "pass an existing folder with --vault or NOTEDEX_VAULT"
            what = "not a folder" if os.path.exists(root) else "no such folder"
            raise VaultNotFound(root, f"{what}, from {source}; {how}")
    else:
        try:
            found = detect_vault(os.getcwd())
        except OSError:  # the working directory was deleted
            found = None
        if found is None:
            from notedex.error_kinds import NoVaultConfigured

            raise NoVaultConfigured()
        root = found
    root = os.path.realpath(root)

    raw_db = db or os.environ.get("NOTEDEX_DB") or file_values.get("db")
    db_path = os.path.abspath(os.path.expanduser(str(raw_db))) if raw_db else default_db_path(root)
    if _inside(db_path, root):
        # ARCHITECTURE: a database inside the vault is synced and wakes the watcher.
        raise UsageError(f"the index must live outside the vault: {db_path}")

    ignore = file_values.get("ignore", [])
    if not isinstance(ignore, list) or not all(isinstance(item, str) for item in ignore):
        raise UsageError(
            f"config file {config_file()}: ignore must be a list of codes and path globs"
        )
    inbox = str(file_values.get("inbox", DEFAULT_INBOX))
    max_bytes = file_values.get("max_bytes")
    if max_bytes is not None and (
        not isinstance(max_bytes, int) or isinstance(max_bytes, bool) or max_bytes <= 0
    ):
        raise UsageError("config: max_bytes must be a positive integer")
    return Config(
        root,
        db_path,
        inbox=inbox,
        max_bytes=max_bytes,
        body_index=bool(file_values.get("body_index", True)),
        follow_symlinks=bool(file_values.get("follow_symlinks", False)),
        ignore=tuple(ignore),
    )
