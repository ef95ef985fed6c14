"""What every findings module of store/ shares (issue 33: findings.py split by finding): the
``Offload`` of the pure steps, ``run_here``, ``has_rows`` and the temp table of the notes whose
outline a refresh keeps."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

_T = TypeVar("_T")
Offload = Callable[..., "Future[Any]"]
"""Runs a pure function of the findings (no connection: its inputs are read first) and
returns its future: ``run_here`` at once, or a process pool's ``submit`` while the writer goes
on with the rest of the refresh (a large build's end: ``indexing.pool.findings_helper``)."""


def run_here(function: Callable[..., _T], *args: Any) -> Future[_T]:
    """The ``Offload`` of every refresh but a large build's end: the function, now."""
    done: Future[_T] = Future()
    done.set_result(function(*args))
    return done


OUTLINE_KEPT = "CREATE TEMP TABLE IF NOT EXISTS outline_kept(id INTEGER PRIMARY KEY)"
"""Of the dirty notes of one ``findings.refresh_fts``, those that were in
``temp.links_pending`` only: not parsed again, so their outline and their links' subpaths are
as they were."""


def has_rows(conn: sqlite3.Connection, table: str) -> bool:
    return conn.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone() is not None


class Refresh:
    """What one findings refresh gives the findings' own upkeep hooks (``Finding.upkeep``):
    the writer's link targets, the anchors' verdicts under way and the `typo` neighbours (or
    None: found in place)."""

    __slots__ = ("anchors", "links", "near")

    def __init__(self, links: Any, anchors: Future[Any], near: Future[Any] | None) -> None:
        self.links = links
        self.anchors = anchors
        self.near = near
