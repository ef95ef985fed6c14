"""A full index that readers never see half-built (issue 13): ``index --full``, a first index
and an index of another schema version are built into a file of their own and installed in one
step (``store.swap``); Ctrl-C or a failure leaves the old index as it was."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from notedex.indexing.apply import ApplyReport, Progress
from notedex.indexing.reconcile import reconcile
from notedex.store import swap
from notedex.store.writer import IndexWriter

KEPT = (
    "did not rebuild from scratch: the vault scan found no files or could not read some "
    "folders; updated incrementally instead"
)


def remove_leftovers(db: Path) -> list[Path]:
    """The build files a stopped build left beside ``db``, removed (``store.swap``); call with
    the writer lock held."""
    return swap.remove_leftovers(db)


def needs_build(db: Path) -> bool:
    """No index to keep serving meanwhile: missing, empty, or of another schema version."""
    return swap.needs_build(db)


def other_version(db: Path) -> bool:
    """An index of another schema version: the daemon rebuilds it aside before it starts."""
    return swap.other_version(db)


def rebuild(
    db: Path, make_writer: Callable[[Path], IndexWriter], *, progress: Progress | None = None
) -> ApplyReport:
    """Index the whole vault into ``<db>.rebuild`` and install it in place of ``db``.

    Call with the writer lock held. The safety rules hold (ARCHITECTURE "Freshness"): when the
    scan finds no files or cannot read some folders and the old index has rows, nothing is
    swapped in; the old index is updated incrementally instead.
    """
    built = swap.build_path(db)
    swap.discard(built)  # left by a build that was killed
    try:
        with make_writer(built) as writer:
            with writer.building():
                report = reconcile(writer, full=True, progress=progress)
            complete = writer.has_files() and not report.unreadable
            writer.checkpoint()
        keep_old = not complete and not needs_build(db) and _has_files(db, make_writer)
        if not keep_old:
            swap.install(built, db)
    finally:
        swap.discard(built)
    if not keep_old:
        return report
    with make_writer(db) as writer:
        kept = reconcile(writer, progress=progress)
    kept.kept.insert(0, KEPT)
    return kept


def _has_files(db: Path, make_writer: Callable[[Path], IndexWriter]) -> bool:
    with make_writer(db) as writer:
        return writer.has_files()
