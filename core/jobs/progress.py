"""A running job's stage events on their way to the database, in batches: at most one write
every `interval_s` while the job runs, and what is left before its end is recorded. A job
answered from the cache in a few milliseconds stores its stages in one transaction instead
of one (and a job-row update) each, which is what a burst of cache hits waited on."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from core.models import ProgressEvent
from core.redact import redact
from core.store.events import JobEvents
from core.store.jobs import JobStore

log = logging.getLogger(__name__)

STORE_INTERVAL_S = 0.1


class StoredProgress:
    """`offer` returns at once; a background task stores what was offered (the events, and
    the job row's stage and progress) `interval_s` after the first of them, in order. `close`
    stores the rest and waits for it. Progress is best effort: a failed write is logged and
    its events skipped, never the job failed."""

    def __init__(self, store: JobStore, events: JobEvents, job_id: str,
                 interval_s: float = STORE_INTERVAL_S) -> None:
        self._store = store
        self._events = events
        self._job_id = job_id
        self._interval_s = interval_s
        self._pending: list[ProgressEvent] = []
        self._closing = asyncio.Event()
        self._writer: asyncio.Task[None] | None = None
        self._writing = asyncio.Lock()

    def offer(self, event: ProgressEvent) -> None:
        self._pending.append(event)
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write_soon(),
                                               name=f"progress-{self._job_id}")

    async def flush(self) -> None:
        """Store what was offered so far, now (before an event that must come after it)."""
        await self._write()

    async def close(self) -> None:
        self._closing.set()
        if self._writer is not None:
            await self._writer
        await self._write()

    async def _write_soon(self) -> None:
        # Until nothing is left: an event offered while a batch was being written finds this
        # task still running and starts no other, so it is this task's to write.
        while not self._closing.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), self._interval_s)
            await self._write()
            if not self._pending:
                return

    async def _write(self) -> None:
        async with self._writing:  # one batch at a time, in the order offered
            batch, self._pending = self._pending, []
            if not batch:
                return
            try:
                started = [event for event in batch if event.kind == "started"]
                if started:
                    await self._store.advance(self._job_id, started[-1].stage,
                                              started[-1].progress)
                await self._events.progress(*batch)
            except Exception as error:
                log.warning("%d progress events of job %s were not stored: %s: %s",
                            len(batch), self._job_id, type(error).__name__,
                            redact(str(error))[:300])
