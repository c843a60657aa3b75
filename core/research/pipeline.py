"""The research pipeline: intake -> cache -> plan -> search -> rank -> synthesize -> verify ->
grade -> deliver. Plain async code over the stage functions; progress goes out as events."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

from core.answer.cache import SemanticAnswerCache
from core.answer.grading import closest_passages, grade, listing, outage_notes
from core.answer.synthesis.base import Synthesizer
from core.answer.verify import verify_citations
from core.config import PipelineSettings
from core.errors import InvalidQuestionError
from core.jobs.store import JobStore
from core.models import (
    Confidence,
    Depth,
    Job,
    JobStatus,
    QueryIntent,
    ResearchAnswer,
    ResearchRequest,
    ResearchResult,
    Stage,
)
from core.research.analyst import ResearchLoop
from core.research.intake import (
    choose_depth,
    detect_intent,
    standalone_question,
    validate_question,
)
from core.research.planning import plan_queries
from core.research.run import JobRun, ProgressCallback, ms
from core.research.search import SearchScope, SourceFailure, run_search
from core.retrieval.embedding import Embedder
from core.retrieval.rank import rank_sources
from core.sources.base import SearchSource
from core.web.fetch import PageReader

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
        """Research `request` from `improvement`, as job `job_id` or a new job."""
        started = time.perf_counter()
        loop = self._loop
        if loop is None or request.improves is None:
            raise InvalidQuestionError("improve needs a language model and an earlier answer")
        base = await self._store.get(request.improves)
        if base.result is None:
            raise InvalidQuestionError("there is no finished answer to improve yet")
        earlier = ResearchResult.model_validate(base.result)

        async def rewrite(run: JobRun) -> ResearchResult:
            result = await loop.improve(run, request, earlier, base.state,
                                        self._scope(request.tenant))
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
        await self._store.start(job_id)
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
        run.state["intent"] = intent.model_dump(mode="json")
        if not cacheable:
            run.state["standalone_question"] = subject
        await run.end(Stage.INTAKE, f"Question type: {intent.question_type.value}")

        generation = await self._cache_scope(request.tenant) if self._cache_scope else ""
        if self._cache is not None and cacheable and not request.bypass_cache:
            await run.begin(Stage.CACHE, "Checking earlier answers")
            hit = await self._cache.lookup(question, request.tenant, generation)
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
        run.state["depth"] = depth.value
        scope = self._scope(request.tenant)
        if self._loop is not None:
            result = await self._loop.research(run, request, question, intent, depth, scope)
            result = result.model_copy(update={"duration_ms": ms(started)})
            cache = cacheable and not request.feedback
            return await self._deliver(run, result,
                                       (intent, request.tenant, generation) if cache else None)

        await run.begin(Stage.PLAN, "Planning searches")
        tier = _TIERS[depth]
        plan = plan_queries(subject, intent, list(scope.sources), tier.max_queries)
        run.state["plan"] = plan.model_dump()
        await run.end(Stage.PLAN, f"Planned {len(plan.queries)} searches",
                      {"queries": len(plan.queries)})

        await run.begin(Stage.SEARCH, "Searching " + ", ".join(sorted(
            {scope.sources[n].label for q in plan.queries for n in q.sources})))
        outcome = await run_search(plan, scope.sources, request.tenant, intent,
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
        earlier = [turn.sources for turn in request.context[-1:] if turn.sources]
        ranked = await rank_sources(
            subject, scope.usable(outcome.results) + earlier, self._embedder,
            tier.sources(self._settings.max_sources),
            self._settings.max_per_document, self._settings.min_relevance,
            prior=scope.prior(intent), names=intent.entities,
        )
        ranked, unread = await scope.read_pages(subject, ranked)
        run.metrics.update(sources_processed=len(ranked), pages_unread=len(unread))
        run.state["evidence"] = [s.id for s in ranked]  # what the answer was written from
        if unread:
            run.state["pages_unread"] = unread
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
        graded = grade(verified, ranked, intent, outcome.failures, sorted(scope.sources),
                       question=subject)
        confidence, limitations = graded.confidence, graded.limitations
        run.metrics["grade"] = graded.trace()
        if confidence == Confidence.INSUFFICIENT:
            verified = closest_passages(verified)
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
            duration_ms=ms(started),
            sources_considered=outcome.passages,
        )
        return await self._deliver(run, result,
                                   (intent, request.tenant, generation) if cacheable else None)

    def _scope(self, tenant: str) -> SearchScope:
        settings = self._settings
        if not settings.remote_allowed(tenant):
            return SearchScope({name: source for name, source in self._sources.items()
                                if name == "local"})
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
            failures = [SourceFailure.model_validate(f)
                        for round_ in run.state.get("iterations", [])
                        for f in round_.get("failures", [])]
            run.metrics["cache_stored"] = await self._cache.store(
                result.question, tenant, intent,
                _to_cache(result, failures, self._cache.outage_ttl_seconds), scope
            )
        run.metrics["duration_ms"] = result.duration_ms
        await self._store.complete(run.job_id, result.model_dump(mode="json"), run.metrics,
                                   run.state)
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


def _found(documents: int, passages: int) -> str:
    return f"Found {passages} passages in {documents} documents"


