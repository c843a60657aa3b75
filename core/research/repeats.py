"""The first steps of every research run: reading the question and answering a repeat from
the answer cache. `CacheFirstResearch` takes only those steps until a question needs more,
so a process that answers one question (the CLI) loads the models, indexes and sources of
the research core only for a question that is not an exact repeat."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from core.answer.cache import CacheHit, exact_hit
from core.metrics import CACHE_LOOKUPS
from core.models import Clock, QueryIntent, ResearchRequest, ResearchResult, Stage
from core.research.intake import detect_intent, standalone_question
from core.research.record import ProgressSink, Research, ResearchOutcome, ResearchRecord, ms
from core.store.answers import CachedAnswerStore


@dataclass(frozen=True)
class CacheScope:
    """A tenant's answer-cache scopes: answers are served from `lookup` (its knowledge base
    as it is now) and kept under `store` (the knowledge base its searches read, which trails
    while a rebuild runs). An answer kept under an older scope is never served."""

    lookup: str
    store: str


ScopeFunction = Callable[[str], Awaitable[CacheScope]]


@dataclass(frozen=True)
class QuestionReading:
    """What research looks for (`subject`), what kind of question it is, and whether its
    answer may be shared through the cache: a follow-up is researched as its standalone
    form, and what it means depends on its conversation, so it is neither looked up in nor
    added to the shared cache; nor is a question asked with its own context (an answer
    written within the person's constraints), fewer search rounds than its tier's, or search
    controls (the answer depends on them)."""

    subject: str
    intent: QueryIntent
    cacheable: bool


def reading_of(request: ResearchRequest) -> QuestionReading:
    subject = standalone_question(request.question, request.history)
    own = bool(request.context) or request.max_iterations is not None \
        or not request.controls.default
    return QuestionReading(subject, detect_intent(subject),
                           subject == request.question and not own)


async def read_question(record: ResearchRecord, request: ResearchRequest,
                        reading: QuestionReading | None = None) -> QuestionReading:
    """The intake stage (`reading`: the request's, when it was already read)."""
    await record.begin(Stage.INTAKE, "Reading the question")
    reading = reading or reading_of(request)
    record.trace.intent = reading.intent
    if reading.subject != request.question:
        record.trace.standalone_question = reading.subject
    await record.end(Stage.INTAKE, f"Question type: {reading.intent.question_type.value}")
    return reading


async def begin_cache_check(record: ResearchRecord) -> None:
    await record.begin(Stage.CACHE, "Checking earlier answers")


async def end_cache_check(record: ResearchRecord, request: ResearchRequest,
                          hit: CacheHit | None, started: float) -> ResearchResult | None:
    """The cache stage's outcome: the earlier answer as this request's result (saved), or
    None to research."""
    if hit is None:
        CACHE_LOOKUPS.labels("miss").inc()
        await record.end(Stage.CACHE, "No earlier answer", {"hits": 0})
        return None
    return await served_from_cache(record, request, hit, started)


async def served_from_cache(record: ResearchRecord, request: ResearchRequest, hit: CacheHit,
                            started: float) -> ResearchResult:
    """The earlier answer as this request's result, the cache stage ended and the result
    saved."""
    CACHE_LOOKUPS.labels("hit").inc()
    await record.end(Stage.CACHE, "Found an earlier answer", {"hits": 1})
    result = hit.result.model_copy(update={
        "job_id": "", "cached": True, "cached_at": hit.cached_at,
        "question": request.question, "duration_ms": ms(started),
    })
    record.metrics.update(cached=True, cache_similarity=hit.similarity)
    await begin_saving(record)
    await end_saving(record, result)
    return result


async def begin_saving(record: ResearchRecord) -> None:
    await record.begin(Stage.DELIVER, "Saving the answer")


async def end_saving(record: ResearchRecord, result: ResearchResult) -> None:
    record.metrics["duration_ms"] = result.duration_ms
    await record.end(Stage.DELIVER, "Done")


def repeat_reading(request: ResearchRequest) -> QuestionReading | None:
    """The request's reading if an earlier answer to the same question may answer it;
    None if not."""
    if request.improvement is not None or request.bypass_cache:
        return None
    reading = reading_of(request)
    return reading if reading.cacheable else None


async def answer_repeat(request: ResearchRequest, reading: QuestionReading,
                        hit: CacheHit | None, sink: ProgressSink,
                        started: float) -> ResearchOutcome | None:
    """The earlier answer `hit` as the outcome of `request` (read as `reading`), its stages
    reported to `sink` as a research run reports them (None: no hit)."""
    if hit is None:
        return None
    record = ResearchRecord(sink)
    await read_question(record, request, reading)
    await begin_cache_check(record)
    result = await served_from_cache(record, request, hit, started)
    return ResearchOutcome(result, record.trace, record.metrics)


class CacheFirstResearch:
    """Answers an exact repeat from the cached answers in the job database; any other
    request goes to the research core, opened by `open_research` on first need."""

    def __init__(self, answers: CachedAnswerStore, scope: ScopeFunction,
                 open_research: Callable[[], Awaitable[Research]], can_improve: bool,
                 clock: Clock = time.time) -> None:
        """`scope`: the tenant's cache scope, as the research core computes it. `clock`:
        seconds since the epoch, the cache's clock."""
        self._answers = answers
        self._scope = scope
        self._open_research = open_research
        self._can_improve = can_improve
        self._clock = clock

    @property
    def can_improve(self) -> bool:
        return self._can_improve

    async def repeat(self, request: ResearchRequest,
                     sink: ProgressSink) -> ResearchOutcome | None:
        reading = repeat_reading(request)
        if reading is None:
            return None
        started = time.perf_counter()
        hit = await exact_hit(self._answers, request.question, request.tenant,
                              (await self._scope(request.tenant)).lookup, self._clock())
        return await answer_repeat(request, reading, hit, sink, started)

    async def run(self, request: ResearchRequest, sink: ProgressSink) -> ResearchOutcome:
        outcome = await self.repeat(request, sink)
        if outcome is not None:
            return outcome
        research = await self._open_research()
        return await research.run(request, sink)
