"""Unit tests of notedex.store, one file per module; ``build`` indexes a vault the plain way."""

from __future__ import annotations

from pathlib import Path


def build(vault: Path, db: Path) -> None:
    """Index ``vault`` into ``db`` with one writer and a full reconcile."""
    from notedex.indexing.reconcile import reconcile
    from notedex.store.writer import IndexWriter

    with IndexWriter(db, vault, workers=1) as writer:
        reconcile(writer)
