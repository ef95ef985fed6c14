"""daemon/notify.py: sd_notify over path and abstract sockets, and the watchdog interval."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import pytest

from notedex.daemon.notify import SystemdNotifier, notify_address, watchdog_interval


def test_notify_reaches_a_path_socket(tmp_path: Path) -> None:
    address = str(tmp_path / "n.sock")
    if len(address) > 100:
        pytest.skip("tmp_path too long for AF_UNIX")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as server:
        server.bind(address)
        notifier = SystemdNotifier({"NOTIFY_SOCKET": address})
        assert notifier.notify("READY=1", "STATUS=ok")
        assert server.recv(100) == b"READY=1\nSTATUS=ok"
        notifier.close()


def test_notify_reaches_an_abstract_socket() -> None:
    name = f"notedex-test-{os.getpid()}-{time.monotonic_ns()}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as server:
        server.bind("\0" + name)
        notifier = SystemdNotifier({"NOTIFY_SOCKET": "@" + name})
        assert notifier.notify("WATCHDOG=1")
        assert server.recv(100) == b"WATCHDOG=1"
        notifier.close()


def test_notify_without_a_socket_is_a_no_op() -> None:
    notifier = SystemdNotifier({})
    assert not notifier.enabled and not notifier.notify("READY=1")
    assert notify_address("vsock:2:1234") is None


def test_watchdog_interval_is_half_the_timeout() -> None:
    assert watchdog_interval({"WATCHDOG_USEC": "30000000"}) == 15.0
    assert watchdog_interval({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "1"}) is None
    assert (
        watchdog_interval({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": str(os.getpid())}) == 15.0
    )
    assert watchdog_interval({"WATCHDOG_USEC": "x"}) is None
    assert watchdog_interval({}) is None
