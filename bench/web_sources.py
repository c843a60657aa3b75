"""Web sources and page fetching, against the fake APIs and pages on 127.0.0.1.

    .venv/bin/python bench/web_sources.py [--pages 60]

1. The search stage fanning out 3 queries to 5 sources (Tavily, Wikipedia, arXiv, PubMed,
   SearXNG through their real clients) whose API calls take fixed latencies, against the
   slowest single source call measured alone (target: at most 1.2x).
2. Pages fetched and extracted per second: boilerplate-heavy HTML pages of ~40 KB through
   the guarded fetcher (robots.txt, size cap, trafilatura), at the default 2 connections per
   host and with 8.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import aiohttp
from tavily import AsyncTavilyClient

from bench.run import table
from core.models import QueryIntent
from core.research.planning import PlannedQuery, ResearchPlan
from core.research.search import run_search
from core.sources.arxiv import ArxivSource
from core.sources.pages import page_text
from core.sources.policy import SourcePolicy
from core.sources.protocol import SearchQuery
from core.sources.pubmed import PubMedSource
from core.sources.searxng import SearxngSource
from core.sources.tavily import TavilySource
from core.sources.wikipedia import WikipediaSource
from core.web.fetch import PageFetcher
from core.web.net import AddressGuard, guarded_session
from tests.support.fake_web import Article, FakeWeb

LATENCY_S = {"/tavily/search": 0.30, "/w/api.php": 0.12, "/arxiv/query": 0.25,
             "/eutils/esearch.fcgi": 0.10, "/eutils/esummary.fcgi": 0.10,
             "/eutils/efetch.fcgi": 0.10, "/searx/search": 0.20}
QUERIES = ["cat sleep hours", "cat sleep kittens", "cat sleep metformin"]


def _sources(web: FakeWeb, session: aiohttp.ClientSession) -> dict[str, Any]:
    def policy(name: str) -> SourcePolicy:
        return SourcePolicy(name, concurrency=4, rate_per_s=100, timeout_s=10, attempts=1)

    return {
        "tavily": TavilySource(AsyncTavilyClient(api_key="tvly-test",
                                                 api_base_url=web.base + "/tavily"),
                               policy("tavily")),
        "wikipedia": WikipediaSource(session, policy("wikipedia"), web.base + "/w/api.php"),
        "arxiv": ArxivSource(session, policy("arxiv"), web.base + "/arxiv/query"),
        "pubmed": PubMedSource(session, policy("pubmed"), web.base + "/eutils"),
        "searxng": SearxngSource(session, policy("searxng"), web.base + "/searx"),
    }


async def fan_out(web: FakeWeb) -> list[list[Any]]:
    web.latency = dict(LATENCY_S)
    async with aiohttp.ClientSession() as session:
        sources = _sources(web, session)
        singles = {}
        for name, source in sources.items():  # each alone, warm (the first call pays setup)
            query = SearchQuery(text=f"cat sleep warm {name}", tenant="b")
            await source.search(query)
            started = time.perf_counter()
            await source.search(SearchQuery(text=f"cat sleep single {name}", tenant="b"))
            singles[name] = time.perf_counter() - started
        plan = ResearchPlan(queries=[PlannedQuery(text=q, purpose="", sources=list(sources))
                                     for q in QUERIES])
        started = time.perf_counter()
        outcome = await run_search(plan, sources, "b", QueryIntent(), 8, 10.0)
        wall = time.perf_counter() - started
    slowest = max(singles, key=lambda name: singles[name])
    rows = [[name, f"{seconds * 1000:.0f}"] for name, seconds in singles.items()]
    rows.append(["fan-out: 3 queries x 5 sources (15 calls)", f"{wall * 1000:.0f}"])
    rows.append([f"ratio to the slowest single call ({slowest})",
                 f"{wall / singles[slowest]:.3f}"])
    assert not outcome.failures, outcome.failures
    return rows


def _page(n: int) -> bytes:
    filler = "".join(f"<li><a href='/tag/{k}'>Tag {k}</a></li>" for k in range(300))
    prose = " ".join(f"Paragraph {k} of page {n} says cats sleep for long hours in the day "
                     "and hunt at dawn and dusk." for k in range(60))
    return (f"<html><head><title>Page {n}</title></head><body><nav><ul>{filler}</ul></nav>"
            f"<main><article><h1>Cats {n}</h1><p>{prose}</p></article></main>"
            f"<footer>{filler}</footer></body></html>").encode()


async def fetching(web: FakeWeb, count: int) -> list[list[Any]]:
    web.latency = {}
    for n in range(count):
        web.pages[f"/page/{n}"] = (_page(n), "text/html; charset=utf-8")
    size_kb = len(_page(0)) / 1024
    rows = []
    for per_host in (2, 8):
        guard = AddressGuard.trusting(web.base)
        async with guarded_session("bench", guard=guard) as session:
            fetcher = PageFetcher(session, per_host=per_host, concurrency=8, timeout_s=60,
                                  guard=guard)
            await fetcher.fetch(f"{web.base}/page/0")  # robots.txt and imports, once
            urls = [f"{web.base}/page/{n}" for n in range(count)]
            started = time.perf_counter()
            outcomes = await fetcher.fetch_many(urls)
            texts = await asyncio.gather(*(asyncio.to_thread(page_text, o)
                                           for o in outcomes.values()
                                           if not isinstance(o, Exception)))
            wall = time.perf_counter() - started
        ok = sum(1 for text in texts if text.text)
        rows.append([per_host, count, f"{size_kb:.0f}", ok, f"{wall:.2f}",
                     f"{ok / wall:.1f}"])
    return rows


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=60)
    args = parser.parse_args()
    web = FakeWeb()
    await web.start()
    web.articles = [Article(title=f"Cat sleep {n}", text=f"Cats sleep many hours, fact {n}.",
                            url=f"{web.base}/cats/{n}", pmid=str(38000000 + n))
                    for n in range(8)]
    try:
        table("Search fan-out (ms; API calls take 100-300 ms; PubMed makes 3 in a row)",
              ["call", "ms"], await fan_out(web))
        table("Pages fetched and extracted", ["per host", "pages", "KB each", "read",
                                              "wall s", "pages/s"],
              await fetching(web, args.pages))
    finally:
        await web.stop()


if __name__ == "__main__":
    asyncio.run(main())
