"""Prometheus metrics moved by real questions: the job service over the real pipeline, web
sources and pages on a local fake, a scripted model server; then /metrics as a scrape sees it,
from the API server and from a worker process on the queue."""

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp
import httpx
import pytest
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families

from bot.wiring import build_jobs, build_research, local_sources
from bot.worker import metrics_server
from core.answer.cache import SemanticAnswerCache
from core.config import CacheSettings, KnowledgeBaseSettings, PipelineSettings, QueueSettings
from core.errors import ConfigurationError
from core.jobs.delivery import RetryPolicy, Steps
from core.jobs.queue import QUICK, JobQueue
from core.jobs.service import JobService
from core.metrics import render_metrics
from core.models import Depth, JobStatus, ProgressEvent, ResearchRequest, ResearchResult
from core.retrieval.kb.knowledge_base import KnowledgeBase
from core.sources.local import LocalKnowledgeBaseSource
from core.sources.pages import PageReader
from core.sources.policy import SourcePolicy
from core.sources.searxng import SearxngSource
from core.sources.wikipedia import WikipediaSource
from core.store.answers import CachedAnswerStore
from core.store.catalogue import KnowledgeCatalogue
from core.web.fetch import PageFetcher
from core.web.net import AddressGuard, guarded_session
from tests.support.chat_harness import BrokenSynthesizer
from tests.support.cluster import free_port
from tests.support.fake_web import Article, Failure, FakeWeb
from tests.support.scripted_analyst import Lab
from tests.support.services import REDIS_URL

pytestmark = pytest.mark.integration

QUESTION = "How many hours a day do cats sleep?"
STAGES = ("intake", "cache", "plan", "search", "rank", "synthesize", "verify", "grade",
          "deliver")
CAT_PAGE = b"""<html><head><title>Cat sleep</title></head><body><main><article>
<p>Domestic cats sleep for about 15 hours a day, and some sleep up to 20 hours.</p>
</article></main></body></html>"""


def sample(name: str, **labels: str) -> float:
    """The metric's value in this process now (0 before its first count)."""
    return REGISTRY.get_sample_value(name, labels) or 0.0


def samples(names: list[tuple[str, dict[str, str]]]) -> list[float]:
    return [sample(name, **labels) for name, labels in names]


def moved(before: list[float], names: list[tuple[str, dict[str, str]]]) -> list[float]:
    return [after - earlier for earlier, after in zip(before, samples(names), strict=True)]


async def _service(engine: Any, chroma: Any, embedder: Any, corpus: Path,
                   synthesizer: Any = None) -> JobService:
    knowledge_base = KnowledgeBase(KnowledgeCatalogue(engine), chroma, embedder,
                                   KnowledgeBaseSettings())
    await knowledge_base.index([corpus], "t1")
    research = build_research(local_sources(knowledge_base, PipelineSettings()),
                              embedder, PipelineSettings(), synthesizer=synthesizer,
                              cache=SemanticAnswerCache(CachedAnswerStore(engine), chroma,
                                                        embedder, CacheSettings()))
    retry = RetryPolicy(first_wait_s=0.01, max_wait_s=0.05, give_up_after_s=0.2)
    return build_jobs(research, engine, retry, progress_interval_s=0.0)


async def test_questions_count_stages_cache_lookups_and_jobs(
    sqlite_engine: Any, chroma: Any, embedder: Any, corpus: Path,
) -> None:
    service = await _service(sqlite_engine, chroma, embedder, corpus)
    counted = [("pipeline_stage_duration_seconds_count", {"stage": "intake"}),
               ("pipeline_stage_duration_seconds_count", {"stage": "search"}),
               ("pipeline_stage_duration_seconds_count", {"stage": "deliver"}),
               ("cache_lookups_total", {"result": "miss"}),
               ("cache_lookups_total", {"result": "hit"}),
               ("jobs_total", {"status": "completed", "platform": "cli"})]
    before = samples(counted)
    first = await service.submit(ResearchRequest(question=QUESTION, tenant="t1"))
    assert (await service.wait(first)).status == JobStatus.COMPLETED
    # Researched: every stage timed once, the cache missed.
    assert moved(before, counted) == [1, 1, 1, 1, 0, 1]
    assert sample("pipeline_stage_duration_seconds_sum", stage="search") > 0

    again = await service.submit(ResearchRequest(question=QUESTION, tenant="t1"))
    assert (await service.answer(again)).cached
    # Answered from the cache: no search this time.
    assert moved(before, counted) == [2, 1, 2, 1, 1, 2]
    await service.close()


class UnreachablePlatform:
    """A chat platform that never answers."""

    platform = "slack"

    def target(self) -> dict[str, Any]:
        return {"channel": "c1"}

    async def progress(self, event: ProgressEvent) -> None:
        return None

    async def answer(self, result: ResearchResult, steps: Steps) -> None:
        raise ConnectionResetError("reset by peer")

    async def failure(self, message: str, steps: Steps) -> None:
        raise ConnectionResetError("reset by peer")


async def test_a_failed_job_and_its_failed_delivery_are_counted(
    sqlite_engine: Any, chroma: Any, embedder: Any, corpus: Path,
) -> None:
    service = await _service(sqlite_engine, chroma, embedder, corpus,
                             synthesizer=BrokenSynthesizer())
    counted = [("jobs_total", {"status": "failed", "platform": "slack"}),
               ("delivery_failures_total", {"platform": "slack"})]
    before = samples(counted)
    job_id = await service.submit(ResearchRequest(question=QUESTION, tenant="t1",
                                                  platform="slack"), UnreachablePlatform())
    assert (await service.wait(job_id)).status == JobStatus.FAILED
    assert moved(before, counted) == [1, 1]
    await service.close()


@pytest.fixture
async def web() -> AsyncIterator[FakeWeb]:
    server = FakeWeb()
    await server.start()
    server.pages["/cats"] = (CAT_PAGE, "text/html; charset=utf-8")
    server.pages["/private/cats"] = (CAT_PAGE, "text/html; charset=utf-8")
    server.articles = [
        Article(title="Cat sleep, explained", text="Cats sleep a lot.", url=f"{server.base}/cats"),
        Article(title="Cat sleep, in private", text="Cats sleep a lot, privately.",
                url=f"{server.base}/private/cats"),
    ]
    yield server
    await server.stop()


async def test_web_sources_count_latency_errors_and_page_fetches(
    web: FakeWeb, sqlite_engine: Any, embedder: Any, knowledge_base: Any,
) -> None:
    web.fail("/w/api.php", Failure(status=503))
    counted = [("search_provider_latency_seconds_count", {"provider": "searxng"}),
               ("search_provider_latency_seconds_count", {"provider": "wikipedia"}),
               ("search_provider_errors_total", {"provider": "wikipedia", "kind": "http_5xx"}),
               ("search_provider_errors_total", {"provider": "searxng", "kind": "http_5xx"}),
               ("source_fetch_total", {"outcome": "ok"}),
               ("source_fetch_total", {"outcome": "robots"})]
    before = samples(counted)
    async with aiohttp.ClientSession() as api, \
            guarded_session("t", guard=AddressGuard.trusting(web.base)) as pages:
        def policy(name: str) -> SourcePolicy:
            return SourcePolicy(name, timeout_s=5, attempts=1, rate_per_s=100)

        sources: dict[str, Any] = {
            "local": LocalKnowledgeBaseSource(knowledge_base, 3),
            "wikipedia": WikipediaSource(api, policy("wikipedia"), web.base + "/w/api.php"),
            "searxng": SearxngSource(api, policy("searxng"), web.base + "/searx")}
        reader = PageReader(PageFetcher(pages, timeout_s=5,
                                        guard=AddressGuard.trusting(web.base)), embedder)
        research = build_research(sources, embedder,
                                  PipelineSettings(min_relevance=0.2), pages=reader)
        service = build_jobs(research, sqlite_engine, progress_interval_s=0.0)
        job_id = await service.submit(ResearchRequest(question=QUESTION, tenant="t1",
                                                      depth=Depth.QUICK))
        assert (await service.wait(job_id)).status == JobStatus.COMPLETED
        await service.close()
    searx, wiki, wiki_5xx, searx_5xx, fetched, refused = moved(before, counted)
    assert searx >= 1 and wiki >= 1  # a failed request is timed too
    assert wiki_5xx == 1 and searx_5xx == 0
    assert fetched >= 1 and refused >= 1  # /private/ is disallowed by robots.txt


async def test_model_calls_count_tokens_by_model_and_role(lab: Lab) -> None:
    counted = [("llm_tokens_used_total", {"model": "openai/fast", "role": "fast"}),
               ("llm_tokens_used_total", {"model": "openai/strong", "role": "strong"})]
    before = samples(counted)
    _, job = await lab.ask()
    fast, strong = moved(before, counted)
    assert fast > 0 and strong > 0
    assert fast + strong == job.metrics["tokens"]  # what the job booked, by model and role
    # litellm has no price for the fake models: their cost is counted, at zero.
    assert REGISTRY.get_sample_value("llm_cost_usd_total", {"model": "openai/fast"}) is not None


async def test_an_improvement_is_a_run_of_its_own_depth(lab: Lab) -> None:
    """A model's quick run takes a round; revising its answer when the feedback needs no new
    search takes none, counted under depth improve, apart from the quick tier's runs."""
    counted = [("research_loop_duration_seconds_count", {"depth": "quick"}),
               ("iterations_per_request_sum", {"depth": "quick"}),
               ("research_loop_duration_seconds_count", {"depth": "improve"}),
               ("iterations_per_request_bucket", {"depth": "improve", "le": "0.0"}),
               ("iterations_per_request_sum", {"depth": "improve"})]
    before = samples(counted)
    await lab.ask()
    quick_runs, quick_rounds, *_ = moved(before, counted)
    assert quick_runs == 1 and quick_rounds >= 1
    improved = await lab.client().improve("Say it more briefly", "t1")
    assert improved.answer.summary
    assert moved(before, counted)[2:] == [1, 1, 0]
    assert moved(before, counted)[:2] == [quick_runs, quick_rounds]


Scrape = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def _parsed(body: bytes) -> Scrape:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(body.decode())
            for s in family.samples}


async def test_the_exposition_reads_the_queue_depth(redis: Any) -> None:
    queue = JobQueue(REDIS_URL, QueueSettings())
    await queue.connect()
    try:
        await queue.enqueue("job-waiting", deep=False, timeout_s=60)
        body, content_type = await render_metrics(queue)
    finally:
        await queue.close()
    assert content_type.startswith("text/plain")
    metrics = _parsed(body)
    assert metrics[("queue_depth", (("queue", QUICK),))] == 1
    assert "# TYPE jobs_total counter" in body.decode()


async def test_the_metrics_server_serves_and_a_taken_port_names_the_setting() -> None:
    port = free_port()
    async with metrics_server(port, None, host="127.0.0.1"), aiohttp.ClientSession() as http:
        async with http.get(f"http://127.0.0.1:{port}/metrics") as response:
            assert response.status == 200
            assert response.headers["Content-Type"].startswith("text/plain")
            assert "# TYPE pipeline_stage_duration_seconds histogram" in await response.text()
        with pytest.raises(ConfigurationError, match=r"queue\.metrics_port.*port"):
            async with metrics_server(port, None, host="127.0.0.1"):
                pass




@pytest.fixture
def store(served_store: Path) -> Path:
    return served_store


async def test_the_api_servers_metrics_move_after_a_few_questions(store: Path) -> None:
    from tests.support.api_harness import api_settings, running_api

    async with running_api(api_settings(store)) as api, api.client() as client:
        before = await _scrape(client)
        for _ in range(2):
            await _ask(client, QUESTION)
        after = await _scrape(client)
    moved_by = _moved_between(before, after)
    assert moved_by("jobs_total", status="completed", platform="api") == 2
    assert moved_by("pipeline_stage_duration_seconds_count", stage="intake") == 2
    assert moved_by("cache_lookups_total", result="miss") == 1
    assert moved_by("cache_lookups_total", result="hit") == 1


async def _scrape(client: httpx.AsyncClient) -> Scrape:
    response = await client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    return _parsed(response.content)


async def _ask(client: httpx.AsyncClient, question: str, **fields: str) -> str:
    """The job's id, once it has ended."""
    accepted = await client.post("/v1/research", json={"question": question, **fields})
    assert accepted.status_code == 202
    async with client.stream("GET", accepted.json()["links"]["events"]) as events:
        async for _line in events.aiter_lines():
            pass  # the stream closes once the job has ended
    return str(accepted.json()["job_id"])


def _moved_between(before: Scrape, after: Scrape) -> Callable[..., float]:
    def moved_by(name: str, **labels: str) -> float:
        key = (name, tuple(sorted(labels.items())))
        return after.get(key, 0.0) - before.get(key, 0.0)

    return moved_by


TEA = "How much caffeine is in black tea?"




