"""One follower of a job's events per process, however many people watch it: each event is
read from the job service once and handed to every listener (200 browsers on one answer page
cost one database read per event, not 200)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from core.jobs.service import JobService
from core.models import JobEvent


class _Feed:
    def __init__(self) -> None:
        self.events: list[JobEvent] = []
        self.listeners = 0
        self.ended = False
        self.changed = asyncio.Event()
        self.task: asyncio.Task[None] | None = None

    def publish(self, event: JobEvent | None) -> None:
        if event is not None:
            self.events.append(event)
        else:
            self.ended = True
        self.changed.set()
        self.changed = asyncio.Event()


class JobFeeds:
    def __init__(self, jobs: JobService) -> None:
        self._jobs = jobs
        self._feeds: dict[str, _Feed] = {}

    async def listen(self, job_id: str, after: int = 0) -> AsyncIterator[JobEvent]:
        """The job's events numbered above `after`, up to the one that ends the job."""
        feed = self._feeds.get(job_id)
        if feed is None:  # the last listener of a feed removes it
            feed = self._feeds[job_id] = _Feed()
            feed.task = asyncio.create_task(self._follow(job_id, feed),
                                            name=f"feed-{job_id}")
        feed.listeners += 1
        try:
            shown = 0
            while True:
                changed = feed.changed
                for event in feed.events[shown:]:
                    shown += 1
                    if event.seq > after:
                        yield event
                    if event.terminal:
                        return
                if feed.ended:
                    return
                await changed.wait()
        finally:
            feed.listeners -= 1
            if feed.listeners == 0 and self._feeds.get(job_id) is feed:
                del self._feeds[job_id]
                if feed.task is not None and not feed.task.done():
                    feed.task.cancel()

    async def _follow(self, job_id: str, feed: _Feed) -> None:
        try:
            async for event in self._jobs.events(job_id):
                feed.publish(event)
        finally:
            feed.publish(None)

    async def close(self) -> None:
        tasks = [feed.task for feed in self._feeds.values() if feed.task is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._feeds.clear()
