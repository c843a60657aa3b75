"""The research pipeline: intake -> cache -> plan -> search -> rank -> synthesize -> verify ->
grade -> deliver. Plain async code over the stage functions; progress goes out as events."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Awaitable, Callable, Mapping

from core.answer.cache import SemanticAnswerCache
from core.answer.grading import listing, outage_notes
from core.answer.synthesis.base import Synthesizer
from core.config import PipelineSettings
from core.errors import InvalidQuestionError
from core.metrics import CACHE_LOOKUPS
from core.models import (
    Depth,
    Job,
    JobStatus,
    QueryIntent,
    ResearchRequest,
    ResearchResult,
    SourceFailure,
    Stage,
    Trace,
)
from core.research.analyst import ResearchLoop
from core.research.engine import Notebook, ResearchEngine, Strategies
from core.research.intake import (
    choose_depth,
    detect_intent,
    standalone_question,
    validate_question,
)
from core.research.plain import plain_steps
from core.research.run import JobRun, ProgressCallback, ms
from core.research.search import SearchScope
from core.retrieval.embedding import Embedder
from core.sources.pages import PageReader
from core.sources.protocol import SearchSource, SourceKind
from core.store.jobs import JobStore

ScopeFunction = Callable[[str], Awaitable[str]]

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
        loop: ResearchLoop | None = None,
        pages: PageReader | None = None,
    ) -> None:
        self._loop = loop
        self._engine = ResearchEngine(
            loop.steps if loop is not None else _shared(plain_steps(embedder, settings,
                                                                    synthesizer)),
            settings, loop.settings if loop is not None else None)
        self._pages = pages
        self._worker = worker
        self._store = store
        self._sources = dict(sources)
        self._synthesizer = synthesizer
        self._embedder = embedder
        self._settings = settings
        self._cache = cache
        self._cache_scope = cache_scope

    async def create_job(self, request: ResearchRequest) -> Job:
        """Store a job for `request`, pending: `run(..., job_id=...)` researches it."""
        return await self._store.create(Job(
            tenant=request.tenant, user=request.user, platform=request.platform,
            worker=self._worker, request=request.model_dump(mode="json"),
        ))

    async def run(
        self, request: ResearchRequest, on_progress: ProgressCallback | None = None,
        job_id: str | None = None,
    ) -> ResearchResult:
        """Research one question, as job `job_id` (from `create_job`) or a new job.
        InvalidQuestionError for bad input (no new job is stored); any other failure marks
        the job failed and is raised again."""
        started = time.perf_counter()
        question = validate_question(request.question)

        async def research(run: JobRun) -> ResearchResult:
            return await self._research(run, request, question, started)

        return await self._as_job(request, research, on_progress, job_id)

    async def improve(
        self, feedback: str, tenant: str, job_id: str | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> ResearchResult:
        """Rewrite an earlier answer (job `job_id`, else the tenant's latest) following the
        reader's feedback, searching again only when the feedback needs new information.
        A new job; InvalidQuestionError when there is nothing to improve or no model."""
        request = await self.improvement(feedback, tenant, job_id)
        return await self.run_improvement(request, on_progress)

    async def improvement(self, feedback: str, tenant: str,
                          job_id: str | None = None) -> ResearchRequest:
        """The request that improves job `job_id` (else the tenant's latest answer) following
        `feedback`. InvalidQuestionError when there is nothing to improve or no model."""
        if self._loop is None:
            raise InvalidQuestionError(
                "improve needs a language model: set llm.fast_model (see the README)")
        feedback = validate_question(feedback, what="feedback")
        base = await self._store.get(job_id) if job_id else next(
            iter(await self._store.recent(tenant, limit=1, status=JobStatus.COMPLETED)), None)
        if base is None or base.result is None:
            raise InvalidQuestionError("there is no finished answer to improve yet")
        earlier = ResearchResult.model_validate(base.result)
        asked = ResearchRequest.model_validate(base.request)
        return asked.model_copy(update={
            "feedback": feedback, "improves": base.id, "bypass_cache": True,
            "previous_answer": f"{earlier.answer.summary}\n\n{earlier.answer.detail}".strip(),
        })

    async def run_improvement(self, request: ResearchRequest,
                              on_progress: ProgressCallback | None = None,
                              job_id: str | None = None) -> ResearchResult:
        """Research `request` from `improvement`, as job `job_id` or a new job: the earlier
        answer's sources reused, one more search round only when the model says the feedback
        needs new information; checked and graded like any answer."""
        started = time.perf_counter()
        loop = self._loop
        if loop is None or request.improves is None:
            raise InvalidQuestionError("improve needs a language model and an earlier answer")
        base = await self._store.get(request.improves)
        if base.result is None:
            raise InvalidQuestionError("there is no finished answer to improve yet")
        earlier = ResearchResult.model_validate(base.result)
        before = Trace.model_validate(base.state)
        scope = self._scope(request.tenant)

        async def rewrite(run: JobRun) -> ResearchResult:
            steps = loop.steps()
            tier = self._engine.tier(Depth.QUICK)
            notebook = Notebook(tier=tier)
            steps.budget.start(tier)
            steps.budget.phase("research")
            await run.begin(Stage.PLAN, "Reading the feedback")
            reading, pending = await loop.improvement(request, earlier, before, scope,
                                                      notebook, steps)
            run.trace = Trace(intent=reading.intent, refined_question=reading.subject,
                              checklist=reading.checklist, improves=request.improves,
                              feedback=request.feedback, searched_again=bool(pending.queries))
            await run.end(Stage.PLAN, "Searching again" if pending.queries
                          else "The earlier sources suffice", {"queries": len(pending.queries)})
            notebook.tier = dataclasses.replace(tier, rounds=1)
            run.metrics["improves"] = request.improves
            result = await self._engine.research(
                run, request, earlier.question, reading.subject, reading.intent, Depth.QUICK,
                scope, run.trace, previous=earlier, plan=pending, reading=reading,
                notebook=notebook, steps=steps)
            result = result.model_copy(update={"duration_ms": ms(started)})
            return await self._deliver(run, result)

        return await self._as_job(request, rewrite, on_progress, job_id)

    async def _as_job(
        self, request: ResearchRequest, work: Callable[[JobRun], Awaitable[ResearchResult]],
        on_progress: ProgressCallback | None, job_id: str | None = None,
    ) -> ResearchResult:
        """Run `work` as a stored job: failures and cancellation are recorded, then raised."""
        if job_id is None:
            job_id = (await self.create_job(request)).id
        await self._store.start(job_id, self._worker)
        run = JobRun(job_id, self._store, on_progress)
        try:
            result = await work(run)
        except asyncio.CancelledError:
            await self._store.fail(job_id, "cancelled before it finished", run.metrics,
                                   JobStatus.CANCELLED)
            raise
        except Exception as error:
            await self._store.fail(job_id, f"{type(error).__name__}: {error}"[:2000],
                                   run.metrics)
            raise
        return result

    async def _research(
        self, run: JobRun, request: ResearchRequest, question: str, started: float
    ) -> ResearchResult:
        await run.begin(Stage.INTAKE, "Reading the question")
        # A follow-up is researched as its standalone form; what it means depends on its
        # conversation, so its answer is neither looked up in nor added to the shared cache.
        subject = standalone_question(question, request.context)
        cacheable = subject == question
        intent = detect_intent(subject)
        run.trace.intent = intent
        if not cacheable:
            run.trace.standalone_question = subject
        await run.end(Stage.INTAKE, f"Question type: {intent.question_type.value}")

        generation = await self._cache_scope(request.tenant) if self._cache_scope else ""
        if self._cache is not None and cacheable and not request.bypass_cache:
            await run.begin(Stage.CACHE, "Checking earlier answers")
            hit = await self._cache.lookup(question, request.tenant, generation)
            CACHE_LOOKUPS.labels("miss" if hit is None else "hit").inc()
            if hit is not None:
                await run.end(Stage.CACHE, "Found an earlier answer", {"hits": 1})
                result = hit.result.model_copy(update={
                    "job_id": run.job_id, "cached": True, "cached_at": hit.cached_at,
                    "question": question, "duration_ms": ms(started),
                })
                run.metrics.update(cached=True, cache_similarity=hit.similarity)
                return await self._deliver(run, result)
            await run.end(Stage.CACHE, "No earlier answer", {"hits": 0})

        depth = choose_depth(request.depth, subject, intent, request.platform)
        run.trace.depth = depth.value
        result = await self._engine.research(run, request, question, subject, intent, depth,
                                             self._scope(request.tenant), run.trace)
        result = result.model_copy(update={"duration_ms": ms(started)})
        cache = cacheable and not request.feedback
        return await self._deliver(run, result,
                                   (intent, request.tenant, generation) if cache else None)

    def _scope(self, tenant: str) -> SearchScope:
        settings = self._settings
        if not settings.remote_allowed(tenant):
            return SearchScope({name: source for name, source in self._sources.items()
                                if source.capabilities.kind == SourceKind.LOCAL})
        return SearchScope(self._sources, self._pages, tuple(settings.allow_domains),
                           tuple(settings.block_domains))

    async def _deliver(
        self,
        run: JobRun,
        result: ResearchResult,
        cache_as: tuple[QueryIntent, str, str] | None = None,
    ) -> ResearchResult:
        """Cache a fresh answer (`cache_as`: intent, tenant, scope), then store the job."""
        await run.begin(Stage.DELIVER, "Saving the answer")
        if cache_as is not None and self._cache is not None:
            intent, tenant, scope = cache_as
            failures = run.trace.failures()
            run.metrics["cache_stored"] = await self._cache.store(
                result.question, tenant, intent,
                _to_cache(result, failures, self._cache.outage_ttl_seconds), scope
            )
        run.metrics["duration_ms"] = result.duration_ms
        await self._store.complete(run.job_id, result.model_dump(mode="json"), run.metrics,
                                   run.trace.model_dump(mode="json", exclude_none=True))
        await run.end(Stage.DELIVER, "Done")
        return result


def _to_cache(result: ResearchResult, failures: list[SourceFailure],
              outage_ttl_s: float) -> ResearchResult:
    """What the cache keeps: an answer shaped by an outage is kept briefly, and says so
    instead of repeating the outage as if it were happening now."""
    if not failures:
        return result
    notes = set(outage_notes(failures))
    labels = sorted({f.label or f.source for f in failures})
    minutes = max(1, round(outage_ttl_s / 60))
    kept = [line for line in result.answer.limitations if line not in notes]
    kept.append(f"Researched while {listing(labels, 'and')} could not be used; this saved "
                f"answer is reused for at most {minutes} minute{'s' if minutes != 1 else ''}.")
    cap = outage_ttl_s if result.max_cache_seconds is None \
        else min(outage_ttl_s, result.max_cache_seconds)
    return result.model_copy(update={
        "answer": result.answer.model_copy(update={"limitations": kept}),
        "max_cache_seconds": cap,
    })


def _shared(steps: Strategies) -> Callable[[], Strategies]:
    """Stateless steps (no model): one set serves every job."""
    return lambda: steps


