"""Research as a function of its request: `Researcher.run(request, sink)` reads the
question, checks the answer cache, runs the research engine (or, for an `improve` request,
revises the earlier answer), caches a fresh answer and returns the outcome: the result, what
the research did (its trace) and its metrics. Progress goes to `sink` as typed stage events.
It creates no job and writes no job row: the job service (core.jobs) does, from the sink's
events and the outcome."""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from core.answer.cache import CacheHit, SemanticAnswerCache
from core.answer.grading import listing, outage_notes
from core.answer.synthesis.base import Synthesizer
from core.config import PipelineSettings
from core.errors import InvalidQuestionError
from core.metrics import CACHE_ERRORS
from core.models import (
    Depth,
    Improvement,
    QueryIntent,
    ResearchRequest,
    ResearchResult,
    SearchControls,
    Source,
    SourceFailure,
    Stage,
    Trace,
)
from core.redact import error_line
from core.research.engine import ResearchEngine, ResearchState, Revision, Strategies
from core.research.heuristic_steps import heuristic_strategies
from core.research.intake import choose_depth, detect_intent, validate_question
from core.research.model_steps import ResearchLoop
from core.research.planning import PlannedQuery, ResearchPlan
from core.research.record import ProgressSink, ResearchOutcome, ResearchRecord, ms
from core.research.repeats import (
    CacheScope,
    ScopeFunction,
    answer_repeat,
    begin_cache_check,
    begin_saving,
    end_cache_check,
    end_saving,
    read_question,
    repeat_reading,
)
from core.research.search import SearchScope, run_search
from core.retrieval.embedding import Embedder
from core.retrieval.rank import rank_sources
from core.sources.protocol import SearchSource, SourceKind

if TYPE_CHECKING:  # web pages are read only when web sources are on; aiohttp with them
    from core.sources.pages import PageReader

log = logging.getLogger(__name__)

@dataclasses.dataclass(frozen=True)
class Found:
    """What a search found: passages, best first, and the sources that failed."""

    sources: list[Source]
    failures: list[SourceFailure]


class Researcher:
    """The research core, built once from its parts; `run` answers one request, `search`
    finds passages without answering."""

    def __init__(
        self,
        sources: Mapping[str, SearchSource],
        synthesizer: Synthesizer,
        embedder: Embedder,
        settings: PipelineSettings,
        cache: SemanticAnswerCache | None = None,
        cache_scope: ScopeFunction | None = None,
        loop: ResearchLoop | None = None,
        pages: PageReader | None = None,
    ) -> None:
        self._loop = loop
        steps = loop.steps if loop is not None \
            else _shared(heuristic_strategies(embedder, settings, synthesizer))
        self._engine = ResearchEngine(steps, settings,
                                      loop.settings if loop is not None else None)
        self._pages = pages
        self._sources = dict(sources)
        self._settings = settings
        self._embedder = embedder
        self._cache = cache
        self._cache_scope = cache_scope

    @property
    def can_improve(self) -> bool:
        """Revising an answer needs a language model."""
        return self._loop is not None

    async def run(self, request: ResearchRequest, sink: ProgressSink) -> ResearchOutcome:
        """Research `request` (already validated by the job service), reporting each stage to
        `sink`. Raises on failure; InvalidQuestionError when an `improve` request cannot be
        served here (no model)."""
        record = ResearchRecord(sink)
        if request.improvement is not None:
            result = await self._revise(record, request, request.improvement)
        else:
            result = await self._research(record, request)
        return ResearchOutcome(result, record.trace, record.metrics)

    async def repeat(self, request: ResearchRequest,
                     sink: ProgressSink) -> ResearchOutcome | None:
        if self._cache is None or (reading := repeat_reading(request)) is None:
            return None
        started = time.perf_counter()
        scope = (await self._cache_scope(request.tenant)).lookup if self._cache_scope else ""
        hit = await self._cache.exact(request.question, request.tenant, scope)
        return await answer_repeat(request, reading, hit, sink, started)

    async def _revise(self, record: ResearchRecord, request: ResearchRequest,
                      improvement: Improvement) -> ResearchResult:
        """The earlier answer's sources reused, one more search round only when the model
        says the feedback needs new information; checked and graded like any answer."""
        started = time.perf_counter()
        loop = self._loop
        if loop is None:
            raise InvalidQuestionError(
                "improve needs a language model: set llm.fast_model (see the README)")
        earlier = improvement.answer
        scope = self._scope(request.tenant, request.controls)
        steps = loop.steps()
        tier = self._engine.tier(Depth.QUICK)
        state = ResearchState(tier=tier)
        steps.budget.start(tier)
        steps.budget.phase("research")
        await record.begin(Stage.PLAN, "Reading the feedback")
        reading, pending = await loop.improvement(request, earlier, improvement.trace, scope,
                                                  state, steps)
        record.trace = Trace(intent=reading.intent, refined_question=reading.subject,
                             checklist=reading.checklist, improves=improvement.job_id,
                             feedback=improvement.feedback,
                             searched_again=bool(pending.queries))
        await record.end(Stage.PLAN, "Searching again" if pending.queries
                         else "The earlier sources suffice", {"queries": len(pending.queries)})
        state.tier = dataclasses.replace(tier, rounds=1)
        record.metrics["improves"] = improvement.job_id
        result = await self._engine.revise(
            record, request, Revision(earlier, reading, pending, state, steps, started), scope)
        result = result.model_copy(update={"duration_ms": ms(started)})
        return await self._save(record, result)

    async def _research(self, record: ResearchRecord, request: ResearchRequest
                        ) -> ResearchResult:
        started = time.perf_counter()
        question = request.question
        reading = await read_question(record, request)
        scope = await self._cache_scope(request.tenant) if self._cache_scope \
            else CacheScope("", "")
        if self._cache is not None and reading.cacheable and not request.bypass_cache:
            await begin_cache_check(record)
            hit = await self._looked_up(self._cache, record, question, request.tenant,
                                        scope.lookup)
            cached = await end_cache_check(record, request, hit, started)
            if cached is not None:
                return cached

        depth = choose_depth(request.depth, reading.subject, reading.intent, request.platform)
        record.trace.depth = depth.value
        result = await self._engine.research(record, request, question, reading.subject,
                                             reading.intent, depth,
                                             self._scope(request.tenant, request.controls))
        result = result.model_copy(update={"duration_ms": ms(started)})
        return await self._save(record, result, (reading.intent, request.tenant, scope.store)
                                if reading.cacheable else None)

    async def search(self, query: str, tenant: str, limit: int = 8) -> Found:
        """The passages that answer `query` best, from the tenant's knowledge base and the
        sources it may use, ranked as research ranks them, without writing an answer; and
        the sources that failed. InvalidQuestionError when the query cannot be searched."""
        query = validate_question(query, what="query")
        intent = detect_intent(query)
        scope = self._scope(tenant)
        plan = ResearchPlan(queries=[PlannedQuery(text=query, purpose="search",
                                                  sources=list(scope.sources))])
        settings = self._settings
        searched = await run_search(plan, scope.sources, tenant, intent, max(limit, 8),
                                    settings.source_timeout_s)
        ranked = await rank_sources(query, scope.usable(searched.results), self._embedder,
                                    limit, settings.max_per_document, settings.min_relevance,
                                    prior=scope.prior(intent))
        return Found(ranked, searched.failures)

    def _scope(self, tenant: str, controls: SearchControls | None = None) -> SearchScope:
        settings = self._settings
        controls = controls or SearchControls()
        if not settings.remote_allowed(tenant):
            return SearchScope({name: source for name, source in self._sources.items()
                                if source.capabilities.kind == SourceKind.LOCAL},
                               controls=controls)
        return SearchScope(self._sources, self._pages, tuple(settings.allow_domains),
                           tuple(settings.block_domains), controls)

    async def _save(
        self,
        record: ResearchRecord,
        result: ResearchResult,
        cache_as: tuple[QueryIntent, str, str] | None = None,
    ) -> ResearchResult:
        """Cache a fresh answer (`cache_as`: intent, tenant, scope)."""
        await begin_saving(record)
        if cache_as is not None and self._cache is not None:
            intent, tenant, scope = cache_as
            kept = _to_cache(result, record.trace.failures(), self._cache.outage_ttl_seconds)
            try:
                record.metrics["cache_stored"] = await self._cache.store(
                    result.question, tenant, intent, kept, scope)
            except Exception as error:  # the answer exists: a cache that fails loses only reuse
                _cache_failed("store", record, error)
        await end_saving(record, result)
        return result

    @staticmethod
    async def _looked_up(cache: SemanticAnswerCache, record: ResearchRecord, question: str,
                         tenant: str, scope: str) -> CacheHit | None:
        """The cache's answer to `question`; None also when the cache cannot be read: the
        question is then researched as if it had never been asked (a miss is always safe)."""
        try:
            return await cache.lookup(question, tenant, scope)
        except Exception as error:
            _cache_failed("lookup", record, error)
            return None


def _cache_failed(operation: str, record: ResearchRecord, error: Exception) -> None:
    """A cache look-up or write that failed is skipped, never the question's failure: logged,
    counted (`cache_errors_total`) and noted in the job's metrics."""
    CACHE_ERRORS.labels(operation).inc()
    record.metrics[f"cache_{operation}_error"] = type(error).__name__
    log.warning("answer cache %s skipped: %s", operation, error_line(error))


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


