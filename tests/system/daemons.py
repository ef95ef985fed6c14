"""The daemon harness of the system tests: start `notedex daemon` processes, read their logs,
and wait until the index converges on a fresh full index of the vault (STYLE 11, 13).

Daemon processes run in their own session and are killed, with their whole process group, by
the ``daemons`` fixture's finalizer (tests/system/conftest.py).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from tests.helpers import dump_index, fresh_full_index, fts_integrity_ok, wait_until, write
from tests.indexcheck import index_diff
from tests.privileges import NOBODY, preload


class DaemonRun:
    """One `notedex daemon` subprocess; its stderr (JSON lines) goes to a file."""

    def __init__(self, proc: subprocess.Popen[bytes], log_path: Path) -> None:
        self.proc = proc
        self.log_path = log_path

    @property
    def pid(self) -> int:
        return self.proc.pid

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return ""

    def events(self) -> list[dict[str, Any]]:
        out = []
        for line in self.log_text().splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                out.append(record)
        return out

    def find(self, event: str, **match: Any) -> list[dict[str, Any]]:
        return [
            e
            for e in self.events()
            if e.get("event") == event and all(e.get(k) == v for k, v in match.items())
        ]

    def wait_for(self, event: str, timeout: float = 30.0, **match: Any) -> dict[str, Any]:
        def seen() -> dict[str, Any] | None:
            if self.proc.poll() is not None and not self.find(event, **match):
                raise AssertionError(
                    f"daemon exited with {self.proc.returncode}:\n{self.log_text()}"
                )
            found = self.find(event, **match)
            return found[-1] if found else None

        try:
            return wait_until(seen, timeout=timeout, message=f"daemon event {event!r} {match}")
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n--- daemon log ---\n{self.log_text()}") from None

    def signal(self, signum: int) -> None:
        os.kill(self.proc.pid, signum)

    def stop(self, timeout: float = 60.0) -> int:
        self.signal(signal.SIGTERM)
        return self.proc.wait(timeout=timeout)


class ForkedDaemon:
    """A daemon forked from this process (``Daemons.start_unprivileged``), with the part of
    ``subprocess.Popen`` that `DaemonRun` uses."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(f"daemon {self.pid}", timeout or 0.0)
            time.sleep(0.02)
        assert self.returncode is not None
        return self.returncode


DAEMON_IMPORTS = (
    "multiprocessing.forkserver",
    "apscheduler.schedulers.background",
    "apscheduler.triggers.interval",
    "apscheduler.executors.pool",
    "apscheduler.jobstores.memory",
    "watchdog.observers.inotify",
    "watchdog.version",
    "encodings.ascii",
    "encodings.latin_1",
)
"""Imported lazily by the daemon: the unprivileged child may not be able to read them."""


def _run_forked_daemon(argv: list[str], log_fd: int) -> None:
    """The forked child: its own session, stdout and stderr to the log, as ``nobody`` when
    root (tests/privileges.py), then ``notedex daemon``. Never returns into pytest."""
    code = 70
    try:
        os.setsid()
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log_fd, 1)
        os.dup2(log_fd, 2)
        # pytest's capture replaced the streams: the daemon's log must reach the file.
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False, buffering=1)  # noqa: SIM115
        sys.stderr = open(2, "w", encoding="utf-8", closefd=False, buffering=1)  # noqa: SIM115
        for name in DAEMON_IMPORTS:  # while still allowed to read where they live
            importlib.import_module(name)
        # One process: the parse pool's forkserver execs the interpreter, which ``nobody`` may
        # not reach (tests/privileges.py), and the writer then works alone (workers = 1).
        os.cpu_count = lambda: 1
        if os.geteuid() == 0:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
        os.chdir("/")
        from notedex.cli import main

        code = main(argv)
    except BaseException:
        traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


class Daemons:
    def __init__(self, vault: Path, db: Path, tmp_path: Path) -> None:
        self.vault = vault
        self.db = db
        self.tmp_path = tmp_path
        self.runs: list[DaemonRun] = []

    def start(
        self,
        *args: str,
        env: dict[str, str] | None = None,
        ready: bool = True,
        launcher: tuple[str, ...] = ("-m", "notedex"),
    ) -> DaemonRun:
        """``notedex daemon ARGS`` (``launcher`` swaps ``-m notedex`` for a driver module)."""
        log_path = self.tmp_path / f"daemon-{len(self.runs)}.log"
        full_env = dict(os.environ)
        full_env.pop("NOTIFY_SOCKET", None)
        full_env.update(env or {})
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(
                [
                    sys.executable,
                    *launcher,
                    "daemon",
                    "--vault",
                    str(self.vault),
                    "--db",
                    str(self.db),
                    *args,
                ],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                env=full_env,
                start_new_session=True,  # its own process group: the finalizer kills it whole
            )
        run = DaemonRun(proc, log_path)
        self.runs.append(run)
        if ready:
            run.wait_for("ready")
        return run

    def start_unprivileged(self, *args: str, ready: bool = True) -> DaemonRun:
        """``notedex daemon ARGS`` in a forked child that, as root, first becomes ``nobody``
        (tests/privileges.py: the interpreter may live where ``nobody`` cannot exec it), so that
        a ``chmod 000`` refuses it for real. The vault and index must be reachable by it."""
        log_path = self.tmp_path / f"daemon-{len(self.runs)}.log"
        argv = ["daemon", "--vault", str(self.vault), "--db", str(self.db), *args]
        preload()
        with open(log_path, "wb") as log:
            pid = os.fork()
            if pid == 0:
                _run_forked_daemon(argv, log.fileno())
        run = DaemonRun(ForkedDaemon(pid), log_path)  # type: ignore[arg-type]
        self.runs.append(run)
        if ready:
            run.wait_for("ready")
        return run

    def kill_all(self) -> None:
        for run in self.runs:
            try:
                os.killpg(run.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                run.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass


def indexed_count(db: Path) -> int:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    try:
        return int(conn.execute("SELECT count(*) FROM files").fetchone()[0])
    finally:
        conn.close()


def assert_converges(
    vault: Path, db: Path, tmp_path: Path, *, timeout: float = 30.0, run: DaemonRun | None = None
) -> None:
    """The index equals a fresh full index of the vault (waited for), and its FTS is sound."""
    expected = fresh_full_index(vault, tmp_path)
    expected_files = len(expected["files"])
    interval = 0.05 if expected_files < 1000 else 0.3
    try:
        wait_until(
            lambda: indexed_count(db) == expected_files,
            timeout=timeout,
            interval=interval,
            message=f"{expected_files} files indexed",
        )
        wait_until(
            lambda: dump_index(db) == expected,
            timeout=timeout,
            interval=interval,
            message="the index to equal a fresh full index",
        )
    except AssertionError as exc:
        log = run.log_text()[-4000:] if run else ""
        detail = _divergence(vault, db, tmp_path, expected)
        raise AssertionError(f"{exc}\n{detail}\n--- daemon log (tail) ---\n{log}") from None
    assert fts_integrity_ok(db)


def _divergence(vault: Path, db: Path, tmp_path: Path, expected: dict[str, list[Any]]) -> str:
    """What differs between the index and a fresh full index, said so that a time-out explains
    itself: the rows on one side only, per table; the paths they name, with what is on disk
    there now; and whether a second fresh index still agrees with the first (if not, the vault
    moved under the check, and the harness, not the daemon, is to blame)."""
    if not db.exists():
        return "no index"
    actual = dump_index(db)
    again = fresh_full_index(vault, tmp_path)
    lines = [
        "--- the index against a fresh full index: rows on one side only ---",
        index_diff(actual, expected) or "(none: equal now, after the time-out)",
    ]
    if again != expected:
        lines += [
            "--- a second fresh full index differs from the first: the vault changed ---",
            index_diff(again, expected),
        ]
    paths = sorted(
        {
            str(row[0])
            for table in ("files", "notes")
            for row in set(actual.get(table, [])) ^ set(expected.get(table, []))
        }
    )
    if paths:
        lines.append("--- the paths that differ, on disk now (lstat) ---")
    for rel in paths[:20]:
        try:
            st = os.lstat(vault / rel)
        except OSError as error:
            lines.append(f"{rel}: {error.strerror}")
            continue
        lines.append(
            f"{rel}: mode {st.st_mode:o} size {st.st_size} mtime_ns {st.st_mtime_ns} "
            f"ctime_ns {st.st_ctime_ns} inode {st.st_ino}"
        )
    return "\n".join(lines)


def note(text: str, *, tags: str = "", links: str = "") -> str:
    front = f"---\ntags: [{tags}]\n---\n" if tags else ""
    return f"{front}# {text}\n\n{text} body. {links}\n"


def populate(vault: Path, count: int, folder: str = "notes", per_folder: int = 100) -> None:
    for i in range(count):
        write(
            vault / folder / f"f{i // per_folder}" / f"n{i}.md",
            note(f"Note {i}", tags=f"t{i % 7}", links=f"[[n{(i + 1) % count}]] [[missing{i % 5}]]"),
        )
