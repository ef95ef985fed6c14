"""The MCP server's background index update, for when no daemon keeps the index fresh.

The handshake must be answered at once, so the index is brought up to date by a thread that
runs a ``notedex index`` child process: a slow or crashing build never blocks the event loop and
is stopped with the server (ARCHITECTURE "Freshness": the CLI without a daemon). The child
reports its progress on stderr (``cli.handlers.PROGRESS_ENV``), so a call that arrives before the
first index exists is told at once how far the build is (``progress``), never kept waiting.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading

from notedex.config import Config
from notedex.errors import NotedexError


class IndexKeeper:
    """Brings the index up to date in the background when no daemon does.

    Each call asks for a check (an etag walk, stdlib only); when files changed, a
    ``notedex index`` child process applies them. Requests that arrive while one runs are
    coalesced into one more round.
    """

    def __init__(self, cfg: Config, *, enabled: bool = True) -> None:
        self.cfg = cfg
        self.enabled = enabled
        self._cond = threading.Condition()
        self._wanted = 0
        self._done = 0
        self._ok = False
        self._error: str | None = None
        self._stopping = False
        self._child: subprocess.Popen[bytes] | None = None
        self._thread: threading.Thread | None = None
        self._progress: tuple[int, int] | None = None

    @property
    def progress(self) -> tuple[int, int] | None:
        """(files done, files in all) of the update running now, once its child has said;
        None before that and between updates."""
        with self._cond:
            return self._progress

    def start(self) -> None:
        if not self.enabled or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._loop, name="notedex-mcp-index", daemon=True)
        self._thread.start()
        self.request()

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            child = self._child
            self._cond.notify_all()
        if child is not None:
            with contextlib.suppress(OSError):
                child.terminate()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def request(self) -> int:
        with self._cond:
            self._wanted += 1
            self._cond.notify_all()
            return self._wanted

    def wait(self, ticket: int, timeout: float) -> tuple[bool, bool, str | None]:
        """(round finished, index is current, error) for a round that began after ``ticket``."""
        with self._cond:
            finished = self._cond.wait_for(
                lambda: self._done >= ticket or self._stopping, max(0.0, timeout)
            )
            finished = finished and self._done >= ticket
            return finished, self._ok if finished else False, self._error

    def _loop(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._stopping or self._wanted > self._done)
                if self._stopping:
                    return
                target = self._wanted
            ok, error = self._round()
            with self._cond:
                self._done, self._ok, self._error = target, ok, error
                self._cond.notify_all()

    def _round(self) -> tuple[bool, str | None]:
        from notedex.indexing.freshness import ensure_fresh

        try:
            # Check only: the `notedex index` child below applies (ARCHITECTURE "Freshness").
            if ensure_fresh(self.cfg, apply=False).current:
                return True, None
        except NotedexError as exc:
            return False, str(exc)
        except Exception as exc:  # a probe bug must not stop the keeper
            return False, f"{type(exc).__name__}: {exc}"
        from notedex.cli.handlers import PROGRESS_ENV

        vault, db = str(self.cfg.vault), str(self.cfg.db)
        command = [sys.executable, "-m", "notedex", "index", "--vault", vault, "--db", db]
        with self._cond:
            if self._stopping:
                return False, "stopping"
            # stdout is the MCP channel: the child must never write to it.
            self._child = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                env={**os.environ, PROGRESS_ENV: "lines"},
            )
        child = self._child
        lines = self._follow(child)
        with self._cond:
            self._child = None
            self._progress = None
        if child.returncode == 0:
            return True, None
        reason = lines[-1] if lines else f"exit status {child.returncode}"
        return False, f"updating the index failed: {reason.removeprefix('notedex: ')}"

    def _follow(self, child: subprocess.Popen[bytes]) -> list[str]:
        """Read the child's stderr to its end: progress lines update ``progress``; the other
        lines are returned (the last one names a failure)."""
        from notedex.cli.handlers import PROGRESS_PREFIX

        assert child.stderr is not None
        said: list[str] = []
        with child.stderr:
            for raw in child.stderr:
                line = raw.decode("utf-8", "replace").strip()
                counts = line.removeprefix(PROGRESS_PREFIX).split()
                if line.startswith(PROGRESS_PREFIX) and len(counts) == 2 and _all_digits(counts):
                    with self._cond:
                        self._progress = (int(counts[0]), int(counts[1]))
                elif line:
                    said.append(line)
        child.wait()
        return said


def _all_digits(words: list[str]) -> bool:
    return all(word.isdigit() for word in words)
