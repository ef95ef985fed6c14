"""daemon/jobs.py: scheduled jobs only enqueue work for the writer thread."""

from __future__ import annotations

from notedex.daemon.batcher import MAINTENANCE, Batcher
from notedex.daemon.jobs import start_jobs
from tests.helpers import wait_until


def test_jobs_only_enqueue_work() -> None:
    queue = Batcher()
    scheduler = start_jobs(queue, reconcile_every=0.1, maintain_every=0.1)
    try:
        wait_until(
            lambda: queue.rescan_pending and queue.tasks_pending, timeout=10, message="jobs fired"
        )
        jobs = {job.id: job for job in scheduler.get_jobs()}
        assert set(jobs) == {"reconcile", "maintenance"}
        assert all(job.coalesce and job.max_instances == 1 for job in jobs.values())
    finally:
        scheduler.shutdown(wait=True)
    assert queue.rescan_pending == ["periodic reconcile"]
    assert queue.tasks_pending == [MAINTENANCE]
