"""An index of another schema version, rebuilt aside before the daemon opens it, so readers never
see it empty (ARCHITECTURE "The index", its "Build and swap" part)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from notedex.daemon.indexer import Interrupted, release_memory
from notedex.daemon.logging import get_logger
from notedex.store.writer import IndexWriter

log = get_logger("notedex.daemon.indexer")


def rebuild_other_version(
    db: Path, writer_at: Callable[[Path], IndexWriter], abort: Callable[[], bool]
) -> bool:
    """Before the daemon opens an index of another schema version: build the new one aside and
    swap it in (``indexing.rebuild``), so readers never see it empty. False when a stop signal
    came meanwhile (the old file is left as it was)."""
    from notedex.indexing.rebuild import other_version, rebuild

    if not other_version(db):
        return True
    started = time.perf_counter()
    log.info("rebuild", cause="an index of another schema version", db=str(db))

    def progress(done: int, total: int) -> None:
        if abort():
            raise Interrupted

    try:
        report = rebuild(db, writer_at, progress=progress)
    except Interrupted:
        log.info("rebuild interrupted", action="the old index is left as it was")
        return False
    finally:
        release_memory()
    log.info(
        "rebuild done",
        added=report.added,
        notes_with_errors=report.notes_with_errors,
        seconds=round(time.perf_counter() - started, 3),
    )
    return True
