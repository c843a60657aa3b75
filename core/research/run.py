"""Per-job bookkeeping shared by the pipeline's paths: stage progress to the job store and to
the caller's callback, metrics and state."""

from __future__ import annotations

import inspect
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from core.metrics import STAGE_DURATION
from core.models import ProgressEvent, Stage, Trace
from core.redact import redact
from core.store.jobs import JobStore

log = logging.getLogger(__name__)

ProgressCallback = Callable[[ProgressEvent], Awaitable[None] | None]

_PROGRESS = {
    Stage.INTAKE: 0.05, Stage.CACHE: 0.1, Stage.PLAN: 0.15, Stage.SEARCH: 0.5,
    Stage.RANK: 0.6, Stage.SYNTHESIZE: 0.8, Stage.VERIFY: 0.9, Stage.GRADE: 0.95,
    Stage.DELIVER: 1.0,
}


class JobRun:
    """Per-job bookkeeping: stage progress to the store and to the caller's callback."""

    def __init__(self, job_id: str, store: JobStore, on_progress: ProgressCallback | None):
        self.job_id = job_id
        self.trace = Trace()
        self.metrics: dict[str, Any] = {"llm_calls": 0, "tokens": 0, "cached": False,
                                        "stage_ms": {}}
        self._store = store
        self._on_progress = on_progress
        self._stage_started = 0.0
        self._previous = 0.0

    async def begin(self, stage: Stage, message: str) -> None:
        self._stage_started = time.perf_counter()
        await self._store.advance(self.job_id, stage, self._previous)
        await self._emit(ProgressEvent(job_id=self.job_id, stage=stage, kind="started",
                                       progress=self._previous, message=message))

    async def end(self, stage: Stage, message: str, counts: dict[str, int] | None = None) -> None:
        self.metrics["stage_ms"][stage.value] = ms(self._stage_started)
        STAGE_DURATION.labels(stage.value).observe(time.perf_counter() - self._stage_started)
        self._previous = _PROGRESS[stage]
        await self._emit(ProgressEvent(job_id=self.job_id, stage=stage, kind="finished",
                                       progress=self._previous, message=message,
                                       counts=counts or {}))

    async def _emit(self, event: ProgressEvent) -> None:
        """Progress is best effort: a callback that fails is logged, never fails the job."""
        if self._on_progress is None:
            return
        try:
            outcome = self._on_progress(event)
            if inspect.isawaitable(outcome):
                await outcome
        except Exception as error:
            log.warning("job %s: a progress event was not recorded: %s: %s", self.job_id,
                        type(error).__name__, redact(str(error))[:300])


def ms(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)
