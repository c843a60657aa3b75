"""Asking through the job service as a front end does (submit, follow the events, read the
answer), for tests that research one question at a time."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from core.jobs.service import JobService
from core.models import ProgressEvent, ResearchRequest, ResearchResult

OnProgress = Callable[[ProgressEvent], Any]


class JobClient:
    """A job service's answers, one request at a time. A failed job raises what
    `JobService.answer` raises (JobFailedError with the stored reason, or the refusal)."""

    def __init__(self, jobs: JobService) -> None:
        self.jobs = jobs

    async def run(self, request: ResearchRequest,
                  on_progress: OnProgress | None = None) -> ResearchResult:
        return await self._answer(await self.jobs.submit(request), on_progress)

    async def improve(self, feedback: str, tenant: str, job_id: str | None = None,
                      on_progress: OnProgress | None = None) -> ResearchResult:
        return await self._answer(await self.jobs.improve(feedback, tenant, job_id),
                                  on_progress)

    async def _answer(self, job_id: str, on_progress: OnProgress | None) -> ResearchResult:
        async for event in self.jobs.events(job_id):
            shown = event.progress_event()
            if shown is not None and on_progress is not None:
                outcome = on_progress(shown)
                if inspect.isawaitable(outcome):
                    await outcome
        return await self.jobs.answer(job_id)
