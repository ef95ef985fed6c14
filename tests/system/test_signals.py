"""Stop signals (issue 31.8, ARCHITECTURE "Stop signals"): the first SIGINT or SIGTERM stops a
command with one line on stderr and exit 130 (143); a second one during the stop ends it at once;
the parse pool's workers never print a traceback and never outlive the command.

Signals go to the whole process group, as a terminal (Ctrl-C through a pty) and ``timeout -s
INT`` send them, while the build is mid-way: its parse workers are running.
"""

from __future__ import annotations

import ctypes
import os
import pty
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import wait_until
from tests.system.groups import group_members, wait_for_workers

UNCHANGED = "notedex: interrupted; the index is unchanged\n"
INITIALIZE = (
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05",'
    '"capabilities":{},"clientInfo":{"name":"test","version":"1"}}}'
)


def _command(vault: Path, db: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "notedex",
        "index",
        "--vault",
        str(vault),
        "--db",
        str(db),
        *extra,
    ]


pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_one_signal_to_the_group_stops_the_build_with_one_line(
    big_vault: Path, tmp_path: Path, signum: int, code: int
) -> None:
    db = tmp_path / "index.db"
    proc = subprocess.Popen(
        _command(big_vault, db, "--full"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        wait_for_workers(proc, db)
        os.killpg(proc.pid, signum)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == code, err
    assert err == UNCHANGED and out == ""  # no worker's traceback, no second line
    assert not db.exists()  # no index that is not whole
    assert not db.with_name(db.name + ".rebuild").exists()
    wait_until(lambda: not group_members(proc.pid), timeout=30, message="no worker left")


def test_a_second_signal_during_the_stop_ends_it_at_once(big_vault: Path, tmp_path: Path) -> None:
    """Two SIGINTs a moment apart, as ``timeout -s INT`` sends them: it used to hang for good,
    a worker blocked on a pipe and SIGINT ignored."""
    db = tmp_path / "index.db"
    proc = subprocess.Popen(
        _command(big_vault, db, "--full"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        wait_for_workers(proc, db)
        os.killpg(proc.pid, signal.SIGINT)
        time.sleep(0.01)
        with_group = group_members(proc.pid)
        if with_group:
            os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert err == UNCHANGED and out == ""
    assert not db.exists()
    wait_until(lambda: not group_members(proc.pid), timeout=30, message="no worker left")


def test_ctrl_c_in_a_terminal_prints_one_line_and_no_traceback(
    big_vault: Path, tmp_path: Path
) -> None:
    """Ctrl-C typed on a pty: the line discipline signals the foreground group, the workers
    included. A worker's multiprocessing traceback used to follow, which reads as a crash."""
    db = tmp_path / "index.db"
    argv = _command(big_vault, db, "--full")
    pid, master = pty.fork()
    if pid == 0:  # the child: a session of its own with the pty as its terminal
        try:
            os.execv(argv[0], argv)
        finally:
            os._exit(127)
    output = b""
    try:
        wait_for_workers(pid, db)
        os.write(master, b"\x03")  # Ctrl-C
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the child closed its side
                break
            if not chunk:
                break
            output += chunk
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(master)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    text = output.decode(errors="replace").replace("\r\n", "\n")
    assert os.waitstatus_to_exitcode(status) == 130, text
    assert "Traceback" not in text and "KeyboardInterrupt" not in text, text
    assert text.count("interrupted; the index is unchanged") == 1, text
    assert not db.exists()


def _mcp_server(vault: Path, db: Path) -> subprocess.Popen[str]:
    """``notedex mcp`` in a session of its own, its handshake answered."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "notedex", "mcp", "--vault", str(vault), "--db", str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(INITIALIZE + "\n")
    proc.stdin.flush()
    assert '"id":1' in proc.stdout.readline()  # the server is up and answering
    return proc


def test_sigterm_stops_the_mcp_server_with_the_same_line(big_vault: Path, tmp_path: Path) -> None:
    """Not only the build: a command serving its input stops the same way, while its index
    child builds and while it answers a stream of requests. The signal used to land in the
    middle of one of the SDK's task steps about one time in three with these requests queued
    (one in twenty or so without them): the event loop's shutdown then printed the task's
    traceback, or waited for good."""
    db = tmp_path / "index.db"
    proc = _mcp_server(big_vault, db)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        # 300 pings, about 12 kB each way: well within the pipes, so neither side blocks.
        pings = (f'{{"jsonrpc":"2.0","id":{n},"method":"ping"}}\n' for n in range(2, 302))
        proc.stdin.write("".join(pings))
        proc.stdin.flush()
        assert '"id":2' in proc.stdout.readline()  # it is answering them
        os.killpg(proc.pid, signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 143, err
    assert err.endswith("notedex: interrupted; the index is unchanged\n"), err
    assert "Traceback" not in err


def _tgkill(pid: int, tid: int, signum: int) -> None:
    """Send ``signum`` to thread ``tid`` of process ``pid`` (glibc's tgkill; Python has none)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if not hasattr(libc, "tgkill"):
        pytest.skip("this C library has no tgkill")
    if libc.tgkill(pid, tid, signum) != 0:
        raise OSError(ctypes.get_errno(), "tgkill")


def test_a_stop_signal_another_thread_receives_stops_the_mcp_server(
    small_vault: Path, tmp_path: Path
) -> None:
    """The kernel may hand a process's signal to any of its threads that does not block it.
    Python runs the handler in the main thread, but only once that thread runs: the server's
    main thread used to sleep in the event loop's wait until the client wrote again (its stdin
    stays open here), so the signal did nothing."""
    proc = _mcp_server(small_vault, tmp_path / "index.db")
    try:
        others = [tid for tid in map(int, os.listdir(f"/proc/{proc.pid}/task")) if tid != proc.pid]
        assert others, "the server runs threads besides its main one"
        _tgkill(proc.pid, others[-1], signal.SIGTERM)  # as the kernel's choice would
        proc.wait(timeout=30)
        err = proc.stderr.read() if proc.stderr is not None else ""
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    assert proc.returncode == 143, err
    assert err.endswith(UNCHANGED), err
