"""Where a cold build's wall time goes, phase by phase (issue 35, build35b).

    python bench/buildphases.py --vault V --db D [--profile FILE]

Runs ``notedex index --full`` in this process with timers around the steps of a build aside
(``indexing.rebuild``): the walk into ``temp.walked``, the registration, the batches (split
into the writer's wait for the parse workers and the writer's own time), the findings at the
end (the `typo` search's hand-over among them), the deferred indexes, the FTS merges, the
switch back to the WAL, the checkpoint and the swap. Prints one line per phase: seconds of
wall and of this process's CPU (the parse workers' CPU is not in it; ``bench/treerss.py``
sums the tree's). ``--profile``: also a cProfile of this process (the writer) into FILE.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Generator, Iterator, Sequence
from typing import Any

from notedex.cli import main as cli_main
from notedex.indexing import apply, rebuild
from notedex.store import findings, linkfixes, maintenance, swap, writer

_WALL: dict[str, float] = defaultdict(float)
_CPU: dict[str, float] = defaultdict(float)
_CALLS: dict[str, int] = defaultdict(int)
_ORDER: list[str] = []


@contextlib.contextmanager
def _timed(name: str) -> Iterator[None]:
    if name not in _ORDER:
        _ORDER.append(name)
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        yield
    finally:
        _WALL[name] += time.perf_counter() - wall
        _CPU[name] += time.process_time() - cpu
        _CALLS[name] += 1


def _wrap(owner: Any, attr: str, name: str) -> None:
    inner: Callable[..., Any] = getattr(owner, attr)

    def timed(*args: Any, **kwargs: Any) -> Any:
        with _timed(name):
            return inner(*args, **kwargs)

    setattr(owner, attr, timed)


def _wrap_parse() -> None:
    """The batches' generator: the time spent in its ``next`` is the writer waiting for the
    parse workers (and handing them the next chunks)."""
    inner = apply._parse

    def timed(*args: Any, **kwargs: Any) -> Generator[Any, None, None]:
        batches = inner(*args, **kwargs)
        try:
            while True:
                with _timed("batches: wait for the parse"):
                    batch = next(batches, None)
                if batch is None:
                    return
                yield batch
        finally:
            batches.close()

    apply._parse = timed  # type: ignore[assignment]


def _wrap_context(owner: Any, attr: str, enter: str, leave: str) -> None:
    """A context manager's body and its way out, timed apart."""
    inner = getattr(owner, attr)

    @contextlib.contextmanager
    def timed(*args: Any, **kwargs: Any) -> Iterator[Any]:
        manager = inner(*args, **kwargs)
        with _timed(enter):
            value = manager.__enter__()
        try:
            yield value
        except BaseException:
            if not manager.__exit__(*sys.exc_info()):
                raise
        else:
            with _timed(leave):
                manager.__exit__(None, None, None)

    setattr(owner, attr, timed)


def install() -> None:
    W = writer.IndexWriter
    _wrap(W, "add_walked", "walk into temp.walked")
    _wrap(W, "register_walked", "register the files")
    _wrap_parse()
    _wrap(W, "write_notes", "batches: write_notes (writer)")
    _wrap(W, "defer_fts", "batches: defer_fts (writer)")
    _wrap(linkfixes, "near_stems_ahead", "end: typo search hand-over")
    _wrap(W, "flush_pending_fts", "end: findings slices (all)")
    _wrap(findings, "refresh_fts", "end: refresh_fts (each slice)")
    _wrap_context(maintenance, "without_indexes", "indexes dropped", "deferred indexes created")
    _wrap(maintenance, "merge_segments", "FTS optimize (merge)")
    _wrap(W, "release_free_pages", "incremental vacuum")
    _wrap(W, "checkpoint", "checkpoint")
    _wrap_context(maintenance, "unjournaled", "journal off", "back to WAL")
    _wrap(swap, "install", "swap in")
    _wrap(rebuild, "rebuild", "total (rebuild)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vault", required=True)
    parser.add_argument("--db", required=True)
    parser.add_argument("--profile", help="write a cProfile of this process here")
    args = parser.parse_args(argv)
    install()
    profile = cProfile.Profile() if args.profile else None
    started = time.perf_counter()
    if profile is not None:
        profile.enable()
    code = cli_main(["index", "--full", "--json", "--vault", args.vault, "--db", args.db])
    if profile is not None:
        profile.disable()
        profile.dump_stats(args.profile)
    wall = time.perf_counter() - started
    print(f"{'phase':<36} {'calls':>6} {'wall s':>8} {'CPU s':>8}", file=sys.stderr)
    for name in _ORDER:
        print(
            f"{name:<36} {_CALLS[name]:>6} {_WALL[name]:>8.2f} {_CPU[name]:>8.2f}", file=sys.stderr
        )
    print(f"{'command':<36} {1:>6} {wall:>8.2f} {time.process_time():>8.2f}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
