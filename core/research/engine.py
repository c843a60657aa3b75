"""The research engine: one loop from a question to a graded answer, the same with or
without a language model.

    read the question -> plan -> rounds of [search -> weigh evidence -> reflect]
    -> write -> verify claims -> grade

Each step is a small Protocol with a no-model strategy (core.research.heuristic_steps: the heuristic
plan, retrieval ranking, one round, an extractive answer) and a model strategy
(core.research.model_steps: the model reads, plans, judges evidence, reflects, writes and checks
every claim; each falls back to the no-model step when the model fails). Verification of the
citations, grading and the limitations are one code path for both.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from core.answer.citations import verify_citations
from core.answer.fact_check import ClaimCheck
from core.answer.grading import closest_passages, grade
from core.answer.references import by_document
from core.answer.refine import refine_suggestion
from core.answer.synthesis.base import Draft
from core.answer.synthesis.extractive import NO_ANSWER
from core.config import TIERS, LLMSettings, PipelineSettings, TierBudget
from core.metrics import count_research_run
from core.models import (
    ChecklistCount,
    ChecklistItem,
    ChecklistStatus,
    Confidence,
    ConversationTurn,
    Depth,
    EvidenceOrigin,
    ExtractedFact,
    JobStatus,
    ProgressDetail,
    QueryIntent,
    ResearchAnswer,
    ResearchRequest,
    ResearchResult,
    Source,
    Stage,
    StoppedBy,
    Trace,
)
from core.research.planning import ResearchPlan
from core.research.record import ResearchRecord
from core.research.search import SearchOutcome, SearchScope, run_search
from core.research.tracing import add_up, checklist_line, origins, searched, searching

IMPROVE = "improve"  # the depth label of a revision's metrics (core.metrics)
MODEL_TROUBLE_CACHE_SECONDS = 300.0  # an answer shaped by model trouble is kept briefly
MODEL_TROUBLE_ANSWER = ("No answer could be written because the language model kept failing; "
                        "passages were found but could not be summarised without it.")
UNCONFIRMED_ANSWER = ("The answer that was written is not shown: none of its statements could "
                      "be confirmed by the sources it cited.")


# ---- a depth tier (core.config.TIERS is the one table) --------------------------------------

@dataclass(frozen=True)
class Tier:
    """How far one depth tier goes. Without a model: its query variations, the second hop's
    searches, and a share of `advanced.pipeline.max_sources`. With a model: the tier's budget
    (advanced.llm.quick, ...)."""

    name: str
    queries: int  # searches in all rounds together
    sources: int  # passages the answer is written from
    rounds: int
    seconds: float | None  # the whole job's time (a model's budget); None: no overall limit
    budget: TierBudget | None = None  # the model's, with its tokens
    hops: int = 0  # of `queries`, those kept for the second hop (without a model)
    rounds_by_request: bool = False  # `rounds` is the request's max_iterations, not the tier's

    @property
    def candidates(self) -> int:
        """Results kept per source call, and passages weighed a round."""
        return self.sources * 2


def tier(depth: Depth, pipeline: PipelineSettings, llm: LLMSettings | None) -> Tier:
    if llm is not None and llm.enabled:
        budget: TierBudget = getattr(llm, depth.value)
        return Tier(depth.value, budget.queries, budget.sources, budget.iterations,
                    budget.seconds, budget)
    row = TIERS[depth.value]
    return Tier(depth.value, row["plain_queries"] + row["plain_hops"],
                max(1, round(pipeline.max_sources * row["plain_sources"])), 2, None,
                hops=row["plain_hops"])


# ---- what the steps share ----------------------------------------------------------------

@dataclass
class ResearchQuestion:
    """The question as the research works on it."""

    question: str  # as asked: the answer is written for it
    subject: str  # what is searched and graded: the standalone or refined form
    intent: QueryIntent
    checklist: list[str]
    by_model: bool = False
    constraints: str = ""  # the person's needs or constraints (the request's `context`)


@dataclass
class Evidence:
    """A passage gathered as evidence: its retrieval and model scores and what it says."""

    source: Source
    retrieval: float
    relevance: float | None = None  # the model's; None when it did not judge
    facts: list[str] = field(default_factory=list)
    checklist_items: list[int] = field(default_factory=list)

    def score(self, llm_weight: float) -> float:
        if self.relevance is None:
            return self.retrieval
        return (1 - llm_weight) * self.retrieval + llm_weight * self.relevance


@dataclass
class ResearchState:
    """What the research has gathered, in the order it was found, and why it stopped."""

    tier: Tier
    evidence: dict[str, Evidence] = field(default_factory=dict)
    ranked: list[Source] = field(default_factory=list)  # the last round's ranking
    found: list[list[Source]] = field(default_factory=list)  # every round's result lists
    passages_found: int = 0
    queries_run: dict[str, int] = field(default_factory=dict)
    rounds: int = 0
    cut_short: str | None = None
    stopped_by: StoppedBy | None = None  # a limit or trouble; None: the research's own end
    pages_read: int = 0
    found_by: dict[str, EvidenceOrigin] = field(default_factory=dict)  # by passage id
    model_problems: list[str] = field(default_factory=list)
    gaps: list[str] = field(default_factory=list)
    coverage: float | None = None  # the checklist's share covered, when a model said
    unapplied: list[str] = field(default_factory=list)  # controls a source could not apply

    def stop(self, by: StoppedBy, why: str) -> None:
        """The research is cut short by `by`: said once, the first reason kept."""
        if self.cut_short is None:
            self.cut_short, self.stopped_by = why, by

    def spent(self, kind: str) -> None:
        """The tier's time or tokens ran out: the research is cut short, said once."""
        budget = self.tier.budget
        if budget is None:
            return
        if kind == "time":
            self.stop(StoppedBy.TIME_LIMIT,
                      f"the {self.tier.name} tier's time limit of {budget.seconds:g} s")
        else:
            self.stop(StoppedBy.TOKEN_LIMIT, f"the {self.tier.name} tier's budget of "
                      f"{budget.tokens:,} tokens was spent")


@dataclass
class Written:
    draft: Draft
    writer: str  # "extractive", or "llm:<model>"
    gaps: list[str] = field(default_factory=list)


class Reader(Protocol):
    async def read(self, request: ResearchRequest, question: str, subject: str,
                   heuristic: QueryIntent, state: ResearchState) -> ResearchQuestion: ...


class Planner(Protocol):
    async def plan(self, reading: ResearchQuestion, scope: SearchScope, state: ResearchState
                   ) -> ResearchPlan: ...


class Weigher(Protocol):
    """Turns a round's search results into evidence, and picks what the answer is
    written from."""

    def seed(self, state: ResearchState, earlier: Sequence[ConversationTurn]) -> None: ...

    async def weigh(self, reading: ResearchQuestion, outcome: SearchOutcome, scope: SearchScope,
                    state: ResearchState, earlier: Sequence[ConversationTurn]
                    ) -> tuple[int, int, list[str]]:
        """(new passages, passages that hold evidence, pages that could not be read)"""
        ...

    def chosen(self, state: ResearchState) -> list[Source]: ...


class Reflector(Protocol):
    async def reflect(self, reading: ResearchQuestion, scope: SearchScope, state: ResearchState
                      ) -> tuple[ResearchPlan, dict[str, Any] | None]:
        """The next round's searches (none: stop), and the verdict to keep in the trace."""
        ...


class Writer(Protocol):
    async def write(self, reading: ResearchQuestion, chosen: list[Source], request: ResearchRequest,
                    state: ResearchState, previous: ResearchResult | None) -> Written: ...


class Checker(Protocol):
    async def check(self, written: Written, reading: ResearchQuestion, chosen: list[Source],
                    state: ResearchState) -> tuple[ClaimCheck, Written]: ...


class Grader(Protocol):
    def adjust(self, confidence: Confidence, limitations: list[str], check: ClaimCheck,
               state: ResearchState) -> tuple[Confidence, list[str]]: ...


@dataclass
class Revision:
    """Where `improve` picks an earlier answer up: the answer, its reading of the question,
    its evidence (in `state`), the searches the feedback needs, and the job's steps."""

    earlier: ResearchResult
    reading: ResearchQuestion
    plan: ResearchPlan
    state: ResearchState
    steps: Strategies
    started: float  # time.perf_counter() when the feedback began to be read: the run's start


@dataclass
class Strategies:
    """One strategy for each step, and the budget they share (a model's time and tokens,
    cut into phases; nothing without a model)."""

    reader: Reader
    planner: Planner
    weigher: Weigher
    reflector: Reflector
    writer: Writer
    checker: Checker
    grader: Grader
    budget: Budget


class Budget(Protocol):
    def start(self, tier: Tier) -> None: ...

    def phase(self, name: str) -> None: ...

    def deadline(self, phase: str) -> float | None: ...

    def tokens_left(self) -> float: ...

    def degraded(self) -> bool: ...

    def metrics(self) -> dict[str, Any]: ...


# ---- the loop ----------------------------------------------------------------------------

class ResearchEngine:
    """`steps()` gives one job its step strategies (a model's hold the job's budget)."""

    def __init__(self, steps: Callable[[], Strategies], pipeline: PipelineSettings,
                 llm: LLMSettings | None = None) -> None:
        self._steps = steps
        self._pipeline = pipeline
        self._llm = llm

    def tier(self, depth: Depth, max_iterations: int | None = None) -> Tier:
        """The depth's tier, its rounds cut to the request's `max_iterations` when lower."""
        chosen = tier(depth, self._pipeline, self._llm)
        if max_iterations is None or max_iterations >= chosen.rounds:
            return chosen
        return replace(chosen, rounds=max_iterations, rounds_by_request=True)

    async def research(self, record: ResearchRecord, request: ResearchRequest, question: str,
                       subject: str, heuristic: QueryIntent, depth: Depth,
                       scope: SearchScope) -> ResearchResult:
        """Research `question` (searched and graded as `subject`) at `depth`."""
        started = time.perf_counter()
        steps = self._steps()
        state = ResearchState(tier=self.tier(depth, request.max_iterations))
        steps.budget.start(state.tier)
        try:
            steps.budget.phase("research")
            await record.begin(Stage.PLAN, "Planning the research")
            reading = await steps.reader.read(request, question, subject, heuristic, state)
            plan = await steps.planner.plan(reading, scope, state)
            trace = record.trace
            trace.intent = reading.intent
            trace.checklist = [ChecklistItem(text=text) for text in reading.checklist]
            if reading.by_model:
                trace.refined_question = reading.subject
            trace.plan = [q.text for q in plan.queries]
            await record.end(Stage.PLAN, _planned(reading, plan),
                             {"checklist": len(reading.checklist),
                              "queries": len(plan.queries)})
            result = await self._gather(steps, record, request, reading, plan, scope, state,
                                        None)
            count_research_run(depth.value, time.perf_counter() - started, state.rounds)
            return result
        finally:
            _account(record, steps, state)

    async def revise(self, record: ResearchRecord, request: ResearchRequest,
                     revision: Revision, scope: SearchScope) -> ResearchResult:
        """Revise an earlier answer (`improve`): its reading and evidence are given, and the
        searches the feedback needs (maybe none); no reflection."""
        steps, state = revision.steps, revision.state
        steps.budget.start(state.tier)
        try:
            steps.budget.phase("research")
            result = await self._gather(steps, record, request, revision.reading,
                                        revision.plan, scope, state, revision.earlier)
            count_research_run(IMPROVE, time.perf_counter() - revision.started,
                               state.rounds)
            return result
        finally:
            _account(record, steps, state)

    async def _gather(self, steps: Strategies, record: ResearchRecord,
                      request: ResearchRequest, reading: ResearchQuestion, plan: ResearchPlan,
                      scope: SearchScope, state: ResearchState,
                      previous: ResearchResult | None) -> ResearchResult:
        """Search rounds within the research deadline, then the answer."""
        steps.weigher.seed(state, request.history[-1:] if previous is None else [])
        deadline = steps.budget.deadline("research")
        with contextlib.suppress(TimeoutError):
            async with _until(deadline):
                await self._rounds(steps, record, request, reading, plan, scope, state,
                                   reflecting=previous is None)
        if deadline is not None and asyncio.get_running_loop().time() >= deadline:
            state.spent("time")
        return await self._answer(steps, record, request, reading, scope, state, previous)

    async def _rounds(self, steps: Strategies, record: ResearchRecord, request: ResearchRequest,
                      reading: ResearchQuestion, pending: ResearchPlan, scope: SearchScope,
                      state: ResearchState, reflecting: bool) -> None:
        trace = record.trace
        chosen_tier = state.tier
        trace.iterations_allowed = chosen_tier.rounds
        while pending.queries:
            remaining = chosen_tier.queries - len(state.queries_run)
            if state.rounds >= chosen_tier.rounds:
                state.stop(StoppedBy.ITERATION_LIMIT, _round_limit(chosen_tier))
                return
            if steps.budget.tokens_left() <= 0:
                state.spent("tokens")
                return
            if remaining <= 0:
                state.stop(StoppedBy.SEARCH_LIMIT, f"the {chosen_tier.name} tier allows "
                           f"{chosen_tier.queries} searches")
                return
            pending = scope.within_controls(ResearchPlan(queries=pending.queries[:remaining]),
                                            reading.subject, reading.intent)
            state.rounds += 1
            verdict = await self._round(steps, record, request, reading, pending, scope, state,
                                        reflecting)
            if verdict is None:
                return
            pending, reflection = verdict
            if reflection is not None and reflection.get("sufficient"):
                return
        if trace.last_reflection() is not None and state.cut_short is None \
                and not (trace.last_reflection() or {}).get("sufficient"):
            state.cut_short = "no further searches were found for what is missing"

    async def _round(self, steps: Strategies, record: ResearchRecord, request: ResearchRequest,
                     reading: ResearchQuestion, pending: ResearchPlan, scope: SearchScope,
                     state: ResearchState, reflecting: bool
                     ) -> tuple[ResearchPlan, dict[str, Any] | None] | None:
        """One round: search, weigh, reflect. The next round's searches and the verdict;
        None: no next round."""
        trace, number = record.trace, state.rounds
        message, detail = searching(number, state.tier.rounds, pending, scope.sources)
        await record.begin(Stage.SEARCH, message, detail)
        outcome = await run_search(pending, scope.sources, request.tenant, reading.intent,
                                   state.tier.candidates, self._pipeline.source_timeout_s,
                                   scope.controls)
        state.unapplied += [n for n in outcome.notes if n not in state.unapplied]
        state.passages_found += outcome.passages
        state.queries_run.update(outcome.counts_per_query)
        add_up(trace.totals, outcome)
        origins(state.found_by, outcome, number)
        record.metrics.update(queries_per_source=dict(trace.totals.queries),
                              results_per_source=dict(trace.totals.results))
        round_ = searched(pending, outcome)
        trace.iterations.append(round_)
        at = ProgressDetail(round=number, rounds_allowed=state.tier.rounds,
                            results=outcome.passages)
        await record.end(Stage.SEARCH, f"Found {outcome.passages} passages in "
                         f"{outcome.documents} documents",
                         {"documents": outcome.documents, "passages": outcome.passages,
                          "failures": len(outcome.failures)}, at)

        await record.begin(Stage.RANK, f"Processing {outcome.passages} results", at)
        new, useful, unread = await steps.weigher.weigh(
            reading, outcome, scope, state, request.history[-1:])
        round_.new_passages, round_.useful, round_.pages_unread = new, useful, unread
        trace.totals.passages_weighed += new
        trace.totals.pages_unread += len(unread)
        trace.totals.pages_read = state.pages_read
        record.metrics["pages_unread"] = record.metrics.get("pages_unread", 0) + len(unread)
        degraded = steps.budget.degraded()
        verdict = await steps.reflector.reflect(reading, scope, state) \
            if reflecting and not degraded else None
        if verdict is not None:
            round_.reflection = verdict[1]
        round_.checklist = ChecklistCount.of(checklist_now(reading, state, trace))
        await record.end(Stage.RANK, f"{useful} of {new} passages hold evidence · "
                         f"{checklist_line(round_.checklist)}", {"new": new, "useful": useful},
                         at.model_copy(update={"checklist": round_.checklist}))
        if degraded:
            state.model_problems.append("the language model kept failing")
            state.stopped_by = state.stopped_by or StoppedBy.MODEL_FAILURE
        return verdict

    async def _answer(self, steps: Strategies, record: ResearchRecord, request: ResearchRequest,
                      reading: ResearchQuestion, scope: SearchScope, state: ResearchState,
                      previous: ResearchResult | None) -> ResearchResult:
        trace = record.trace
        await record.begin(Stage.SYNTHESIZE, "Writing the answer")
        steps.budget.phase("writing")
        chosen = steps.weigher.chosen(state)
        trace.evidence = [s.id for s in chosen]
        trace.stopped_by = state.stopped_by or StoppedBy.COMPLETED
        record.metrics.update(sources_processed=len(chosen))
        written = await steps.writer.write(reading, chosen, request, state, previous)
        await record.end(Stage.SYNTHESIZE, f"Drafted {len(written.draft.citations)} cited "
                      "statements", {"statements": len(written.draft.citations)})

        await record.begin(Stage.VERIFY, "Checking the citations")
        steps.budget.phase("checking")
        check, written = await steps.checker.check(written, reading, chosen, state)
        verified = verify_citations(check.draft, chosen)
        record.metrics.update(check.metrics())
        record.metrics["citations_removed"] = check.invalid_citations \
            + verified.unknown_markers_removed + verified.unsupported_citations_removed
        await record.end(Stage.VERIFY, f"{len(verified.references)} sources cited, "
                      f"{check.claims - check.kept} statements removed",
                      {"cited": len(verified.references),
                       "removed": check.claims - check.kept})

        await record.begin(Stage.GRADE, "Grading confidence")
        graded = grade(verified, chosen, reading.intent, trace.failures(),
                       only_local=scope.local_only, question=reading.subject,
                       notes=check.draft.notes)
        record.metrics["grade"] = graded.trace()
        confidence, limitations = steps.grader.adjust(graded.confidence, graded.limitations,
                                                      check, state)
        limitations = [*limitations, *state.unapplied]
        record.metrics["checklist_coverage"] = state.coverage
        limitations = limitations + _request_notes(request, reading, confidence, state)
        _finish_trace(trace, reading, state, confidence, verified.cited_sources)
        # Why no answer stands, when a model is the reason.
        trouble = UNCONFIRMED_ANSWER if check.claims and not check.kept else \
            MODEL_TROUBLE_ANSWER if state.model_problems and state.evidence else None
        if confidence == Confidence.INSUFFICIENT and (verified.references or trouble is None):
            verified = closest_passages(verified)  # what was found, not as an answer
        await record.end(Stage.GRADE, f"Confidence: {confidence.value}")
        summary = verified.summary
        if not summary or summary == NO_ANSWER:
            summary = trouble or NO_ANSWER
        metadata: dict[str, Any] = {"synthesizer": written.writer,
                                    "question_type": reading.intent.question_type.value}
        if reading.by_model:
            metadata.update(refined_question=reading.subject, checklist=reading.checklist,
                            checklist_coverage=record.metrics.get("checklist_coverage"),
                            claims_checked=check.checked,
                            claim_verification=check.verification)
        cited = set(verified.cited_sources)
        summary, detail, references = by_document(summary, verified.detail,
                                                  verified.references, chosen)
        return ResearchResult(
            job_id="", status=JobStatus.COMPLETED, question=reading.question,
            answer=ResearchAnswer(summary=summary, detail=detail,
                                  citations=verified.citations, confidence=confidence,
                                  limitations=limitations, metadata=metadata),
            sources=[s for s in chosen if s.id in cited],
            references=references,
            sources_considered=state.passages_found,
            max_cache_seconds=0.0 if check.verification == "not run" else
            MODEL_TROUBLE_CACHE_SECONDS if state.model_problems else None,
        )


def checklist_now(reading: ResearchQuestion, state: ResearchState, trace: Trace
                  ) -> list[ChecklistItem]:
    """Each checklist point with how far the evidence covers it: the model's last verdict
    on it, else satisfied when a fact it took serves it. Evidence no model judged leaves a
    point partly covered when anything was found (the grade settles it at the end)."""
    reflection = trace.last_reflection() or {}
    verdicts = {item.get("item"): item.get("status") for item in reflection.get("items", [])
                if isinstance(item, dict)}
    serving: dict[int, list[str]] = {}
    for evidence in state.evidence.values():
        for number in evidence.checklist_items if evidence.facts else []:
            serving.setdefault(number, []).append(evidence.source.id)
    judged = _judged(state, trace)
    found = [s.id for s in state.ranked] or list(state.evidence)
    items = []
    for number, text in enumerate(reading.checklist, 1):
        if judged:
            status = _VERDICTS.get(str(verdicts.get(number)),
                                   ChecklistStatus.SATISFIED if serving.get(number)
                                   else ChecklistStatus.OPEN)
            items.append(ChecklistItem(text=text, status=status,
                                       evidence=serving.get(number, [])))
        else:
            items.append(ChecklistItem(text=text, evidence=found, status=(
                ChecklistStatus.PARTIAL if found else ChecklistStatus.OPEN)))
    return items


def _judged(state: ResearchState, trace: Trace) -> bool:
    """Whether a model said how far the evidence covers the checklist."""
    return bool((trace.last_reflection() or {}).get("items")) \
        or any(e.relevance is not None for e in state.evidence.values())


_VERDICTS = {"satisfied": ChecklistStatus.SATISFIED, "partial": ChecklistStatus.PARTIAL,
             "unsatisfied": ChecklistStatus.OPEN}
_GRADED = {Confidence.HIGH: ChecklistStatus.SATISFIED, Confidence.MEDIUM:
           ChecklistStatus.SATISFIED, Confidence.LOW: ChecklistStatus.PARTIAL,
           Confidence.INSUFFICIENT: ChecklistStatus.OPEN}


def _finish_trace(trace: Trace, reading: ResearchQuestion, state: ResearchState,
                  confidence: Confidence, cited: Sequence[str]) -> None:
    """The trace as the job keeps it: the checklist as the evidence left it (points no model
    judged take the answer's grade, with the passages it cites), the facts taken, and the
    search behind each passage of evidence."""
    items = checklist_now(reading, state, trace)
    if not _judged(state, trace):
        items = [item.model_copy(update={"status": _GRADED[confidence],
                                         "evidence": list(cited)}) for item in items]
    trace.checklist = items
    trace.facts = [ExtractedFact(text=fact, source_id=e.source.id,
                                 checklist_items=e.checklist_items)
                   for e in state.evidence.values() for fact in e.facts]
    wanted = dict.fromkeys([*trace.evidence, *(i for item in items for i in item.evidence)])
    trace.found_by = {i: state.found_by[i] for i in wanted if i in state.found_by}


def _account(record: ResearchRecord, steps: Strategies, state: ResearchState) -> None:
    record.metrics.update(steps.budget.metrics())
    record.metrics.update(rounds=state.rounds, rounds_allowed=state.tier.rounds,
                          cut_short=state.cut_short, stopped_by=record.trace.stopped_by)


def _request_notes(request: ResearchRequest, reading: ResearchQuestion,
                   confidence: Confidence, state: ResearchState) -> list[str]:
    """What the person is told of their request: that their context went unused when no
    model reads it (searching by it could pull the answer off the question), and how to ask
    again when the evidence does not answer it (not when a failing model is why)."""
    notes = []
    if request.context and not reading.by_model:
        notes.append("Your context was kept with the question but not used: without a "
                     "language model the research reads the question alone.")
    if confidence == Confidence.INSUFFICIENT and not state.model_problems:
        found = [s for hits in state.found for s in hits] \
            + [e.source for e in state.evidence.values()]
        notes.append(refine_suggestion(reading.subject, reading.intent, found))
    return notes


def _round_limit(chosen: Tier) -> str:
    rounds = f"{chosen.rounds} search round{'s' if chosen.rounds != 1 else ''}"
    if chosen.rounds_by_request:
        return f"the request allowed {rounds} (max_iterations)"
    return f"the {chosen.name} tier allows {rounds}"


def _planned(reading: ResearchQuestion, plan: ResearchPlan) -> str:
    searches = f"{len(plan.queries)} search{'es' if len(plan.queries) != 1 else ''} planned"
    if reading.by_model:
        return f"{len(reading.checklist)} points to cover, {searches}"
    return f"Question type: {reading.intent.question_type.value}; {searches}"


@contextlib.asynccontextmanager
async def _until(deadline: float | None) -> AsyncIterator[None]:
    if deadline is None:
        yield
        return
    async with asyncio.timeout_at(deadline):
        yield
