"""Processes of a command under test: its worker processes, its process group (Linux, /proc)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.helpers import wait_until


def children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found += [int(word) for word in f.read().split()]
        except OSError:
            continue
    return found


def group_members(pgid: int) -> list[int]:
    members = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            if os.getpgid(int(name)) != pgid:
                continue
            with open(f"/proc/{name}/stat") as f:
                state = f.read().rpartition(")")[2].split()[0]
        except OSError:
            continue
        if state != "Z":
            members.append(int(name))
    return members


def wait_for_workers(proc: subprocess.Popen[str] | int, db: Path) -> None:
    """Until the build aside has begun and its parse workers run (the middle of the build)."""
    pid = proc if isinstance(proc, int) else proc.pid
    building = db.with_name(db.name + ".rebuild")
    wait_until(
        lambda: building.exists() and len(children(pid)) >= 2,
        timeout=120,
        message="the parse workers to start",
    )
