"""The job service: the one way in to the research engine for every front end.

    submit(request, delivery) -> job id      stored at once; the research runs as a task
    events(job_id, after)                    stored progress events, then live ones
    result(job_id) / wait(job_id)            the job row (result or error)
    cancel(job_id)

In the embedded default the jobs run in this process. With a queue (core.jobs.queue) `submit`
only stores and queues the job, and a worker process runs it (`run_queued`), rebuilding its
delivery from the stored target; a worker that dies or stops hands the job to another, whose
events continue the numbering. A job ends with one terminal event (completed, failed or
cancelled); when a delivery was given, the job then delivers its answer or its failure durably
(core.jobs.delivery) and records "delivered" or "delivery_failed"."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

from tenacity import AsyncRetrying, stop_after_attempt, wait_exponential

from core.errors import (
    ConfigurationError,
    InvalidQuestionError,
    JobFailedError,
    JobNotFoundError,
)
from core.jobs.delivery import Delivery, ProgressPump, RetryPolicy, deliver
from core.logfields import job_log_fields
from core.metrics import DELIVERY_FAILURES, JOBS
from core.models import (
    Depth,
    Job,
    JobEvent,
    JobStatus,
    ProgressEvent,
    ResearchRequest,
    ResearchResult,
    Stage,
)
from core.redact import REDACTOR, redact
from core.research.intake import choose_depth, detect_intent, validate_question
from core.research.pipeline import ResearchPipeline
from core.store.deliveries import DeliveryStore
from core.store.events import JobEvents
from core.store.jobs import JobStore

if TYPE_CHECKING:
    from core.jobs.queue import JobQueue

log = logging.getLogger(__name__)

FAILURE = "Sorry, the research failed before it finished. Please try again in a moment."
CANCELLED = "The research was cancelled before it finished."
GAVE_UP = ("Sorry, the research could not be finished: the workers running it stopped "
           "{attempts} times. Please try again, or ask a simpler question.")

Progress = Callable[[ProgressEvent], Awaitable[None]]
Work = Callable[[Progress], Awaitable[ResearchResult]]
# Rebuilds a job's delivery in any process from what it stored: platform and target.
DeliveryFactory = Callable[[str, dict[str, Any]], Awaitable[Delivery]]


class JobService:
    def __init__(self, pipeline: ResearchPipeline | None, store: JobStore, events: JobEvents,
                 deliveries: DeliveryStore, retry: RetryPolicy | None = None,
                 progress_interval_s: float = 1.0, *, queue: JobQueue | None = None,
                 deliveries_for: DeliveryFactory | None = None, worker: str = "",
                 attempt_timeout_s: float = 1800.0) -> None:
        """`queue`: submit queues jobs for worker processes instead of running them here;
        `deliveries_for` rebuilds a stored delivery (a worker's, or a cancel's here);
        `attempt_timeout_s` bounds one queued attempt (research plus delivery)."""
        self._pipeline = pipeline
        self._queue = queue
        self._deliveries_for = deliveries_for
        self._worker = worker
        self._attempt_timeout_s = attempt_timeout_s
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
        job = await self._create(request)
        if self._queue is not None:
            await self._enqueue(job.id, request, delivery, start_after_s)
            return job.id
        await self._start(job.id, request, delivery, start_after_s, progress_shown)
        return job.id

    async def improve(self, feedback: str, tenant: str, job_id: str | None = None) -> str:
        """Start a job rewriting an earlier answer (see ResearchPipeline.improvement)."""
        request = await self.pipeline.improvement(feedback, tenant, job_id)
        job = await self.pipeline.create_job(request)
        await self._start(job.id, request, None, 0.0, True)
        return job.id

    async def run_queued(self, job_id: str, attempt: int, max_attempts: int) -> None:
        """Run a queued job here (a worker): research it and deliver the answer, or, when an
        earlier attempt got further, only what is left. Attempt `max_attempts + 1` only
        tells the person that the job could not be finished. Cancelled from outside (the
        worker stopping), the job goes back to the queue unless its cancel was asked for."""
        job = await self.store.get(job_id)
        row = await self._deliveries.get(job_id)
        delivery = await self._rebuild(row)
        if job.status not in (JobStatus.PENDING, JobStatus.IN_PROGRESS):
            await self._finish(job, delivery)
            return
        if await self._cancel_requested(job_id):
            await self._cancelled(job_id, delivery)
            return
        if attempt > max_attempts:
            message = GAVE_UP.format(attempts=max_attempts)
            await self.store.fail(job_id, f"stopped after {max_attempts} attempts")
            await self._ended(job_id, job.platform, "failed", message, delivery,
                              lambda d: lambda steps: d.failure(message, steps))
            return
        if attempt > 1:
            await self._events.append(job_id, "resumed",
                                      message=f"Taken up again (attempt {attempt})")
        request = ResearchRequest.model_validate(job.request)
        await self._run(job_id, request, delivery, 0.0, True, handoff=True)

    def events(self, job_id: str, after: int = 0) -> AsyncIterator[JobEvent]:
        """The job's events numbered above `after`, then new ones as they happen, up to the
        one that ends the job."""
        return self._events.follow(job_id, after)

    @property
    def queue(self) -> JobQueue | None:
        """The queue jobs are submitted to (None: they run in this process)."""
        return self._queue

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
        if self._queue is not None:
            await self._events.append(job_id, "cancel_requested", message="Cancelling")
            self._events.forget(job_id)
            if await self._queue.abort(job_id):  # no worker had it: record the end here
                row = await self._deliveries.get(job_id)
                await self._cancelled(job_id, await self._rebuild(row))
            return True
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            return True
        await self.store.fail(job_id, "cancelled before it finished",
                              status=JobStatus.CANCELLED)
        await self._events.append(job_id, "cancelled", message=CANCELLED)
        JOBS.labels("cancelled", job.platform).inc()
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

    async def _create(self, request: ResearchRequest) -> Job:
        if self._pipeline is not None:
            return await self._pipeline.create_job(request)
        return await self.store.create(Job(
            tenant=request.tenant, user=request.user, platform=request.platform,
            worker=self._worker, request=request.model_dump(mode="json")))

    def _work(self, job_id: str, request: ResearchRequest) -> Work:
        if request.improves is not None:
            return lambda progress: self.pipeline.run_improvement(request, progress, job_id)
        return lambda progress: self.pipeline.run(request, progress, job_id=job_id)

    async def _enqueue(self, job_id: str, request: ResearchRequest, delivery: Delivery | None,
                       start_after_s: float) -> None:
        """Queue the job; when the queue cannot be reached, the job fails and says so."""
        assert self._queue is not None
        await self._events.append(job_id, "queued", message="Queued")
        if delivery is not None:
            await self._deliveries.open(job_id, delivery.platform, delivery.target())
        self._events.forget(job_id)  # a worker numbers the events from here
        deep = choose_depth(request.depth, request.question, detect_intent(request.question),
                            request.platform) == Depth.DEEP
        try:
            async for attempt in AsyncRetrying(stop=stop_after_attempt(3), reraise=True,
                                               wait=wait_exponential(multiplier=0.5, max=2)):
                with attempt:
                    await self._queue.enqueue(job_id, deep=deep, start_after_s=start_after_s,
                                              timeout_s=self._attempt_timeout_s)
        except Exception as error:
            log.error("job %s could not be queued: %s: %s", job_id, type(error).__name__,
                      redact(str(error))[:300], extra={"job_id": job_id,
                                                       "tenant": request.tenant})
            await self.store.fail(job_id, "the job queue could not be reached")
            await self._ended(job_id, request.platform, "failed", FAILURE, delivery,
                              lambda d: lambda steps: d.failure(FAILURE, steps))

    async def _rebuild(self, row: dict[str, Any] | None) -> Delivery | None:
        """The job's delivery, rebuilt from its row while it is still to be done; None (and
        the delivery recorded as failed) when this process cannot post to its platform."""
        if row is None or row["status"] != "pending":
            return None
        try:
            if self._deliveries_for is not None:
                return await self._deliveries_for(str(row["platform"]), dict(row["target"]))
            reason = f"this process cannot post to {row['platform']}"
        except ConfigurationError as error:
            reason = str(error)
        log.error("job %s: %s", row["job_id"], reason)
        await self._deliveries.update(str(row["job_id"]), status="failed", error=reason)
        DELIVERY_FAILURES.labels(str(row["platform"])).inc()
        return None

    async def _cancel_requested(self, job_id: str) -> bool:
        return any(event.kind == "cancel_requested"
                   for event in await self._events.after(job_id))

    async def _finish(self, job: Job, delivery: Delivery | None) -> None:
        """The job ended in an earlier attempt whose worker died before it could say so or
        deliver: say it (once) and deliver what is left."""
        told = any(event.terminal for event in await self._events.after(job.id))
        if job.status == JobStatus.COMPLETED and job.result is not None:
            shown = ResearchResult.model_validate(job.result)
            await self._ended(job.id, job.platform, "completed",
                              f"Confidence: {shown.answer.confidence.value}", delivery,
                              lambda d: lambda steps: d.answer(shown, steps), told)
            return
        kind, message = ("cancelled", CANCELLED) if job.status == JobStatus.CANCELLED \
            else ("failed", FAILURE)
        await self._ended(job.id, job.platform, kind, message, delivery,
                          lambda d: lambda steps: d.failure(message, steps), told)

    async def _start(self, job_id: str, request: ResearchRequest, delivery: Delivery | None,
                     start_after_s: float, progress_shown: bool) -> None:
        await self._events.append(job_id, "queued", message="Queued")
        if delivery is not None:
            await self._deliveries.open(job_id, delivery.platform, delivery.target())
        task = asyncio.create_task(
            self._run(job_id, request, delivery, start_after_s, progress_shown),
            name=f"job-{job_id}")
        self._tasks[job_id] = task
        task.add_done_callback(lambda _: self._tasks.pop(job_id, None))

    async def _run(self, job_id: str, request: ResearchRequest, delivery: Delivery | None,
                   start_after_s: float, progress_shown: bool, handoff: bool = False) -> None:
        """Research the job and deliver how it ended, its log records tagged with the job
        (core.logfields)."""
        with job_log_fields(job_id=job_id, tenant=request.tenant) as fields:
            log.info("job %s started", job_id, extra={**fields, "question": request.question,
                                                      "platform": request.platform})
            await self._run_logged(job_id, request, delivery, start_after_s, progress_shown,
                                   handoff, fields)

    async def _run_logged(self, job_id: str, request: ResearchRequest,
                          delivery: Delivery | None, start_after_s: float, progress_shown: bool,
                          handoff: bool, fields: dict[str, str]) -> None:
        work = self._work(job_id, request)
        pump = ProgressPump(delivery, job_id, self._progress_interval_s, progress_shown) \
            if delivery is not None else None
        stage_log = _StageLog(fields)

        async def progress(event: ProgressEvent) -> None:
            stage_log.record(event)
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
            if handoff and not await asyncio.shield(self._cancel_requested(job_id)):
                await asyncio.shield(self._hand_back(job_id))
                raise
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
                          redact(str(error))[:500], extra=dict(fields))
            else:
                log.warning("job %s refused: %s", job_id, message, extra=dict(fields))
            await self._ended(job_id, request.platform, "failed", message, delivery,
                              lambda d: lambda steps: d.failure(message, steps))
            return
        if pump is not None:
            await pump.close()
        shown = ResearchResult.model_validate(REDACTOR.data(result.model_dump(mode="json")))
        await self._ended(job_id, request.platform, "completed",
                          f"Confidence: {shown.answer.confidence.value}", delivery,
                          lambda d: lambda steps: d.answer(shown, steps))

    async def _ended(self, job_id: str, platform: str, kind: str, message: str,
                     delivery: Delivery | None,
                     post: Callable[[Delivery], Callable[..., Awaitable[None]]],
                     told: bool = False) -> None:
        """Record how the job ended (unless `told` already) and deliver it."""
        if not told:
            await self._events.append(job_id, kind, message=message)
            JOBS.labels(kind, platform).inc()
        if delivery is not None:
            delivered = await deliver(job_id, delivery, self._deliveries, self._retry,
                                      post(delivery))
            await self._events.append(job_id, "delivered" if delivered else "delivery_failed")
        self._events.forget(job_id)

    async def _hand_back(self, job_id: str) -> None:
        """This worker is stopping: the job goes back to the queue, to start again."""
        await self.store.requeue(job_id)
        await self._events.append(job_id, "requeued",
                                  message="Handed back to the queue: its worker stopped")
        self._events.forget(job_id)

    async def _cancelled(self, job_id: str, delivery: Delivery | None) -> None:
        """Record the cancellation and tell the person, trying once (the process may be
        stopping)."""
        job = await self.store.get(job_id)
        if job.status in (JobStatus.PENDING, JobStatus.IN_PROGRESS):  # cancelled while queued
            await self.store.fail(job_id, "cancelled before it started",
                                  status=JobStatus.CANCELLED)
        elif job.status != JobStatus.CANCELLED:
            return  # it ended first
        await self._events.append(job_id, "cancelled", message=CANCELLED)
        JOBS.labels("cancelled", job.platform).inc()
        log.info("job %s cancelled", job_id, extra={"job_id": job_id, "tenant": job.tenant})
        if delivery is not None:
            once = RetryPolicy(give_up_after_s=0.0)
            await deliver(job_id, delivery, self._deliveries, once,
                          lambda steps: delivery.failure(CANCELLED, steps))
        self._events.forget(job_id)


class _StageLog:
    """One log line per finished stage, with its duration; the job's log fields follow the
    stage it is in."""

    def __init__(self, fields: dict[str, str]) -> None:
        self._fields = fields
        self._started: dict[Stage, float] = {}

    def record(self, event: ProgressEvent) -> None:
        now = time.perf_counter()
        self._fields["stage"] = event.stage.value
        if event.kind == "started":
            self._started[event.stage] = now
            return
        seconds = now - self._started.pop(event.stage, now)
        log.info("job %s: %s finished in %.3f s: %s", event.job_id, event.stage.value, seconds,
                 event.message, extra={**self._fields, "duration_ms": round(seconds * 1000),
                                       "counts": event.counts})


def user_message(error: BaseException) -> str:
    """What the person who asked is told when a job fails: the reason where it is theirs to
    fix or a setting's (named), otherwise a generic apology; never a stack trace."""
    if isinstance(error, (InvalidQuestionError, ConfigurationError)):
        return redact(str(error))
    if isinstance(error, JobNotFoundError):
        return "That job no longer exists."
    return FAILURE
