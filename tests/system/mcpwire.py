"""`notedex mcp` as a subprocess spoken to in raw JSON-RPC lines, for what an SDK client cannot
send (a lone surrogate, a line that is not JSON) and for many fast calls in a race."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

PROTOCOL_VERSION = "2025-06-18"


class McpWire:
    """One server process; ``request`` sends a line and waits for the reply with its id."""

    def __init__(self, vault: Path, db: Path, *extra: str, env: dict[str, str] | None = None):
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "notedex",
                "mcp",
                "--vault",
                str(vault),
                "--db",
                str(db),
                *extra,
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **(env or {})},
        )
        self.replies: dict[Any, dict[str, Any]] = {}
        self._lines: queue.Queue[bytes] = queue.Queue()
        self._next = 1000
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(b"")

    def send(self, line: str | bytes) -> None:
        assert self.proc.stdin is not None
        data = line.encode("utf-8", "surrogatepass") if isinstance(line, str) else line
        self.proc.stdin.write(data.rstrip(b"\n") + b"\n")
        self.proc.stdin.flush()

    def reply(self, ident: Any, timeout: float = 60.0) -> dict[str, Any]:
        """The reply with ``ident`` (kept: replies may come in any order); AssertionError when
        none comes within ``timeout`` seconds or the server exits."""
        while ident not in self.replies:
            try:
                line = self._lines.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(f"no reply to id {ident!r} within {timeout}s") from None
            if not line:
                raise AssertionError(f"the server exited before replying to {ident!r}")
            message = json.loads(line)
            if "id" in message and "method" not in message:
                self.replies[message["id"]] = message
        return self.replies.pop(ident)

    def request(self, method: str, params: dict[str, Any] | None = None, timeout: float = 60.0):
        self._next += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next, "method": method}
        if params is not None:
            message["params"] = params
        self.send(json.dumps(message))
        return self.reply(self._next, timeout)

    def initialize(self) -> dict[str, Any]:
        answer = self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "notedex-tests", "version": "1"},
            },
        )
        self.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        return answer

    def call(self, tool: str, arguments: dict[str, Any], timeout: float = 60.0) -> dict[str, Any]:
        """A ``tools/call``: its result (``isError`` says whether it failed)."""
        answer = self.request("tools/call", {"name": tool, "arguments": arguments}, timeout)
        assert "result" in answer, answer
        result: dict[str, Any] = answer["result"]
        return result

    def close(self) -> str:
        """Stop the server; its stderr."""
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        assert self.proc.stderr is not None
        return self.proc.stderr.read().decode("utf-8", "replace")

    def __enter__(self) -> McpWire:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def text_of(result: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in result.get("content", []))
