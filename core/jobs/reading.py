"""The reading side of the job service: a job, its events (stored, then followed live), its
delivery record, recent jobs, and a job's answer once it has ended. Writes nothing: the
`researchbot jobs`, `show` and `keys` commands read through it without loading the research
core, and the job service (core.jobs.service) extends it with everything that writes."""

from __future__ import annotations

from collections.abc import AsyncIterator

from core.errors import ConfigurationError, InvalidQuestionError, JobFailedError
from core.models import FailureKind, Job, JobEvent, JobStatus, ResearchResult
from core.store.deliveries import DeliveryRecord, DeliveryStore
from core.store.events import JobEvents
from core.store.jobs import JobStore


class JobReader:
    def __init__(self, store: JobStore, events: JobEvents, deliveries: DeliveryStore) -> None:
        self.store = store
        self._events = events
        self._deliveries = deliveries

    async def result(self, job_id: str) -> Job:
        return await self.store.get(job_id)

    async def recent(self, tenant: str | None = None, limit: int = 20,
                     status: JobStatus | None = None) -> list[Job]:
        """The latest jobs, newest first (a tenant's, when given)."""
        return await self.store.recent(tenant, limit, status)

    def events(self, job_id: str, after: int = 0) -> AsyncIterator[JobEvent]:
        """The job's events numbered above `after`, then new ones as they happen, up to the
        one that ends the job."""
        return self._events.follow(job_id, after)

    async def stored_events(self, job_id: str, after: int = 0) -> list[JobEvent]:
        """The job's events stored so far, without waiting for more."""
        return await self._events.after(job_id, after)

    async def delivery(self, job_id: str) -> DeliveryRecord | None:
        """The job's delivery record: platform, status, attempts, last error."""
        return await self._deliveries.get(job_id)

    async def wait(self, job_id: str) -> Job:
        """The job once it has ended (followed through its events, wherever it runs)."""
        async for _ in self.events(job_id):
            pass
        return await self.result(job_id)

    async def answer(self, job_id: str) -> ResearchResult:
        """The job's result once it has ended. A job that ended without one raises what its
        stored failure says: InvalidQuestionError or ConfigurationError (the message names
        what to fix), else JobFailedError with the stored reason."""
        job = await self.wait(job_id)
        if job.status == JobStatus.COMPLETED and job.result is not None:
            return job.result
        reason = job.error or f"the job ended {job.status.value}"
        if job.failure == FailureKind.INVALID:
            raise InvalidQuestionError(reason)
        if job.failure == FailureKind.CONFIGURATION:
            raise ConfigurationError(reason)
        raise JobFailedError(reason)
