"""Oversized answers: what one question costs when a search API, a page or the model answers
with 50 MB (or a gzip bomb: ~50 KB that inflates to 50 MB).

    .venv/bin/python bench/oversized.py [--uncapped]

Fake servers on 127.0.0.1 (this process) play SearXNG, Tavily, the pages and an
OpenAI-compatible model. Each case runs in a fresh process of its own, through the real
composition root (bot.wiring.open_research with a Settings object), after one warm-up
question on well-behaved fakes (imports, the embedding model); the RSS is sampled every 5 ms
while the question runs (the pipeline already open), so cases do not mask each other: the
table gives the rise of the peak over the RSS when the question started, and the process's
peak over its life (pipeline, embedding model and litellm included). `--uncapped` lifts the caps
(advanced.sources.max_response_mb and advanced.sources.max_page_mb to 10 GB, litellm on a plain
httpx client) to show what they save.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from aiohttp import web  # noqa: E402

from bench.tables import table  # noqa: E402
from tests.support.local_server import LocalServer  # noqa: E402

HUGE = 50 * 1024 * 1024
CHUNK = 64 * 1024
QUESTION = "How many hours a day do cats sleep?"
# A search API's 50 MB: ~700,000 result objects, as a runaway or hostile API might send.
RESULT = b'{"url": "http://cats.invalid/", "title": "Cats", "content": "Cats sleep."}, '
PAGE = (b"<html><head><title>Cat sleep</title></head><body><main><article><h1>Cat sleep</h1>"
        b"<p>Domestic cats sleep between 12 and 16 hours a day; kittens and old cats sleep "
        b"even longer.</p></article></main></body></html>")
# case -> (label, SearXNG route or None, Tavily route or None, model on)
CASES: dict[str, tuple[str, str | None, str | None, bool]] = {
    "baseline": ("well-behaved fakes (reference)", "ok", None, False),
    "api-50mb": ("search API (SearXNG): 50 MB JSON", "huge", None, False),
    "api-bomb": ("search API (SearXNG): gzip bomb", "bomb", None, False),
    "tavily-50mb": ("search API (Tavily, httpx): 50 MB JSON", None, "huge", False),
    "page-50mb": ("page: 50 MB HTML", "page-huge", None, False),
    "page-bomb": ("page: gzip bomb", "page-bomb", None, False),
    "model-50mb": ("model: 50 MB reply", "ok", None, True),
}


class Fakes(LocalServer):
    """SearXNG routes /searx-<kind>/search, Tavily /tavily-<kind>/search, pages /page/<kind>,
    and a model at /v1 whose every reply is 50 MB."""

    def __init__(self) -> None:
        super().__init__()
        self.bomb = gzip.compress(b'{"query": "cats", "results": [' + b" " * HUGE + b"]}", 9)
        self.page_bomb = gzip.compress(b"<html><body><p>" + b"cats " * (HUGE // 5), 9)
        router = self.app.router
        router.add_get("/searx-{kind}/search", self._searx)
        router.add_post("/tavily-{kind}/search", self._tavily)
        router.add_get("/robots.txt", self._robots)
        router.add_get("/page/{kind}", self._page)
        router.add_post("/v1/chat/completions", self._model)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _results(self, page: str) -> list[dict[str, str]]:
        return [{"url": f"{self.base}/page/{page}", "title": "Cat sleep",
                 "content": "Cats sleep between 12 and 16 hours a day.", "engine": "fake"}]

    async def _searx(self, request: web.Request) -> web.StreamResponse:
        kind = request.match_info["kind"]
        if kind == "huge":
            return await _stream(request, b'{"query": "cats", "results": [', RESULT, b"{}]}",
                                 "application/json")
        if kind == "bomb":
            return web.Response(body=self.bomb, headers={
                "Content-Encoding": "gzip", "Content-Type": "application/json"})
        page = {"page-huge": "huge", "page-bomb": "bomb"}.get(kind, "ok")
        return web.json_response({"query": request.query["q"],
                                  "results": self._results(page)})

    async def _tavily(self, request: web.Request) -> web.StreamResponse:
        return await _stream(request, b'{"query": "cats", "results": [', RESULT, b"{}]}",
                             "application/json")

    async def _robots(self, request: web.Request) -> web.Response:
        return web.Response(text="User-agent: *\nAllow: /\n")

    async def _page(self, request: web.Request) -> web.StreamResponse:
        kind = request.match_info["kind"]
        if kind == "huge":
            return await _stream(request, b"<html><body><p>", b"cats ", b"</p></body></html>",
                                 "text/html")
        if kind == "bomb":
            return web.Response(body=self.page_bomb, headers={
                "Content-Encoding": "gzip", "Content-Type": "text/html"})
        return web.Response(body=PAGE, content_type="text/html")

    async def _model(self, request: web.Request) -> web.StreamResponse:
        head = (b'{"id": "c1", "object": "chat.completion", "created": 1, "model": "m", '
                b'"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": '
                b'"assistant", "content": "')
        tail = b'"}}], "usage": {"prompt_tokens": 1, "completion_tokens": 1, ' \
               b'"total_tokens": 2}}'
        return await _stream(request, head, b"a", tail, "application/json")


async def _stream(request: web.Request, head: bytes, unit: bytes, tail: bytes,
                  kind: str) -> web.StreamResponse:
    """50 MB of `unit` between `head` and `tail`, chunked, until the client hangs up."""
    response = web.StreamResponse(headers={"Content-Type": kind})
    await response.prepare(request)
    filler = unit * (CHUNK // len(unit))
    try:
        await response.write(head)
        for _ in range(HUGE // len(filler)):
            await response.write(filler)
        await response.write(tail)
    except (ConnectionError, RuntimeError):
        pass  # the client stopped reading
    return response


class PeakSampler:
    """The process's peak resident memory while it runs, sampled every 5 ms."""

    def __init__(self) -> None:
        import psutil

        self._process = psutil.Process()
        self.start_rss = self._process.memory_info().rss
        self.peak_rss = self.start_rss
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._done.wait(0.005):
            self.peak_rss = max(self.peak_rss, self._process.memory_info().rss)

    def stop(self) -> float:
        """The peak's rise over the start, in MB."""
        self._done.set()
        self._thread.join()
        self.peak_rss = max(self.peak_rss, self._process.memory_info().rss)
        return (self.peak_rss - self.start_rss) / 2**20


def _settings(case: str, base: str, data_dir: Path, uncapped: bool) -> Any:
    from bot.config import Settings
    from core.config import CacheSettings, LLMSettings, SourcesSettings

    _, searx, tavily, model = CASES[case]
    huge_mb = 10_000.0 if uncapped else None
    sources: dict[str, Any] = {
        "wikipedia": False, "arxiv": False, "pubmed": False, "cache_ttl_hours": 0,
        "fetch_pages": 3, "attempts": 1, "timeout_s": 60, "trusted_pages": [base],
        "searxng_url": f"{base}/searx-{searx}" if searx else None}
    if tavily:
        sources.update(tavily_api_key="tvly-bench", tavily_api=f"{base}/tavily-{tavily}")
    if huge_mb:
        sources.update(max_response_mb=huge_mb, max_page_mb=huge_mb)
    llm = LLMSettings(fast_model="openai/m", api_base=f"{base}/v1", api_key="test-key",
                      attempts=1, timeout_s=60) if model else LLMSettings()
    return Settings(data_dir=data_dir, sources=SourcesSettings(**sources),
                    cache=CacheSettings(enabled=False), llm=llm)


async def _ask(settings: Any, base: str) -> tuple[Any, list[str], float, float]:
    """The result, the pages not read, the seconds and the peak RSS rise (MB) of the question
    (the pipeline is opened before the measure starts)."""
    from bot.wiring import open_job_reader, open_research
    from core.models import ResearchRequest

    async with open_research(settings) as research:
        sampler = PeakSampler()
        started = time.perf_counter()
        result = await research.jobs.answer(await research.jobs.submit(
            ResearchRequest(question=QUESTION, tenant="bench")))
        seconds = time.perf_counter() - started
        rise = sampler.stop()
    async with open_job_reader(settings) as jobs:
        job = await jobs.store.get(result.job_id)
    unread = [page for round_ in job.trace.iterations for page in round_.pages_unread]
    return result, unread, seconds, rise


async def child(case: str, base: str, uncapped: bool) -> dict[str, Any]:
    import resource

    import litellm  # imported before the baseline: its import is not the case's cost

    if uncapped:
        import httpx

        litellm.aclient_session = httpx.AsyncClient()
    folder = Path(tempfile.mkdtemp(prefix="oversized-"))
    await _ask(_settings("baseline", base, folder / "warm", uncapped), base)
    result, unread, seconds, delta = await _ask(_settings(case, base, folder / "case",
                                                          uncapped), base)
    said = result.answer.limitations + [f"page not read: {u.split(': ', 1)[-1]}"
                                        for u in unread]
    return {"case": case, "result": " ".join(said) or f"answered ({result.answer.confidence})",
            "seconds": seconds, "delta_mb": delta,
            "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--uncapped", action="store_true")
    parser.add_argument("--child", choices=list(CASES))
    parser.add_argument("--base")
    args = parser.parse_args()
    if args.child:
        print("RESULT " + json.dumps(await child(args.child, args.base, args.uncapped)))
        return
    fakes = Fakes()
    await fakes.start()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RESEARCHBOT_")}
    rows: list[list[object]] = []
    try:
        for case, (label, *_) in CASES.items():
            command = [sys.executable, str(ROOT / "bench" / "oversized.py"), "--child", case,
                       "--base", fakes.base] + (["--uncapped"] if args.uncapped else [])
            with tempfile.TemporaryDirectory() as cwd:  # no config.toml of the caller's
                process = await asyncio.create_subprocess_exec(
                    *command, cwd=cwd, env=env, stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE)
                out, err = await asyncio.wait_for(process.communicate(), 600)
            found = [line for line in out.decode().splitlines() if line.startswith("RESULT ")]
            if not found:
                rows.append([label, "crashed: " + err.decode()[-300:], "", "", ""])
                continue
            data = json.loads(found[-1].removeprefix("RESULT "))
            rows.append([label, data["result"], f"{data['seconds']:.2f}",
                         f"{data['delta_mb']:.0f}", f"{data['peak_mb']:.0f}"])
    finally:
        await fakes.stop()
    caps = "caps lifted (--uncapped)" if args.uncapped else \
        "default caps: advanced.sources.max_response_mb 4, advanced.sources.max_page_mb 5, " \
        "model replies 16 MB"
    table(f"One question against a 50 MB answer ({caps})",
          ["case", "result (limitations)", "seconds", "peak RSS rise MB (question)",
           "process peak RSS MB"], rows)


if __name__ == "__main__":
    asyncio.run(main())
