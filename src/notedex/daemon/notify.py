"""systemd's notify protocol with the stdlib only (ARCHITECTURE "Freshness": not a dependency).

``NOTIFY_SOCKET`` names an ``AF_UNIX`` datagram socket: a path, or ``@name`` for the abstract
namespace. Without it every call is a no-op, so the daemon runs the same outside systemd.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping


class SystemdNotifier:
    """Sends ``READY=1``, ``WATCHDOG=1``, ``STOPPING=1``... to the service manager.

    Used from the main thread only (the signal handler runs there too), so it needs no lock.
    """

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        self._address = notify_address(env.get("NOTIFY_SOCKET", ""))
        self._socket: socket.socket | None = None
        self.watchdog_interval = watchdog_interval(env)
        """Seconds between ``WATCHDOG=1`` pings (half of ``WATCHDOG_USEC``), or None."""

    @property
    def enabled(self) -> bool:
        return self._address is not None

    def notify(self, *fields: str) -> bool:
        """Send ``fields`` as one message (``KEY=value`` lines); False when nobody listens."""
        if self._address is None:
            return False
        try:
            if self._socket is None:
                self._socket = socket.socket(
                    socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC
                )
            self._socket.sendto("\n".join(fields).encode("utf-8"), self._address)
        except OSError:
            return False  # the manager went away: never a reason to stop indexing
        return True

    def close(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None


def notify_address(raw: str) -> str | None:
    """``NOTIFY_SOCKET`` as a socket address: ``@name`` is the abstract ``\\0name``."""
    if raw.startswith("@"):
        return "\0" + raw[1:]
    if raw.startswith("/"):
        return raw
    return None  # unset, or a vsock address we do not speak


def watchdog_interval(env: Mapping[str, str]) -> float | None:
    """Ping interval from ``WATCHDOG_USEC`` (half of it, as sd_watchdog_enabled advises)."""
    pid = env.get("WATCHDOG_PID")
    if pid and pid != str(os.getpid()):
        return None  # the variables were meant for another process
    try:
        usec = int(env.get("WATCHDOG_USEC", ""))
    except ValueError:
        return None
    return usec / 2_000_000 if usec > 0 else None
