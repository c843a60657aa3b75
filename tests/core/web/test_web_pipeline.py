"""The pipeline with the web and academic sources on fake APIs: routing by question, pages
read for the top hits, canonical dedupe, site diversity, block lists, local-only tenants, and
`researchbot ask` configured through settings."""

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bot.wiring import build_jobs, build_research
from core.config import PipelineSettings
from core.models import ResearchRequest
from core.research.planning import route_sources
from core.sources.arxiv import ArxivSource
from core.sources.local import LocalKnowledgeBaseSource
from core.sources.pages import PageReader
from core.sources.policy import SourcePolicy
from core.sources.pubmed import PubMedSource
from core.sources.searxng import SearxngSource
from core.sources.wikipedia import WikipediaSource
from core.store.jobs import JobStore
from core.web.fetch import PageFetcher
from core.web.net import AddressGuard, guarded_session
from tests.support.fake_web import Article, FakeWeb
from tests.support.job_client import JobClient

pytestmark = pytest.mark.integration

CAT_PAGE = """<html><head><title>Cat sleep, explained</title></head><body>
<nav>Home | Shop | Login</nav><main><article><h1>Cat sleep, explained</h1>
<p>Domestic cats sleep for about 15 hours a day, and some sleep up to 20 hours.</p>
<p>Their long naps save energy for hunting at dawn and dusk.</p></article></main>
<footer>All rights reserved.</footer></body></html>"""


@pytest.fixture
async def web() -> AsyncIterator[FakeWeb]:
    server = FakeWeb()
    await server.start()
    base = server.base
    server.pages["/cats"] = (CAT_PAGE.encode(), "text/html; charset=utf-8")
    server.articles = [
        Article(title="Cat sleep, explained", text="Cats sleep a lot.",
                url=f"{base}/cats?utm_campaign=x"),
        Article(title="Metformin and diabetes",
                text="Metformin lowers blood glucose in patients with type 2 diabetes.",
                pmid="38000001", doi="10.1000/met.1"),
        Article(title="Attention transformers",
                text="Transformers rely on attention mechanisms for language models.",
                doi="10.48550/arXiv.1706.03762"),
        *[Article(title=f"Cat facts part {n}", text=f"Cats sleep many hours, fact {n}.",
                  url=f"http://cats.example/facts/{n}") for n in range(5)],
    ]
    yield server
    await server.stop()


@pytest.fixture
async def sessions(web: FakeWeb
                   ) -> AsyncIterator[tuple[aiohttp.ClientSession, aiohttp.ClientSession]]:
    async with aiohttp.ClientSession() as api, \
            guarded_session("t", guard=AddressGuard.trusting(web.base)) as pages:
        yield api, pages


def _client(web: FakeWeb, sessions: Any, engine: Any, embedder: Any, knowledge_base: Any,
            **settings: Any) -> JobClient:
    api, pages = sessions

    def policy(name: str) -> SourcePolicy:
        return SourcePolicy(name, timeout_s=5, attempts=1, rate_per_s=100)

    sources: dict[str, Any] = {
        "local": LocalKnowledgeBaseSource(knowledge_base, 3),
        "wikipedia": WikipediaSource(api, policy("wikipedia"), web.base + "/w/api.php"),
        "arxiv": ArxivSource(api, policy("arxiv"), web.base + "/arxiv/query"),
        "pubmed": PubMedSource(api, policy("pubmed"), web.base + "/eutils"),
        "searxng": SearxngSource(api, policy("searxng"), web.base + "/searx"),
    }
    reader = PageReader(PageFetcher(pages, timeout_s=5, guard=AddressGuard.trusting(web.base)),
                        embedder)
    research = build_research(sources, embedder,
                              PipelineSettings(min_relevance=0.2, **settings), pages=reader)
    return JobClient(build_jobs(research, engine, progress_interval_s=0.0))


@pytest.mark.parametrize("question, expected, skipped", [
    ("Does metformin lower glucose in diabetes patients?", "/eutils/esearch.fcgi",
     "/arxiv/query"),
    ("Which paper introduced attention transformers for language models?", "/arxiv/query",
     "/eutils/esearch.fcgi"),
    ("How many hours a day do cats sleep?", "/searx/search", "/arxiv/query"),
])
async def test_queries_go_where_the_question_belongs(
    web: FakeWeb, sessions: Any, sqlite_engine: Any, embedder: Any, knowledge_base: Any,
    question: str, expected: str, skipped: str,
) -> None:
    client = _client(web, sessions, sqlite_engine, embedder, knowledge_base)
    await client.run(ResearchRequest(question=question, tenant="t1"))
    assert expected in web.hit_paths() and skipped not in web.hit_paths()
    everything = {name: kind.capabilities for name, kind in (
        ("local", LocalKnowledgeBaseSource), ("pubmed", PubMedSource), ("arxiv", ArxivSource),
        ("wikipedia", WikipediaSource))}
    assert route_sources(question, everything)[0] == "local"


async def test_a_web_answer_reads_the_page_and_cites_it_once(
    web: FakeWeb, sessions: Any, sqlite_engine: Any, embedder: Any, knowledge_base: Any,
) -> None:
    client = _client(web, sessions, sqlite_engine, embedder, knowledge_base)
    result = await client.run(ResearchRequest(question="How many hours a day do cats sleep?",
                                              tenant="t1"))
    text = result.answer.summary + " " + result.answer.detail
    assert "15 hours a day" in text  # from the page, not the search snippet
    urls = [s.url for s in result.sources]
    assert f"{web.base}/cats" in urls and len(urls) == len(set(urls))
    assert "/cats" in web.hit_paths() and "/robots.txt" in web.hit_paths()
    # At most three passages from one site, however many it offered.
    assert sum(1 for s in result.sources if s.metadata.domain == "cats.example") <= 3
    # the trace counts the page read, and says which search found it
    trace = (await JobStore(sqlite_engine).get(result.job_id)).trace
    assert trace.totals.pages_read >= 1
    assert trace.totals.queries["searxng"] >= 1 and trace.totals.queries["local"] >= 1
    page = next(s for s in result.sources if s.url == f"{web.base}/cats")
    assert trace.found_by[page.id].source == "searxng"
    assert trace.found_by[page.id].query in trace.iterations[0].queries


async def test_blocked_domains_never_become_sources(
    web: FakeWeb, sessions: Any, sqlite_engine: Any, embedder: Any, knowledge_base: Any,
) -> None:
    client = _client(web, sessions, sqlite_engine, embedder, knowledge_base,
                         block_domains=["cats.example"])
    result = await client.run(ResearchRequest(question="How many hours a day do cats sleep?",
                                              tenant="t1"))
    assert result.sources and not any(s.metadata.domain == "cats.example"
                                      for s in result.sources)


@pytest.mark.parametrize("settings", [{"local_only": True},
                                      {"local_only_tenants": ["private-team"]}])
async def test_a_local_only_tenant_makes_no_web_request(
    web: FakeWeb, sessions: Any, sqlite_engine: Any, embedder: Any, knowledge_base: Any,
    corpus: Path, settings: dict[str, Any],
) -> None:
    await knowledge_base.index([corpus], "private-team")
    client = _client(web, sessions, sqlite_engine, embedder, knowledge_base, **settings)
    result = await client.run(ResearchRequest(question="How many hours a day do cats sleep?",
                                              tenant="private-team"))
    assert web.hits == []
    assert "12 and 16 hours" in result.answer.summary
    assert "Only the local knowledge base was searched." in result.answer.limitations


async def test_a_source_outage_is_reported_as_one(
    web: FakeWeb, sessions: Any, sqlite_engine: Any, embedder: Any, knowledge_base: Any,
) -> None:
    from tests.support.fake_web import Failure

    web.fail("/searx/search", Failure(503))
    client = _client(web, sessions, sqlite_engine, embedder, knowledge_base)
    result = await client.run(ResearchRequest(question="How many hours a day do cats sleep?",
                                              tenant="t1"))
    assert ("The web (SearXNG) returned an error, so its results are missing from this "
            "answer." in result.answer.limitations)
    assert not any("503" in item for item in result.answer.limitations)
    assert result.sources  # Wikipedia still answered


