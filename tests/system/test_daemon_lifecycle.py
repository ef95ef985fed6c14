"""`notedex daemon`'s life: one instance per vault, waiting for another writer, signals, sd_notify, status, a vault that disappears, polling mode, save-to-visible latency, a vault restored while stopped.

Every scenario ends with the index equal to a fresh full index of the vault and a sound FTS.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import run_cli, wait_until, write
from tests.indexcheck import age
from tests.system.daemons import Daemons, assert_converges, indexed_count, note, populate


def test_second_instance_exits_75(daemons: Daemons, small_vault: Path, db_path: Path) -> None:
    first = daemons.start()
    second = run_cli("daemon", "--vault", small_vault, "--db", db_path, timeout=30)
    assert second.code == 75
    assert "already running" in second.stderr
    assert str(first.pid) in second.stderr
    assert first.proc.poll() is None


def test_waits_for_a_non_daemon_writer(
    daemons: Daemons, small_vault: Path, db_path: Path, tmp_path: Path
) -> None:
    from notedex.store.writer_lock import WriterLock

    lock = WriterLock(db_path.with_name(db_path.name + ".lock"))
    assert lock.acquire("index")
    try:
        run = daemons.start(ready=False)
        run.wait_for("waiting for the writer lock")
        assert not run.find("ready")
    finally:
        lock.release()
    run.wait_for("ready")
    assert_converges(small_vault, db_path, tmp_path, run=run)


@pytest.mark.slow
def test_sigterm_during_a_batch_exits_0(
    daemons: Daemons, vault: Path, db_path: Path, tmp_path: Path
) -> None:
    run = daemons.start()
    populate(vault, 3000, per_folder=150)
    wait_until(
        lambda: indexed_count(db_path) > 0, timeout=60, interval=0.01, message="a batch in progress"
    )
    assert run.stop() == 0, run.log_text()
    assert run.find("stopped", exit_code=0)
    second = daemons.start()
    assert_converges(vault, db_path, tmp_path, timeout=60, run=second)
    assert second.stop() == 0


def test_sd_notify_ready_watchdog_stopping(
    daemons: Daemons, small_vault: Path, db_path: Path, tmp_path: Path
) -> None:
    address = str(tmp_path / "notify.sock")
    if len(address) > 100:
        pytest.skip("tmp_path too long for an AF_UNIX socket path")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(address)
    sock.settimeout(0.2)
    messages: list[str] = []

    def drain() -> list[str]:
        while True:
            try:
                messages.append(sock.recv(4096).decode())
            except TimeoutError:
                return messages

    try:
        run = daemons.start(env={"NOTIFY_SOCKET": address, "WATCHDOG_USEC": "400000"}, ready=False)
        wait_until(lambda: any("READY=1" in m for m in drain()), timeout=30, message="READY=1")
        ready_at = next(i for i, m in enumerate(messages) if "READY=1" in m)
        wait_until(
            lambda: sum("WATCHDOG=1" in m for m in drain()[ready_at:]) >= 3,
            timeout=10,
            message="WATCHDOG=1 pings",
        )
        run.signal(signal.SIGTERM)
        wait_until(
            lambda: any("STOPPING=1" in m for m in drain()), timeout=10, message="STOPPING=1"
        )
        assert run.proc.wait(timeout=30) == 0
    finally:
        sock.close()
    stopping_at = next(i for i, m in enumerate(messages) if "STOPPING=1" in m)
    assert ready_at < stopping_at
    assert any(m.startswith("STATUS=") or "\nSTATUS=" in m for m in messages)


STOP_WHILE_LOCKED = """
import os, signal, sys
from notedex.config import Config
from notedex.daemon.service import Daemon

daemon = Daemon(Config(sys.argv[1], sys.argv[2]))
daemon._install_signal_handlers()
# The main thread holds the stop event's own lock, exactly as it does for a moment inside
# every ``stop.wait(tick)``; the handler runs right here, on this thread.
with daemon.stop._cond:
    os.kill(os.getpid(), signal.SIGTERM)
    os.kill(os.getpid(), signal.SIGHUP)
assert daemon._signal == "SIGTERM" and daemon._rescan_signal
assert daemon._sleep(5.0) is True  # the loop, not the handler, sets the event; no 5 s wait
assert daemon.stop.is_set()
daemon._remove_signal_wakeup()
print("stopped")
"""


def test_stop_signal_while_the_main_thread_holds_a_lock(small_vault: Path, tmp_path: Path) -> None:
    """CI once saw STOPPING=1 and then a daemon that never exited: the SIGTERM handler called
    ``Event.set()``, whose lock the interrupted main thread already held inside ``Event.wait``.
    Handlers now only set flags; this pins that deterministically."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", STOP_WHILE_LOCKED, str(small_vault), str(tmp_path / "x.db")],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the SIGTERM handler deadlocked against the main thread")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "stopped"


@pytest.mark.slow
def test_signal_storm_stops_cleanly(daemons: Daemons, small_vault: Path) -> None:
    """SIGTERM and SIGHUP bursts while the supervise loop wakes every millisecond
    (WATCHDOG_USEC=2ms): the daemon always stops, flushes and exits."""
    for _ in range(3):
        run = daemons.start(env={"NOTIFY_SOCKET": "@notedex-test-unused", "WATCHDOG_USEC": "2000"})
        deadline = time.monotonic() + 5
        i = 0
        while run.proc.poll() is None and time.monotonic() < deadline:
            run.signal(signal.SIGHUP if i % 3 else signal.SIGTERM)
            i += 1
            time.sleep(0.0002)  # legit: the scenario is a burst of signals, paced, not a wait
        try:
            code = run.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the daemon hung after {i} SIGTERM/SIGHUP\n" + run.log_text())
        # A signal that lands after the clean stop, while the interpreter is tearing down
        # (Python has put the default handlers back), ends the process with it: harmless.
        assert code in (0, -signal.SIGTERM, -signal.SIGHUP), run.log_text()
        assert run.find("stopped", exit_code=0), run.log_text()


def test_status_reports_the_daemon(
    daemons: Daemons, small_vault: Path, db_path: Path, tmp_path: Path
) -> None:
    run = daemons.start()
    write(small_vault / "new.md", note("New"))
    assert_converges(small_vault, db_path, tmp_path, run=run)
    status = run_cli("status", "--json", "--vault", small_vault, "--db", db_path)
    assert status.code == 0, status.stderr
    data = status.json()
    assert data["daemon"]["running"] is True
    assert data["daemon"]["pid"] == run.pid
    assert data["daemon"]["since"]
    assert data["lastBatch"]


@pytest.mark.slow
def test_vault_that_disappears_is_never_mass_deleted(
    daemons: Daemons, small_vault: Path, db_path: Path, tmp_path: Path
) -> None:
    run = daemons.start()
    before = indexed_count(db_path)
    gone = tmp_path / "vault-unmounted"
    os.rename(small_vault, gone)
    run.wait_for("vault missing")
    write(gone / "while-away.md", note("Written while the vault was away"))
    assert indexed_count(db_path) == before
    os.rename(gone, small_vault)
    run.wait_for("the vault is back")
    assert_converges(small_vault, db_path, tmp_path, run=run)
    write(small_vault / "after.md", note("After the return"))
    assert_converges(small_vault, db_path, tmp_path, run=run)
    assert run.proc.poll() is None


@pytest.mark.slow
def test_poll_mode(daemons: Daemons, small_vault: Path, db_path: Path, tmp_path: Path) -> None:
    run = daemons.start("--poll")
    assert run.find("ready", watcher="polling")
    write(small_vault / "polled.md", note("Polled", links="[[a]]"))
    os.rename(small_vault / "sub", small_vault / "sub2")
    assert_converges(small_vault, db_path, tmp_path, run=run)


def test_save_to_visible_latency(daemons: Daemons, small_vault: Path, db_path: Path) -> None:
    """Not a benchmark: a sanity bound on how soon a save is answerable (median of 5)."""
    daemons.start()
    latencies = []
    for i in range(5):
        title = f"Latency probe {i}"
        started = time.monotonic()
        write(small_vault / f"probe{i}.md", note(title))

        def visible(title: str = title) -> bool:
            conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
            try:
                return (
                    conn.execute("SELECT 1 FROM notes WHERE first_h1 = ?", (title,)).fetchone()
                    is not None
                )
            finally:
                conn.close()

        wait_until(visible, timeout=10, interval=0.005)
        latencies.append(time.monotonic() - started)
    latencies.sort()
    print(
        f"save-to-visible latency: median {latencies[2] * 1000:.0f} ms, max {latencies[-1] * 1000:.0f} ms"
    )
    assert latencies[2] < 1.0


@pytest.mark.slow
def test_a_vault_restored_while_stopped_is_not_parsed_again(
    daemons: Daemons, vault: Path, db_path: Path, tmp_path: Path
) -> None:
    """Issue 18: a restore from a ``cp -a`` copy (every inode new, same bytes and mtimes) while
    the daemon is stopped: its startup reconcile hashes the notes and parses none."""
    populate(vault, 300)
    write(vault / "img.png", "not really a png")
    age(vault)
    first = daemons.start()
    assert first.find("rescan done", cause="startup", added=301, parsed=300)
    assert first.stop() == 0
    inodes = {p: p.stat().st_ino for p in vault.rglob("*") if p.is_file()}

    aside = tmp_path / "vault-before-restore"
    os.rename(vault, aside)  # kept until the copy is made: the copy cannot reuse its inodes
    subprocess.run(["cp", "-a", str(aside), str(vault)], check=True)
    shutil.rmtree(aside)
    assert all(p.stat().st_ino != ino for p, ino in inodes.items())

    run = daemons.start()
    done = run.wait_for("rescan done", cause="startup")
    counts = {k: done[k] for k in ("added", "changed", "removed", "parsed", "rehashed")}
    assert counts == {"added": 0, "changed": 0, "removed": 0, "parsed": 0, "rehashed": 300}
    assert done["unchanged"] == 301
    assert_converges(vault, db_path, tmp_path, run=run)
    write(vault / "notes" / "f0" / "n1.md", note("Edited after the restore", links="[[n2]]"))
    assert_converges(vault, db_path, tmp_path, run=run)
