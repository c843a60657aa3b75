"""One guarded road for every outbound request: a site on 127.0.0.1 (trusted by its endpoint
only, as a configured host would be; loopback otherwise refused) answers pages, robots.txt
and search-API calls with redirects to internal addresses written every way a resolver
accepts. A second local server, on 127.0.0.1 and on ::1, records every request that reaches
it: it must record none."""

import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from tavily import AsyncTavilyClient

from core.errors import BlockedAddressError, FetchError, SourceError
from core.sources.exa import ExaSource
from core.sources.policy import SourcePolicy
from core.sources.protocol import SearchQuery
from core.sources.searxng import SearxngSource
from core.sources.tavily import TavilySource
from core.web.fetch import PageFetcher
from core.web.net import (
    AddressGuard,
    GuardedResolver,
    capped_http_client,
    guarded_session,
    guarded_socket,
)

pytestmark = pytest.mark.integration

PAGE = b"<html><head><title>Cats</title></head><body><main><p>Cats sleep sixteen hours a " \
       b"day, and kittens sleep even longer than adult cats do.</p></main></body></html>"


class Recorder:
    """The internal service: records the path of every request that reaches it."""

    def __init__(self, host: str) -> None:
        self.host = host
        self.hits: list[str] = []
        self.port = 0
        app = web.Application()
        app.router.add_route("*", "/{path:.*}", self._hit)
        self._runner = web.AppRunner(app)

    async def _hit(self, request: web.Request) -> web.Response:
        self.hits.append(request.path)
        return web.Response(text="internal secret")

    async def start(self) -> None:
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def stop(self) -> None:
        await self._runner.cleanup()


class Site(Recorder):
    """The outside site: a page, a robots.txt, a SearXNG-like API and a Tavily-like one,
    each of which may answer with a redirect to `to`."""

    def __init__(self) -> None:
        super().__init__("127.0.0.1")
        self.robots_to: str | None = None
        self.api_to: str | None = None
        self.results: list[dict[str, str]] = []
        app = web.Application()
        app.router.add_get("/robots.txt", self._robots)
        app.router.add_get("/redirect", self._redirect)
        app.router.add_get("/searx/search", self._search)
        app.router.add_get("/searx/moved", self._moved)
        app.router.add_post("/tavily/search", self._tavily)
        app.router.add_post("/exa/search", self._tavily)  # a redirect, as Tavily's
        app.router.add_get("/{path:.*}", self._page)
        self._runner = web.AppRunner(app)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _robots(self, request: web.Request) -> web.Response:
        self.hits.append(request.path)
        if self.robots_to:
            raise web.HTTPFound(self.robots_to)
        return web.Response(text="User-agent: *\nDisallow: /private/\n")

    async def _redirect(self, request: web.Request) -> web.Response:
        self.hits.append(request.path)
        raise web.HTTPFound(request.query["to"])

    async def _page(self, request: web.Request) -> web.Response:
        self.hits.append(request.path)
        return web.Response(body=PAGE, content_type="text/html")

    async def _search(self, request: web.Request) -> web.Response:
        self.hits.append(request.path)
        if self.api_to:
            raise web.HTTPFound(self.api_to)
        return web.json_response({"query": request.query["q"], "results": self.results})

    async def _moved(self, request: web.Request) -> web.Response:
        return web.json_response({"query": request.query["q"], "results": self.results})

    async def _tavily(self, request: web.Request) -> web.Response:
        self.hits.append(request.path)
        raise web.HTTPFound(self.api_to or "/")


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    server = Site()
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
async def inside() -> AsyncIterator[Recorder]:
    server = Recorder("127.0.0.1")
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
async def inside6() -> AsyncIterator[Recorder]:
    server = Recorder("::1")
    await server.start()
    yield server
    await server.stop()


@pytest.fixture(params=["guarded session", "plain session"])
async def fetcher(request: pytest.FixtureRequest, site: Site) -> AsyncIterator[PageFetcher]:
    """Loopback refused; only the site's own endpoint is trusted. On the guarded session the
    resolver and the socket check stand behind the URL check; on a plain one the URL check
    (every hop, robots.txt's included) stands alone, and must hold alone."""
    guard = AddressGuard.trusting(site.base)
    session = guarded_session("researchbot-test", guard=guard) \
        if request.param == "guarded session" else aiohttp.ClientSession()
    async with session:
        yield PageFetcher(session, timeout_s=5, guard=guard)


# Every way of writing an internal address; {v4} / {v6} are the recorders' ports.
TARGETS = [
    "http://127.0.0.1:{v4}/latest/meta-data/",
    "http://[::1]:{v6}/",
    "http://169.254.169.254/latest/meta-data/",
    "http://10.0.0.8/admin",
    "http://192.168.1.1/",
    "http://2130706433:{v4}/decimal",
    "http://0177.0.0.1:{v4}/octal",
    "http://0x7f.0.0.1:{v4}/hex",
    "http://127.1:{v4}/short",
    "http://[::ffff:127.0.0.1]:{v4}/mapped",
    "http://①②⑦.0.0.1:{v4}/idna-digits",
    "http://localhost:{v4}/name",
]


def _target(template: str, inside: Recorder, inside6: Recorder) -> str:
    return template.format(v4=inside.port, v6=inside6.port)


@pytest.mark.parametrize("template", TARGETS)
def test_the_guard_refuses_every_form_before_connecting(template: str) -> None:
    with pytest.raises(BlockedAddressError):
        AddressGuard().check(template.format(v4=8080, v6=8080))


@pytest.mark.parametrize("template", TARGETS)
async def test_a_robots_txt_redirect_inside_is_not_followed(
        template: str, site: Site, inside: Recorder, inside6: Recorder,
        fetcher: PageFetcher) -> None:
    site.robots_to = _target(template, inside, inside6)
    page = await fetcher.fetch(f"{site.base}/cats")
    # robots.txt counts as unavailable (RFC 9309): the page itself is read, nothing inside.
    assert b"sixteen hours" in page.body
    assert site.hits == ["/robots.txt", "/cats"]
    assert inside.hits == [] and inside6.hits == []


@pytest.mark.parametrize("template", TARGETS)
async def test_an_internal_page_url_is_refused(template: str, inside: Recorder,
                                               inside6: Recorder, fetcher: PageFetcher) -> None:
    with pytest.raises(FetchError, match="refused"):
        await fetcher.fetch(_target(template, inside, inside6))
    assert inside.hits == [] and inside6.hits == []


@pytest.mark.parametrize("template", TARGETS)
async def test_a_page_redirect_inside_is_refused(template: str, site: Site, inside: Recorder,
                                                 inside6: Recorder,
                                                 fetcher: PageFetcher) -> None:
    target = _target(template, inside, inside6)
    with pytest.raises(FetchError, match="refused"):
        await fetcher.fetch(f"{site.base}/redirect?to={target}")
    assert inside.hits == [] and inside6.hits == []


async def test_the_socket_check_holds_when_the_url_check_is_skipped(inside: Recorder) -> None:
    """A request made on the page session without guarded_get: the literal address skips the
    resolver, and the socket factory still refuses to connect."""
    async with guarded_session("t") as session:
        with pytest.raises(BlockedAddressError):
            await session.get(f"http://127.0.0.1:{inside.port}/")
    assert inside.hits == []
    with pytest.raises(BlockedAddressError):
        guarded_socket(AddressGuard())((socket.AF_INET6, socket.SOCK_STREAM, 6, "",
                                        ("::1", 80, 0, 0)))


async def test_a_name_is_trusted_only_at_its_configured_endpoint() -> None:
    resolver = GuardedResolver(guard=AddressGuard.trusting("http://localhost:8888/"))
    assert (await resolver.resolve("localhost", 8888))[0]["host"] in ("127.0.0.1", "::1")
    with pytest.raises(BlockedAddressError, match="resolves to a private"):
        await resolver.resolve("localhost", 8889)
    lan = AddressGuard.trusting("http://192.168.1.5:8888")
    assert str(lan.check("http://192.168.1.5:8888/search?q=x")).endswith("q=x")
    for elsewhere in ("http://192.168.1.6/", "http://192.168.1.5:22/", "http://127.0.0.1:8888/"):
        with pytest.raises(BlockedAddressError):
            lan.check(elsewhere)


def _searxng(site: Site, session: aiohttp.ClientSession) -> SearxngSource:
    policy = SourcePolicy("searxng", timeout_s=5, attempts=1, rate_per_s=100)
    return SearxngSource(session, policy, site.base + "/searx")


@pytest.mark.parametrize("template", TARGETS)
async def test_a_search_api_redirect_inside_is_refused(
        template: str, site: Site, inside: Recorder, inside6: Recorder) -> None:
    site.api_to = _target(template, inside, inside6)
    async with aiohttp.ClientSession() as session:
        with pytest.raises(SourceError, match="refused to follow a redirect"):
            await _searxng(site, session).search(SearchQuery(text="cats", tenant="t"))
    assert site.hits == ["/searx/search"]
    assert inside.hits == [] and inside6.hits == []


async def test_a_search_api_may_redirect_within_its_own_endpoint(site: Site) -> None:
    site.api_to = "/searx/moved?q=cats"
    site.results = [{"url": "https://example.org/cats", "title": "Cats", "content": "Cats."}]
    async with aiohttp.ClientSession() as session:
        found = await _searxng(site, session).search(SearchQuery(text="cats", tenant="t"))
    assert [s.url for s in found] == ["https://example.org/cats"]


async def test_internal_urls_in_search_results_are_not_fetched(
        site: Site, inside: Recorder, inside6: Recorder, fetcher: PageFetcher) -> None:
    site.results = [{"url": _target(t, inside, inside6), "title": "x", "content": "x"}
                    for t in TARGETS if "{v" in t]
    async with aiohttp.ClientSession() as session:
        found = await _searxng(site, session).search(SearchQuery(text="cats", tenant="t",
                                                                 limit=20))
    outcomes = await fetcher.fetch_many([s.url or "" for s in found])
    assert len(outcomes) == len(site.results)
    assert all(isinstance(o, FetchError) and "refused" in str(o) for o in outcomes.values())
    assert inside.hits == [] and inside6.hits == []


async def test_tavily_follows_no_redirect(site: Site, inside: Recorder) -> None:
    site.api_to = f"http://127.0.0.1:{inside.port}/"
    async with capped_http_client(1024 * 1024) as http:
        client: Any = AsyncTavilyClient(api_key="tvly-test", api_base_url=site.base + "/tavily",
                                        client=http)
        source = TavilySource(client, SourcePolicy("tavily", timeout_s=5, attempts=1))
        with pytest.raises(SourceError):
            await source.search(SearchQuery(text="cats", tenant="t"))
    assert site.hits == ["/tavily/search"] and inside.hits == []


async def test_exa_follows_no_redirect(site: Site, inside: Recorder) -> None:
    site.api_to = f"http://127.0.0.1:{inside.port}/"
    async with aiohttp.ClientSession() as session:
        source = ExaSource(session, SourcePolicy("exa", timeout_s=5, attempts=1), "exa-test",
                           site.base + "/exa")
        with pytest.raises(SourceError, match="redirect"):
            await source.search(SearchQuery(text="cats", tenant="t"))
    assert site.hits == ["/exa/search"] and inside.hits == []


async def test_a_site_the_settings_trust_is_read_and_no_other(
        clean_env: Path, inside: Recorder, inside6: Recorder, embedder: Any,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`sources.trusted_pages` (an intranet wiki behind a LAN SearXNG): the page reader the
    composition root builds reads that site, and still refuses every other inside address."""
    from bot.config import Settings
    from bot.wiring import open_web

    monkeypatch.setenv("RESEARCHBOT_PIPELINE__LOCAL_ONLY", "false")
    wiki = f"http://127.0.0.1:{inside.port}"
    settings = Settings(sources={"wikipedia": False, "arxiv": False, "pubmed": False,
                                 "cache_ttl_hours": 0, "trusted_pages": [wiki]})
    async with open_web(settings, embedder) as web:
        assert web.pages is not None and web.sources == {}
        page = await web.pages.text_of(f"{wiki}/wiki/cats")
        assert "internal secret" in page.text
        with pytest.raises(FetchError, match="refused"):
            await web.pages.text_of(f"http://[::1]:{inside6.port}/wiki/cats")
        with pytest.raises(FetchError, match="refused"):
            await web.pages.text_of(f"http://127.0.0.1:{inside.port + 1}/wiki/cats")
    assert "/wiki/cats" in inside.hits and inside6.hits == []
