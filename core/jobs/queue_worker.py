"""A worker process's loop: SAQ workers on both queues (core.jobs.queue) that hand each job id
to the job service, keep the job's heartbeat while it runs, and stop gracefully: on `stop`,
jobs still running after `advanced.queue.shutdown_grace_seconds` go back to the queue. Every
`advanced.queue.sweep_seconds` it also looks for unfinished jobs the queue has lost
(`JobService.sweep_queued`): none stays pending or in progress for good."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta
from typing import Any

from saq import Worker

from core.jobs.queue import DEEP, FUNCTION, QUICK, JobQueue
from core.jobs.service import JobService

log = logging.getLogger(__name__)


class _Worker(Worker):
    # Signals are the caller's to handle: two SAQ workers in one process would otherwise
    # each claim SIGTERM, and only the last would hear it.
    SIGNALS = []  # noqa: RUF012

    _housekeeping: list[asyncio.Task[None]]

    async def upkeep(self) -> list[asyncio.Task[None]]:
        tasks = await super().upkeep()
        # SAQ 0.26 starts them in this order: abort, schedule, sweep, worker_info. All but
        # abort (which still cancels a job someone cancels during the grace period) sleep
        # their whole timer (worker_info 10 s) before they look at the stop event again.
        self._housekeeping = tasks[1:]
        return tasks

    async def stop(self) -> None:
        """Stop at once when idle: SAQ's stop waits for every upkeep task to wake up."""
        for task in getattr(self, "_housekeeping", ()):
            task.cancel()
        await super().stop()


async def run_worker(service: JobService, queue: JobQueue, stop: asyncio.Event,
                     name: str = "", stale_after: timedelta = timedelta(hours=1)) -> None:
    """Take jobs from both queues until `stop` is set, then finish or hand back the jobs
    running here. Lost jobs older than `stale_after` are failed rather than queued again."""
    settings = queue.settings

    async def research_job(ctx: dict[str, Any], *, job_id: str) -> None:
        item = ctx["job"]
        beat = asyncio.create_task(_heartbeat(item, settings.heartbeat_seconds / 3))
        try:
            await service.run_queued(job_id, item.attempts, settings.max_attempts)
        finally:
            beat.cancel()

    timers = {"sweep": settings.sweep_seconds, "abort": 1, "schedule": 1, "worker_info": 10}
    workers = [
        _Worker(queue.queues[queue_name], [(FUNCTION, research_job)], id=f"{name}/{queue_name}"
                if name else None, concurrency=concurrency, timers=timers,  # type: ignore[arg-type]
                dequeue_timeout=1.0, shutdown_grace_period_s=settings.shutdown_grace_seconds,
                cancellation_hard_deadline_s=5.0)
        for queue_name, concurrency in ((QUICK, settings.concurrency),
                                        (DEEP, settings.deep_concurrency))]
    running = [asyncio.create_task(worker.start()) for worker in workers]
    running.append(asyncio.create_task(_sweep_lost(
        service, settings.sweep_seconds, timedelta(seconds=settings.lost_job_seconds),
        stale_after)))
    log.info("worker %s taking jobs from %s", name, ", ".join(queue.queues))
    try:
        await stop.wait()
    finally:
        log.info("worker %s stopping: finishing or handing back its jobs", name)
        await asyncio.gather(*(worker.stop() for worker in workers), return_exceptions=True)
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)


async def _sweep_lost(service: JobService, every_s: float, older_than: timedelta,
                      stale_after: timedelta) -> None:
    """Queue again (or fail) the unfinished jobs the queue no longer holds, every `every_s`."""
    while True:
        await asyncio.sleep(every_s)
        try:
            swept = await service.sweep_queued(older_than, stale_after)
        except Exception as error:  # the database or Redis is away: the next round tries again
            log.warning("the sweep for lost jobs failed: %s: %s", type(error).__name__,
                        str(error)[:200])
            continue
        if swept:
            log.info("%d lost jobs queued again or failed", swept)


async def _heartbeat(item: Any, every_s: float) -> None:
    """Tell the queue the job's worker is alive; a job silent past its heartbeat is taken up
    again by another worker's sweep."""
    while True:
        await asyncio.sleep(max(0.5, every_s))
        try:
            await item.update()
        except Exception as error:  # Redis hiccuped: the next beat tries again
            log.warning("job %s: a heartbeat was not sent: %s", item.key, error)
