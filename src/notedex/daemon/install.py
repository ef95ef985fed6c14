"""``notedex service install|uninstall|status``: a systemd user unit or a launchd agent.

The unit and the plist are filled in from the templates in ``notedex/data/`` (the same files
as ``systemd/`` in the repository). ExecStart names the current interpreter by its absolute
path, so the service runs the notedex the user installed, with the vault and index the CLI
resolved now (the service's environment may differ from the shell's).
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from notedex.config import Config
from notedex.errors import UsageError

TEMPLATES = ("notedex.service", "notedex.plist")
_MARKER = re.compile(r"@@[A-Z_]+@@")
# Where macOS asks before a background process may read (TCC): Documents, Desktop,
# Downloads and iCloud Drive (Obsidian's iCloud vaults live under Mobile Documents).
_PROTECTED_MAC_FOLDERS = ("Documents", "Desktop", "Downloads", "Library/Mobile Documents")


def template_text(name: str) -> str:
    """A service template from the installed package (``notedex/data/``)."""
    if name not in TEMPLATES:
        raise ValueError(f"no such template: {name}")
    return (resources.files("notedex") / "data" / name).read_text(encoding="utf-8")


def daemon_argv(cfg: Config) -> list[str]:
    return [
        os.path.abspath(sys.executable),
        "-m",
        "notedex",
        "daemon",
        "--vault",
        str(cfg.vault),
        "--db",
        str(cfg.db.absolute()),
    ]


def service_stem(vault: Path) -> str:
    """Per-vault name part, ASCII only (unit names and launchd labels allow little else)."""
    name = re.sub(r"[^A-Za-z0-9_-]", "_", vault.name).strip("_") or "vault"
    digest = hashlib.sha256(os.fsencode(vault)).hexdigest()[:8]
    return f"{name[:40]}-{digest}"


# -- systemd ----------------------------------------------------------------------------------


def systemd_quote(arg: str) -> str:
    """One ExecStart argument: ``%`` and ``$`` escaped, quoted when it has spaces or quotes."""
    text = arg.replace("%", "%%").replace("$", "$$")
    if re.search(r"[\s\"'\\;]", text) or not text:
        text = '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return text


def render_unit(cfg: Config) -> str:
    name = cfg.vault.name or str(cfg.vault)
    values = {
        "@@VAULT_NAME@@": re.sub(r"\s+", " ", name).replace("%", "%%"),
        "@@EXEC_START@@": " ".join(systemd_quote(arg) for arg in daemon_argv(cfg)),
    }
    return _fill(template_text("notedex.service"), values)


def systemd_unit_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME")
    return (Path(base) if base else Path.home() / ".config") / "systemd" / "user"


# -- launchd ----------------------------------------------------------------------------------


def launchd_label(vault: Path) -> str:
    return f"org.notedex.{service_stem(vault)}"


def launchd_log_path(vault: Path) -> Path:
    return Path.home() / "Library" / "Logs" / "notedex" / f"{service_stem(vault)}.log"


def render_plist(cfg: Config) -> str:
    arguments = "\n".join(f"    <string>{escape(arg)}</string>" for arg in daemon_argv(cfg))
    values = {
        "@@LABEL@@": escape(launchd_label(cfg.vault)),
        "@@PROGRAM_ARGUMENTS@@": arguments,
        "@@LOG_PATH@@": escape(str(launchd_log_path(cfg.vault))),
    }
    return _fill(template_text("notedex.plist"), values)


def full_disk_access_note(vault: Path) -> str:
    home = Path.home()
    protected = any(vault == home / f or home / f in vault.parents for f in _PROTECTED_MAC_FOLDERS)
    python = os.path.realpath(sys.executable)
    note = (
        "macOS privacy: a background agent that reads ~/Documents, ~/Desktop, ~/Downloads or "
        "iCloud Drive needs Full Disk Access. If the log shows 'Operation not permitted', open "
        "System Settings > Privacy & Security > Full Disk Access, add "
        f"{python} (the interpreter the agent runs), then `notedex service install` again."
    )
    if protected:
        note = f"Your vault {vault} is in such a folder. " + note
    return note


# -- the command ------------------------------------------------------------------------------


@dataclass
class _Plan:
    platform: str
    name: str
    path: Path
    content: str | None
    commands: list[list[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def service_command(cfg: Config, action: str, *, dry_run: bool = False) -> dict[str, Any]:
    """Install, uninstall or inspect the service; ``dry_run`` writes and runs nothing.

    Returns a JSON-able dict; its ``text`` is what the CLI prints without ``--json``.
    """
    if action not in ("install", "uninstall", "status"):
        raise UsageError(f"unknown service action: {action}")
    plan = _plan(cfg, action)
    written = removed = False
    ran: list[dict[str, Any]] = []
    if not dry_run:
        if action == "install" and plan.content is not None:
            plan.path.parent.mkdir(parents=True, exist_ok=True)
            if plan.platform == "launchd":
                launchd_log_path(cfg.vault).parent.mkdir(parents=True, exist_ok=True)
            plan.path.write_text(plan.content, encoding="utf-8")
            written = True
        ran = _run_all(plan)
        if action == "uninstall" and plan.path.exists():
            plan.path.unlink()
            removed = True
            if plan.platform == "systemd":
                ran += _run_all(
                    _Plan(plan.platform, plan.name, plan.path, None, [_systemctl("daemon-reload")])
                )
    data: dict[str, Any] = {
        "action": action,
        "platform": plan.platform,
        "name": plan.name,
        "path": str(plan.path),
        "installed": plan.path.exists(),
        "dryRun": dry_run,
        "written": written,
        "removed": removed,
        "content": plan.content,
        "commands": [shlex.join(c) for c in plan.commands],
        "ran": ran,
        "notes": plan.notes,
        "daemon": _daemon_state(cfg),
    }
    data["text"] = _describe(data)
    return data


def _plan(cfg: Config, action: str) -> _Plan:
    if sys.platform == "darwin":
        label = launchd_label(cfg.vault)
        path = Path.home() / "Library" / "LaunchAgents" / f"{label}.plist"
        domain = f"gui/{os.getuid()}"
        plan = _Plan("launchd", label, path, None)
        if action == "install":
            plan.content = render_plist(cfg)
            plan.commands = [
                ["launchctl", "bootout", f"{domain}/{label}"],
                ["launchctl", "bootstrap", domain, str(path)],
            ]
            plan.notes = [f"logs: {launchd_log_path(cfg.vault)}", full_disk_access_note(cfg.vault)]
        elif action == "uninstall":
            plan.commands = [["launchctl", "bootout", f"{domain}/{label}"]]
        else:
            plan.commands = [["launchctl", "print", f"{domain}/{label}"]]
        return plan
    unit = f"notedex-{service_stem(cfg.vault)}.service"
    path = systemd_unit_dir() / unit
    plan = _Plan("systemd", unit, path, None)
    if action == "install":
        plan.content = render_unit(cfg)
        plan.commands = [_systemctl("daemon-reload"), _systemctl("enable", "--now", unit)]
        plan.notes = [
            f"logs: journalctl --user -u {unit} -f",
            "to keep it running while you are logged out: loginctl enable-linger $USER",
        ]
    elif action == "uninstall":
        plan.commands = [_systemctl("disable", "--now", unit)]
    else:
        plan.commands = [_systemctl("status", "--no-pager", "--lines=10", unit)]
    return plan


def _daemon_state(cfg: Config) -> dict[str, Any]:
    from notedex.store.connect import lock_holder

    holder = lock_holder(cfg.lock_path)
    running = holder is not None and holder.role == "daemon"
    return {"running": running, "pid": holder.pid if holder is not None and running else None}


def _systemctl(*args: str) -> list[str]:
    return ["systemctl", "--user", *args]


def _run_all(plan: _Plan) -> list[dict[str, Any]]:
    """Run the plan's commands when the tool exists; stop at the first that cannot reach it."""
    ran: list[dict[str, Any]] = []
    if not plan.commands or shutil.which(plan.commands[0][0]) is None:
        return ran
    for command in plan.commands:
        try:
            proc = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            ran.append({"command": shlex.join(command), "returncode": None, "output": str(exc)})
            break
        output = (proc.stdout + proc.stderr).strip()
        ran.append(
            {"command": shlex.join(command), "returncode": proc.returncode, "output": output}
        )
        bootout = command[:2] == ["launchctl", "bootout"]
        if proc.returncode != 0 and not bootout and plan.commands[0] == command:
            break  # no user manager (no session bus): the rest would fail the same way
    return ran


def service_failure(data: dict[str, Any]) -> str | None:
    """Why ``install``/``uninstall`` did not reach the service manager, in one line, or None.

    The CLI exits non-zero with it (docs/cli.md, ``service``); the files it wrote stay.
    """
    if data["action"] == "status" or data["dryRun"]:
        return None
    failed = [r for r in data["ran"] if r["returncode"] != 0 and not _ignorable(r["command"])]
    done = f"wrote {data['path']}, but " if data["written"] else ""
    done = f"removed {data['path']}, but " if data["removed"] else done
    todo = "; run it yourself: " + "; ".join(data["commands"])
    if failed:
        first = failed[0]
        output = " ".join(first["output"].split())[:300] or "no output"
        status = "could not run" if first["returncode"] is None else f"exit {first['returncode']}"
        return f"{done}`{first['command']}` failed ({status}: {output}){todo}"
    if not data["ran"] and data["commands"]:
        tool = data["commands"][0].split()[0]
        return f"{done}{tool} was not found{todo}"
    return None


def _ignorable(command: str) -> bool:
    """``launchctl bootout`` of a job that is not loaded fails, and that is fine."""
    return command.startswith("launchctl bootout")


def _describe(data: dict[str, Any]) -> str:
    lines: list[str] = []
    action, path, commands = data["action"], data["path"], data["commands"]
    if data["dryRun"]:
        if data["content"] is not None:
            lines += [f"would write {path}:", "", data["content"].rstrip(), ""]
        if action == "uninstall":
            lines.append(
                f"would remove {path}" if data["installed"] else f"{path} is not installed"
            )
        lines += ["would run:", *(f"  {c}" for c in commands)]
        return "\n".join([*lines, *data["notes"]])
    if data["written"]:
        lines.append(f"wrote {path}")
    if data["removed"]:
        lines.append(f"removed {path}")
    if action == "status":
        state = f"installed at {path}" if data["installed"] else "not installed"
        daemon = data["daemon"]
        running = f"running (pid {daemon['pid']})" if daemon["running"] else "not running"
        lines += [f"{data['name']}: {state}", f"daemon for this vault: {running}"]
    for result in data["ran"]:
        status = "ok" if result["returncode"] == 0 else f"exit {result['returncode']}"
        lines.append(f"$ {result['command']}  ({status})")
        lines += [f"  {line}" for line in result["output"].splitlines()]
    failed = [
        r
        for r in data["ran"]
        if r["returncode"] != 0 and not r["command"].startswith("launchctl bootout")
    ]
    if action != "status" and (failed or not data["ran"]):
        why = (
            "the service manager could not be reached"
            if failed
            else "the service manager was not found"
        )
        lines += [f"{why}; run these yourself:", *(f"  {c}" for c in commands)]
    return "\n".join([*lines, *data["notes"]])


def _fill(template: str, values: dict[str, str]) -> str:
    for marker, value in values.items():
        template = template.replace(marker, value)
    left = _MARKER.findall(template)
    if left:
        raise ValueError(f"unfilled template markers: {left}")
    return template
