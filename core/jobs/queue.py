"""The job queue: research jobs handed from the processes that take questions to the worker
processes that answer them (`researchbot worker`), on SAQ over Redis.

Two queues, so that a deep question never holds up quick ones: `research` (quick and standard
jobs) and `research-deep`; a worker takes from both, each with its own concurrency. A queued
item carries only the job id (the request, its delivery and its events are in the job
store). Delivery is at least once: a running job proves its worker alive every third of
`queue.heartbeat_seconds`; a job silent for longer is taken up again by any worker's sweep
(every `queue.sweep_seconds`), and the job store's delivery steps make a second run post
nothing twice."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from saq import Queue
from saq.job import Status

from core.config import QueueSettings

QUICK = "research"
DEEP = "research-deep"
FUNCTION = "research_job"
# A queue item outlives its job by this long in Redis (SAQ's record of how it ended).
KEEP_FINISHED_S = 600


@dataclass(frozen=True)
class QueueStats:
    queued: int
    active: int


class JobQueue:
    """Puts job ids on the queue and takes them off again (cancel)."""

    def __init__(self, url: str, settings: QueueSettings) -> None:
        self.settings = settings
        self.queues = {name: Queue.from_url(url, name=name) for name in (QUICK, DEEP)}

    async def connect(self) -> None:
        for queue in self.queues.values():
            await queue.connect()

    async def close(self) -> None:
        for queue in self.queues.values():
            await queue.disconnect()

    async def enqueue(self, job_id: str, *, deep: bool, timeout_s: float,
                      start_after_s: float = 0.0) -> None:
        """Queue job `job_id` once (its id is the queue key: a second enqueue is a no-op).
        `timeout_s` bounds one attempt; `max_attempts` tries, plus one that only tells the
        person the job could not be finished."""
        kwargs: dict[str, Any] = {
            "key": job_id, "job_id": job_id, "timeout": max(1, int(timeout_s)),
            "heartbeat": self.settings.heartbeat_seconds,
            "retries": self.settings.max_attempts + 1, "ttl": KEEP_FINISHED_S}
        if start_after_s > 0:
            kwargs["scheduled"] = int(time.time() + start_after_s)
        await self.queues[DEEP if deep else QUICK].enqueue(FUNCTION, **kwargs)

    async def abort(self, job_id: str) -> bool:
        """Take the job off the queue, or stop it where it runs. True when no worker had
        started it (nobody else will record its end)."""
        for queue in self.queues.values():
            item = await queue.job(job_id)
            if item is None or item.status in (Status.COMPLETE, Status.FAILED, Status.ABORTED):
                continue
            waiting = item.status in (Status.NEW, Status.QUEUED)
            await queue.abort(item, "cancelled")
            return waiting
        return False

    async def stats(self) -> dict[str, QueueStats]:
        return {name: QueueStats(await queue.count("queued"), await queue.count("active"))
                for name, queue in self.queues.items()}
