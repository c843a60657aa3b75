"""The research engine's steps through a language model (core.research.engine), for one job
(`ModelSteps`): each model call is a function in core.research.model_tasks, each reply a
schema in core.research.model_replies; every step falls back to the no-model step
(core.research.heuristic_steps) when the model fails, and the answer's limitations say so; model
trouble is never reported as "the sources do not answer this". `ResearchLoop` gives each job
its steps and sets up `improve`; `adjust_grade` caps the code's grade by checklist coverage,
the claim check and model trouble.

The tier's seconds and tokens bound the whole job, understanding to verification. Research
may use the first RESEARCH_SHARE of both; writing must end by WRITING_SHARE of the time and
checking by CHECKING_SHARE, so that a stalled model still leaves time for an extractive answer.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import Any

from core.answer.fact_check import ClaimCheck, check_answer
from core.answer.references import DOCUMENT_MARKER, document_numbers
from core.answer.synthesis.base import Draft, Synthesizer
from core.answer.synthesis.extractive import NO_ANSWER
from core.config import LLMSettings, PipelineSettings, TierBudget
from core.errors import LLMBudgetError, LLMError
from core.llm.gateway import MIN_CALL_SECONDS, ModelGateway, Role, Usage
from core.models import (
    Confidence,
    ConversationTurn,
    QueryIntent,
    ResearchRequest,
    ResearchResult,
    Source,
    Trace,
)
from core.research.engine import (
    Evidence,
    ResearchQuestion,
    ResearchState,
    Strategies,
    Tier,
    Written,
)
from core.research.heuristic_steps import heuristic_strategies
from core.research.intake import standalone_question
from core.research.model_replies import Fact, ImprovePlan, Reflection
from core.research.model_tasks import (
    REPLY_TOKENS,
    ModelNotes,
    checklist_coverage,
    compact,
    intent_of,
    plan,
    reflect,
    synthesize,
    to_plan,
    understand,
    weigh_evidence,
)
from core.research.planning import ResearchPlan, plan_queries
from core.research.search import SearchOutcome, SearchScope
from core.retrieval.embedding import Embedder
from core.retrieval.rank import rank_sources

RESEARCH_SHARE = 0.6  # of the tier's seconds and tokens, for understanding and research
WRITING_SHARE = 0.85  # of its seconds, by when the answer must be written
CHECKING_SHARE = 0.97  # of its seconds, by when its sentences must be checked
# Weight of the model's relevance score against the retrieval score when evidence is chosen
# (PaperQA2's 0.6 model + 0.4 retrieval): a ranking constant, not a setting.
EVIDENCE_LLM_WEIGHT = 0.6


class JobClock:
    """When a job started and how long its tier gives it; sets the budget of each phase on
    the job's Usage."""

    def __init__(self, limits: TierBudget) -> None:
        self.limits = limits
        self.started = asyncio.get_running_loop().time()

    def at(self, share: float) -> float:
        return self.started + self.limits.seconds * share

    def phase(self, usage: Usage, time_share: float, token_share: float = 1.0) -> None:
        usage.deadline = self.at(time_share)
        usage.token_limit = int(self.limits.tokens * token_share)


class ModelSteps:
    """The engine's steps through the model, for one job: they share its Usage (tokens,
    failures) and clock, and each falls back to the no-model step when the model fails."""

    def __init__(self, gateway: ModelGateway, settings: LLMSettings, embedder: Embedder,
                 pipeline: PipelineSettings, plain: Strategies) -> None:
        self._gateway = gateway
        self._settings = settings
        self._embedder = embedder
        self._pipeline = pipeline
        self._plain = plain
        self.usage = Usage()
        self.notes = ModelNotes()
        self.checklist: list[str] = []
        self._clock: JobClock | None = None

    def strategies(self) -> Strategies:
        return Strategies(reader=self, planner=self, weigher=self, reflector=self,
                          writer=self, checker=self, grader=self, budget=self)

    # Budget: research may use the first RESEARCH_SHARE of the tier's seconds and tokens;
    # writing must end by WRITING_SHARE of the time and checking by CHECKING_SHARE.

    def start(self, tier: Tier) -> None:
        assert tier.budget is not None
        if self._clock is None:  # `improve` starts it before the engine does
            self._clock = JobClock(tier.budget)

    def phase(self, name: str) -> None:
        assert self._clock is not None
        if name == "research":
            self._clock.phase(self.usage, RESEARCH_SHARE, RESEARCH_SHARE)
        elif name == "writing":
            self._clock.phase(self.usage, WRITING_SHARE)
        else:
            self._clock.phase(self.usage, CHECKING_SHARE)

    def deadline(self, phase: str) -> float | None:
        assert self._clock is not None
        return self._clock.at(RESEARCH_SHARE)

    def tokens_left(self) -> float:
        return self.usage.tokens_left()

    def degraded(self) -> bool:
        return self.usage.degraded

    def metrics(self) -> dict[str, Any]:
        return {**self.usage.metrics(), "fact_compactions": self.notes.compactions}

    def _failed(self, state: ResearchState, step: str, error: LLMError,
                consequence: str = "") -> None:
        """A model call for `step` failed: a spent budget cuts the research short, anything
        else is model trouble, said as such (a call that ran out of time is both)."""
        if isinstance(error, LLMBudgetError):
            state.spent(error.kind)
            return
        state.model_problems.append(f"{step} ({error.model})" + (f"; {consequence}"
                                                                    if consequence else ""))
        if self.usage.seconds_left() < MIN_CALL_SECONDS:
            state.spent("time")

    # Reader

    async def read(self, request: ResearchRequest, question: str, subject: str,
                   heuristic: QueryIntent, state: ResearchState) -> ResearchQuestion:
        try:
            found = await understand(self._gateway, self.usage, question, request.history,
                                     request.context)
        except LLMError as error:
            self._failed(state, "reading the question", error)
            refined = standalone_question(question, request.history)
            self.checklist = [refined]
            return ResearchQuestion(question=question, subject=refined, intent=heuristic,
                           checklist=[refined], by_model=True, constraints=request.context)
        self.checklist = found.checklist
        return ResearchQuestion(question=question, subject=found.refined_question,
                       intent=intent_of(found, heuristic), checklist=found.checklist,
                       by_model=True, constraints=request.context)

    # Planner

    async def plan(self, reading: ResearchQuestion, scope: SearchScope, state: ResearchState
                   ) -> ResearchPlan:
        limit = min(state.tier.queries, 6)
        try:
            planned = await plan(self._gateway, self.usage, reading.subject, reading.checklist,
                                 scope.sources, limit, reading.constraints)
        except LLMError as error:
            self._failed(state, "planning searches", error)
            planned = ResearchPlan()
        if not planned.queries:
            planned = plan_queries(reading.subject, reading.intent, scope.capabilities(), limit,
                                   scope.controls)
        return planned

    # Weigher: PaperQA2-style, the model scores the new passages and pulls out their facts

    def seed(self, state: ResearchState, earlier: Sequence[ConversationTurn]) -> None:
        for turn in earlier:  # a follow-up may build on the earlier sources
            for source in turn.sources:
                state.evidence.setdefault(source.id, Evidence(
                    source=source, retrieval=source.metadata.relevance))

    async def weigh(self, reading: ResearchQuestion, outcome: SearchOutcome, scope: SearchScope,
                    state: ResearchState, earlier: Sequence[ConversationTurn]
                    ) -> tuple[int, int, list[str]]:
        candidates = await rank_sources(
            reading.subject, scope.usable(outcome.results), self._embedder,
            state.tier.candidates, self._pipeline.max_per_document,
            self._pipeline.min_relevance, prior=scope.prior(reading.intent))
        fresh, unread, read = await scope.read_pages(
            reading.subject, [c for c in candidates if c.id not in state.evidence])
        state.pages_read += read
        for source in fresh:  # kept on their retrieval score should weighing not end
            state.evidence[source.id] = Evidence(source=source,
                                                    retrieval=source.metadata.relevance)
        judged, errors = await weigh_evidence(
            self._gateway, self.usage, self._settings, reading.subject, reading.checklist,
            fresh) if fresh else ([], [])
        for error in errors:
            self._failed(state, "judging the evidence", error,
                         "passages were ranked by the search alone")
        for item in judged:
            state.evidence[item.source.id] = item
            self.notes.facts += [Fact(text=f, source_id=item.source.id,
                                      checklist_items=item.checklist_items)
                                 for f in item.facts]
        await compact(self._gateway, self.usage, self.notes, list(state.evidence),
                      self._settings.compact_facts_tokens)
        return len(judged), sum(1 for item in judged if item.facts), unread

    def chosen(self, state: ResearchState) -> list[Source]:
        weight = EVIDENCE_LLM_WEIGHT
        ranked = sorted(state.evidence.values(), key=lambda e: e.score(weight),
                        reverse=True)
        return [e.source for e in ranked
                if e.facts or e.relevance is None][:state.tier.sources]

    # Reflector

    async def reflect(self, reading: ResearchQuestion, scope: SearchScope, state: ResearchState
                      ) -> tuple[ResearchPlan, dict[str, Any] | None]:
        left = max(0, state.tier.queries - len(state.queries_run))
        try:
            reflection = await reflect(
                self._gateway, self.usage, reading.subject, reading.checklist,
                self.notes.listing(self.notes.facts, list(state.evidence)),
                state.queries_run, left, reading.constraints)
        except LLMError as error:
            self._failed(state, "reviewing the evidence", error)
            return ResearchPlan(), None
        self.notes.reflection = reflection
        if reflection.sufficient:
            return ResearchPlan(), reflection.model_dump()
        return to_plan(reflection.new_queries, scope.sources, state.tier.queries,
                       state.queries_run), reflection.model_dump()

    # Writer

    async def write(self, reading: ResearchQuestion, chosen: list[Source], request: ResearchRequest,
                    state: ResearchState, previous: ResearchResult | None) -> Written:
        if not chosen:
            return Written(draft=Draft(summary=NO_ANSWER),
                           writer=f"llm:{self._gateway.model(Role.STRONG)}")
        evidence = [state.evidence[s.id] for s in chosen]  # best first, as chosen
        try:
            draft, gaps = await synthesize(
                self._gateway, self.usage, reading.subject, reading.checklist, evidence,
                request.feedback,
                _renumbered(previous, chosen) if previous else request.previous_answer,
                reading.constraints)
        except LLMError as error:
            self._failed(state, "writing the answer", error, "this is an extractive "
                         "answer from the gathered sources")
            fallback = await self._plain.writer.write(
                ResearchQuestion(question=reading.subject, subject=reading.subject,
                        intent=reading.intent, checklist=reading.checklist),
                chosen, request, state, previous)
            return fallback
        state.gaps = gaps
        return Written(draft=draft, writer=f"llm:{self._gateway.model(Role.STRONG)}",
                       gaps=gaps)

    # Checker: every sentence the model wrote against the sources it cites

    async def check(self, written: Written, reading: ResearchQuestion, chosen: list[Source],
                    state: ResearchState) -> tuple[ClaimCheck, Written]:
        if not written.writer.startswith("llm:"):
            return ClaimCheck(draft=written.draft), written  # the sources' own sentences
        check = await check_answer(self._gateway, self.usage, written.draft, chosen,
                                   reading.intent.language, REPLY_TOKENS["verify"])
        if check.verification in ("not run", "partial") and \
                self.usage.seconds_left() < MIN_CALL_SECONDS:
            state.spent("time")
        if check.claims and not check.kept:
            # Nothing the model wrote held up: the sources' own sentences answer instead.
            rescue = await self._plain.writer.write(
                ResearchQuestion(question=reading.subject, subject=reading.subject,
                        intent=reading.intent, checklist=reading.checklist),
                chosen, ResearchRequest(question=reading.subject), state, None)
            if rescue.draft.citations:
                written = rescue
                check.draft = rescue.draft.model_copy(update={"notes": [
                    "None of the written answer's statements could be confirmed by its "
                    "sources; this is an extractive answer from them."]})
        return check, written

    # Grader: the code's grade, capped by checklist coverage, the claim check and trouble

    def adjust(self, confidence: Confidence, limitations: list[str], check: ClaimCheck,
               state: ResearchState) -> tuple[Confidence, list[str]]:
        coverage = checklist_coverage(self.checklist, self.notes.reflection,
                                      list(state.evidence.values()))
        state.coverage = None if coverage is None else round(coverage, 3)
        gaps = [g for g in state.gaps if g.strip()] or (
            self.notes.reflection.gaps if self.notes.reflection else [])
        return adjust_grade(confidence, limitations, coverage, check, state.model_problems,
                            gaps, state.cut_short)


class ResearchLoop:
    """The model's strategies for the research engine (core.research.engine), one set a job,
    and the set-up of `improve`."""

    def __init__(self, gateway: ModelGateway, settings: LLMSettings, embedder: Embedder,
                 pipeline: PipelineSettings, fallback: Synthesizer) -> None:
        self._gateway = gateway
        self.settings = settings
        self._embedder = embedder
        self._pipeline = pipeline
        self._plain = heuristic_strategies(embedder, pipeline, fallback)

    def steps(self) -> Strategies:
        return ModelSteps(self._gateway, self.settings, self._embedder, self._pipeline,
                          self._plain).strategies()

    async def improvement(self, request: ResearchRequest, earlier: ResearchResult,
                          trace: Trace, scope: SearchScope, state: ResearchState,
                          steps: Strategies) -> tuple[ResearchQuestion, ResearchPlan]:
        """How `improve` starts: the earlier reading of the question, the earlier answer's
        sources as evidence (with what it took from each), and the searches the model says
        the feedback needs (none: the earlier sources suffice)."""
        model = steps.reader
        assert isinstance(model, ModelSteps)
        if trace.last_reflection() is not None:
            model.notes.reflection = Reflection.model_validate(trace.last_reflection())
        refined = trace.refined_question or earlier.question
        model.checklist = trace.checklist_texts or [refined]
        reading = ResearchQuestion(question=earlier.question, subject=refined,
                          intent=trace.intent or QueryIntent(),
                          checklist=model.checklist, by_model=True,
                          constraints=request.context)
        for source in earlier.sources:  # what the earlier answer took from each source
            facts = list(dict.fromkeys(c.quote for c in earlier.answer.citations
                                       if c.source_id == source.id and c.quote))
            state.evidence[source.id] = Evidence(
                source=source, retrieval=source.metadata.relevance, facts=facts)
        try:
            decision = await self._gateway.json(
                Role.FAST, "improve", ImprovePlan, model.usage,
                reply_tokens=REPLY_TOKENS["improve"], question=refined,
                answer=request.previous_answer, feedback=request.feedback)
        except LLMError as error:
            model._failed(state, "reading the feedback", error)
            decision = ImprovePlan()
        pending = to_plan(decision.queries, scope.sources, state.tier.queries) \
            if decision.needs_search else ResearchPlan()
        return reading, pending


def _renumbered(earlier: ResearchResult, chosen: list[Source]) -> str:
    """The earlier answer with its reference numbers turned into the numbers its sources
    have now, so that a sentence the writer keeps cites what it cited before."""
    now = {source.id: n for n, source in enumerate(chosen, 1)}
    numbers = {r.number: [now[i] for i in r.source_ids or [r.source_id] if i in now]
               for r in earlier.references}

    def swap(match: re.Match[str]) -> str:
        kept = sorted({n for document in document_numbers(match.group(1))
                       for n in numbers.get(document, [])})
        return f" [{', '.join(str(n) for n in kept)}]" if kept else ""

    text = f"{earlier.answer.summary}\n\n{earlier.answer.detail}".strip()
    return DOCUMENT_MARKER.sub(swap, text)


_ORDER = [Confidence.INSUFFICIENT, Confidence.LOW, Confidence.MEDIUM, Confidence.HIGH]


def adjust_grade(confidence: Confidence, limitations: list[str], coverage: float | None,
                 check: ClaimCheck, model_problems: Sequence[str], gaps: Sequence[str],
                 cut_short: str | None) -> tuple[Confidence, list[str]]:
    """The code's grade, capped by checklist coverage, the claim check and model trouble;
    the reasons added to the limitations in plain words."""
    limitations = list(limitations)
    cap = Confidence.HIGH
    if coverage is not None and coverage < 0.5:
        cap = Confidence.LOW
    elif coverage is not None and coverage < 1.0:
        cap = Confidence.MEDIUM

    def lower(to: Confidence) -> None:
        nonlocal cap
        cap = min(cap, to, key=_ORDER.index)

    if check.verification == "not run":
        lower(Confidence.LOW)
        limitations.append("The answer's claims could not be checked against the sources ("
                           f"{check.problem or 'the check did not run'}); only statements "
                           "quoting their source word for word were kept.")
    if check.unsupported or check.partial:
        lower(Confidence.MEDIUM)
        limitations.append(f"{check.unsupported} claim(s) that the cited sources do not "
                           f"support were removed; {check.partial} are only partly supported."
                           if check.unsupported else
                           f"{check.partial} claim(s) are only partly supported by their "
                           "sources.")
    if check.invalid_citations:
        lower(Confidence.MEDIUM)
        limitations.append(f"{check.invalid_citations} citation(s) that did not match a "
                           "retrieved source were removed"
                           + (f", with the {check.dangling} statement(s) that relied on them."
                              if check.dangling else "."))
    if check.uncited:
        lower(Confidence.MEDIUM)
        limitations.append(f"{check.uncited} statement(s) that cited no source were removed.")
    if check.unjudged and check.verification != "not run":
        limitations.append(f"{check.unjudged} statement(s) could not be checked against their "
                           f"sources ({check.problem or 'no verdict came back'}) and were "
                           "removed.")
    limitations += check.draft.notes
    if model_problems:
        lower(Confidence.LOW)
        limitations.append("The language model failed while " + "; ".join(
            dict.fromkeys(model_problems)) + ".")
    missing = [g for g in gaps if g.strip()]
    if missing:
        limitations.append("Not covered by the evidence: " + "; ".join(missing[:5]) + ".")
    if cut_short:
        limitations.append(f"The research was cut short: {cut_short}.")
    if confidence != Confidence.INSUFFICIENT:
        confidence = min(confidence, cap, key=_ORDER.index)
    return confidence, limitations
