"""What one research run keeps while it works: its trace and metrics, and the stage events
it reports to the caller's sink (the job service turns them into stored events and row
updates; a test may just collect them); what it returns; and `Research`, what the job
service runs."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from core.models import (
    ProgressDetail,
    ResearchRequest,
    ResearchResult,
    Stage,
    StageEvent,
    Trace,
)
from core.redact import redact

log = logging.getLogger(__name__)

ProgressSink = Callable[[StageEvent], Awaitable[None]]

_PROGRESS = {
    Stage.INTAKE: 0.05, Stage.CACHE: 0.1, Stage.PLAN: 0.15, Stage.SEARCH: 0.5,
    Stage.RANK: 0.6, Stage.SYNTHESIZE: 0.8, Stage.VERIFY: 0.9, Stage.GRADE: 0.95,
    Stage.DELIVER: 1.0,
}


@dataclass(frozen=True)
class ResearchOutcome:
    """What a research run returns: the result (its `job_id` empty: the job service sets it),
    what the research did, and its metrics."""

    result: ResearchResult
    trace: Trace
    metrics: dict[str, Any]


class Research(Protocol):
    """Research as the job service runs it (core.research.researcher.Researcher, or
    core.research.repeats.CacheFirstResearch in front of one)."""

    @property
    def can_improve(self) -> bool:
        """Whether `improve` requests can be served (they need a language model)."""

    async def run(self, request: ResearchRequest, sink: ProgressSink) -> ResearchOutcome:
        """Research `request` (validated by the job service), reporting stages to `sink`."""

    async def repeat(self, request: ResearchRequest,
                     sink: ProgressSink) -> ResearchOutcome | None:
        """The earlier answer to the same question, when there is one to reuse exactly (the
        job database alone is read: no model, index or source); None when `request` is to
        be researched (`run` looks up the cache again, semantic matches included)."""


async def ignore_progress(event: StageEvent) -> None:
    """A sink for callers that do not follow progress."""


class ResearchRecord:
    """One run's trace and metrics, and its stage events to `sink`."""

    def __init__(self, sink: ProgressSink) -> None:
        self.trace = Trace()
        self.metrics: dict[str, Any] = {"llm_calls": 0, "tokens": 0, "cached": False}
        self._sink = sink
        self._previous = 0.0

    async def begin(self, stage: Stage, message: str,
                    detail: ProgressDetail | None = None) -> None:
        await self._emit(StageEvent(stage=stage, kind="started", progress=self._previous,
                                    message=message, detail=detail or ProgressDetail()))

    async def end(self, stage: Stage, message: str, counts: dict[str, int] | None = None,
                  detail: ProgressDetail | None = None) -> None:
        self._previous = _PROGRESS[stage]
        await self._emit(StageEvent(stage=stage, kind="finished", progress=self._previous,
                                    message=message, counts=counts or {},
                                    detail=detail or ProgressDetail()))

    async def _emit(self, event: StageEvent) -> None:
        """Progress is best effort: a sink that fails is logged, never fails the research."""
        try:
            await self._sink(event)
        except Exception as error:
            log.warning("a progress event was not recorded: %s: %s", type(error).__name__,
                        redact(str(error))[:300])


def ms(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)
