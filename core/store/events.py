"""A job's progress events in the database: appended in order, read from any point, followed
live. Followers in the process that runs the job wake at once; others poll."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from core.models import TERMINAL_EVENTS, JobEvent, ProgressDetail, ProgressEvent, Stage, utcnow
from core.redact import REDACTOR
from core.store.database import job_events
from core.store.outage import store_outage
from core.store.sqlite_trips import one_trip

# Built once (read on every look at a job's events)
_AFTER = (select(job_events).where(job_events.c.job_id == bindparam("job_id"),
                                   job_events.c.seq > bindparam("after"))
          .order_by(job_events.c.seq).limit(bindparam("limit")))


class JobEvents:
    def __init__(self, engine: AsyncEngine, poll_s: float = 0.5) -> None:
        self._engine = engine
        self._poll_s = poll_s
        self._locks: dict[str, asyncio.Lock] = {}
        self._next: dict[str, int] = {}  # the number of each job's next event, once read
        self._appended: dict[str, asyncio.Event] = {}  # set (and replaced) on each append
        self._held: dict[str, JobEvent] = {}  # a job's end not written yet (`hold`)

    async def append(self, job_id: str, kind: str, *, stage: Stage | None = None,
                     progress: float = 0.0, message: str = "",
                     counts: dict[str, int] | None = None) -> JobEvent:
        """Store the job's next event."""
        stored = await self._append(job_id, [EventDraft(kind, stage, progress, message,
                                                        counts or {})])
        return stored[0]

    async def progress(self, *events: ProgressEvent) -> list[JobEvent]:
        """Store stage events of one job, in order, in one transaction."""
        return await self._append(events[0].job_id, [
            EventDraft(event.kind, event.stage, event.progress, event.message, event.counts,
                       event.detail)
            for event in events])

    def hold(self, job_id: str, kind: str, message: str) -> None:
        """The job ended here but its end cannot be written yet (its row waits for the
        database): followers in this process see this event after the stored ones, until a
        terminal event is appended."""
        self._held[job_id] = JobEvent(job_id=job_id, seq=self._next.get(job_id, 1), at=utcnow(),
                                      kind=kind, message=message)
        self._appended.pop(job_id, asyncio.Event()).set()

    def new_job(self, job_id: str) -> None:
        """The job was just created here: its events are numbered from 1 without asking."""
        self._next.setdefault(job_id, 1)

    async def _append(self, job_id: str, drafts: list[EventDraft]) -> list[JobEvent]:
        """Appends for one job are serialised in this process, which numbers them itself
        after reading the last number once; a clash with another process (both took the same
        number) reads it again and retries."""
        lock = self._locks.setdefault(job_id, asyncio.Lock())
        async with lock:
            for _ in range(5):
                if job_id not in self._next:
                    self._next[job_id] = await self._last(job_id) + 1
                try:
                    stored = await self._insert(job_id, self._next[job_id], drafts)
                    break
                except IntegrityError:
                    del self._next[job_id]
            else:
                raise RuntimeError(f"could not number an event of job {job_id}")
            self._next[job_id] += len(drafts)
        if any(draft.kind in TERMINAL_EVENTS for draft in drafts):
            self._held.pop(job_id, None)
        self._appended.pop(job_id, asyncio.Event()).set()
        return stored

    async def after(self, job_id: str, after: int = 0, limit: int = 1000) -> list[JobEvent]:
        async with self._engine.connect() as connection:
            rows = (await connection.execute(
                _AFTER, {"job_id": job_id, "after": after, "limit": limit})).all()
        return [_event(row._mapping) for row in rows]

    async def follow(self, job_id: str, after: int = 0) -> AsyncIterator[JobEvent]:
        """The job's events after number `after`, as they happen, up to and including the one
        that ends the job (completed, failed or cancelled). A database that goes away
        meanwhile (a restart) is waited for: the job goes on, and so does its stream."""
        try:
            while True:
                appended = self._appended.setdefault(job_id, asyncio.Event())
                try:
                    events = await self.after(job_id, after)
                except Exception as error:
                    if store_outage(error) is None:
                        raise
                    events = []
                held = self._held.get(job_id)
                if not events and held is not None and held.seq > after:
                    yield held
                    return
                if not events:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(appended.wait(), self._poll_s)
                    continue
                for event in events:
                    yield event
                    after = event.seq
                    if event.terminal:
                        return
        finally:
            if job_id not in self._locks:  # not appending here: the wake-up is this follower's
                self._appended.pop(job_id, None)

    def forget(self, job_id: str) -> None:
        """Drop the job's append lock and wake-up (its events are all written)."""
        self._locks.pop(job_id, None)
        self._next.pop(job_id, None)
        self._appended.pop(job_id, None)

    async def _last(self, job_id: str) -> int:
        async with self._engine.connect() as connection:
            last = (await connection.execute(
                select(func.max(job_events.c.seq)).where(job_events.c.job_id == job_id)
            )).scalar()
        return int(last or 0)

    async def _insert(self, job_id: str, first: int, drafts: list[EventDraft]
                      ) -> list[JobEvent]:
        rows = event_rows(job_id, first, drafts)
        async with one_trip(self._engine) as connection:
            await connection.execute(job_events.insert(), rows)
        return [JobEvent.model_validate(row) for row in rows]


@dataclass(frozen=True)
class EventDraft:
    """An event to store, before it has a number."""

    kind: str
    stage: Stage | None
    progress: float
    message: str
    counts: dict[str, int]
    detail: ProgressDetail | None = None


def event_rows(job_id: str, first: int, drafts: Sequence[EventDraft]) -> list[dict[str, Any]]:
    """The job's events as rows, numbered from `first`, their messages (and the queries of
    their details) redacted."""
    at = utcnow()
    return [{"job_id": job_id, "seq": first + n, "at": at, "kind": draft.kind,
             "stage": draft.stage.value if draft.stage else None, "progress": draft.progress,
             "message": REDACTOR(draft.message), "counts": draft.counts,
             "detail": REDACTOR.data(draft.detail.model_dump(mode="json"))
             if draft.detail is not None else None}
            for n, draft in enumerate(drafts)]


def _event(mapping: Any) -> JobEvent:
    data = dict(mapping)
    at = data["at"]
    if at.tzinfo is None:  # SQLite returns naive datetimes; everything written is UTC
        from datetime import UTC

        data["at"] = at.replace(tzinfo=UTC)
    return JobEvent.model_validate(data)
