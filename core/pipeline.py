"""The research pipeline: intake -> cache -> plan -> search -> rank -> synthesize -> verify ->
grade -> deliver. Plain async code over the stage functions; progress goes out as events."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from core.cache import SemanticAnswerCache
from core.config import PipelineSettings
from core.embedding import Embedder
from core.grading import grade
from core.intake import detect_intent, standalone_question, validate_question
from core.models import (
    Depth,
    Job,
    JobStatus,
    ProgressEvent,
    QueryIntent,
    ResearchAnswer,
    ResearchRequest,
    ResearchResult,
    Stage,
)
from core.planning import plan_queries
from core.rank import rank_sources
from core.search import run_search
from core.sources.base import SearchSource
from core.store import JobStore
from core.synthesis.base import Synthesizer
from core.verify import verify_citations

ProgressCallback = Callable[[ProgressEvent], Awaitable[None] | None]
ScopeFunction = Callable[[str], Awaitable[str]]

@dataclass(frozen=True)
class _Tier:
    """How far a depth tier searches: query variations, and passages kept relative to the
    `pipeline.max_sources` setting (the LLM loop adds iteration, time and token budgets)."""

    max_queries: int
    source_factor: float

    def sources(self, configured: int) -> int:
        return max(1, round(configured * self.source_factor))


_TIERS = {
    Depth.QUICK: _Tier(max_queries=2, source_factor=0.625),
    Depth.STANDARD: _Tier(max_queries=4, source_factor=1.0),
    Depth.DEEP: _Tier(max_queries=6, source_factor=2.0),
}

_PROGRESS = {
    Stage.INTAKE: 0.05, Stage.CACHE: 0.1, Stage.PLAN: 0.15, Stage.SEARCH: 0.5,
    Stage.RANK: 0.6, Stage.SYNTHESIZE: 0.8, Stage.VERIFY: 0.9, Stage.GRADE: 0.95,
    Stage.DELIVER: 1.0,
}


class ResearchPipeline:
    def __init__(
        self,
        store: JobStore,
        sources: Mapping[str, SearchSource],
        synthesizer: Synthesizer,
        embedder: Embedder,
        settings: PipelineSettings,
        cache: SemanticAnswerCache | None = None,
        cache_scope: ScopeFunction | None = None,
        worker: str = "",
    ) -> None:
        self._worker = worker
        self._store = store
        self._sources = dict(sources)
        self._synthesizer = synthesizer
        self._embedder = embedder
        self._settings = settings
        self._cache = cache
        self._cache_scope = cache_scope

    async def run(
        self, request: ResearchRequest, on_progress: ProgressCallback | None = None
    ) -> ResearchResult:
        """Research one question. InvalidQuestionError for bad input (no job is stored);
        any other failure marks the job failed and is raised again."""
        started = time.perf_counter()
        question = validate_question(request.question)
        job = await self._store.create(Job(
            tenant=request.tenant, user=request.user, platform=request.platform,
            worker=self._worker, request=request.model_dump(mode="json"),
        ))
        await self._store.start(job.id)
        run = _Run(job.id, self._store, on_progress)
        try:
            result = await self._research(run, request, question, started)
        except asyncio.CancelledError:
            await self._store.fail(job.id, "cancelled before it finished", run.metrics,
                                   JobStatus.CANCELLED)
            raise
        except Exception as error:
            await self._store.fail(job.id, f"{type(error).__name__}: {error}"[:2000],
                                   run.metrics)
            raise
        return result

    async def _research(
        self, run: _Run, request: ResearchRequest, question: str, started: float
    ) -> ResearchResult:
        await run.begin(Stage.INTAKE, "Reading the question")
        # A follow-up is researched as its standalone form; what it means depends on its
        # conversation, so its answer is neither looked up in nor added to the shared cache.
        subject = standalone_question(question, request.context)
        cacheable = subject == question
        intent = detect_intent(subject)
        run.state["intent"] = intent.model_dump(mode="json")
        if not cacheable:
            run.state["standalone_question"] = subject
        await run.end(Stage.INTAKE, f"Question type: {intent.question_type.value}")

        scope = await self._cache_scope(request.tenant) if self._cache_scope else ""
        if self._cache is not None and cacheable and not request.bypass_cache:
            await run.begin(Stage.CACHE, "Checking earlier answers")
            hit = await self._cache.lookup(question, request.tenant, scope)
            if hit is not None:
                await run.end(Stage.CACHE, "Found an earlier answer", {"hits": 1})
                result = hit.result.model_copy(update={
                    "job_id": run.job_id, "cached": True, "cached_at": hit.cached_at,
                    "question": question, "duration_ms": _ms(started),
                })
                run.metrics.update(cached=True, cache_similarity=hit.similarity)
                return await self._deliver(run, result)
            await run.end(Stage.CACHE, "No earlier answer", {"hits": 0})

        await run.begin(Stage.PLAN, "Planning searches")
        tier = _TIERS[request.depth]
        plan = plan_queries(subject, intent, list(self._sources), tier.max_queries)
        run.state["plan"] = plan.model_dump()
        await run.end(Stage.PLAN, f"Planned {len(plan.queries)} searches",
                      {"queries": len(plan.queries)})

        await run.begin(Stage.SEARCH, "Searching " + ", ".join(
            s.label for s in self._sources.values()))
        outcome = await run_search(plan, self._sources, request.tenant, intent,
                                   tier.sources(self._settings.max_sources) * 2,
                                   self._settings.source_timeout_s)
        run.metrics.update(queries_per_source=outcome.queries_per_source,
                           results_per_source=outcome.results_per_source)
        run.state["iterations"] = [{"queries": [q.text for q in plan.queries],
                                    "failures": [f.model_dump() for f in outcome.failures]}]
        await run.end(Stage.SEARCH, _found(outcome.documents, outcome.passages),
                      {"documents": outcome.documents, "passages": outcome.passages,
                       "failures": len(outcome.failures)})

        await run.begin(Stage.RANK, "Ranking evidence")
        ranked = await rank_sources(
            subject, outcome.results, self._embedder,
            tier.sources(self._settings.max_sources),
            self._settings.max_per_document, self._settings.min_relevance,
        )
        run.metrics["sources_processed"] = len(ranked)
        await run.end(Stage.RANK, f"Kept {len(ranked)} relevant passages",
                      {"kept": len(ranked)})

        await run.begin(Stage.SYNTHESIZE, "Writing the answer")
        # The passages were found for the standalone form; the answer is written for what
        # the follow-up itself asks ("what do they eat?"), not for the earlier question.
        draft = await self._synthesizer.synthesize(question, intent, ranked)
        await run.end(Stage.SYNTHESIZE, f"Drafted {len(draft.citations)} cited statements",
                      {"statements": len(draft.citations)})

        await run.begin(Stage.VERIFY, "Checking citations")
        verified = verify_citations(draft, ranked)
        run.metrics["citations_removed"] = (verified.unknown_markers_removed
                                            + verified.unsupported_citations_removed)
        await run.end(Stage.VERIFY, f"{len(verified.references)} sources cited",
                      {"cited": len(verified.references)})

        await run.begin(Stage.GRADE, "Grading confidence")
        confidence, limitations = grade(verified, ranked, intent, outcome.failures,
                                        sorted(self._sources))
        await run.end(Stage.GRADE, f"Confidence: {confidence.value}")

        cited = set(verified.cited_sources)
        result = ResearchResult(
            job_id=run.job_id,
            status=JobStatus.COMPLETED,
            question=question,
            answer=ResearchAnswer(
                summary=verified.summary,
                detail=verified.detail,
                citations=verified.citations,
                confidence=confidence,
                limitations=limitations + draft.notes,
                metadata={"synthesizer": self._synthesizer.name,
                          "question_type": intent.question_type.value},
            ),
            sources=[s for s in ranked if s.id in cited],
            references=verified.references,
            duration_ms=_ms(started),
            sources_considered=outcome.passages,
        )
        return await self._deliver(run, result,
                                   (intent, request.tenant, scope) if cacheable else None)

    async def _deliver(
        self,
        run: _Run,
        result: ResearchResult,
        cache_as: tuple[QueryIntent, str, str] | None = None,
    ) -> ResearchResult:
        """Cache a fresh answer (`cache_as`: intent, tenant, scope), then store the job."""
        await run.begin(Stage.DELIVER, "Saving the answer")
        if cache_as is not None and self._cache is not None:
            intent, tenant, scope = cache_as
            run.metrics["cache_stored"] = await self._cache.store(
                result.question, tenant, intent, result, scope
            )
        run.metrics["duration_ms"] = result.duration_ms
        await self._store.complete(run.job_id, result.model_dump(mode="json"), run.metrics,
                                   run.state)
        await run.end(Stage.DELIVER, "Done")
        return result


class _Run:
    """Per-job bookkeeping: stage progress to the store and to the caller's callback."""

    def __init__(self, job_id: str, store: JobStore, on_progress: ProgressCallback | None):
        self.job_id = job_id
        self.state: dict[str, Any] = {}
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
        self.metrics["stage_ms"][stage.value] = _ms(self._stage_started)
        self._previous = _PROGRESS[stage]
        await self._emit(ProgressEvent(job_id=self.job_id, stage=stage, kind="finished",
                                       progress=self._previous, message=message,
                                       counts=counts or {}))

    async def _emit(self, event: ProgressEvent) -> None:
        if self._on_progress is None:
            return
        outcome = self._on_progress(event)
        if inspect.isawaitable(outcome):
            await outcome


def _found(documents: int, passages: int) -> str:
    return f"Found {passages} passages in {documents} documents"


def _ms(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)
