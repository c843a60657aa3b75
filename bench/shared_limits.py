"""Source limits across worker processes, against a fake search API on 127.0.0.1.

    .venv/bin/python bench/shared_limits.py [--redis redis://127.0.0.1:6379/0]

1. Four policies (four worker processes: each its own limiter, or its own Redis client)
   each send 50 searches to one API allowed 10 calls a second: the calls a second the API
   saw, with each process's own limit and with the limit shared in Redis
   (`redis.url`).
2. 50 identical searches at once from one process: the HTTP calls made without coalescing
   (every call made, as before) and with it.

Redis keys go under a prefix of their own, removed at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import aiohttp
from aiohttp import web
from redis.asyncio import Redis

from bench.tables import table
from core.models import QueryIntent
from core.sources.policy import SourcePolicy
from core.sources.protocol import SearchQuery
from core.sources.searxng import SearxngSource
from core.sources.shared_limits import SharedLimits
from core.sources.single_flight import SingleFlight
from tests.support.fake_web import Article, FakeWeb

T = TypeVar("T")
PROCESSES = 4
CALLS = 50
RATE = 10.0


class CountingWeb(FakeWeb):
    """The fake API, noting when each request arrived."""

    def __init__(self) -> None:
        super().__init__()
        self.arrivals: list[float] = []
        self.articles = [Article(title="Domestic cat", url="https://example.org/cat",
                                 text="Domestic cats sleep between 12 and 16 hours a day.")]

    async def _scripted(self, request: web.Request) -> web.Response | None:
        self.arrivals.append(time.monotonic())
        return await super()._scripted(request)


class EveryCallMade(SingleFlight):
    """The baseline: no coalescing."""

    async def run(self, key: str, start: Callable[[], Awaitable[T]]) -> T:
        return await start()


def _query(text: str) -> SearchQuery:
    return SearchQuery(text=text, tenant="t", limit=5, intent=QueryIntent())


def _rates(arrivals: list[float]) -> tuple[float, int]:
    """Calls a second over the run, and the most in any one second."""
    ordered = sorted(arrivals)
    first = busiest = 0
    for last, at in enumerate(ordered):
        while at - ordered[first] >= 1.0:
            first += 1
        busiest = max(busiest, last - first + 1)
    span = ordered[-1] - ordered[0]
    return (len(ordered) - 1) / span if span else float(len(ordered)), busiest


async def _processes(web_: CountingWeb, session: aiohttp.ClientSession,
                     shared: list[SharedLimits | None]) -> list[Any]:
    started = time.monotonic()
    web_.arrivals.clear()
    sources = [SearxngSource(session, SourcePolicy("searxng", rate_per_s=RATE, timeout_s=60,
                                                   attempts=1, shared=limits),
                             web_.base + "/searx") for limits in shared]
    await asyncio.gather(*(source.search(_query(f"domestic cat p{n} q{i}"))
                           for n, source in enumerate(sources) for i in range(CALLS)))
    per_second, busiest = _rates(web_.arrivals)
    return [len(web_.arrivals), round(time.monotonic() - started, 1), round(per_second, 1),
            busiest]


async def rate_limits(web_: CountingWeb, session: aiohttp.ClientSession,
                      url: str, prefix: str) -> list[list[Any]]:
    clients = [Redis.from_url(url) for _ in range(PROCESSES)]
    try:
        shared: list[SharedLimits | None] = [SharedLimits(c, prefix=prefix) for c in clients]
        return [["in each process", *await _processes(web_, session, [None] * PROCESSES)],
                ["shared in Redis", *await _processes(web_, session, shared)]]
    finally:
        for client in clients:
            await client.aclose()


async def coalescing(web_: CountingWeb, session: aiohttp.ClientSession) -> list[list[Any]]:
    web_.latency["/searx/search"] = 0.2  # the answer takes a while: the calls overlap
    rows = []
    for mode, flights in (("every call made", EveryCallMade()), ("coalesced", None)):
        policy = SourcePolicy("searxng", rate_per_s=RATE, timeout_s=60, attempts=1)
        if flights is not None:
            policy._flights = flights  # the baseline swaps the policy's own in
        source = SearxngSource(session, policy, web_.base + "/searx")
        web_.arrivals.clear()
        started = time.monotonic()
        await asyncio.gather(*(source.search(_query("domestic cat")) for _ in range(CALLS)))
        rows.append([mode, CALLS, len(web_.arrivals), round(time.monotonic() - started, 2)])
    return rows


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    url = parser.parse_args().redis
    prefix = f"bench-{uuid.uuid4().hex[:8]}:sources"
    web_ = CountingWeb()
    await web_.start()
    try:
        async with aiohttp.ClientSession() as session:
            limits = await rate_limits(web_, session, url, prefix)
            coalesced = await coalescing(web_, session)
    finally:
        await web_.stop()
        async with Redis.from_url(url) as redis:
            async for key in redis.scan_iter(match=f"{prefix}:*"):
                await redis.delete(key)
    table(f"{PROCESSES} processes x {CALLS} calls, one API allowed {RATE:g} calls a second",
          ["limits", "calls", "seconds", "calls/s the API saw", "most in one second"], limits)
    table(f"{CALLS} identical searches at once (answer in 0.2 s, {RATE:g} calls a second)",
          ["mode", "searches", "HTTP calls", "seconds"], coalesced)


if __name__ == "__main__":
    asyncio.run(main())
