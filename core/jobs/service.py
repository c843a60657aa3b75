"""The job service: the one way in to the research core for every front end, and the only
writer of job state.

    submit(request, delivery) -> job id      validated once, stored at once; run as a task
                                             (an exact repeat: stored answered, at once)
    improve(feedback, tenant, job_id)        a request revising an earlier answer
    add_files / add_url -> job               documents for the knowledge base, refused at
                                             once (DocumentRefusedError) or run as a job
    cancel(job_id)
    events / result / wait / answer          the reading side (core.jobs.reading)

In the embedded default the jobs run in this process. With a queue (core.jobs.queue) `submit`
only stores and queues the job, and a worker process runs it (`run_queued`), rebuilding its
delivery from the stored target; a worker that dies or stops hands the job to another, whose
events continue the numbering. A job ends with one terminal event (completed, failed or
cancelled); when a delivery was given, the job then delivers its answer or its failure durably
(core.jobs.delivery) and records "delivered" or "delivery_failed".

Through a database outage (a restart, core.store.outage) nothing is lost: a job's progress
lines are best effort, the writes that end it wait for the database (`outage_grace_s`), and
research the outage broke is run again (it is a pure function of the request). Jobs of a
process that stopped are taken up again when it starts (`resume_abandoned`, without a queue)
or by a worker's sweep (`sweep_queued`, with one)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import Awaitable, Callable, Collection
from datetime import timedelta
from typing import TYPE_CHECKING, Any, TypeVar

from tenacity import AsyncRetrying, stop_after_attempt, wait_exponential

from core.errors import (
    ConfigurationError,
    InvalidQuestionError,
    JobNotFoundError,
    QueueUnavailableError,
    UnavailableError,
    VectorStoreUnavailableError,
)
from core.jobs.delivery import Delivery, ProgressPump, RetryPolicy, deliver
from core.jobs.progress import StoredProgress
from core.jobs.reading import JobReader
from core.logfields import job_log_fields
from core.metrics import DELIVERY_FAILURES, JOBS, STAGE_DURATION, UNSAVED_RESULTS
from core.models import (
    Depth,
    DocumentsOutcome,
    DocumentsRequest,
    FailureKind,
    Improvement,
    Job,
    JobStatus,
    ProgressEvent,
    ResearchRequest,
    ResearchResult,
    Stage,
    StageEvent,
    utcnow,
)
from core.redact import REDACTOR, error_line, redact
from core.research.intake import (
    choose_depth,
    detect_intent,
    validate_context,
    validate_question,
    validate_text,
)
from core.research.record import Research, ResearchOutcome
from core.store.deliveries import DeliveryRecord, DeliveryStore
from core.store.events import EventDraft, JobEvents
from core.store.jobs import JobStore
from core.store.outage import outlast, store_outage

if TYPE_CHECKING:
    from core.jobs.queue import JobQueue
    from core.retrieval.kb.adding import DocumentAdder

# What a job does: research a question, or add documents to the knowledge base.
AnyRequest = ResearchRequest | DocumentsRequest

log = logging.getLogger(__name__)

T = TypeVar("T")

FAILURE = "Sorry, the research failed before it finished. Please try again in a moment."
CANCELLED = "The research was cancelled before it finished."
GAVE_UP = ("Sorry, the research could not be finished: the workers running it stopped "
           "{attempts} times. Please try again, or ask a simpler question.")
QUEUE_AWAY = "the job queue is unavailable; ask again shortly"
RESUMED = "Resumed after a restart: researching again from the question"
INTERRUPTED = ("Sorry, the research was interrupted: the process running it stopped, and it "
               "could not be taken up again. Please ask again.")
SERVER_BACK = "{} came back: researching again from the question"
# Times a job is taken up again (a restart, a lost queue entry, a database outage under its
# research) before it fails: a job that itself brings its process down must not loop.
MAX_TAKE_UPS = 3

# Rebuilds a job's delivery in any process from what it stored: platform and target.
DeliveryFactory = Callable[[str, dict[str, Any]], Awaitable[Delivery]]


class JobService(JobReader):
    def __init__(self, research: Research | None, store: JobStore, events: JobEvents,
                 deliveries: DeliveryStore, retry: RetryPolicy | None = None,
                 progress_interval_s: float = 1.0, *, queue: JobQueue | None = None,
                 deliveries_for: DeliveryFactory | None = None, worker: str = "",
                 attempt_timeout_s: float = 1800.0, outage_grace_s: float = 120.0,
                 documents: DocumentAdder | None = None) -> None:
        """`queue`: submit queues jobs for worker processes instead of running them here;
        `documents` admits and runs documents jobs (none: this process adds none);
        `deliveries_for` rebuilds a stored delivery (a worker's, or a cancel's here);
        `attempt_timeout_s` bounds one queued attempt (research plus delivery);
        `outage_grace_s`: how long the writes that end a job wait for a database that went
        away."""
        self._research = research
        self._documents = documents
        self._queue = queue
        self._deliveries_for = deliveries_for
        self._worker = worker
        self._attempt_timeout_s = attempt_timeout_s
        self._outage_grace_s = outage_grace_s
        self._stopping = False
        super().__init__(store, events, deliveries)
        self._retry = retry or RetryPolicy()
        self._progress_interval_s = progress_interval_s
        self._tasks: dict[str, asyncio.Task[None]] = {}
        # Answers whose job row could not be written yet: served from here until it is.
        self._unsaved: dict[str, Job] = {}
        self._saving: set[asyncio.Task[None]] = set()

    async def submit(self, request: ResearchRequest, delivery: Delivery | None = None, *,
                     start_after_s: float = 0.0, progress_shown: bool = True) -> str:
        """Store a job for `request` and start it; its id at once. InvalidQuestionError (no
        job stored) when the question cannot be researched. `start_after_s`: wait this long
        first (a per-tenant queue); `progress_shown`: the delivery shows a status already,
        so the first progress update may wait its interval. With a queue that cannot be
        reached and no delivery to tell the person, QueueUnavailableError (the job stored is
        failed with that reason at once: never left pending, never run)."""
        request = validated(request)
        if self._queue is None and delivery is None and self._research is not None \
                and start_after_s <= 0:  # a question held back by a tenant's queue waits
            repeated = await self._repeat(request)
            if repeated is not None:
                return repeated
        job = await self._store(request, delivery)
        if self._queue is not None:
            await self._enqueue(job.id, request, delivery, start_after_s)
            return job.id
        self._spawn(job.id, request, delivery, start_after_s, progress_shown)
        return job.id

    async def add_files(self, tenant: str, user: str, platform: str,
                        files: list[tuple[str, bytes]], delivery: Delivery | None = None
                        ) -> Job:
        """A job adding files (name, bytes) to the tenant's knowledge base; the job as
        stored. DocumentRefusedError (nothing kept) when one of them cannot be added.
        `delivery`: where to say what was added."""
        uploads = await self.documents.admit_files(tenant, files)
        return await self._add(DocumentsRequest(tenant=tenant, user=user, platform=platform,
                                                uploads=uploads), delivery)

    async def add_url(self, tenant: str, user: str, platform: str, url: str,
                      max_pages: int = 1, max_depth: int = 2,
                      delivery: Delivery | None = None) -> Job:
        """A job adding a web page (with `max_pages` > 1, its site's pages it links to and
        its sitemap lists) to the tenant's knowledge base, read again on the refresh
        schedule. DocumentRefusedError when it may not be fetched."""
        url = await self.documents.admit_url(url, max_pages)
        return await self._add(DocumentsRequest(tenant=tenant, user=user, platform=platform,
                                                url=url, max_pages=max_pages,
                                                max_depth=max_depth), delivery)

    @property
    def adds_documents(self) -> bool:
        return self._documents is not None

    @property
    def documents(self) -> DocumentAdder:
        if self._documents is None:
            raise RuntimeError("this job service adds no documents")
        return self._documents

    async def _add(self, request: DocumentsRequest, delivery: Delivery | None) -> Job:
        job = await self._store(request, delivery)
        if self._queue is not None:
            await self._enqueue(job.id, request, delivery, 0.0)
        else:
            self._spawn(job.id, request, delivery, 0.0, True)
        return job

    async def improve(self, feedback: str, tenant: str, job_id: str | None = None, *,
                      delivery: Delivery | None = None, user: str | None = None,
                      start_after_s: float = 0.0) -> str:
        """Start a job revising an earlier answer (the tenant's job `job_id`, else its latest)
        following the reader's feedback: a request like any other, queued when jobs are,
        delivered to `delivery` (a chat thread) when given, asked by `user` when given.
        InvalidQuestionError (no job stored) when there is nothing to improve, or when this
        process researches and has no model to revise with; JobNotFoundError for a job of
        another tenant."""
        feedback = validate_question(feedback, what="feedback")
        if self._research is not None and not self._research.can_improve:
            raise InvalidQuestionError(
                "improve needs a language model: set llm.fast_model (see the README)")
        base = await self.store.get(job_id) if job_id else next(
            iter(await self.store.recent(tenant, limit=1, status=JobStatus.COMPLETED)), None)
        if base is not None and base.tenant != tenant:  # another tenant's job is not there
            raise JobNotFoundError(f"no job with id {job_id!r}")
        if base is None or base.result is None or \
                not isinstance(base.request, ResearchRequest):
            raise InvalidQuestionError("there is no finished answer to improve yet")
        request = base.request.model_copy(update={
            "bypass_cache": True, "user": base.request.user if user is None else user,
            "improvement": Improvement(job_id=base.id, feedback=feedback, answer=base.result,
                                       trace=base.trace)})
        return await self.submit(request, delivery, start_after_s=start_after_s)

    async def run_queued(self, job_id: str, attempt: int, max_attempts: int) -> None:
        """Run a queued job here (a worker): research it and deliver the answer, or, when an
        earlier attempt got further, only what is left. Attempt `max_attempts + 1` only
        tells the person that the job could not be finished. Cancelled from outside (the
        worker stopping), the job goes back to the queue unless its cancel was asked for."""
        job = await self._outlast(lambda: self.store.get(job_id))
        row = await self._outlast(lambda: self._deliveries.get(job_id))
        delivery = await self._rebuild(row)
        if job.status not in (JobStatus.PENDING, JobStatus.IN_PROGRESS):
            await self._finish(job, delivery)
            return
        if await self._outlast(lambda: self._cancel_requested(job_id)):
            await self._cancelled(job_id, delivery)
            return
        if attempt > max_attempts:
            message = GAVE_UP.format(attempts=max_attempts)
            await self._outlast(lambda: self.store.fail(
                job_id, f"stopped after {max_attempts} attempts", FailureKind.INTERRUPTED))
            await self._ended(job_id, job.platform, "failed", message, delivery,
                              lambda d: lambda steps: d.failure(message, steps))
            return
        if attempt > 1:
            await self._outlast(lambda: self._events.append(
                job_id, "resumed", message=f"Taken up again (attempt {attempt})"))
        await self._run(job_id, job.request, delivery, 0.0, True, handoff=True)

    @property
    def queue(self) -> JobQueue | None:
        """The queue jobs are submitted to (None: they run in this process)."""
        return self._queue

    @property
    def research(self) -> Research:
        if self._research is None:
            raise RuntimeError("this job service only reads jobs: it has no research core")
        return self._research

    async def wait(self, job_id: str) -> Job:
        """The job once it has ended (and, run here, once its delivery has ended too)."""
        task = self._tasks.get(job_id)
        if task is None:
            return await super().wait(job_id)
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.shield(task)
        return await self.result(job_id)

    async def result(self, job_id: str) -> Job:
        """The job as stored; an answer finished here whose row is not written yet as it
        ended (also while the database cannot be read)."""
        unsaved = self._unsaved.get(job_id)
        if unsaved is None:
            return await self.store.get(job_id)
        with contextlib.suppress(Exception):
            stored = await self.store.get(job_id)
            if stored.status == JobStatus.COMPLETED:
                return stored
        return unsaved

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
        await self.store.fail(job_id, "cancelled before it finished", FailureKind.CANCELLED)
        await self._events.append(job_id, "cancelled", message=CANCELLED)
        JOBS.labels("cancelled", job.platform).inc()
        return True

    async def fail_abandoned(self, worker_alive: Callable[[str], bool],
                             older_than: timedelta, platforms: Collection[str] | None = None
                             ) -> int:
        """At start-up without a queue: unfinished jobs (of `platforms`, when given) whose
        process is gone (per `worker_alive`), or older than `older_than`, are failed, so none
        stays in progress forever. How many."""
        return await self.store.fail_abandoned(worker_alive, older_than, platforms)

    async def resume_abandoned(self, worker_alive: Callable[[str], bool],
                               older_than: timedelta) -> int:
        """At start-up without a queue: unfinished jobs whose process is gone are run again
        here from their stored request, their events continuing on the same stream (a
        "resumed" event says so); those older than `older_than`, or taken up
        `MAX_TAKE_UPS` times already, are failed as interrupted. How many resumed."""
        resumed = 0
        for job in await self.store.unfinished():
            if worker_alive(job.worker):
                continue
            stale = job.created_at <= utcnow() - older_than
            if stale or await self._take_ups(job.id) >= MAX_TAKE_UPS:
                await self._give_up(job.id, job.platform)
                continue
            if not await self.store.claim(job.id, job.worker, self._worker):
                continue  # another process starting now took it
            await self._events.append(job.id, "resumed", message=RESUMED)
            row = await self._deliveries.get(job.id)
            delivery = await self._rebuild(row)
            self._spawn(job.id, job.request, delivery, 0.0, True)
            resumed += 1
        return resumed

    async def sweep_queued(self, older_than: timedelta, stale: timedelta) -> int:
        """In a worker: unfinished jobs (created more than `older_than` ago) that the queue
        no longer holds (its attempts ended while the database was away, or its entry was
        lost) are queued again, or failed as interrupted when older than `stale` or taken
        up `MAX_TAKE_UPS` times. Two workers sweeping at once act once: the queue's
        enqueue and the store's conditional update each let one win. How many."""
        assert self._queue is not None
        swept = 0
        for job in await self.store.unfinished(created_before=utcnow() - older_than):
            if await self._queue.holds(job.id):
                continue
            if job.created_at <= utcnow() - stale or \
                    await self._take_ups(job.id) >= MAX_TAKE_UPS:
                swept += await self._give_up(job.id, job.platform)
                continue
            if await self._queue.enqueue(job.id, deep=_deep(job.request),
                                         timeout_s=self._attempt_timeout_s):
                await self._events.append(job.id, "resumed",
                                          message="Queued again: its queue entry had ended")
                self._events.forget(job.id)
                swept += 1
        return swept

    async def close(self) -> None:
        """Stop the jobs still running here (the process is stopping): each goes back to
        pending, to be resumed when a process starts again (`resume_abandoned`)."""
        self._stopping = True
        tasks = [*self._tasks.values(), *self._saving]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _outlast(self, write: Callable[[], Awaitable[T]]) -> T:
        return await outlast(write, self._outage_grace_s)

    async def _take_ups(self, job_id: str) -> int:
        """How often the job was taken up again (after its process, worker or queue entry
        ended, or the database went away under it)."""
        return sum(event.kind == "resumed" for event in await self._events.after(job_id))

    async def _give_up(self, job_id: str, platform: str) -> int:
        """Fail an abandoned job as interrupted and tell the person (1), unless another
        process ended it first (0)."""
        if not await self.store.fail_unfinished(
                job_id, "interrupted: the process running this job stopped before it "
                "finished", FailureKind.INTERRUPTED):
            return 0
        delivery = await self._rebuild(await self._deliveries.get(job_id))
        await self._ended(job_id, platform, "failed", INTERRUPTED, delivery,
                          lambda d: lambda steps: d.failure(INTERRUPTED, steps))
        return 1

    async def _store(self, request: AnyRequest, delivery: Delivery | None) -> Job:
        """Store the job: its first event and its delivery, then its row, last, so that a
        database that fails on the way (the caller is told 503) leaves no job behind that
        a sweep or a restart would run although the question was refused."""
        job = Job(tenant=request.tenant, user=request.user, platform=request.platform,
                  worker=self._worker, request=request)
        self._events.new_job(job.id)
        await self._events.append(job.id, "queued", message="Queued")
        if delivery is not None:
            await self._deliveries.open(job.id, delivery.platform, delivery.target())
        return await self.store.create(job)

    async def _repeat(self, request: ResearchRequest) -> str | None:
        """An exact repeat of an answered question, answered before `submit` returns: the job
        is stored ended, with all its events, in one transaction (run as a task, a cache hit
        took a dozen writes and reads of its own job, which is what concurrent hits queued
        on). None: the job is to be run (not a repeat, or the lookup failed: the run looks
        again, and goes on without the cache if it fails again)."""
        job = Job(tenant=request.tenant, user=request.user, platform=request.platform,
                  worker=self._worker, request=request)
        with job_log_fields(job_id=job.id, tenant=request.tenant) as fields:
            stages = _StageClock(job.id, fields)
            drafts = [EventDraft("queued", None, 0.0, "Queued", {})]

            async def sink(event: StageEvent) -> None:
                stages.record(event)
                drafts.append(EventDraft(event.kind, event.stage, event.progress,
                                         event.message, event.counts, event.detail))

            try:
                outcome = await self.research.repeat(request, sink)
            except Exception as error:
                log.warning("job %s: the cache could not be read first: %s: %s", job.id,
                            type(error).__name__, redact(str(error))[:300], extra=fields)
                return None
            if outcome is None:
                return None
            result = outcome.result.model_copy(update={"job_id": job.id})
            message = f"Confidence: {result.answer.confidence.value}"
            drafts.append(EventDraft("completed", None, 0.0, message, {}))
            ended = job.model_copy(update={
                "status": JobStatus.COMPLETED, "stage": Stage.DELIVER, "progress": 1.0,
                "trace": outcome.trace, "result": result, "started_at": job.created_at,
                "metrics": {**outcome.metrics, **stages.metrics()}, "completed_at": utcnow()})
            JOBS.labels("completed", request.platform).inc()  # counted before it is seen
            await self.store.create_ended(ended, drafts)
            log.info("job %s answered from the cache", job.id, extra=fields)
            return job.id

    async def _enqueue(self, job_id: str, request: AnyRequest, delivery: Delivery | None,
                       start_after_s: float) -> None:
        """Queue the job; when the queue cannot be reached, the job fails and says so."""
        assert self._queue is not None
        self._events.forget(job_id)  # a worker numbers the events from here
        deep = _deep(request)
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
            await self.store.fail(job_id, "queue unavailable: the job queue could not be "
                                  "reached", FailureKind.INTERRUPTED)
            await self._ended(job_id, request.platform, "failed", FAILURE, delivery,
                              lambda d: lambda steps: d.failure(FAILURE, steps))
            if delivery is None:  # nobody to tell but the caller: refuse the question
                raise QueueUnavailableError(QUEUE_AWAY) from None

    async def _rebuild(self, row: DeliveryRecord | None) -> Delivery | None:
        """The job's delivery, rebuilt from its row while it is still to be done; None (and
        the delivery recorded as failed) when this process cannot post to its platform."""
        if row is None or row.status != "pending":
            return None
        try:
            if self._deliveries_for is not None:
                return await self._deliveries_for(row.platform, row.target)
            reason = f"this process cannot post to {row.platform}"
        except ConfigurationError as error:
            reason = str(error)
        log.error("job %s: %s", row.job_id, reason)
        await self._deliveries.update(row.job_id, status="failed", error=reason)
        DELIVERY_FAILURES.labels(row.platform).inc()
        return None

    async def _cancel_requested(self, job_id: str) -> bool:
        return any(event.kind == "cancel_requested"
                   for event in await self._events.after(job_id))

    async def _finish(self, job: Job, delivery: Delivery | None) -> None:
        """The job ended in an earlier attempt whose worker died before it could say so or
        deliver: say it (once) and deliver what is left."""
        told = any(event.terminal for event in await self._events.after(job.id))
        if job.status == JobStatus.COMPLETED and job.added is not None:
            added = job.added
            await self._ended(job.id, job.platform, "completed", _added_line(added), delivery,
                              lambda d: lambda steps: d.added(added, steps), told)
            return
        if job.status == JobStatus.COMPLETED and job.result is not None:
            shown = job.result
            await self._ended(job.id, job.platform, "completed",
                              f"Confidence: {shown.answer.confidence.value}", delivery,
                              lambda d: lambda steps: d.answer(shown, steps), told)
            return
        kind, message = ("cancelled", CANCELLED) if job.status == JobStatus.CANCELLED \
            else ("failed", FAILURE)
        await self._ended(job.id, job.platform, kind, message, delivery,
                          lambda d: lambda steps: d.failure(message, steps), told)

    def _spawn(self, job_id: str, request: AnyRequest, delivery: Delivery | None,
               start_after_s: float, progress_shown: bool) -> None:
        task = asyncio.create_task(
            self._run(job_id, request, delivery, start_after_s, progress_shown),
            name=f"job-{job_id}")
        self._tasks[job_id] = task
        task.add_done_callback(lambda _: self._tasks.pop(job_id, None))

    async def _run(self, job_id: str, request: AnyRequest, delivery: Delivery | None,
                   start_after_s: float, progress_shown: bool, handoff: bool = False) -> None:
        """Research the job and deliver how it ended, its log records tagged with the job
        (core.logfields)."""
        with job_log_fields(job_id=job_id, tenant=request.tenant) as fields:
            log.info("job %s started", job_id, extra={**fields, "question": request.subject,
                                                      "platform": request.platform})
            await self._run_logged(job_id, request, delivery, start_after_s, progress_shown,
                                   handoff, fields)

    async def _run_logged(self, job_id: str, request: AnyRequest,
                          delivery: Delivery | None, start_after_s: float, progress_shown: bool,
                          handoff: bool, fields: dict[str, str]) -> None:
        pump = ProgressPump(delivery, job_id, self._progress_interval_s, progress_shown) \
            if delivery is not None else None
        stages = _StageClock(job_id, fields)
        stored = StoredProgress(self.store, self._events, job_id)

        async def sink(event: StageEvent) -> None:
            """The research's progress: the job row's stage and a stored event (in
            batches), the delivery's progress line, the stage's log line and duration."""
            stages.record(event)
            shown = ProgressEvent(job_id=job_id, **event.model_dump())
            stored.offer(shown)
            if pump is not None:
                pump.offer(shown)

        try:
            if start_after_s > 0:
                await asyncio.sleep(start_after_s)
            await self._outlast(lambda: self.store.start(job_id, self._worker))
            if isinstance(request, DocumentsRequest):
                added = await self._through_outages(
                    job_id, lambda: self.documents.run(request, sink), stored.flush)
            else:
                outcome = await self._through_outages(
                    job_id, lambda: self.research.run(request, sink), stored.flush)
        except asyncio.CancelledError:
            await asyncio.shield(stored.close())
            if pump is not None:
                await pump.close()
            if (handoff or self._stopping) and \
                    not await asyncio.shield(self._cancel_requested(job_id)):
                await asyncio.shield(self._hand_back(job_id))
                raise
            await asyncio.shield(self._cancelled(job_id, delivery, stages.metrics()))
            raise
        except Exception as error:
            await stored.close()
            if pump is not None:
                await pump.close()
            await self._failed(job_id, request, delivery, error, stages.metrics(), fields)
            return
        await stored.close()
        if pump is not None:
            await pump.close()
        if isinstance(request, DocumentsRequest):
            await self._outlast(lambda: self.store.complete_documents(job_id, added,
                                                                      stages.metrics()))
            await self._ended(job_id, request.platform, "completed", _added_line(added),
                              delivery, lambda d: lambda steps: d.added(added, steps))
            return
        result, saved = await self._completed(job_id, request, outcome, stages.metrics())
        shown = ResearchResult.model_validate(REDACTOR.data(result.model_dump(mode="json")))
        await self._ended(job_id, request.platform, "completed",
                          f"Confidence: {shown.answer.confidence.value}", delivery,
                          lambda d: lambda steps: d.answer(shown, steps), saved=saved)

    async def _through_outages(self, job_id: str, work: Callable[[], Awaitable[T]],
                               flush_progress: Callable[[], Awaitable[None]]) -> T:
        """The research (or the indexing), run again when the database or the vector store
        went away under it (the knowledge base and the answer cache are there): after a
        growing wait, up to `MAX_TAKE_UPS` times. The progress of a run given up is stored
        before the event that says it starts again."""
        for run in range(1, MAX_TAKE_UPS + 1):
            try:
                return await work()
            except Exception as error:
                outage = _outage(error)
                if outage is None or run == MAX_TAKE_UPS:
                    raise
                log.warning("job %s: research cut off: %s", job_id, outage)
            await asyncio.sleep(2 ** run)  # a server that refused at once may be restarting
            await flush_progress()
            back = SERVER_BACK.format("The vector store" if isinstance(
                outage, VectorStoreUnavailableError) else "The job database")
            await self._outlast(functools.partial(self._events.append, job_id, "resumed",
                                                  message=back))
        raise AssertionError("unreachable")

    async def _completed(self, job_id: str, request: ResearchRequest, outcome: ResearchOutcome,
                         stage_metrics: dict[str, Any]) -> tuple[ResearchResult, bool]:
        """Store the outcome on the job: its result (now carrying the job's id), metrics
        and trace; and whether it was stored. A finished answer is never lost to the store:
        when the row cannot be written at once (the database away or full, or refusing
        writes), the answer is kept here, served to readers and delivered, and written when
        the database takes writes again (`_save_later`)."""
        result = outcome.result.model_copy(update={"job_id": job_id})
        metrics = {**outcome.metrics, **stage_metrics}
        try:
            await self.store.complete(job_id, result, metrics, outcome.trace)
            return result, True
        except Exception as error:
            log.error("job %s: its answer could not be stored (delivered anyway, stored "
                      "once the database takes writes): %s", job_id, error_line(error),
                      extra={"job_id": job_id, "tenant": request.tenant})
        UNSAVED_RESULTS.inc()
        now = utcnow()
        self._unsaved[job_id] = Job(
            id=job_id, tenant=request.tenant, user=request.user, platform=request.platform,
            worker=self._worker, request=request, status=JobStatus.COMPLETED,
            stage=Stage.DELIVER, progress=1.0, trace=outcome.trace, result=result,
            metrics=metrics, created_at=now, started_at=now, completed_at=now)
        return result, False

    async def _save_later(self, job_id: str, message: str, delivered: bool | None) -> None:
        """Write an answer kept in memory (`_completed`), then the events that end its job,
        retrying with growing waits (to 30 s) for as long as this process runs. A process
        that stops first leaves the job unfinished, to be researched again at the next
        start (`resume_abandoned`) or by a worker's sweep."""
        job = self._unsaved[job_id]
        result = job.result
        assert result is not None
        writes: list[Callable[[], Awaitable[Any]]] = [
            lambda: self.store.complete(job_id, result, job.metrics, job.trace),
            lambda: self._events.append(job_id, "completed", message=message)]
        if delivered is not None:
            writes.append(lambda: self._events.append(
                job_id, "delivered" if delivered else "delivery_failed"))
        wait_s = 1.0
        for write in writes:  # each in turn, none given up while this process runs
            while True:
                await asyncio.sleep(wait_s)
                try:
                    await write()
                    break
                except Exception as error:
                    log.warning("job %s: its answer is still not stored: %s", job_id,
                                error_line(error))
                wait_s = min(30.0, max(1.0, wait_s * 2))
            wait_s = 0.0
        self._events.forget(job_id)
        del self._unsaved[job_id]
        log.info("job %s: its answer is stored now", job_id)

    async def _failed(self, job_id: str, request: AnyRequest, delivery: Delivery | None,
                      error: Exception, stage_metrics: dict[str, Any],
                      fields: dict[str, str]) -> None:
        """Store why the job failed (nothing of the exception is kept beyond this call) and
        tell the person."""
        message = user_message(error)
        kind = failure_of(error)
        outage = _outage(error)
        if outage is not None:
            log.error("job %s failed: %s", job_id, outage, extra=dict(fields))
            reason = f"{outage} (the research could not read it)"
        elif kind == FailureKind.ERROR:
            log.error("job %s failed: %s: %s", job_id, type(error).__name__,
                      redact(str(error))[:500], extra=dict(fields))
            reason = f"{type(error).__name__}: {error}"[:2000]
        else:
            log.warning("job %s refused: %s", job_id, message, extra=dict(fields))
            reason = str(error)[:2000]
        await self._outlast(lambda: self.store.fail(job_id, reason, kind, stage_metrics))
        if isinstance(request, DocumentsRequest) and self._documents is not None:
            await self._outlast(lambda: self.documents.discard(request))
        await self._ended(job_id, request.platform, "failed", message, delivery,
                          lambda d: lambda steps: d.failure(message, steps))

    async def _ended(self, job_id: str, platform: str, kind: str, message: str,
                     delivery: Delivery | None,
                     post: Callable[[Delivery], Callable[..., Awaitable[None]]],
                     told: bool = False, saved: bool = True) -> None:
        """Record how the job ended (unless `told` already) and deliver it. An answer not
        `saved` yet is delivered first; its events are written after its row, by
        `_save_later` (followers here see its end at once: `JobEvents.hold`)."""
        if not told:  # counted first: whoever sees the event sees the count
            JOBS.labels(kind, platform).inc()
            if saved:
                await self._outlast(lambda: self._events.append(job_id, kind,
                                                                message=message))
            else:
                self._events.hold(job_id, kind, message)
        delivered: bool | None = None
        if delivery is not None:
            delivered = await deliver(job_id, delivery, self._deliveries, self._retry,
                                      post(delivery))
            if saved:
                await self._events.append(job_id, "delivered" if delivered
                                          else "delivery_failed")
        if not saved:
            task = asyncio.create_task(self._save_later(job_id, message, delivered),
                                       name=f"save-{job_id}")
            self._saving.add(task)
            task.add_done_callback(self._saving.discard)
            return
        self._events.forget(job_id)

    async def _hand_back(self, job_id: str) -> None:
        """This process is stopping: the job goes back to pending, for the queue (or this
        process's next start) to run again."""
        await self.store.requeue(job_id)
        where = "the queue" if self._queue is not None else "the next start"
        await self._events.append(job_id, "requeued",
                                  message=f"Handed back to {where}: its process stopped")
        self._events.forget(job_id)

    async def _cancelled(self, job_id: str, delivery: Delivery | None,
                         metrics: dict[str, Any] | None = None) -> None:
        """Record the cancellation and tell the person, trying once (the process may be
        stopping)."""
        job = await self.store.get(job_id)
        if job.status in (JobStatus.PENDING, JobStatus.IN_PROGRESS):
            started = job.status == JobStatus.IN_PROGRESS
            await self.store.fail(job_id, "cancelled before it finished" if started
                                  else "cancelled before it started", FailureKind.CANCELLED,
                                  metrics)
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


class _StageClock:
    """Times each stage of one job from its events: one log line per finished stage with its
    duration, the stage histogram, and the `stage_ms` metrics stored with the job. The job's
    log fields follow the stage it is in."""

    def __init__(self, job_id: str, fields: dict[str, str]) -> None:
        self._job_id = job_id
        self._fields = fields
        self._started: dict[Stage, float] = {}
        self._ms: dict[str, int] = {}

    def record(self, event: StageEvent) -> None:
        now = time.perf_counter()
        self._fields["stage"] = event.stage.value
        if event.kind == "started":
            self._started[event.stage] = now
            return
        seconds = now - self._started.pop(event.stage, now)
        self._ms[event.stage.value] = int(seconds * 1000)
        STAGE_DURATION.labels(event.stage.value).observe(seconds)
        log.info("job %s: %s finished in %.3f s: %s", self._job_id, event.stage.value, seconds,
                 event.message, extra={**self._fields, "duration_ms": round(seconds * 1000),
                                       "counts": event.counts})

    def metrics(self) -> dict[str, Any]:
        return {"stage_ms": dict(self._ms)}


def validated(request: ResearchRequest) -> ResearchRequest:
    """The request with its question, its context and the questions of the conversation it
    continues checked and trimmed, and the conversation's answers checked to be storable
    text: the one validation a request gets (InvalidQuestionError)."""
    history = [turn.model_copy(update={
        "question": validate_question(turn.question, what="earlier question"),
        "answer": validate_text(turn.answer, what="earlier answer")})
        for turn in request.history]
    return request.model_copy(update={"question": validate_question(request.question),
                                      "context": validate_context(request.context),
                                      "history": history})


def _added_line(added: DocumentsOutcome) -> str:
    """A documents job's last event: what it did."""
    return added.summary[:1].upper() + added.summary[1:]


def _deep(request: AnyRequest) -> bool:
    """Whether the job goes to the queue of deep jobs (which never holds up quick ones):
    adding documents does (reading and embedding them takes a while)."""
    if isinstance(request, DocumentsRequest):
        return True
    return choose_depth(request.depth, request.question, detect_intent(request.question),
                        request.platform) == Depth.DEEP


def _outage(error: BaseException) -> UnavailableError | None:
    """The outage (of the database or the vector store) `error` is a sign of, if any: the
    research is worth running again once the server is back."""
    if isinstance(error, UnavailableError):
        return error
    return store_outage(error)


def failure_of(error: BaseException) -> FailureKind:
    """How a failure is told: the person's to fix, a setting's, or ours."""
    if isinstance(error, InvalidQuestionError):
        return FailureKind.INVALID
    if isinstance(error, ConfigurationError):
        return FailureKind.CONFIGURATION
    return FailureKind.ERROR


def user_message(error: BaseException) -> str:
    """What the person who asked is told when a job fails: the reason where it is theirs to
    fix or a setting's (named), otherwise a generic apology; never a stack trace."""
    if failure_of(error) != FailureKind.ERROR:
        return redact(str(error))
    if isinstance(error, JobNotFoundError):
        return "That job no longer exists."
    return FAILURE
