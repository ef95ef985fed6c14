"""Periodic jobs (apscheduler 3.x): they only enqueue work for the one writer thread.

- hourly: a full reconcile (catches whatever the watcher could not see, e.g. symlinked folders)
- daily: FTS integrity check (rebuild on failure), optimize, WAL checkpoint
"""

from __future__ import annotations

import datetime as dt

from apscheduler.schedulers.background import BackgroundScheduler

from notedex.daemon.batcher import MAINTENANCE, Batcher

RECONCILE_EVERY = 3600.0
MAINTAIN_EVERY = 86400.0


def start_jobs(
    batcher: Batcher,
    *,
    reconcile_every: float = RECONCILE_EVERY,
    maintain_every: float = MAINTAIN_EVERY,
) -> BackgroundScheduler:
    """Start the scheduler; the caller shuts it down (``scheduler.shutdown(wait=False)``)."""
    scheduler = BackgroundScheduler(
        timezone=dt.UTC,
        daemon=True,
        # After a suspend, run a missed job once, however late, never several times.
        job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": None},
    )
    scheduler.add_job(
        batcher.request_rescan,
        "interval",
        seconds=reconcile_every,
        args=["periodic reconcile"],
        id="reconcile",
        name="periodic reconcile",
    )
    scheduler.add_job(
        batcher.submit,
        "interval",
        seconds=maintain_every,
        args=[MAINTENANCE],
        id="maintenance",
        name="FTS integrity check, optimize, WAL checkpoint",
    )
    scheduler.start()
    return scheduler
