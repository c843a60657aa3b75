"""Each web and academic source against its fake API on 127.0.0.1, through the real clients
(aiohttp, tavily-python; Exa's HTTP API through aiohttp): results, empty results, 429 with
Retry-After, 500, timeouts, malformed bodies, the circuit breaker and the response cache."""

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import diskcache
import pytest

from core.errors import CredentialRefusedError, SourceError, SourceTimeoutError
from core.models import QueryIntent, TimeConstraint
from core.research.planning import PlannedQuery, ResearchPlan
from core.research.search import run_search
from core.sources.arxiv import ArxivSource
from core.sources.breaker import CircuitBreaker
from core.sources.exa import ExaSource
from core.sources.policy import SourcePolicy
from core.sources.protocol import SearchQuery
from core.sources.pubmed import PubMedSource
from core.sources.search_hits import canonical_url
from core.sources.searxng import SearxngSource
from core.sources.tavily import TavilySource
from core.sources.wikipedia import WikipediaSource
from tests.support.clock import FakeClock
from tests.support.fake_web import Article, Failure, FakeWeb

pytestmark = pytest.mark.integration

ARTICLES = [
    Article(title="Metformin in type 2 diabetes",
            text="Metformin lowers blood glucose in patients with type 2 diabetes.",
            pmid="38000001", doi="10.1000/met.1", published="2023-06-01"),
    Article(title="Attention is all you need",
            text="The transformer architecture relies entirely on attention mechanisms.",
            doi="10.48550/arXiv.1706.03762", published="2017-06-12"),
    Article(title="Domestic cat",
            text="Domestic cats sleep between 12 and 16 hours a day.",
            published="2024-01-20"),
]


@pytest.fixture
async def fake() -> AsyncIterator[FakeWeb]:
    server = FakeWeb()
    await server.start()
    for n, article in enumerate(ARTICLES):
        article.url = f"{server.base}/pages/{n}?utm_source=feed#top"
    server.articles = list(ARTICLES)
    yield server
    await server.stop()


def _policy(name: str, **options: Any) -> SourcePolicy:
    values: dict[str, Any] = {"timeout_s": 2.0, "attempts": 3, "backoff_s": 0.05,
                              "rate_per_s": 100.0}
    return SourcePolicy(name, **(values | options))


def _query(text: str, **intent: Any) -> SearchQuery:
    return SearchQuery(text=text, tenant="t", limit=5, intent=QueryIntent(**intent))


def _sources(fake: FakeWeb, session: aiohttp.ClientSession, **options: Any) -> dict[str, Any]:
    from tavily import AsyncTavilyClient

    return {
        "wikipedia": WikipediaSource(session, _policy("wikipedia", **options),
                                     fake.base + "/w/api.php"),
        "arxiv": ArxivSource(session, _policy("arxiv", **options), fake.base + "/arxiv/query"),
        "pubmed": PubMedSource(session, _policy("pubmed", **options), fake.base + "/eutils"),
        "searxng": SearxngSource(session, _policy("searxng", **options), fake.base + "/searx"),
        "tavily": TavilySource(AsyncTavilyClient(api_key="tvly-test", api_base_url=fake.base
                                                 + "/tavily"), _policy("tavily", **options)),
        "exa": ExaSource(session, _policy("exa", **options), "exa-test", fake.base + "/exa"),
    }


FIRST_PATH = {"wikipedia": "/w/api.php", "arxiv": "/arxiv/query",
              "pubmed": "/eutils/esearch.fcgi", "searxng": "/searx/search",
              "tavily": "/tavily/search", "exa": "/exa/search"}
QUESTIONS = {"wikipedia": "domestic cat sleep", "arxiv": "attention transformer",
             "pubmed": "metformin diabetes", "searxng": "domestic cat sleep",
             "tavily": "domestic cat sleep", "exa": "domestic cat sleep"}


@pytest.mark.parametrize("name", list(FIRST_PATH))
async def test_each_source_returns_cited_results(fake: FakeWeb, session: Any, name: str) -> None:
    source = _sources(fake, session)[name]
    found = await source.search(_query(QUESTIONS[name]))
    assert found, name
    hit = found[0]
    assert hit.url and "utm_source" not in hit.url and "#" not in hit.url
    assert hit.content and hit.title and hit.metadata.provider == name
    assert hit.metadata.domain == {"arxiv": "arxiv.org", "pubmed": "pubmed.ncbi.nlm.nih.gov"}.get(
        name, "127.0.0.1")
    assert hit.metadata.published_at is not None
    assert hit.id.startswith("web-")


async def test_pubmed_keeps_pmid_doi_and_the_abstract(fake: FakeWeb, session: Any) -> None:
    (hit,) = await _sources(fake, session)["pubmed"].search(_query("metformin diabetes"))
    assert hit.url == "https://pubmed.ncbi.nlm.nih.gov/38000001"
    assert hit.location is not None and "PMID 38000001" in hit.location
    assert "DOI 10.1000/met.1" in hit.location
    assert hit.content.startswith("RESULTS: Metformin lowers blood glucose")
    assert hit.metadata.author == "Ada Lovelace"
    assert fake.hit_paths() == ["/eutils/esearch.fcgi", "/eutils/esummary.fcgi",
                                "/eutils/efetch.fcgi"]


async def test_arxiv_parses_the_atom_feed(fake: FakeWeb, session: Any) -> None:
    (hit,) = await _sources(fake, session)["arxiv"].search(_query("attention transformer"))
    assert hit.url == "https://arxiv.org/abs/2403.00v1"
    assert "arXiv 2403.00v1" in (hit.location or "") and hit.metadata.published_at is not None
    assert fake.hits[0][1]["search_query"] == "all:attention AND all:transformer"


async def test_wikipedia_follows_the_questions_language(fake: FakeWeb, session: Any) -> None:
    source = WikipediaSource(session, _policy("wikipedia"), fake.base + "/w/api.php?l={language}")
    await source.search(_query("chat domestique", language="fr"))
    assert fake.hits[0][1]["l"] == "fr"


async def test_tavily_passes_its_options(fake: FakeWeb, session: Any) -> None:
    from tavily import AsyncTavilyClient

    source = TavilySource(AsyncTavilyClient(api_key="tvly-test",
                                            api_base_url=fake.base + "/tavily"),
                          _policy("tavily"), search_depth="advanced",
                          exclude_domains=["example.com"])
    recent = TimeConstraint(start_year=2025, end_year=2026, recent=True)
    await source.search(_query("cat news", time_constraint=recent,
                               question_type="current_event"))
    sent = fake.hits[0][1]
    assert sent["search_depth"] == "advanced" and sent["time_range"] == "month"
    assert sent["topic"] == "news" and "example.com" in sent["exclude_domains"]


@pytest.mark.parametrize("name", list(FIRST_PATH))
async def test_nothing_found_is_an_empty_list(fake: FakeWeb, session: Any, name: str) -> None:
    assert await _sources(fake, session)[name].search(_query("zzzz qqqq")) == []


@pytest.mark.parametrize("name", list(FIRST_PATH))
async def test_a_429_is_retried_after_its_retry_after(fake: FakeWeb, session: Any,
                                                      name: str) -> None:
    fake.fail(FIRST_PATH[name], Failure(429, retry_after=0.5))
    started = time.perf_counter()
    found = await _sources(fake, session)[name].search(_query(QUESTIONS[name]))
    assert found and time.perf_counter() - started >= 0.45
    # The refused call is made again (Wikipedia's search and extract calls share a path).
    assert fake.hit_paths().count(FIRST_PATH[name]) == (3 if name == "wikipedia" else 2)


@pytest.mark.parametrize("name", list(FIRST_PATH))
async def test_a_persistent_500_is_an_outage(fake: FakeWeb, session: Any, name: str) -> None:
    fake.fail(FIRST_PATH[name], *[Failure(500)] * 3)
    with pytest.raises(SourceError) as failure:
        await _sources(fake, session)[name].search(_query(QUESTIONS[name]))
    assert failure.value.source == name and failure.value.status == 500


@pytest.mark.parametrize("name", list(FIRST_PATH))
async def test_a_slow_source_times_out(fake: FakeWeb, session: Any, name: str) -> None:
    fake.fail(FIRST_PATH[name], Failure(delay_s=3))
    with pytest.raises(SourceTimeoutError):
        await _sources(fake, session, timeout_s=0.3, attempts=1)[name].search(
            _query(QUESTIONS[name]))


@pytest.mark.parametrize("name, body", [
    ("wikipedia", "{not json"), ("arxiv", "<feed><entry>"), ("pubmed", "[]"),
    ("searxng", '{"no": "results"}'), ("tavily", '{"detail": 1}'),
    ("exa", '{"requestId": "e1"}'), ("exa", "<html>busy</html>"),
])
async def test_a_malformed_body_is_an_outage_not_nothing(fake: FakeWeb, session: Any,
                                                         name: str, body: str) -> None:
    fake.fail(FIRST_PATH[name], Failure(body=body))
    with pytest.raises(SourceError):
        await _sources(fake, session)[name].search(_query(QUESTIONS[name]))


async def test_a_hostile_feed_is_refused(fake: FakeWeb, session: Any) -> None:
    bomb = ('<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
            '<!ENTITY lol2 "&lol;&lol;&lol;&lol;">]><feed>&lol2;</feed>')
    fake.fail("/arxiv/query", Failure(body=bomb))
    with pytest.raises(SourceError, match="refused"):
        await _sources(fake, session)["arxiv"].search(_query("attention"))


async def test_the_circuit_opens_after_repeated_failures_then_tries_again(
    fake: FakeWeb, session: Any,
) -> None:
    clock = FakeClock()
    breaker = CircuitBreaker(threshold=2, reset_s=60, clock=clock)
    source = SearxngSource(session, _policy("searxng", attempts=1, breaker=breaker),
                           fake.base + "/searx")
    fake.fail("/searx/search", Failure(500), Failure(500))
    for _ in range(2):
        with pytest.raises(SourceError, match="HTTP 500"):
            await source.search(_query("domestic cat"))
    with pytest.raises(SourceError, match="circuit open") as paused:
        await source.search(_query("domestic cat"))
    assert paused.value.status == 500  # reported as the failure that opened it
    assert fake.hit_paths().count("/searx/search") == 2  # the open circuit sent nothing
    clock.advance(59)
    assert breaker.state == "open"
    clock.advance(1)
    assert breaker.state == "half-open"
    assert await source.search(_query("domestic cat"))
    assert breaker.state == "closed"


async def test_answers_are_cached_per_source_and_query(fake: FakeWeb, session: Any,
                                                       tmp_path: Path) -> None:
    with diskcache.Cache(str(tmp_path / "cache")) as cache:
        source = SearxngSource(session, _policy("searxng", cache=cache, cache_ttl_s=60),
                               fake.base + "/searx")
        first = await source.search(_query("domestic cat"))
        again = await source.search(_query("domestic cat"))
        other = await source.search(_query("metformin"))
    assert first == again and other != first
    assert fake.hit_paths().count("/searx/search") == 2


def test_canonical_urls_drop_tracking_fragments_and_default_ports() -> None:
    assert canonical_url("HTTPS://Example.org:443/a/b/?utm_source=x&b=2&a=1&fbclid=z#frag") == (
        "https://example.org/a/b?a=1&b=2")
    assert canonical_url("http://example.org:8080/") == "http://example.org:8080"


async def test_pubmed_stays_within_ncbis_three_requests_a_second(fake: FakeWeb,
                                                                 session: Any) -> None:
    source = PubMedSource(session, _policy("pubmed", rate_per_s=3.0), fake.base + "/eutils")
    started = time.perf_counter()
    await asyncio.gather(*(source.search(_query(f"metformin diabetes {n}")) for n in range(2)))
    elapsed = time.perf_counter() - started
    # 6 requests at 3 a second, after a burst of the concurrency's worth (4): >= 2/3 s.
    assert len(fake.hits) == 6 and elapsed >= 0.6


async def test_the_same_page_from_two_providers_is_one_source(fake: FakeWeb, session: Any,
                                                              embedder: Any) -> None:
    from core.retrieval.rank import rank_sources

    sources = _sources(fake, session)
    query = _query("domestic cat sleep")
    from_tavily = await sources["tavily"].search(query)
    from_searxng = await sources["searxng"].search(query)
    assert from_tavily[0].id == from_searxng[0].id
    ranked = await rank_sources("How long do cats sleep?", [from_tavily, from_searxng],
                                embedder, 10, 3, 0.0)
    assert [s.url for s in ranked].count(from_tavily[0].url) == 1


async def test_calls_cut_off_from_outside_count_and_never_hold_the_circuit() -> None:
    """The search stage's own timeout cancels a slow call: five in a row open the circuit,
    and a half-open trial that is cut off lets a later trial through (it used to stay paused
    for the life of the process)."""
    clock = FakeClock()
    breaker = CircuitBreaker(threshold=5, reset_s=60, clock=clock)
    policy = _policy("slow", attempts=1, breaker=breaker)
    answer: asyncio.Future[list[str]] = asyncio.get_running_loop().create_future()

    async def never() -> list[str]:
        await asyncio.Event().wait()
        return []

    for n in range(5):
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(policy.call(f"q{n}", never), 0.01)
    assert breaker.state == "open"
    clock.advance(60)
    with pytest.raises(TimeoutError):  # the half-open trial, cut off too
        await asyncio.wait_for(policy.call("trial", never), 0.01)
    assert breaker.state == "open"
    clock.advance(60)
    answer.set_result(["a passage"])
    assert await policy.call("again", lambda: answer) == ["a passage"]
    assert breaker.state == "closed"


@pytest.mark.parametrize("name", ["wikipedia", "searxng"])
async def test_a_retry_after_a_stalled_attempt_fits_inside_the_search_stages_time(
    fake: FakeWeb, session: Any, name: str,
) -> None:
    # The policy's own limit is the stage's (one setting, sources.timeout_s, sets both): the
    # policy fits its attempts inside it, so a stalled first attempt leaves time for a retry.
    fake.fail(FIRST_PATH[name], Failure(delay_s=5))  # the first request stalls
    plan = ResearchPlan(queries=[PlannedQuery(text=QUESTIONS[name], purpose="", sources=[name])])
    outcome = await run_search(plan, _sources(fake, session, timeout_s=2.0, backoff_s=0.05),
                               "t", QueryIntent(), 5, timeout_s=2.0)
    assert outcome.failures == [] and outcome.results[0]
    assert fake.hit_paths().count(FIRST_PATH[name]) >= 2  # the stalled call, then its retry


async def test_a_refused_key_stops_the_search_and_names_its_setting(
    fake: FakeWeb, session: Any,
) -> None:
    # A wrong Tavily key is refused for every question: it stops the job with the setting
    # to fix, instead of answering without the web as if Tavily were down.
    fake.fail("/tavily/search", Failure(401))
    sources = _sources(fake, session)
    plan = ResearchPlan(queries=[PlannedQuery(text="domestic cat sleep", purpose="",
                                              sources=["tavily", "wikipedia"])])
    with pytest.raises(CredentialRefusedError, match=r"sources\.tavily_api_key") as refused:
        await run_search(plan, sources, "t", QueryIntent(), 5, timeout_s=5.0)
    assert "tvly-test" not in str(refused.value)
    fake.fail("/exa/search", Failure(401))
    plan = ResearchPlan(queries=[PlannedQuery(text="domestic cat sleep", purpose="",
                                              sources=["exa", "wikipedia"])])
    with pytest.raises(CredentialRefusedError, match=r"sources\.exa_api_key") as refused:
        await run_search(plan, sources, "t", QueryIntent(), 5, timeout_s=5.0)
    assert "exa-test" not in str(refused.value)
    # A keyless source refusing a request is an outage, reported as a limitation.
    fake.fail("/w/api.php", Failure(403))
    plan = ResearchPlan(queries=[PlannedQuery(text="domestic cat sleep", purpose="",
                                              sources=["wikipedia"])])
    outcome = await run_search(plan, sources, "t", QueryIntent(), 5, timeout_s=5.0)
    assert [f.source for f in outcome.failures] == ["wikipedia"]
