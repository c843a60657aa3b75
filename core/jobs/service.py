"""The job service: the one way in to the research engine for every front end.

    submit(request, delivery) -> job id      stored at once; the research runs as a task
    events(job_id, after)                    stored progress events, then live ones
    result(job_id) / wait(job_id)            the job row (result or error)
    cancel(job_id)

In the embedded default the jobs run in this process. A job ends with one terminal event
(completed, failed or cancelled); when a delivery was given, the job then delivers its answer
or its failure durably (core.jobs.delivery) and records "delivered" or "delivery_failed"."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable

from core.errors import (
    ConfigurationError,
    InvalidQuestionError,
    JobFailedError,
    JobNotFoundError,
)
from core.jobs.delivery import Delivery, DeliveryStore, ProgressPump, RetryPolicy, deliver
from core.jobs.events import JobEvents
from core.jobs.store import JobStore
from core.models import Job, JobEvent, JobStatus, ProgressEvent, ResearchRequest, ResearchResult
from core.redact import REDACTOR, redact
from core.research.intake import validate_question
from core.research.pipeline import ResearchPipeline

log = logging.getLogger(__name__)

FAILURE = "Sorry, the research failed before it finished. Please try again in a moment."
CANCELLED = "The research was cancelled before it finished."

Progress = Callable[[ProgressEvent], Awaitable[None]]
Work = Callable[[Progress], Awaitable[ResearchResult]]


class JobService:
    def __init__(self, pipeline: ResearchPipeline | None, store: JobStore, events: JobEvents,
                 deliveries: DeliveryStore, retry: RetryPolicy | None = None,
                 progress_interval_s: float = 1.0) -> None:
        self._pipeline = pipeline
        self.store = store
        self._events = events
        self._deliveries = deliveries
        self._retry = retry or RetryPolicy()
        self._progress_interval_s = progress_interval_s
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._errors: dict[str, Exception] = {}  # why jobs run here failed, until `answer`

    async def submit(self, request: ResearchRequest, delivery: Delivery | None = None, *,
                     start_after_s: float = 0.0, progress_shown: bool = True) -> str:
        """Store a job for `request` and start it; its id at once. InvalidQuestionError (no
        job stored) when the question cannot be researched. `start_after_s`: wait this long
        first (a per-tenant queue); `progress_shown`: the delivery shows a status already,
        so the first progress update may wait its interval."""
        validate_question(request.question)
        job = await self.pipeline.create_job(request)

        async def work(progress: Progress) -> ResearchResult:
            return await self.pipeline.run(request, progress, job_id=job.id)

        await self._start(job.id, work, delivery, start_after_s, progress_shown)
        return job.id

    async def improve(self, feedback: str, tenant: str, job_id: str | None = None) -> str:
        """Start a job rewriting an earlier answer (see ResearchPipeline.improvement)."""
        request = await self.pipeline.improvement(feedback, tenant, job_id)
        job = await self.pipeline.create_job(request)

        async def work(progress: Progress) -> ResearchResult:
            return await self.pipeline.run_improvement(request, progress, job_id=job.id)

        await self._start(job.id, work, None, 0.0, True)
        return job.id

    def events(self, job_id: str, after: int = 0) -> AsyncIterator[JobEvent]:
        """The job's events numbered above `after`, then new ones as they happen, up to the
        one that ends the job."""
        return self._events.follow(job_id, after)

    @property
    def pipeline(self) -> ResearchPipeline:
        if self._pipeline is None:
            raise RuntimeError("this job service only reads jobs: it has no research core")
        return self._pipeline

    async def result(self, job_id: str) -> Job:
        return await self.store.get(job_id)

    async def recent(self, tenant: str | None = None, limit: int = 20,
                     status: JobStatus | None = None) -> list[Job]:
        """The latest jobs, newest first (a tenant's, when given)."""
        return await self.store.recent(tenant, limit, status)

    async def stored_events(self, job_id: str, after: int = 0) -> list[JobEvent]:
        """The job's events stored so far, without waiting for more."""
        return await self._events.after(job_id, after)

    async def wait(self, job_id: str) -> Job:
        """The job once it has ended (and, run here, once its delivery has ended too)."""
        task = self._tasks.get(job_id)
        if task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(task)
        else:
            async for _ in self.events(job_id):
                pass
        return await self.store.get(job_id)

    async def answer(self, job_id: str) -> ResearchResult:
        """The job's result once it has ended. A failed job raises: the error itself when
        the job ran here, else JobFailedError with the reason stored on the job."""
        job = await self.wait(job_id)
        error = self._errors.pop(job_id, None)
        if job.status == JobStatus.COMPLETED and job.result is not None:
            return ResearchResult.model_validate(job.result)
        if error is not None:
            raise error
        raise JobFailedError(job.error or f"the job ended {job.status.value}")

    async def cancel(self, job_id: str) -> bool:
        """Stop the job; False when it had already ended."""
        task = self._tasks.get(job_id)
        job = await self.store.get(job_id)
        if job.status not in (JobStatus.PENDING, JobStatus.IN_PROGRESS):
            return False
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            return True
        await self.store.fail(job_id, "cancelled before it finished",
                              status=JobStatus.CANCELLED)
        await self._events.append(job_id, "cancelled", message=CANCELLED)
        return True

    async def delivery(self, job_id: str) -> dict[str, object] | None:
        """The job's delivery record: platform, status, attempts, last error."""
        return await self._deliveries.get(job_id)

    async def close(self) -> None:
        """Cancel the jobs still running here (the process is stopping)."""
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _start(self, job_id: str, work: Work, delivery: Delivery | None,
                     start_after_s: float, progress_shown: bool) -> None:
        await self._events.append(job_id, "queued", message="Queued")
        if delivery is not None:
            await self._deliveries.open(job_id, delivery)
        task = asyncio.create_task(
            self._run(job_id, work, delivery, start_after_s, progress_shown),
            name=f"job-{job_id}")
        self._tasks[job_id] = task
        task.add_done_callback(lambda _: self._tasks.pop(job_id, None))

    async def _run(self, job_id: str, work: Work, delivery: Delivery | None,
                   start_after_s: float, progress_shown: bool) -> None:
        pump = ProgressPump(delivery, job_id, self._progress_interval_s, progress_shown) \
            if delivery is not None else None

        async def progress(event: ProgressEvent) -> None:
            await self._events.progress(event)
            if pump is not None:
                pump.offer(event)

        try:
            if start_after_s > 0:
                await asyncio.sleep(start_after_s)
            result = await work(progress)
        except asyncio.CancelledError:
            if pump is not None:
                await pump.close()
            await asyncio.shield(self._cancelled(job_id, delivery))
            raise
        except Exception as error:
            if pump is not None:
                await pump.close()
            message = user_message(error)
            if delivery is None:
                self._errors[job_id] = error
            if not isinstance(error, (InvalidQuestionError, ConfigurationError)):
                log.error("job %s failed: %s: %s", job_id, type(error).__name__,
                          redact(str(error))[:500])
            await self._ended(job_id, "failed", message, delivery,
                              lambda d: lambda steps: d.failure(message, steps))
            return
        if pump is not None:
            await pump.close()
        shown = ResearchResult.model_validate(REDACTOR.data(result.model_dump(mode="json")))
        await self._ended(job_id, "completed", f"Confidence: {shown.answer.confidence.value}",
                          delivery, lambda d: lambda steps: d.answer(shown, steps))

    async def _ended(self, job_id: str, kind: str, message: str, delivery: Delivery | None,
                     post: Callable[[Delivery], Callable[..., Awaitable[None]]]) -> None:
        await self._events.append(job_id, kind, message=message)
        if delivery is not None:
            delivered = await deliver(job_id, delivery, self._deliveries, self._retry,
                                      post(delivery))
            await self._events.append(job_id, "delivered" if delivered else "delivery_failed")
        self._events.forget(job_id)

    async def _cancelled(self, job_id: str, delivery: Delivery | None) -> None:
        """Record the cancellation and tell the person, trying once (the process may be
        stopping)."""
        job = await self.store.get(job_id)
        if job.status in (JobStatus.PENDING, JobStatus.IN_PROGRESS):  # cancelled while queued
            await self.store.fail(job_id, "cancelled before it started",
                                  status=JobStatus.CANCELLED)
        await self._events.append(job_id, "cancelled", message=CANCELLED)
        if delivery is not None:
            once = RetryPolicy(give_up_after_s=0.0)
            await deliver(job_id, delivery, self._deliveries, once,
                          lambda steps: delivery.failure(CANCELLED, steps))
        self._events.forget(job_id)


def user_message(error: BaseException) -> str:
    """What the person who asked is told when a job fails: the reason where it is theirs to
    fix or a setting's (named), otherwise a generic apology; never a stack trace."""
    if isinstance(error, (InvalidQuestionError, ConfigurationError)):
        return redact(str(error))
    if isinstance(error, JobNotFoundError):
        return "That job no longer exists."
    return FAILURE
