"""Unreadable files and folders for real, even as root: the CLI run in a child without privileges.

CI runs as root, and root reads a ``chmod 000`` file anyway, so a permission test that only
chmods tests nothing there. `Lockout` makes vault entries unreadable for the CLI runs it makes,
in one of two modes. "privileges": ``chmod 000``, and the CLI runs in a forked child that (as
root) first drops to ``nobody``, so the kernel refuses the read. The child is forked, not
exec'd, because the interpreter may live where ``nobody`` cannot reach (a home folder); every
module the CLI imports lazily is imported before the fork. "injection": the CLI runs in-process
with ``os.open`` and ``os.scandir`` raising ``PermissionError`` (EACCES) for the locked paths.
`lockout()` picks "privileges" when a probe proves the kernel refuses the child, and falls back to
"injection" otherwise: never to no test at all.
"""

from __future__ import annotations

import errno
import importlib
import json
import os
import pkgutil
import shutil
import tempfile
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import Result, run_inprocess

NOBODY = 65534  # uid and gid of `nobody` on Debian-like systems

# Imported lazily by the CLI's commands: the unprivileged child may not be able to read them.
LAZY_STDLIB = (
    "argparse",
    "concurrent.futures.process",
    "hashlib",
    "importlib",
    "inspect",
    "json",
    "multiprocessing",
    "re",
    "sqlite3",
    "tomllib",
    "unicodedata",
    "urllib.parse",
    "zlib",
    "sqlite_utils",
    "yaml",
)


def preload() -> None:
    """Import every module of notedex (but the MCP SDK shim, ``__main__`` and the forkserver's
    preload, whose import ties the importing process to its parent) and `LAZY_STDLIB`."""
    import notedex

    for name in LAZY_STDLIB:
        importlib.import_module(name)
    for info in pkgutil.walk_packages(notedex.__path__, "notedex."):
        if info.name.endswith("__main__") or info.name.startswith("notedex.mcp_server"):
            continue
        if info.name == "notedex.indexing.poolserver":
            continue  # it runs pool.die_with_parent on import: pytest would end with its parent
        importlib.import_module(info.name)


def call_unprivileged(function: Callable[[], Any]) -> Any:
    """``function()`` in a forked child (as root, first become ``nobody``); its JSON-able value.

    An exception in the child is raised here as an AssertionError with the child's traceback.
    """
    preload()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        status = 1
        try:
            os.close(read_end)
            if os.geteuid() == 0:
                os.setgroups([])
                os.setgid(NOBODY)
                os.setuid(NOBODY)
                # The checkout may sit in a folder only root can enter (``mktemp -d``); a
                # working directory the child cannot reach breaks ``os.getcwd()``.
                os.chdir("/")
            payload = {"value": function()}
            status = 0
        except BaseException:
            payload = {"error": traceback.format_exc()}
        with os.fdopen(write_end, "w", encoding="utf-8") as out:
            json.dump(payload, out)
        os._exit(status)
    os.close(write_end)
    with os.fdopen(read_end, encoding="utf-8") as pipe:
        text = pipe.read()
    os.waitpid(pid, 0)
    data = json.loads(text)
    if "error" in data:
        raise AssertionError(f"in the unprivileged child:\n{data['error']}")
    return data["value"]


def run_unprivileged(*args: str | Path) -> Result:
    """``notedex ARGS`` in a forked child; as root, the child first becomes ``nobody``."""

    def cli() -> dict[str, Any]:
        result = run_inprocess(*args)
        return {"code": result.code, "stdout": result.stdout, "stderr": result.stderr}

    try:
        data = call_unprivileged(cli)
    except AssertionError as exc:
        return Result(-1, "", str(exc))
    return Result(data["code"], data["stdout"], data["stderr"])


@contextmanager
def _denied(locked: set[str]) -> Iterator[None]:
    """``os.open`` and ``os.scandir`` raise EACCES for the ``locked`` paths, as the kernel would."""
    real_open, real_scandir = os.open, os.scandir

    def check(path: Any) -> None:
        if isinstance(path, int):
            return  # a folder's descriptor: opened through a path checked before
        if os.fspath(path) in locked:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(path))

    def fake_open(path: Any, *args: Any, **kwargs: Any) -> int:
        check(path)
        return real_open(path, *args, **kwargs)

    def fake_scandir(path: Any = ".") -> Any:
        check(path)
        return real_scandir(path)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "open", fake_open)
        patch.setattr(os, "scandir", fake_scandir)
        yield


@dataclass
class Lockout:
    """Vault entries made unreadable for the CLI runs of `run`, in ``mode`` (module docstring)."""

    mode: str
    reason: str = ""
    locked: set[str] = field(default_factory=set)

    def lock(self, path: Path) -> None:
        if self.mode == "privileges":
            path.chmod(0)
        self.locked.add(str(path))

    def unlock(self, path: Path) -> None:
        if self.mode == "privileges":
            path.chmod(0o755 if path.is_dir() else 0o644)  # chmod changes no mtime: same etag
        self.locked.discard(str(path))

    def run(self, *args: str | Path) -> Result:
        if self.mode == "privileges":
            return run_unprivileged(*args)
        with _denied(self.locked):
            return run_inprocess(*args)

    def call(self, function: Callable[[], Any]) -> Any:
        """``function()`` with the locked paths unreadable; its value must be JSON-able."""
        if self.mode == "privileges":
            return call_unprivileged(function)
        with _denied(self.locked):
            return json.loads(json.dumps(function()))

    def unlock_all(self) -> None:
        for path in sorted(self.locked, reverse=True):
            self.unlock(Path(path))


def _kernel_refuses(base: Path) -> str:
    """Why "privileges" mode cannot work here, or "" when a locked file really is refused."""
    probe = base / "probe.md"
    probe.write_text("secret\n", encoding="utf-8")
    probe.chmod(0)
    child = (
        "import sys; from pathlib import Path\n"
        "try:\n    Path(sys.argv[1]).read_bytes()\nexcept PermissionError:\n    sys.exit(0)\n"
        "sys.exit(3)"
    )
    try:
        result = run_unprivileged("--version")
        if result.code != 0:
            return f"the unprivileged child cannot run the CLI: {result.stderr[-300:]}"
        read = _run_python_unprivileged(child, str(probe))
        return "" if read == 0 else "the kernel lets the unprivileged child read a chmod 000 file"
    finally:
        probe.unlink()


def _run_python_unprivileged(code: str, arg: str) -> int:
    """Exit status of ``code`` run (with ``sys.argv[1] = arg``) in an unprivileged forked child."""
    pid = os.fork()
    if pid == 0:
        status = 4
        try:
            if os.geteuid() == 0:
                os.setgroups([])
                os.setgid(NOBODY)
                os.setuid(NOBODY)
            import sys

            sys.argv = ["probe", arg]
            exec(compile(code, "<probe>", "exec"), {})
            status = 0
        except SystemExit as exc:
            status = exc.code if isinstance(exc.code, int) else 5
        except BaseException:
            status = 6
        os._exit(status)
    _, wait_status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(wait_status)


def unprivileged_base() -> Path:
    """A fresh folder that the unprivileged child can reach and own (pytest's tmp is root's 0700)."""
    base = Path(tempfile.mkdtemp(prefix="notedex-perm-"))
    base.chmod(0o755)
    if os.geteuid() == 0:
        os.chown(base, NOBODY, NOBODY)
    return base


def chown_tree(root: Path) -> None:
    """Give everything under ``root`` to the unprivileged user (as root; a no-op otherwise)."""
    if os.geteuid() != 0:
        return
    for dirpath, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            os.chown(os.path.join(dirpath, name), NOBODY, NOBODY, follow_symlinks=False)
    os.chown(root, NOBODY, NOBODY)


@contextmanager
def lockout(mode: str) -> Iterator[tuple[Lockout, Path, Callable[[], None]]]:
    """(lockout, base folder, chown) for ``mode``; "privileges" falls back to "injection"."""
    base = unprivileged_base()
    try:
        reason = ""
        if mode == "privileges":
            reason = _kernel_refuses(base)
            if reason:
                mode = "injection"
        locker = Lockout(mode, reason)
        # Injection runs the CLI in this process, as this user: its files stay this user's
        # (a lock file of another user is refused, issue 31).
        chown = (lambda: chown_tree(base)) if mode == "privileges" else (lambda: None)
        try:
            yield locker, base, chown
        finally:
            locker.unlock_all()
    finally:
        shutil.rmtree(base, ignore_errors=True)
