"""Every answer is read against a byte cap as it streams: search APIs (aiohttp, Exa's POSTs
and Tavily's httpx client), pages and model replies, with gzip bombs counted by their
decompressed size; an oversized source answer is reported as that source's failure in plain
words. The fake servers count what they managed to send: far less than the 50 MB they
tried."""

import gzip
import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from pydantic import BaseModel
from tavily import AsyncTavilyClient

from core.answer.grading import outage_notes
from core.config import LLMSettings
from core.errors import FetchError, LLMError, SourceError, SourceResponseTooLargeError
from core.llm.gateway import MAX_REPLY_BYTES, ModelGateway, Role, Usage
from core.llm.prompts import PromptLibrary
from core.models import QueryIntent
from core.research.planning import PlannedQuery, ResearchPlan
from core.research.search import run_search
from core.sources.exa import ExaSource
from core.sources.policy import SourcePolicy
from core.sources.protocol import SearchQuery
from core.sources.searxng import SearxngSource
from core.sources.tavily import TavilySource
from core.web.fetch import PageFetcher
from core.web.net import AddressGuard, capped_http_client, guarded_session
from tests.support.local_server import LocalServer

pytestmark = pytest.mark.integration

CAP = 256 * 1024
HUGE = 50 * 1024 * 1024
CHUNK = 64 * 1024
SLACK = 8 * 1024 * 1024  # what loopback socket buffers may hold beyond what was read


def _bomb() -> bytes:
    """50 MB of JSON whitespace in ~50 KB of gzip: below the cap compressed, far above it
    decompressed."""
    return gzip.compress(b'{"query": "cats", "results": [' + b" " * HUGE + b"]}", 9)


BOMB = _bomb()


class Oversized(LocalServer):
    """Answers every path with 50 MB (chunked, no length), or as scripted per path: a body, a
    gzip bomb, a declared 50 MB length. Counts the bytes each path got out before the client
    hung up."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: dict[str, int] = {}
        self.bodies: dict[str, bytes] = {}
        self.bombs: set[str] = set()
        self.declared: set[str] = set()
        self.app.router.add_route("*", "/{path:.*}", self._answer)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _answer(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        if path in self.bodies:
            return web.Response(body=self.bodies[path], content_type="application/json")
        kind = "text/html" if path.startswith("/page") else "application/json"
        if path in self.bombs:
            return web.Response(body=BOMB, headers={"Content-Encoding": "gzip",
                                                    "Content-Type": kind})
        response = web.StreamResponse(headers={"Content-Type": kind})
        if path in self.declared:
            response.content_length = HUGE
        await response.prepare(request)
        self.sent[path] = 0
        filler = b" " * CHUNK
        try:
            await response.write(b'{"query": "cats", "results": [')
            while self.sent[path] < HUGE:
                await response.write(filler)
                self.sent[path] += CHUNK
        except (ConnectionError, RuntimeError):
            return response  # the client hung up: what it refused is not sent
        await response.write(b"]}")
        return response


@pytest.fixture
async def server() -> AsyncIterator[Oversized]:
    fake = Oversized()
    await fake.start()
    yield fake
    await fake.stop()


def _policy(name: str) -> SourcePolicy:
    return SourcePolicy(name, timeout_s=10, attempts=3, backoff_s=0.01, rate_per_s=100,
                        max_response_bytes=CAP)


def _searxng(server: Oversized, session: aiohttp.ClientSession, path: str) -> SearxngSource:
    return SearxngSource(session, _policy("searxng"), f"{server.base}/{path}")


async def test_a_huge_api_answer_is_abandoned_at_the_cap(server: Oversized) -> None:
    async with aiohttp.ClientSession() as session:
        with pytest.raises(SourceResponseTooLargeError, match=r"larger than 0\.25 MB"):
            await _searxng(server, session, "chunked").search(
                SearchQuery(text="cats", tenant="t"))
    assert list(server.sent) == ["/chunked/search"]  # asked once: not retried
    assert server.sent["/chunked/search"] < CAP + SLACK


async def test_a_declared_length_over_the_cap_is_not_read(server: Oversized) -> None:
    server.declared.add("/declared/search")
    async with aiohttp.ClientSession() as session:
        with pytest.raises(SourceResponseTooLargeError):
            await _searxng(server, session, "declared").search(
                SearchQuery(text="cats", tenant="t"))
    assert server.sent["/declared/search"] < SLACK


async def test_a_gzip_bomb_counts_by_its_decompressed_size(server: Oversized) -> None:
    assert len(BOMB) < CAP  # only the decompressed size can trip the cap
    server.bombs.add("/bomb/search")
    async with aiohttp.ClientSession() as session:
        with pytest.raises(SourceResponseTooLargeError):
            await _searxng(server, session, "bomb").search(
                SearchQuery(text="cats", tenant="t"))
        server.bodies["/fine/search"] = json.dumps({
            "query": "cats", "results": [{"url": f"https://example.org/{n}", "title": "Cats",
                                          "content": "Cats sleep."} for n in range(2000)]
        }).encode()
        found = await _searxng(server, session, "fine").search(
            SearchQuery(text="cats", tenant="t", limit=7))
    assert len(found) == 7  # 2000 results in the answer, no more taken than asked for


async def test_an_oversized_source_is_a_limitation_in_plain_words(server: Oversized) -> None:
    async with aiohttp.ClientSession() as session:
        sources: dict[str, Any] = {"searxng": _searxng(server, session, "chunked")}
        plan = ResearchPlan(queries=[PlannedQuery(text="cats", purpose="", sources=["searxng"])])
        outcome = await run_search(plan, sources, "t", QueryIntent(), 8, 10.0)
    assert [f.kind for f in outcome.failures] == ["too_large"]
    assert outage_notes(outcome.failures) == [
        "The web (SearXNG) sent an answer too large to read, so its results are missing from "
        "this answer."]


async def test_nesting_beyond_parsing_is_a_malformed_answer(server: Oversized) -> None:
    server.bodies["/deep/search"] = b"[" * 100_000 + b"]" * 100_000
    async with aiohttp.ClientSession() as session:
        with pytest.raises(SourceError, match="nested too deeply"):
            await _searxng(server, session, "deep").search(SearchQuery(text="cats", tenant="t"))


@pytest.mark.parametrize("answer", ["huge", "bomb"])
async def test_tavily_answers_are_capped_too(server: Oversized, answer: str) -> None:
    server.bombs.add("/bomb/search")
    async with capped_http_client(CAP) as http:
        client = AsyncTavilyClient(api_key="tvly-test", api_base_url=f"{server.base}/{answer}",
                                   client=http)
        with pytest.raises(SourceResponseTooLargeError):
            await TavilySource(client, _policy("tavily")).search(
                SearchQuery(text="cats", tenant="t"))
    assert server.sent.get(f"/{answer}/search", 0) < CAP + SLACK


@pytest.mark.parametrize("answer", ["huge", "bomb", "declared"])
async def test_exa_answers_are_capped_too(server: Oversized, answer: str) -> None:
    server.bombs.add("/bomb/search")
    server.declared.add("/declared/search")
    async with aiohttp.ClientSession() as session:
        source = ExaSource(session, _policy("exa"), "exa-test", f"{server.base}/{answer}")
        with pytest.raises(SourceResponseTooLargeError, match=r"larger than 0\.25 MB"):
            await source.search(SearchQuery(text="cats", tenant="t"))
    assert server.sent.get(f"/{answer}/search", 0) < CAP + SLACK


@pytest.mark.parametrize("path", ["/page/huge", "/page/declared", "/page/bomb"])
async def test_pages_are_capped_while_streaming(server: Oversized, path: str) -> None:
    server.bombs.add("/page/bomb")
    server.declared.add("/page/declared")
    guard = AddressGuard.trusting(server.base)
    async with guarded_session("t", guard=guard) as session:
        fetcher = PageFetcher(session, max_bytes=CAP, timeout_s=10, guard=guard)
        with pytest.raises(FetchError, match=r"larger than 0\.25 MB"):
            await fetcher.fetch(server.base + path)
    assert server.sent.get(path, 0) < CAP + SLACK


class Reply(BaseModel):
    answer: str


class HugeModel(LocalServer):
    """An OpenAI-compatible server that ignores max_tokens and answers 50 MB."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0
        self.sent = 0
        self.app.router.add_post("/v1/chat/completions", self._chat)

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        self.calls += 1
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        await response.prepare(request)
        try:
            await response.write(b'{"id": "c1", "object": "chat.completion", "created": 1, '
                                 b'"model": "m", "choices": [{"index": 0, "finish_reason": '
                                 b'"stop", "message": {"role": "assistant", "content": "')
            while self.sent < HUGE:
                await response.write(b"a" * CHUNK)
                self.sent += CHUNK
            await response.write(b'"}}], "usage": {"prompt_tokens": 1, "completion_tokens": '
                                 b'1, "total_tokens": 2}}')
        except (ConnectionError, RuntimeError):
            pass
        return response


async def test_a_huge_model_reply_is_an_error_not_a_memory_spike() -> None:
    model = HugeModel()
    await model.start()
    try:
        settings = LLMSettings(fast_model="openai/m", api_key="test-key", attempts=3,
                               backoff_s=0.01, api_base=f"http://127.0.0.1:{model.port}/v1")
        gateway = ModelGateway(settings, PromptLibrary.load())
        with pytest.raises(LLMError, match="larger than 16 MB"):
            await gateway.json(Role.FAST, "repair", Reply, Usage(), error="x")
    finally:
        await model.stop()
    assert model.calls == 1  # not retried: it would answer the same
    assert model.sent < MAX_REPLY_BYTES + SLACK
