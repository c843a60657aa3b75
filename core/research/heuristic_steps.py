"""The engine's steps without a model: the heuristic reading of the question (intake), its
query variations (planning), a round of search ranked by retrieval (with the question's names,
core.retrieval.rank), a second round for what the first passages name (the second hop), an
extractive answer of the sources' own sentences (nothing to check beyond the citations), and
the code's grade as it is."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from core.answer.fact_check import ClaimCheck
from core.answer.synthesis.base import Synthesizer
from core.answer.verdict import closed
from core.config import PipelineSettings
from core.models import (
    Confidence,
    ConversationTurn,
    QueryIntent,
    QuestionType,
    ResearchRequest,
    Source,
)
from core.research.engine import (
    Evidence,
    ResearchQuestion,
    ResearchState,
    Strategies,
    Tier,
    Written,
)
from core.research.planning import PlannedQuery, ResearchPlan, plan_queries, route_sources
from core.research.search import SearchOutcome, SearchScope
from core.retrieval.embedding import Embedder
from core.retrieval.rank import (
    bridge_queries,
    rank_sources,
    unfound_names,
    unmentioned_names,
)


class HeuristicReader:
    async def read(self, request: ResearchRequest, question: str, subject: str,
                   heuristic: QueryIntent, state: ResearchState) -> ResearchQuestion:
        return ResearchQuestion(question=question, subject=subject, intent=heuristic,
                       checklist=[subject])


class HeuristicPlanner:
    async def plan(self, reading: ResearchQuestion, scope: SearchScope, state: ResearchState
                   ) -> ResearchPlan:
        return plan_queries(reading.subject, reading.intent, scope.capabilities(),
                            state.tier.queries - state.tier.hops, scope.controls)


class RetrievalWeigher:
    """Evidence is what ranks best for the question among every round's results: fused
    retrieval ranks, the question's names each covered, the passages about what the best
    ones name, at most `max_per_document` passages a document, web pages read in place of
    their snippets. A follow-up's earlier sources compete with the new ones."""

    def __init__(self, embedder: Embedder, settings: PipelineSettings) -> None:
        self._embedder = embedder
        self._settings = settings

    def seed(self, state: ResearchState, earlier: Sequence[ConversationTurn]) -> None:
        """Nothing to seed: earlier sources are ranked with each round's results."""

    async def weigh(self, reading: ResearchQuestion, outcome: SearchOutcome, scope: SearchScope,
                    state: ResearchState, earlier: Sequence[ConversationTurn]
                    ) -> tuple[int, int, list[str]]:
        before = [turn.sources for turn in earlier if turn.sources]
        state.found += scope.usable(outcome.results)
        ranked = await rank_sources(
            reading.subject, state.found + before, self._embedder,
            state.tier.sources, self._settings.max_per_document,
            self._settings.min_relevance, prior=scope.prior(reading.intent),
            names=reading.intent.entities)
        ranked, unread, read = await scope.read_pages(reading.subject, ranked)
        state.pages_read += read
        state.ranked = ranked
        for source in ranked:
            state.evidence[source.id] = Evidence(source=source,
                                                    retrieval=source.metadata.relevance)
        return len(ranked), len(ranked), unread

    def chosen(self, state: ResearchState) -> list[Source]:
        return list(state.ranked)


class SecondHop:
    """After the first round, one more. A question that weighs named things (a comparison, a
    yes/no question) searches each name no passage found is about ("Neil Jordan" for "Are
    both Jim McBride and Neil Jordan American?"). Any other question searches what the best
    passages name that it does not ("Shirley Temple", named in the passage about the film,
    for "the position held by the woman who portrayed Corliss Archer in Kiss and Tell"),
    each with the question's words those passages lack, after any name of the question no
    passage mentions. Nothing left to look up: no round."""

    async def reflect(self, reading: ResearchQuestion, scope: SearchScope, state: ResearchState
                      ) -> tuple[ResearchPlan, dict[str, Any] | None]:
        if state.rounds > 1 or not state.tier.hops:
            return ResearchPlan(), None
        found = [s for hits in state.found for s in hits]
        weighs = closed(reading.question) \
            or reading.intent.question_type == QuestionType.COMPARISON
        queries = unfound_names(reading.intent.entities, found) if weighs else [
            *unmentioned_names(reading.subject, reading.intent.entities, found),
            *bridge_queries(reading.subject, state.ranked, found, state.tier.hops,
                             reading.intent.entities)]
        queries = queries[:state.tier.hops]
        if not queries:
            return ResearchPlan(), {"sufficient": True, "second_hop": []}
        routed = route_sources(reading.subject, scope.capabilities(), reading.intent,
                               scope.controls)
        return (ResearchPlan(queries=[PlannedQuery(text=q, purpose="the second hop",
                                                   sources=routed) for q in queries]),
                {"sufficient": False, "second_hop": queries})


class ExtractiveWriter:
    def __init__(self, synthesizer: Synthesizer) -> None:
        self._synthesizer = synthesizer

    async def write(self, reading: ResearchQuestion, chosen: list[Source], request: ResearchRequest,
                    state: ResearchState, previous: Any) -> Written:
        # The passages were found for the standalone form; the answer is written for what
        # the question itself asks ("what do they eat?"), not for an earlier question.
        draft = await self._synthesizer.synthesize(reading.question, reading.intent, chosen)
        return Written(draft=draft, writer=self._synthesizer.name)


class CitationsOnly:
    """An extractive draft is the sources' own sentences: only its citations are checked
    (core.answer.citations, for every answer)."""

    async def check(self, written: Written, reading: ResearchQuestion, chosen: list[Source],
                    state: ResearchState) -> tuple[ClaimCheck, Written]:
        return ClaimCheck(draft=written.draft), written


class CodeGrade:
    def adjust(self, confidence: Confidence, limitations: list[str], check: ClaimCheck,
               state: ResearchState) -> tuple[Confidence, list[str]]:
        return confidence, limitations + check.draft.notes


class NoBudget:
    def start(self, tier: Tier) -> None:
        """No model: no time or token budget beyond each source's own timeout."""

    def phase(self, name: str) -> None:
        """Phases only split a model's budget."""

    def deadline(self, phase: str) -> float | None:
        return None

    def tokens_left(self) -> float:
        return math.inf

    def degraded(self) -> bool:
        return False

    def metrics(self) -> dict[str, Any]:
        return {}


def heuristic_strategies(embedder: Embedder, settings: PipelineSettings,
                synthesizer: Synthesizer) -> Strategies:
    """The steps of a job without a model (stateless: one set serves every job)."""
    return Strategies(reader=HeuristicReader(), planner=HeuristicPlanner(),
                      weigher=RetrievalWeigher(embedder, settings), reflector=SecondHop(),
                      writer=ExtractiveWriter(synthesizer), checker=CitationsOnly(),
                      grader=CodeGrade(), budget=NoBudget())
