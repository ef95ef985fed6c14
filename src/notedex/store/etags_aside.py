"""The rows' etags in path order, read by a child process on the other core (issue 35).

A clean start of a 1M-note vault reads every ``files`` row's etag for the merge with the walk
(``indexing.reconcile.diff_entries``): about 1.65 s of CPU, most of it SQLite's (the scan of the
path index and a table lookup a row), all of it on the one core the walk also needs. A child
interpreter (``python -I -c``, the standard library alone: no import of notedex) runs the same
query on its own read connection and writes the rows to a pipe, 5,000 at a time, each chunk a
``marshal`` blob after its length; the parent only unmarshals them (about a third of the
cost), while it walks. The rows are the same: the same query, on the same committed index (the
writer writes nothing before the merge is done, and no other writer can while it holds the
index), in the same order.

Whatever goes wrong with the child (it cannot start, dies, writes a short or broken chunk), the
rows it did not hand over are read in process from the last path it did: never a row lost or
twice.
"""

from __future__ import annotations

import contextlib
import marshal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

ASIDE_ROWS = 50_000
"""Below about this many rows a child is not worth its start (tens of ms)."""

_END = b"\0\0\0\0"

# Run as `python -I -c _CHILD <uri> <sql> <window>`: the rows of <sql> to stdout, in chunks.
_CHILD = """
import marshal, sqlite3, sys
conn = sqlite3.connect(sys.argv[1], uri=True)
out = sys.stdout.buffer
cursor = conn.execute(sys.argv[2], (int(sys.argv[3]),))
while True:
    rows = cursor.fetchmany(5000)
    if not rows:
        break
    blob = marshal.dumps(rows)
    out.write(len(blob).to_bytes(4, "little"))
    out.write(blob)
out.write(bytes(4))
out.flush()
"""

Etag = tuple[str, int, int, int, int]


def rows_aside(
    conn: sqlite3.Connection, db_path: Path, sql: str, after_sql: str, window: int
) -> Iterator[Etag]:
    """The rows of ``sql`` (one parameter, ``window``; ordered by path, the path first), read
    by a child process. ``after_sql`` is the same query for the paths after a second
    parameter: what the child did not hand over is read through ``conn``."""
    last: str | None = None
    try:
        proc = subprocess.Popen(
            [sys.executable, "-I", "-c", _CHILD, _read_only_uri(db_path), sql, str(window)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
    except (OSError, ValueError):
        proc = None
    if proc is not None:
        try:
            chunks = _Chunks(proc)
            for rows in chunks:
                yield from rows
                last = rows[-1][0]
            if chunks.finished:
                return
        finally:
            _end(proc)
    if last is None:
        yield from conn.execute(sql, (window,))
    else:
        yield from conn.execute(after_sql, (window, last))


class _Chunks:
    """The child's chunks as lists of rows; ``finished`` once its end mark was read."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        self._read = proc.stdout.read
        self.finished = False

    def __iter__(self) -> Iterator[list[Etag]]:
        read = self._read
        while True:
            head = read(4)
            if len(head) != 4:
                return  # the child died
            if head == _END:
                self.finished = True
                return
            size = int.from_bytes(head, "little")
            blob = read(size)
            if len(blob) != size:
                return
            try:
                rows = marshal.loads(blob)
            except (EOFError, ValueError, TypeError):
                return
            if not isinstance(rows, list):
                return
            if rows:
                yield rows


def _end(proc: subprocess.Popen[bytes]) -> None:
    """The child is done or no longer wanted (the merge stopped early, an error)."""
    if proc.poll() is None:
        with contextlib.suppress(OSError):
            proc.kill()
    with contextlib.suppress(OSError):
        if proc.stdout is not None:
            proc.stdout.close()
    proc.wait()


def _read_only_uri(db_path: Path) -> str:
    return Path(db_path).absolute().as_uri() + "?mode=ro"
