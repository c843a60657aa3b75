import asyncio
from pathlib import Path
from typing import Any

import pytest

from bot.wiring import build_jobs, build_research
from core.answer.cache import SemanticAnswerCache
from core.answer.synthesis.extractive import NO_ANSWER
from core.config import CacheSettings, PipelineSettings
from core.errors import InvalidQuestionError, JobFailedError, SourceError
from core.models import Confidence, JobStatus, ProgressEvent, ResearchRequest, Source, Stage
from core.sources.local import LocalKnowledgeBaseSource
from core.sources.protocol import Capabilities, SearchQuery, SourceKind
from core.store.answers import CachedAnswerStore
from core.store.jobs import JobStore
from tests.support.job_client import JobClient

pytestmark = pytest.mark.unit


class _DownSource:
    """A remote source in an outage, as a search client reports it."""

    name = "web"
    label = "the web"
    capabilities = Capabilities(SourceKind.WEB, snippets=True)

    async def search(self, query: SearchQuery) -> list[Source]:
        raise SourceError("web", "HTTP 503", status=503)


class _HangingSource:
    name = "slow"
    label = "a slow source"
    capabilities = Capabilities(SourceKind.WEB)

    async def search(self, query: SearchQuery) -> list[Source]:
        await asyncio.Event().wait()  # never answers: the search stage's time limit ends it
        return []


@pytest.fixture
async def client(sqlite_engine: Any, chroma: Any, embedder: Any, knowledge_base: Any,
                   corpus: Path) -> JobClient:
    await knowledge_base.index([corpus], "t1")
    return _client(sqlite_engine, chroma, embedder, knowledge_base)


def _client(engine: Any, chroma: Any, embedder: Any, kb: Any, synthesizer: Any = None,
            **extra: Any) -> JobClient:
    sources = {"local": LocalKnowledgeBaseSource(kb, 3), **extra}
    research = build_research(sources, embedder, PipelineSettings(source_timeout_s=1.0),
                              synthesizer=synthesizer,
                              cache=SemanticAnswerCache(CachedAnswerStore(engine), chroma,
                                                        embedder, CacheSettings()))
    return JobClient(build_jobs(research, engine, progress_interval_s=0.0))


async def test_a_cited_answer_with_progress(client: JobClient,
                                            sqlite_engine: Any) -> None:
    events: list[ProgressEvent] = []
    result = await client.run(
        ResearchRequest(question="How many hours a day do cats sleep?", tenant="t1"),
        events.append,
    )
    assert "12 and 16 hours" in result.answer.summary
    assert "[1]" in result.answer.summary
    assert result.answer.confidence in (Confidence.HIGH, Confidence.MEDIUM)
    # one reference a document, listing the sections its cited passages come from
    assert "cats.md (Cats > Sleep" in result.references[0].where
    paths = [next(s.path for s in result.sources if s.id == r.source_id)
             for r in result.references]
    assert len(paths) == len(set(paths))
    assert {s.id for s in result.sources} == \
        {i for r in result.references for i in r.source_ids}
    assert all(c.source_id in {s.id for s in result.sources} for c in result.answer.citations)
    started = [e.stage for e in events if e.kind == "started"]
    assert started == [Stage.INTAKE, Stage.CACHE, Stage.PLAN, Stage.SEARCH, Stage.RANK,
                       Stage.SYNTHESIZE, Stage.VERIFY, Stage.GRADE, Stage.DELIVER]
    search_done = next(e for e in events if e.stage == Stage.SEARCH and e.kind == "finished")
    assert search_done.counts["documents"] >= 1
    assert [e.progress for e in events] == sorted(e.progress for e in events)
    job = await JobStore(sqlite_engine).get(result.job_id)
    assert job.status == JobStatus.COMPLETED and job.result is not None
    assert job.metrics["queries_per_source"]["local"] >= 1 and job.trace.plan
    assert job.metrics["cache_stored"] is True


async def test_second_ask_is_cached_and_bypass_refreshes(client: JobClient) -> None:
    question = "How many hours a day do cats sleep?"
    first = await client.run(ResearchRequest(question=question, tenant="t1"))
    second = await client.run(ResearchRequest(question=question.upper(), tenant="t1"))
    assert second.cached and second.cached_at is not None and second.job_id != first.job_id
    assert second.answer.summary == first.answer.summary
    fresh = await client.run(ResearchRequest(question=question, tenant="t1",
                                             bypass_cache=True))
    assert not fresh.cached
    other_tenant = await client.run(ResearchRequest(question=question, tenant="t2"))
    assert not other_tenant.cached
    assert other_tenant.answer.confidence == Confidence.INSUFFICIENT


async def test_no_evidence_is_insufficient_not_a_guess(client: JobClient) -> None:
    result = await client.run(
        ResearchRequest(question="Who won the 1998 football world cup?", tenant="t1"))
    assert result.answer.confidence == Confidence.INSUFFICIENT
    assert result.answer.summary == NO_ANSWER
    assert result.answer.citations == []
    # whatever was found is listed as not answering it
    assert all(f"[{r.number}]" in result.answer.detail for r in result.references)
    assert not result.references or "do not answer it" in result.answer.detail


async def test_an_outage_is_reported_not_hidden(sqlite_engine: Any, chroma: Any,
                                                embedder: Any, knowledge_base: Any,
                                                corpus: Path) -> None:
    await knowledge_base.index([corpus], "t1")
    client = _client(sqlite_engine, chroma, embedder, knowledge_base,
                         web=_DownSource(), slow=_HangingSource())
    result = await client.run(ResearchRequest(
        question="What is the largest planet in the solar system?", tenant="t1"))
    assert "Jupiter" in result.answer.summary
    assert result.answer.confidence != Confidence.HIGH
    assert ("The web returned an error, so its results are missing from this answer."
            in result.answer.limitations)
    assert ("A slow source did not answer in time, so its results are missing from this "
            "answer." in result.answer.limitations)
    assert "503" not in " ".join(result.answer.limitations)


async def test_bad_input_stores_no_job(client: JobClient, sqlite_engine: Any) -> None:
    with pytest.raises(InvalidQuestionError):
        await client.run(ResearchRequest(question="   ", tenant="t1"))
    assert await JobStore(sqlite_engine).recent() == []


async def test_a_failure_marks_the_job_failed(sqlite_engine: Any, chroma: Any, embedder: Any,
                                              knowledge_base: Any) -> None:
    class _BrokenSynthesizer:
        name = "broken"

        async def synthesize(self, *args: Any) -> Any:
            raise RuntimeError("synthesis exploded")

    client = _client(sqlite_engine, chroma, embedder, knowledge_base, _BrokenSynthesizer())
    with pytest.raises(JobFailedError, match="RuntimeError: synthesis exploded"):
        await client.run(ResearchRequest(question="cats?", tenant="t1", bypass_cache=True))
    job = (await JobStore(sqlite_engine).recent())[0]
    assert job.status == JobStatus.FAILED and "synthesis exploded" in (job.error or "")


async def test_depth_tiers_search_more_or_less(client: JobClient,
                                               sqlite_engine: Any) -> None:
    question = "What is the difference between green tea and black tea caffeine?"
    counts = {}
    for depth in ("quick", "deep"):
        result = await client.run(ResearchRequest(question=question, tenant="t1",
                                                  depth=depth, bypass_cache=True))
        job = await JobStore(sqlite_engine).get(result.job_id)
        counts[depth] = len(job.trace.plan)
    assert counts["quick"] <= 2 < counts["deep"]


async def test_a_follow_up_is_researched_with_its_conversation(
    client: JobClient, sqlite_engine: Any,
) -> None:
    from core.models import ConversationTurn

    first = await client.run(ResearchRequest(
        question="How many hours a day do cats sleep?", tenant="t1"))
    turn = ConversationTurn(question=first.question, answer=first.answer.summary,
                            source_ids=[s.id for s in first.sources])
    follow_up = ResearchRequest(question="What do they need to eat?", tenant="t1",
                                context=[turn])
    result = await client.run(follow_up)
    assert "taurine" in result.answer.summary
    assert result.question == "What do they need to eat?"
    job = await JobStore(sqlite_engine).get(result.job_id)
    assert job.trace.standalone_question == (
        "What do they need to eat? (How many hours a day do cats sleep?)")
    # What "they" means depends on the thread: such an answer is not shared through the cache.
    assert not job.metrics.get("cache_stored")
    again = await client.run(follow_up)
    assert not again.cached


async def test_research_is_a_function_of_its_request(sqlite_engine: Any, chroma: Any,
                                                     embedder: Any, knowledge_base: Any,
                                                     corpus: Path) -> None:
    """The research core alone: stage events to its sink, an outcome back, no job stored."""
    from core.models import StageEvent

    await knowledge_base.index([corpus], "t1")
    research = build_research({"local": LocalKnowledgeBaseSource(knowledge_base, 3)}, embedder,
                              PipelineSettings())
    events: list[StageEvent] = []

    async def sink(event: StageEvent) -> None:
        events.append(event)

    outcome = await research.run(
        ResearchRequest(question="How many hours a day do cats sleep?", tenant="t1"), sink)
    assert "12 and 16 hours" in outcome.result.answer.summary
    assert outcome.result.job_id == ""  # the job service gives it one
    assert outcome.trace.plan and outcome.metrics["rounds"] == 1
    assert [e.stage for e in events if e.kind == "finished"][-1] == Stage.DELIVER
    assert await JobStore(sqlite_engine).recent() == []
