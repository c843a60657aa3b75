"""Per-request search controls (recency, include and exclude domains, content type) against
the fake search APIs on 127.0.0.1: each source's outgoing request carries what it can apply,
results from refused domains are dropped whatever the provider did, the answer names a source
that could not apply a control, content type and Exa route the queries, and controlled
answers stay out of the shared answer cache."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import aiohttp
import pytest
from pydantic import ValidationError

from bot.wiring import build_jobs, build_research
from core.config import PipelineSettings
from core.models import (
    ContentType,
    QueryIntent,
    QuestionType,
    Recency,
    ResearchRequest,
    SearchControls,
    TimeConstraint,
)
from core.research.planning import PlannedQuery, ResearchPlan, route_sources
from core.research.search import run_search
from core.sources.arxiv import ArxivSource
from core.sources.exa import ExaSource
from core.sources.local import LocalKnowledgeBaseSource
from core.sources.policy import SourcePolicy
from core.sources.protocol import SearchQuery
from core.sources.pubmed import PubMedSource
from core.sources.searxng import SearxngSource
from core.sources.tavily import TavilySource
from core.sources.wikipedia import WikipediaSource
from tests.support.fake_web import Article, FakeWeb
from tests.support.job_client import JobClient

pytestmark = pytest.mark.integration

WEEK = SearchControls(recency=Recency.WEEK)


@pytest.fixture
async def web() -> AsyncIterator[FakeWeb]:
    server = FakeWeb()
    await server.start()
    server.articles = [
        Article("Cat sleep", "Cats sleep sixteen hours a day.", "https://cats.example/sleep",
                pmid="38000001"),
        Article("Cat sleep blog", "Cats sleep all day, says a blog.",
                "https://blog.spam.example/cats", pmid="38000002"),
        Article("Cat sleep news", "News: cats still sleep sixteen hours.",
                "https://news.example.org/cats"),
    ]
    yield server
    await server.stop()


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as opened:
        yield opened


def _policy(name: str) -> SourcePolicy:
    return SourcePolicy(name, timeout_s=5, attempts=1, rate_per_s=100)


def _sources(web: FakeWeb, session: aiohttp.ClientSession) -> dict[str, Any]:
    from tavily import AsyncTavilyClient

    return {
        "wikipedia": WikipediaSource(session, _policy("wikipedia"), web.base + "/w/api.php"),
        "arxiv": ArxivSource(session, _policy("arxiv"), web.base + "/arxiv/query"),
        "pubmed": PubMedSource(session, _policy("pubmed"), web.base + "/eutils"),
        "searxng": SearxngSource(session, _policy("searxng"), web.base + "/searx"),
        "tavily": TavilySource(AsyncTavilyClient(api_key="tvly-test",
                                                 api_base_url=web.base + "/tavily"),
                               _policy("tavily"), exclude_domains=["configured.example"]),
        "exa": ExaSource(session, _policy("exa"), "exa-test", web.base + "/exa"),
    }


def _query(controls: SearchControls, **intent: Any) -> SearchQuery:
    return SearchQuery(text="cat sleep", tenant="t", limit=5, intent=QueryIntent(**intent),
                       controls=controls)


def _sent(web: FakeWeb, path: str) -> dict[str, str]:
    return next(params for hit, params in web.hits if hit == path)


def _days_ago(text: str, layout: str) -> int:
    return (datetime.now(UTC) - datetime.strptime(text, layout).replace(tzinfo=UTC)).days


# ---- the controls as data ------------------------------------------------------------------

def test_domains_are_normalised_deduplicated_and_capped() -> None:
    controls = SearchControls(include_domains=["HTTPS://www.Nature.com/articles/1?x#y",
                                               "nature.com", "arxiv.org:443", "bücher.de"])
    assert controls.include_domains == ("nature.com", "arxiv.org", "xn--bcher-kva.de")
    assert SearchControls(exclude_domains="a.org, b.com").exclude_domains == ("a.org", "b.com")
    with pytest.raises(ValidationError, match="at most 20 domains"):
        SearchControls(exclude_domains=[f"site{n}.org" for n in range(21)])
    assert SearchControls().default and not WEEK.default


@pytest.mark.parametrize("hostile", ["javascript:alert(1)", "<script>x</script>.com", "a b.org",
                                     "localhost", "-bad.org", "x" * 300 + ".org", "..", "",
                                     "evil.org\r\nX-Injected: 1", "*.org"])
def test_what_is_not_a_domain_is_refused_by_name(hostile: str) -> None:
    with pytest.raises(ValidationError, match="is not a domain"):
        SearchControls(include_domains=[hostile])


def test_an_unknown_recency_or_content_type_is_refused() -> None:
    with pytest.raises(ValidationError, match="recency"):
        SearchControls(recency="fortnight")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="content_type"):
        SearchControls(content_type="blogs")  # type: ignore[arg-type]


def test_recency_any_overrides_a_recent_question_and_unset_follows_it() -> None:
    recent = {"time_constraint": TimeConstraint(recent=True)}
    assert _query(SearchControls(), **recent).recency is Recency.MONTH
    assert _query(SearchControls(recency=Recency.ANY), **recent).recency is None
    assert _query(SearchControls(recency=Recency.DAY), **recent).recency is Recency.DAY
    assert _query(SearchControls()).recency is None


# ---- each source's request carries what it can apply ----------------------------------------

async def test_tavily_sends_the_time_range_domains_and_news_topic(
        web: FakeWeb, session: Any) -> None:
    controls = SearchControls(recency=Recency.WEEK, include_domains=["cats.example"],
                              exclude_domains=["spam.example"], content_type=ContentType.NEWS)
    await _sources(web, session)["tavily"].search(_query(controls))
    sent = _sent(web, "/tavily/search")
    assert sent["time_range"] == "week" and sent["topic"] == "news"
    assert "cats.example" in sent["include_domains"]
    assert "spam.example" in sent["exclude_domains"]
    assert "configured.example" in sent["exclude_domains"]  # the setting's list still holds


async def test_tavily_sends_no_date_limit_for_any_on_a_recent_question(
        web: FakeWeb, session: Any) -> None:
    await _sources(web, session)["tavily"].search(_query(
        SearchControls(recency=Recency.ANY), time_constraint=TimeConstraint(recent=True),
        question_type=QuestionType.CURRENT_EVENT))
    sent = _sent(web, "/tavily/search")
    assert "time_range" not in sent and sent["topic"] == "general"


@pytest.mark.parametrize("content, category", [(ContentType.NEWS, "news"),
                                               (ContentType.ACADEMIC, "science")])
async def test_searxng_sends_its_time_range_and_category(
        web: FakeWeb, session: Any, content: ContentType, category: str) -> None:
    await _sources(web, session)["searxng"].search(_query(
        SearchControls(recency=Recency.YEAR, content_type=content)))
    sent = _sent(web, "/searx/search")
    assert sent["time_range"] == "year" and sent["categories"] == category


async def test_arxiv_searches_a_submission_date_range(web: FakeWeb, session: Any) -> None:
    await _sources(web, session)["arxiv"].search(_query(WEEK))
    expression = _sent(web, "/arxiv/query")["search_query"]
    assert expression.startswith("all:cat AND all:sleep AND submittedDate:[")
    start = expression.split("submittedDate:[", 1)[1].split(" TO ")[0]
    assert _days_ago(start, "%Y%m%d%H%M") in (7, 8)


async def test_pubmed_searches_a_publication_date_range(web: FakeWeb, session: Any) -> None:
    await _sources(web, session)["pubmed"].search(_query(SearchControls(recency=Recency.MONTH)))
    sent = _sent(web, "/eutils/esearch.fcgi")
    assert sent["datetype"] == "pdat"
    assert _days_ago(sent["mindate"], "%Y/%m/%d") in (31, 32)
    assert _days_ago(sent["maxdate"], "%Y/%m/%d") == 0


async def test_exa_sends_its_key_dates_domains_and_category(web: FakeWeb, session: Any) -> None:
    controls = SearchControls(recency=Recency.DAY, include_domains=["cats.example"],
                              exclude_domains=["spam.example"],
                              content_type=ContentType.ACADEMIC)
    found = await _sources(web, session)["exa"].search(_query(controls))
    sent = _sent(web, "/exa/search")  # the fake refuses any other x-api-key
    assert sent["category"] == "research paper"
    assert sent["includeDomains"] == '["cats.example"]'
    assert sent["excludeDomains"] == '["spam.example"]'
    assert _days_ago(sent["startPublishedDate"], "%Y-%m-%dT%H:%M:%S.000Z") in (1, 2)
    assert '"text"' in sent["contents"] and '"highlights"' in sent["contents"]
    assert found and found[0].metadata.provider == "exa" and found[0].metadata.published_at


def test_exa_without_text_cites_its_highlights() -> None:
    from core.sources.exa import _hit

    hit = _hit({"url": "https://cats.example/x", "title": "Cats",
                "highlights": ["Cats sleep sixteen hours."], "publishedDate": "2025-01-02"})
    assert hit is not None and hit.content == "Cats sleep sixteen hours."
    assert _hit({"url": "https://cats.example/y", "title": "Empty"}) is None


async def test_without_controls_the_requests_are_as_before(web: FakeWeb, session: Any) -> None:
    sources = _sources(web, session)
    for name in ("arxiv", "pubmed", "searxng", "exa"):
        await sources[name].search(_query(SearchControls()))
    assert "submittedDate" not in _sent(web, "/arxiv/query")["search_query"]
    assert "mindate" not in _sent(web, "/eutils/esearch.fcgi")
    assert {"time_range", "categories"}.isdisjoint(_sent(web, "/searx/search"))
    assert {"startPublishedDate", "category", "includeDomains"}.isdisjoint(
        _sent(web, "/exa/search"))


# ---- the search stage: domains enforced, what could not be applied said ----------------------

def _plan(*names: str) -> ResearchPlan:
    return ResearchPlan(queries=[PlannedQuery(text="cat sleep", purpose="", sources=list(names))])


@pytest.mark.parametrize("name", ["searxng", "tavily", "exa"])
async def test_results_from_excluded_domains_are_dropped_whatever_the_provider_did(
        web: FakeWeb, session: Any, name: str) -> None:
    # The fake providers ignore the filters they are sent, as a provider may.
    controls = SearchControls(exclude_domains=["spam.example"])
    outcome = await run_search(_plan(name), _sources(web, session), "t", QueryIntent(), 5,
                               5.0, controls)
    domains = {s.metadata.domain for hits in outcome.results for s in hits}
    assert domains == {"cats.example", "news.example.org"}
    assert outcome.results_per_source[name] == 2
    assert outcome.notes == ["Results from spam.example were left out, as asked."]


async def test_included_domains_keep_only_their_sites_and_subdomains(
        web: FakeWeb, session: Any) -> None:
    controls = SearchControls(include_domains=["example.org", "cats.example"])
    outcome = await run_search(_plan("searxng"), _sources(web, session), "t", QueryIntent(), 5,
                               5.0, controls)
    assert sorted(s.url or "" for hits in outcome.results for s in hits) == [
        "https://cats.example/sleep", "https://news.example.org/cats"]
    assert outcome.notes == ["Only results from example.org, cats.example were kept, as "
                             "asked; results from other sites were left out."]


async def test_a_source_that_cannot_filter_by_date_is_named(web: FakeWeb, session: Any) -> None:
    web.articles[0].url = "https://en.wikipedia.org/wiki/Cat"
    outcome = await run_search(_plan("wikipedia", "pubmed"), _sources(web, session), "t",
                               QueryIntent(), 5, 5.0, WEEK)
    assert outcome.notes == ["Wikipedia cannot filter by date; its results were not limited "
                             "to the past week."]
    # Asked nothing, nothing is said.
    plain = await run_search(_plan("wikipedia"), _sources(web, session), "t", QueryIntent(),
                             5, 5.0)
    assert plain.notes == []


async def test_a_source_that_found_nothing_is_not_named(web: FakeWeb, session: Any) -> None:
    web.articles.clear()
    outcome = await run_search(_plan("wikipedia"), _sources(web, session), "t", QueryIntent(),
                               5, 5.0, WEEK)
    assert outcome.notes == []


# ---- routing --------------------------------------------------------------------------------

EVERY = {name: kind.capabilities for name, kind in (
    ("local", LocalKnowledgeBaseSource), ("wikipedia", WikipediaSource),
    ("arxiv", ArxivSource), ("pubmed", PubMedSource), ("searxng", SearxngSource),
    ("tavily", TavilySource), ("exa", ExaSource))}
FACTUAL = QueryIntent(question_type=QuestionType.FACTUAL)
EXPLAINS = QueryIntent(question_type=QuestionType.EXPLANATION)


def test_academic_goes_to_arxiv_pubmed_and_research_papers() -> None:
    routed = route_sources("How long do cats sleep?", EVERY, FACTUAL,
                           SearchControls(content_type=ContentType.ACADEMIC))
    assert routed[0] == "local"
    assert set(routed) == {"local", "arxiv", "pubmed", "exa", "searxng"}
    # On PubMed's topic, PubMed alone of the specialists.
    medical = route_sources("Does metformin help diabetes patients?", EVERY, FACTUAL,
                            SearchControls(content_type=ContentType.ACADEMIC))
    assert "pubmed" in medical and "arxiv" not in medical


def test_news_goes_to_news_capable_sources() -> None:
    routed = route_sources("Who won the election?", EVERY, FACTUAL,
                           SearchControls(content_type=ContentType.NEWS))
    assert routed == ["local", "exa", "tavily", "searxng"]


def test_a_content_type_no_source_serves_falls_back_to_the_usual_sources() -> None:
    few = {name: EVERY[name] for name in ("local", "wikipedia")}
    assert route_sources("Who won the election?", few, FACTUAL,
                         SearchControls(content_type=ContentType.NEWS)) == ["local", "wikipedia"]


@pytest.mark.parametrize("question, intent", [
    ("Why do cats purr?", EXPLAINS),
    ("What is the idea behind dependency injection?", FACTUAL),
    ("What does idempotent mean?", FACTUAL),
])
def test_exa_is_asked_explanation_and_conceptual_questions_first(
        question: str, intent: QueryIntent) -> None:
    routed = route_sources(question, EVERY, intent)
    assert routed[:2] == ["local", "exa"]


def test_exa_is_not_asked_a_plain_factual_question() -> None:
    assert "exa" not in route_sources("When was the Eiffel Tower built?", EVERY, FACTUAL)


def test_a_source_whose_site_is_refused_is_not_asked() -> None:
    excluded = route_sources("How long do cats sleep?", EVERY, FACTUAL,
                             SearchControls(exclude_domains=["wikipedia.org"]))
    assert "wikipedia" not in excluded and "tavily" in excluded
    included = route_sources("Which transformer paper introduced attention?", EVERY, FACTUAL,
                             SearchControls(include_domains=["arxiv.org"]))
    assert "arxiv" in included and "wikipedia" not in included and "pubmed" not in included


# ---- the pipeline ---------------------------------------------------------------------------

def _client(web: FakeWeb, session: Any, engine: Any, embedder: Any, knowledge_base: Any,
            *names: str, cache: Any = None) -> JobClient:
    sources = {"local": LocalKnowledgeBaseSource(knowledge_base, 3),
               **{name: source for name, source in _sources(web, session).items()
                  if name in names}}
    research = build_research(sources, embedder, PipelineSettings(min_relevance=0.0),
                              cache=cache)
    return JobClient(build_jobs(research, engine, progress_interval_s=0.0))


async def test_the_answer_says_which_source_could_not_apply_a_control(
        web: FakeWeb, session: Any, sqlite_engine: Any, embedder: Any,
        knowledge_base: Any) -> None:
    web.articles[0].url = "https://en.wikipedia.org/wiki/Cat_sleep"
    client = _client(web, session, sqlite_engine, embedder, knowledge_base, "wikipedia",
                     "searxng")
    result = await client.run(ResearchRequest(
        question="How many hours a day do cats sleep?", tenant="t1",
        controls=SearchControls(recency=Recency.WEEK, exclude_domains=["spam.example"])))
    assert ("Wikipedia cannot filter by date; its results were not limited to the past week."
            in result.answer.limitations)
    assert not any("SearXNG" in line for line in result.answer.limitations)
    assert "Results from spam.example were left out, as asked." in result.answer.limitations
    assert result.sources
    assert not any((s.metadata.domain or "").endswith("spam.example") for s in result.sources)
    assert _sent(web, "/searx/search")["time_range"] == "week"
    stored = (await client.jobs.store.recent("t1", limit=1))[0]
    assert stored.request.controls == SearchControls(recency=Recency.WEEK,
                                                     exclude_domains=["spam.example"])


async def test_an_academic_request_searches_arxiv_and_pubmed_not_the_general_web(
        web: FakeWeb, session: Any, sqlite_engine: Any, embedder: Any,
        knowledge_base: Any) -> None:
    client = _client(web, session, sqlite_engine, embedder, knowledge_base, "wikipedia",
                     "arxiv", "pubmed", "tavily")
    await client.run(ResearchRequest(
        question="How many hours a day do cats sleep?", tenant="t1",
        controls=SearchControls(content_type=ContentType.ACADEMIC)))
    paths = set(web.hit_paths())
    assert {"/arxiv/query", "/eutils/esearch.fcgi"} <= paths
    assert "/tavily/search" not in paths and "/w/api.php" not in paths


async def test_an_explanation_question_is_searched_on_exa(
        web: FakeWeb, session: Any, sqlite_engine: Any, embedder: Any,
        knowledge_base: Any) -> None:
    client = _client(web, session, sqlite_engine, embedder, knowledge_base, "wikipedia", "exa")
    result = await client.run(ResearchRequest(question="Why do cats sleep so much?",
                                              tenant="t1"))
    assert "/exa/search" in web.hit_paths()
    assert "exa" in {s.metadata.provider for s in result.sources}
    web.hits.clear()
    await client.run(ResearchRequest(question="When was the Eiffel Tower built?", tenant="t1"))
    assert "/exa/search" not in web.hit_paths()


async def test_a_controlled_answer_is_neither_served_from_nor_kept_in_the_cache(
        web: FakeWeb, session: Any, sqlite_engine: Any, embedder: Any, knowledge_base: Any,
        chroma: Any) -> None:
    from core.answer.cache import SemanticAnswerCache
    from core.config import CacheSettings
    from core.store.answers import CachedAnswerStore

    cache = SemanticAnswerCache(CachedAnswerStore(sqlite_engine), chroma, embedder,
                                CacheSettings())
    client = _client(web, session, sqlite_engine, embedder, knowledge_base, "searxng",
                     cache=cache)
    question = "How many hours a day do cats sleep?"
    plain = await client.run(ResearchRequest(question=question, tenant="t1"))
    assert not plain.cached
    week = await client.run(ResearchRequest(question=question, tenant="t1", controls=WEEK))
    assert not week.cached  # the plain answer was not limited to the past week
    again = await client.run(ResearchRequest(question=question, tenant="t1"))
    assert again.cached  # ... and the controlled one did not replace it
    assert again.answer.limitations == plain.answer.limitations


# ---- Exa is opened only with its key ---------------------------------------------------------

@pytest.mark.parametrize("key", ["exa-test", ""])
async def test_exa_is_opened_only_when_its_key_is_set(
        clean_env: Any, web: FakeWeb, monkeypatch: pytest.MonkeyPatch, embedder: Any,
        key: str) -> None:
    from bot.config import load_settings
    from bot.wiring import open_web
    from tests.support.fake_web import point_sources_at

    point_sources_at(web, monkeypatch, SOURCES__EXA_API_KEY=key,
                     SOURCES__CACHE_TTL_HOURS="0", SOURCES__FETCH_PAGES="0")
    async with open_web(load_settings(), embedder) as opened:
        capabilities = {name: s.capabilities for name, s in opened.sources.items()}
        routed = route_sources("Why do cats sleep so much?", capabilities, EXPLAINS)
        if key:
            assert routed[0] == "exa"
            found = await opened.sources["exa"].search(_query(WEEK))
            assert found and "startPublishedDate" in _sent(web, "/exa/search")
        else:
            assert "exa" not in opened.sources and "exa" not in routed
