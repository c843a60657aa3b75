"""The job queue: research jobs handed from the processes that take questions to the worker
processes that answer them (`researchbot worker`), on SAQ over Redis.

Two queues, so that a deep question never holds up quick ones: `research` (quick and standard
jobs) and `research-deep`; a worker takes from both, each with its own concurrency. A queued
item carries only the job id (the request, its delivery and its events are in the job
store). Delivery is at least once: a running job proves its worker alive every third of
`advanced.queue.heartbeat_seconds`; a job silent for longer is taken up again by any worker's sweep
(every `advanced.queue.sweep_seconds`), and the job store's delivery steps make a second run post
nothing twice. SAQ also runs on PostgreSQL; Redis was measured the better fit (README)."""

from __future__ import annotations

import contextlib
import logging
import time
from dataclasses import dataclass
from typing import Any

from redis.exceptions import RedisError
from saq.job import Status
from saq.queue.redis import RedisQueue

from core.config import QueueSettings

log = logging.getLogger(__name__)

QUICK = "research"
DEEP = "research-deep"
FUNCTION = "research_job"
# A queue item outlives its job by this long in Redis (SAQ's record of how it ended).
KEEP_FINISHED_S = 600
# A failed attempt is tried again after 2 s, then 4, 8, ... up to 60 s: a database restart
# does not use up every attempt at once (SAQ's default is at once).
RETRY_FIRST_WAIT_S = 2.0
RETRY_MAX_WAIT_S = 60.0


# How long a sweep waits for a stuck job's worker to acknowledge its abort before handing
# the job to another worker. SAQ waits 5 s, one stuck job after another; a dead worker never
# answers, so the eight jobs of a killed worker took 40 s more to be taken up again.
ABORT_WAIT_S = 0.5


class _RedisQueue(RedisQueue):
    """SAQ's Redis queue with a sweep that never takes a job from a live worker.

    SAQ's sweep takes up every job on the active list whose status is not "active". A worker
    moves a job onto that list first and marks it active a moment later, so a sweep in that
    moment aborted a job that had just started; measured: one answer lost in 220 questions
    while workers were killed. Here such a job is taken up only when it was in that state at
    the previous sweep too, `sweep_seconds` earlier. A stuck job (its heartbeat past due) is
    taken up at once, as in SAQ."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._unmarked: set[str] = set()  # not marked active at the last sweep

    async def sweep(self, lock: int = 60, abort: float = ABORT_WAIT_S) -> list[str]:
        if not await self.redis.set(self._sweep, 1, ex=lock, nx=True):
            return []  # another worker sweeps this round
        unmarked: set[str] = set()
        swept: list[str] = []
        for raw in await self.redis.lrange(self._active, 0, -1):  # type: ignore[misc]
            job_id = raw.decode()
            job = await self._get_job_by_id(job_id)
            if job is None:
                await self.redis.lrem(self._active, 0, job_id)  # type: ignore[misc]
                swept.append(job_id)
                continue
            if job.status != Status.ACTIVE and job_id not in self._unmarked:
                unmarked.add(job_id)
                continue
            if job.status == Status.ACTIVE and not job.stuck:
                continue
            swept.append(job_id)
            await self._take_up(job, min(abort, ABORT_WAIT_S))
        self._unmarked = unmarked
        return swept

    async def _take_up(self, job: Any, abort_wait_s: float) -> None:
        """Stop the job where it may still run, then queue it again (or end it)."""
        log.info("taking up job %s again: its worker stopped answering", job.key)
        await self.abort(job, error=self.swept_error_message)
        with contextlib.suppress(TimeoutError):
            await job.refresh(abort_wait_s)  # a dead worker never acknowledges
        if job.retryable:
            await self.retry(job, error=self.swept_error_message)
        else:
            await self.finish(job, Status.ABORTED, error=self.swept_error_message)


@dataclass(frozen=True)
class QueueStats:
    queued: int
    active: int


class JobQueue:
    """Puts job ids on the queue and takes them off again (cancel)."""

    def __init__(self, url: str, settings: QueueSettings) -> None:
        self.settings = settings
        self.queues: dict[str, RedisQueue] = {
            name: _RedisQueue.from_url(url, name=name) for name in (QUICK, DEEP)}

    async def connect(self) -> None:
        for queue in self.queues.values():
            await queue.connect()

    async def close(self) -> None:
        """Let go of the queues; a Redis that is already gone leaves nothing to clean up (a
        process stopping during an outage must still stop cleanly)."""
        for queue in self.queues.values():
            try:
                await queue.disconnect()
            except (RedisError, OSError) as error:
                log.warning("queue %s: Redis unreachable while disconnecting (%s)",
                            queue.name, type(error).__name__)

    async def enqueue(self, job_id: str, *, deep: bool, timeout_s: float,
                      start_after_s: float = 0.0) -> bool:
        """Queue job `job_id` once (its id is the queue key: a second enqueue while it is
        queued or running is a no-op, and False). `timeout_s` bounds one attempt;
        `max_attempts` tries, plus one that only tells the person the job could not be
        finished, each after a longer wait (RETRY_FIRST_WAIT_S, doubling to
        RETRY_MAX_WAIT_S), so that an outage does not burn them all at once."""
        kwargs: dict[str, Any] = {
            "key": job_id, "job_id": job_id, "timeout": max(1, int(timeout_s)),
            "heartbeat": self.settings.heartbeat_seconds,
            "retries": self.settings.max_attempts + 1, "ttl": KEEP_FINISHED_S,
            "retry_delay": RETRY_FIRST_WAIT_S, "retry_backoff": RETRY_MAX_WAIT_S}
        if start_after_s > 0:
            kwargs["scheduled"] = int(time.time() + start_after_s)
        queued = await self.queues[DEEP if deep else QUICK].enqueue(FUNCTION, **kwargs)
        return queued is not None

    async def holds(self, job_id: str) -> bool:
        """Whether the queue still has the job: waiting, scheduled or running."""
        for queue in self.queues.values():
            item = await queue.job(job_id)
            if item is not None and item.status not in (Status.COMPLETE, Status.FAILED,
                                                        Status.ABORTED):
                return True
        return False

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
