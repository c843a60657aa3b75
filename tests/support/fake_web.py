"""Fake search APIs and web pages on 127.0.0.1, shaped like the real ones: Tavily and Exa (JSON),
MediaWiki (JSON), arXiv (Atom), PubMed E-utilities (JSON esearch/esummary, XML efetch),
SearXNG (JSON), and plain pages with a robots.txt. Failures, latency and held requests are
scripted per path."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.support.local_server import LocalServer


@dataclass
class Failure:
    status: int = 500
    retry_after: float | None = None
    delay_s: float = 0.0  # answer late (a timeout) instead of with an error
    body: str | None = None  # answer 200 with this (malformed) body


class _Stopped(Exception):
    """The server stops: a request it holds or delays is answered now, with 503."""


@dataclass
class Article:
    """One document the fake APIs know, matched when a query shares a word with its title."""

    title: str
    text: str
    url: str = ""
    published: str = "2024-03-05"
    pmid: str = ""
    doi: str = ""
    authors: list[str] = field(default_factory=lambda: ["Ada Lovelace"])


class FakeWeb(LocalServer):
    def __init__(self) -> None:
        super().__init__()
        self.articles: list[Article] = []
        self.pages: dict[str, tuple[bytes, str]] = {}  # path -> (body, content type)
        self.robots = "User-agent: *\nDisallow: /private/\n"
        self.failures: dict[str, list[Failure]] = {}
        self.hits: list[tuple[str, dict[str, str]]] = []
        # path -> seconds every answer takes (a benchmark's latency, a job kept running)
        self.latency: dict[str, float] = {}
        # path -> an event every answer waits for first: `hold` and `release` (a job stays
        # in progress exactly as long as the test looks at it)
        self.gates: dict[str, asyncio.Event] = {}
        self._stopping = asyncio.Event()
        self._hit = asyncio.Condition()
        router = self.app.router
        router.add_post("/tavily/search", self._tavily)
        router.add_post("/exa/search", self._exa)
        router.add_get("/w/api.php", self._mediawiki)
        router.add_get("/arxiv/query", self._arxiv)
        router.add_get("/eutils/{tool}", self._eutils)
        router.add_get("/searx/search", self._searx)
        router.add_get("/robots.txt", self._robots)
        router.add_get("/{path:.*}", self._page)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def fail(self, path: str, *failures: Failure) -> None:
        self.failures.setdefault(path, []).extend(failures)

    def hold(self, path: str) -> None:
        """Keep every request to `path` waiting from now until `release(path)`."""
        self.gates.setdefault(path, asyncio.Event())

    def release(self, path: str) -> None:
        """Let the requests held on `path` go on, and answer those after them at once."""
        gate = self.gates.pop(path, None)
        if gate is not None:
            gate.set()

    def hit_paths(self) -> list[str]:
        return [path for path, _ in self.hits]

    async def requested(self, path: str, times: int = 1, within_s: float = 30.0) -> None:
        """Wait until `path` has been asked for `times` times in all (held ones count)."""
        async with asyncio.timeout(within_s), self._hit:
            await self._hit.wait_for(lambda: self.hit_paths().count(path) >= times)

    async def stop(self) -> None:
        self._stopping.set()  # what is held or delayed ends now, not at its time
        await super().stop()

    async def _wait(self, until: Awaitable[Any]) -> None:
        """`until`, unless the server stops first (_Stopped)."""
        waiting = asyncio.ensure_future(until)
        stopping = asyncio.ensure_future(self._stopping.wait())
        try:
            await asyncio.wait([waiting, stopping], return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiting.cancel()
            stopping.cancel()
        if self._stopping.is_set():
            raise _Stopped

    def _matches(self, query: str) -> list[Article]:
        words = {w.lower() for w in query.replace(":", " ").split() if len(w) > 3}
        words = {w.removeprefix("all") for w in words} | words
        return [a for a in self.articles if words & set(a.title.lower().split())
                or words & set(a.text.lower().replace(".", " ").split())]

    async def _scripted(self, request: web.Request) -> web.Response | None:
        self.hits.append((request.path, dict(request.query)))
        async with self._hit:
            self._hit.notify_all()
        try:
            if request.path in self.gates:
                await self._wait(self.gates[request.path].wait())
            if request.path in self.latency:
                await self._wait(asyncio.sleep(self.latency[request.path]))
            queued = self.failures.get(request.path)
            if not queued:
                return None
            failure = queued.pop(0)
            if failure.delay_s:
                await self._wait(asyncio.sleep(failure.delay_s))
                return None
        except _Stopped:
            return web.Response(status=503, text="the fake server stopped")
        if failure.body is not None:
            return web.Response(text=failure.body, content_type="application/json")
        headers = {"Retry-After": f"{failure.retry_after:g}"} if failure.retry_after else {}
        return web.Response(status=failure.status, text="scripted failure", headers=headers)

    async def _tavily(self, request: web.Request) -> web.Response:
        if request.headers.get("Authorization") != "Bearer tvly-test":
            return web.json_response({"detail": {"error": "Unauthorized"}}, status=401)
        scripted = await self._scripted(request)
        if scripted is not None:
            return scripted
        body = await request.json()
        self.hits[-1] = (request.path, {k: str(v) for k, v in body.items()})
        found = self._matches(body["query"])[: body.get("max_results") or 5]
        return web.json_response({
            "query": body["query"], "answer": None, "images": [], "follow_up_questions": None,
            "response_time": 0.1, "request_id": "r1",
            "results": [{"title": a.title, "url": a.url, "content": a.text[:200], "score": 0.9,
                         "raw_content": None, "published_date": a.published}
                        for a in found]})

    async def _exa(self, request: web.Request) -> web.Response:
        """Exa's POST /search: the key in x-api-key; text and highlights as asked in
        `contents`; its filters are recorded (with the body) but not applied, as a provider
        may not."""
        if request.headers.get("x-api-key") != "exa-test":
            return web.json_response({"error": "Invalid API key"}, status=401)
        scripted = await self._scripted(request)
        if scripted is not None:
            return scripted
        body = await request.json()
        self.hits[-1] = (request.path, {k: json.dumps(v) if not isinstance(v, str) else v
                                        for k, v in body.items()})
        found = self._matches(body["query"])[: body.get("numResults") or 10]
        contents = body.get("contents") or {}
        return web.json_response({
            "requestId": "e1", "resolvedSearchType": "neural",
            "results": [{"id": a.url, "title": a.title, "url": a.url,
                         "publishedDate": f"{a.published}T00:00:00.000Z",
                         "author": a.authors[0] if a.authors else None, "score": 0.4,
                         **({"text": a.text} if "text" in contents else {}),
                         **({"highlights": [a.text[:120]], "highlightScores": [0.5]}
                            if "highlights" in contents else {})}
                        for a in found],
            "costDollars": {"total": 0.005}})

    async def _mediawiki(self, request: web.Request) -> web.Response:
        scripted = await self._scripted(request)
        if scripted is not None:
            return scripted
        query = request.query
        if query.get("list") == "search":
            found = self._matches(query["srsearch"])
            return web.json_response({"batchcomplete": True, "query": {
                "searchinfo": {"totalhits": len(found)},
                "search": [{"ns": 0, "title": a.title, "snippet": a.text[:80],
                            "pageid": 1000 + self.articles.index(a),
                            "timestamp": f"{a.published}T00:00:00Z"} for a in found]}})
        pages = []
        for pageid in (int(i) for i in query["pageids"].split("|")):
            article = self.articles[pageid - 1000]
            pages.append({"pageid": pageid, "ns": 0, "title": article.title,
                          "extract": article.text, "fullurl": article.url,
                          "touched": f"{article.published}T00:00:00Z"})
        return web.json_response({"batchcomplete": True, "query": {"pages": pages}})

    async def _arxiv(self, request: web.Request) -> web.Response:
        scripted = await self._scripted(request)
        if scripted is not None:
            return scripted
        found = self._matches(request.query["search_query"])
        entries = "".join(
            f"<entry><id>http://arxiv.org/abs/2403.0{n}v1</id>"
            f"<published>{a.published}T00:00:00Z</published><title>{a.title}</title>"
            f"<summary>{a.text}</summary>"
            + "".join(f"<author><name>{name}</name></author>" for name in a.authors)
            + (f"<arxiv:doi>{a.doi}</arxiv:doi>" if a.doi else "") + "</entry>"
            for n, a in enumerate(found))
        return web.Response(content_type="application/atom+xml", text=(
            '<?xml version="1.0" encoding="UTF-8"?><feed xmlns="http://www.w3.org/2005/Atom" '
            'xmlns:arxiv="http://arxiv.org/schemas/atom"><title>query</title>'
            f"{entries}</feed>"))

    async def _eutils(self, request: web.Request) -> web.Response:
        scripted = await self._scripted(request)
        if scripted is not None:
            return scripted
        tool, query = request.match_info["tool"], request.query
        if tool == "esearch.fcgi":
            found = self._matches(query["term"])
            return web.json_response({"header": {"type": "esearch"}, "esearchresult": {
                "count": str(len(found)), "idlist": [a.pmid for a in found]}})
        ids = query["id"].split(",")
        chosen = [a for a in self.articles if a.pmid in ids]
        if tool == "esummary.fcgi":
            result: dict[str, Any] = {"uids": ids}
            for a in chosen:
                result[a.pmid] = {
                    "uid": a.pmid, "title": a.title, "pubdate": a.published.replace("-", " "),
                    "sortpubdate": a.published.replace("-", "/") + " 00:00",
                    "fulljournalname": "Journal of Tests", "source": "J Tests",
                    "authors": [{"name": name} for name in a.authors],
                    "articleids": [{"idtype": "pubmed", "value": a.pmid},
                                   {"idtype": "doi", "value": a.doi}]}
            return web.json_response({"header": {"type": "esummary"}, "result": result})
        articles = "".join(
            f"<PubmedArticle><MedlineCitation><PMID>{a.pmid}</PMID><Article><Abstract>"
            f'<AbstractText Label="RESULTS">{a.text}</AbstractText></Abstract></Article>'
            "</MedlineCitation></PubmedArticle>" for a in chosen)
        return web.Response(content_type="text/xml",
                            text=f"<?xml version=\"1.0\"?><PubmedArticleSet>{articles}"
                                 "</PubmedArticleSet>")

    async def _searx(self, request: web.Request) -> web.Response:
        scripted = await self._scripted(request)
        if scripted is not None:
            return scripted
        found = self._matches(request.query["q"])
        return web.Response(content_type="application/json", text=json.dumps({
            "query": request.query["q"], "number_of_results": len(found),
            "results": [{"url": a.url, "title": a.title, "content": a.text[:150],
                         "engine": "fake", "publishedDate": f"{a.published}T00:00:00"}
                        for a in found]}))

    async def _robots(self, request: web.Request) -> web.Response:
        scripted = await self._scripted(request)
        if scripted is not None:
            return scripted
        return web.Response(text=self.robots)

    async def _page(self, request: web.Request) -> web.StreamResponse:
        scripted = await self._scripted(request)
        if scripted is not None:
            return scripted
        path = "/" + request.match_info["path"]
        if path.startswith("/redirect"):
            raise web.HTTPFound(request.query["to"])
        if path not in self.pages:
            return web.Response(status=404, text="not found")
        body, kind = self.pages[path]
        return web.Response(body=body, headers={"Content-Type": kind})


def point_sources_at(web: FakeWeb, monkeypatch: Any, **more: str) -> None:
    """Settings (RESEARCHBOT_* variables) that send every web source to `web`; `more` adds
    or overrides settings by their variable's name without the prefix."""
    for name, value in {
        "PIPELINE__LOCAL_ONLY": "false",
        "SOURCES__WIKIPEDIA_API": f"{web.base}/w/api.php",
        "SOURCES__ARXIV_API": f"{web.base}/arxiv/query",
        "SOURCES__PUBMED_API": f"{web.base}/eutils",
        "SOURCES__SEARXNG_URL": f"{web.base}/searx",
        "SOURCES__TAVILY_API": f"{web.base}/tavily",
        "SOURCES__TAVILY_API_KEY": "tvly-test",
        "SOURCES__EXA_API": f"{web.base}/exa",
        "SOURCES__EXA_API_KEY": "exa-test",
        **more,
    }.items():
        monkeypatch.setenv(f"RESEARCHBOT_{name}", value)


@contextlib.asynccontextmanager
async def slow_wikipedia(latency_s: float = 0.0, article: Article | None = None
                         ) -> AsyncIterator[FakeWeb]:
    """A Wikipedia knowing one article (a cat's, by default) whose every call takes
    `latency_s`: jobs are still running while a test watches or breaks something. A test
    that needs one job to stay at a point holds its calls instead (`hold`, `release`)."""
    web = FakeWeb()
    web.articles.append(article or Article(
        "Cat", "The cat is a small domesticated carnivorous mammal.",
        "https://en.wikipedia.org/wiki/Cat"))
    web.latency["/w/api.php"] = latency_s
    await web.start()
    try:
        yield web
    finally:
        await web.stop()


def wikipedia_only(web: FakeWeb) -> dict[str, str]:
    """Settings (as the environment of a bot process) whose only web source is `web`'s
    Wikipedia, with no source cache and no page reading."""
    return {"RESEARCHBOT_PIPELINE__LOCAL_ONLY": "false",
            "RESEARCHBOT_ENDPOINTS__WIKIPEDIA_API": f"{web.base}/w/api.php",
            "RESEARCHBOT_SOURCES__ARXIV": "false", "RESEARCHBOT_SOURCES__PUBMED": "false",
            "RESEARCHBOT_ADVANCED__SOURCES__CACHE_TTL_HOURS": "0",
            "RESEARCHBOT_ADVANCED__SOURCES__FETCH_PAGES": "0"}
