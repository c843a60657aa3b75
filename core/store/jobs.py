"""Job store: one row a research job, with its request, trace, result and metrics, read back
as a typed `Job`. Only the job service (core.jobs) writes these rows. Every text and JSON
value is redacted (core.redact) on its way in: error text from a provider or a source can
carry a key, and the row outlives the process."""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import ValidationError
from sqlalchemy import JSON, Text, bindparam, select, type_coerce, update
from sqlalchemy.ext.asyncio import AsyncEngine

from core.errors import JobNotFoundError
from core.models import (
    DocumentsOutcome,
    DocumentsRequest,
    FailureKind,
    Job,
    JobStatus,
    ResearchResult,
    Stage,
    Trace,
    utcnow,
)
from core.redact import REDACTOR
from core.store.database import job_events, jobs, read_json
from core.store.events import EventDraft, event_rows
from core.store.sqlite_trips import one_trip

log = logging.getLogger(__name__)

# The row as stored, its JSON columns as text where the driver leaves them text (SQLite): they
# are decoded row by row (`_job`), so a row that does not decode or validate fails alone.
# (asyncpg decodes PostgreSQL's JSON itself, and PostgreSQL refuses invalid JSON.)
_STORED = [type_coerce(column, Text).label(column.name) if isinstance(column.type, JSON)
           else column for column in jobs.c]
# Built once (read on every request about a job)
_BY_ID = select(*_STORED).where(jobs.c.id == bindparam("job_id"))


class JobStore:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    @property
    def engine(self) -> AsyncEngine:
        return self._engine

    async def create(self, job: Job) -> Job:
        async with one_trip(self._engine) as connection:
            await connection.execute(jobs.insert(), _redacted(_row(job)))
        return job

    async def create_ended(self, job: Job, events: Sequence[EventDraft]) -> Job:
        """Store a job that ended as it began (an answer repeated from the cache) with all
        its events, numbered from 1, in one transaction (on SQLite one trip to its thread at
        most: core.store.sqlite_trips)."""
        async with one_trip(self._engine) as connection:
            await connection.execute(job_events.insert(), event_rows(job.id, 1, events))
            await connection.execute(jobs.insert(), _redacted(_row(job)))
        return job

    async def get(self, job_id: str) -> Job:
        async with self._engine.connect() as connection:
            row = (await connection.execute(_BY_ID, {"job_id": job_id})).first()
        if row is None:
            raise JobNotFoundError(f"no job with id {job_id!r}")
        try:
            return _job(row._mapping)
        except ValueError as error:
            log.warning("job %s cannot be read: %s", job_id, _unreadable(error))
            raise JobNotFoundError(f"job {job_id!r} is stored but cannot be read") from None

    async def recent(self, tenant: str | None = None, limit: int = 20,
                     status: JobStatus | None = None) -> list[Job]:
        """The latest jobs, newest first; a row that cannot be read is left out (logged)."""
        query = select(*_STORED).order_by(jobs.c.created_at.desc()).limit(limit)
        if tenant is not None:
            query = query.where(jobs.c.tenant == tenant)
        if status is not None:
            query = query.where(jobs.c.status == status.value)
        return await self._readable(query)

    async def start(self, job_id: str, worker: str = "") -> None:
        """The job runs now, in process `worker` (when named)."""
        values: dict[str, Any] = {"status": JobStatus.IN_PROGRESS.value, "started_at": utcnow()}
        if worker:
            values["worker"] = worker
        await self._update(job_id, **values)

    async def requeue(self, job_id: str) -> None:
        """Back to pending: the worker running the job stopped, and the queue will hand it to
        another."""
        await self._update(job_id, status=JobStatus.PENDING.value, error=None, failure=None,
                           completed_at=None)

    async def advance(self, job_id: str, stage: Stage, progress: float) -> None:
        await self._update(job_id, stage=stage.value, progress=progress)

    async def complete(self, job_id: str, result: ResearchResult, metrics: dict[str, Any],
                       trace: Trace) -> None:
        await self._update(
            job_id,
            status=JobStatus.COMPLETED.value,
            progress=1.0,
            result=result.model_dump(mode="json"),
            metrics=metrics,
            state=trace.model_dump(mode="json", exclude_none=True),
            completed_at=utcnow(),
        )

    async def complete_documents(self, job_id: str, added: DocumentsOutcome,
                                 metrics: dict[str, Any]) -> None:
        """A documents job ended: what it added, updated or skipped."""
        await self._update(job_id, status=JobStatus.COMPLETED.value, progress=1.0,
                           result=added.model_dump(mode="json"), metrics=metrics,
                           completed_at=utcnow())

    async def fail(self, job_id: str, error: str, failure: FailureKind = FailureKind.ERROR,
                   metrics: dict[str, Any] | None = None) -> None:
        """The job ended without an answer: cancelled (FailureKind.CANCELLED) or failed."""
        status = JobStatus.CANCELLED if failure == FailureKind.CANCELLED else JobStatus.FAILED
        values: dict[str, Any] = {"status": status.value, "error": error,
                                  "failure": failure.value, "completed_at": utcnow()}
        if metrics is not None:
            values["metrics"] = metrics
        await self._update(job_id, **values)

    async def fail_abandoned(
        self, worker_alive: Callable[[str], bool], older_than: timedelta,
        platforms: Collection[str] | None = None,
    ) -> int:
        """Mark unfinished jobs (of `platforms` only, when given) failed when their worker is
        gone (per `worker_alive`) or when they are older than `older_than`, so that none stays
        in_progress forever."""
        cutoff = utcnow() - older_than
        query = select(jobs.c.id, jobs.c.worker, jobs.c.created_at).where(
            jobs.c.status.in_(_UNFINISHED))
        if platforms is not None:
            query = query.where(jobs.c.platform.in_(list(platforms)))
        async with self._engine.begin() as connection:
            rows = await connection.execute(query)
            dead = [
                row.id
                for row in rows
                if not worker_alive(row.worker) or _utc(row.created_at) <= cutoff
            ]
            if dead:
                await connection.execute(
                    update(jobs)
                    .where(jobs.c.id.in_(dead), jobs.c.status.in_(_UNFINISHED))
                    .values(
                        status=JobStatus.FAILED.value,
                        error="interrupted: the process running this job stopped before "
                        "it finished", failure=FailureKind.INTERRUPTED.value,
                        completed_at=utcnow(),
                    )
                )
        return len(dead)

    async def unfinished(self, created_before: datetime | None = None) -> list[Job]:
        """Jobs pending or in progress (created before `created_before`, when given),
        oldest first."""
        query = select(*_STORED).where(jobs.c.status.in_(_UNFINISHED)) \
            .order_by(jobs.c.created_at)
        if created_before is not None:
            query = query.where(jobs.c.created_at < created_before)
        return await self._readable(query)

    async def _readable(self, query: Any) -> list[Job]:
        """The jobs `query` selects; a row that cannot be read is left out (logged), so one
        bad row cannot break a list, a resume or a sweep."""
        async with self._engine.connect() as connection:
            rows = (await connection.execute(query)).all()
        found = []
        for row in rows:
            try:
                found.append(_job(row._mapping))
            except ValueError as error:
                log.warning("job %s left out: it cannot be read: %s", row.id,
                            _unreadable(error))
        return found

    async def claim(self, job_id: str, gone: str, worker: str) -> bool:
        """Take an unfinished job of process `gone` for process `worker`: False when another
        process took it (or it ended) first. One conditional update: of two processes
        starting at once, one wins."""
        return await self._update_if(job_id, jobs.c.worker == gone, worker=worker)

    async def fail_unfinished(self, job_id: str, error: str, failure: FailureKind) -> bool:
        """Fail the job unless it has ended already: True when this call ended it."""
        return await self._update_if(job_id, None, status=JobStatus.FAILED.value, error=error,
                                     failure=failure.value, completed_at=utcnow())

    async def _update_if(self, job_id: str, condition: Any, **values: Any) -> bool:
        query = update(jobs).where(jobs.c.id == job_id, jobs.c.status.in_(_UNFINISHED))
        if condition is not None:
            query = query.where(condition)
        async with self._engine.begin() as connection:
            result = await connection.execute(query.values(**_redacted(values)))
        return bool(result.rowcount)

    async def _update(self, job_id: str, **values: Any) -> None:
        async with self._engine.begin() as connection:
            result = await connection.execute(
                update(jobs).where(jobs.c.id == job_id).values(**_redacted(values))
            )
        if not result.rowcount:
            raise JobNotFoundError(f"no job with id {job_id!r}")


_UNFINISHED = (JobStatus.PENDING.value, JobStatus.IN_PROGRESS.value)
_FREE_TEXT = frozenset({"request", "state", "result", "error", "metrics"})


def _redacted(values: dict[str, Any]) -> dict[str, Any]:
    """The columns that hold free text (not ids, tenants or statuses) redacted."""
    return {key: REDACTOR.data(value) if key in _FREE_TEXT else value
            for key, value in values.items()}


def _row(job: Job) -> dict[str, Any]:
    """The job as a row: the `state` column holds the trace, and `result` a question's
    result or what a documents job added."""
    data = job.model_dump(mode="json", exclude={"trace"})
    data["state"] = job.trace.model_dump(mode="json", exclude_none=True)
    added = data.pop("added")
    if isinstance(job.request, DocumentsRequest):
        data["result"] = added
    for key in ("created_at", "started_at", "completed_at"):
        data[key] = getattr(job, key)
    return data


def _job(mapping: Any) -> Job:
    """The row as a typed Job: the `state` column holds the trace. ValueError (a pydantic
    ValidationError, a JSONDecodeError) when the row is not one this version can read."""
    data = dict(mapping)
    for column in jobs.c:
        if isinstance(column.type, JSON) and isinstance(data[column.name], str):
            data[column.name] = read_json(data[column.name])
    data["trace"] = data.pop("state") or {}
    if isinstance(data["request"], dict) and data["request"].get("kind") == "documents":
        data["added"] = data.pop("result")
    for key in ("created_at", "started_at", "completed_at"):
        data[key] = _aware(data[key])
    return Job.model_validate(data)


def _unreadable(error: ValueError) -> str:
    """Why a row cannot be read, naming fields, never their values (they hold questions)."""
    if isinstance(error, ValidationError):
        fields = sorted({".".join(str(part) for part in problem["loc"])
                         for problem in error.errors()})
        return f"invalid {', '.join(fields[:5])}"
    return type(error).__name__


def _aware(value: datetime | None) -> datetime | None:
    return None if value is None else _utc(value)


def _utc(value: datetime) -> datetime:
    """SQLite returns naive datetimes; everything written is UTC."""
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
