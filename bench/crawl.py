"""Crawling a site into the knowledge base: `researchbot index URL --crawl N` against a local
site of N linked pages (each ~300 words under its own heading), as a whole process. Prints
one table: pages indexed, seconds, pages a second, the process's peak RSS; then the same
site indexed again with nothing changed (every page fetched, none embedded).

    .venv/bin/python bench/crawl.py [--pages 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from aiohttp import web

from tests.support import researchbot

WORDS = ["river", "valley", "harbour", "lantern", "orchard", "meadow", "glacier", "canyon",
         "plateau", "estuary", "lighthouse", "quarry", "vineyard", "causeway", "marsh"]


def page(number: int, pages: int) -> str:
    body = " ".join(f"{WORDS[(number * 7 + k) % len(WORDS)]}" for k in range(300))
    links = "".join(f'<li><a href="/site/p{child}.html">page {child}</a></li>'
                    for child in (2 * number + 1, 2 * number + 2) if child < pages)
    return (f"<html><head><title>Page {number}</title></head><body><nav><ul>{links}</ul>"
            f"</nav><main><article><h1>Page {number} about {WORDS[number % len(WORDS)]}"
            f"</h1><p>Entry {number}. {body}.</p></article></main></body></html>")


async def serve_site(pages: int) -> tuple[web.AppRunner, int]:
    async def handle(request: web.Request) -> web.Response:
        name = request.match_info["name"]
        number = int(name.removeprefix("p").removesuffix(".html")) \
            if name.startswith("p") and name.endswith(".html") else -1
        if not 0 <= number < pages:
            return web.Response(status=404)
        return web.Response(text=page(number, pages), content_type="text/html")

    app = web.Application()
    async def robots(_request: web.Request) -> web.Response:
        return web.Response(text="User-agent: *\nAllow: /\n")

    app.router.add_get("/robots.txt", robots)
    app.router.add_get("/site/{name}", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, port


async def index(url: str, pages: int, env: dict[str, str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = await researchbot.run_async("index", url, "--crawl", str(pages), "--depth", "10",
                                       env=env, timeout=None)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    return time.perf_counter() - started, done.stdout.strip()


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=200)
    args = parser.parse_args()
    runner, port = await serve_site(args.pages)
    base = f"http://127.0.0.1:{port}"
    rows = []
    try:
        with tempfile.TemporaryDirectory() as data:
            env = {**os.environ, "RESEARCHBOT_DATA_DIR": data,
                   "RESEARCHBOT_SOURCES__TRUSTED_PAGES": json.dumps([base]),
                   "RESEARCHBOT_ADVANCED__SOURCES__RATE_PER_SECOND": "1000"}
            for run in ("first crawl", "again, unchanged"):
                before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
                seconds, said = await index(f"{base}/site/p0.html", args.pages, env)
                peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
                rows.append([run, said.split(":")[1].split(";")[0].strip(),
                             f"{seconds:.1f}", f"{args.pages / seconds:.1f}",
                             f"{max(peak, before) / 1024:.0f}"])
    finally:
        await runner.cleanup()
    header = ["run", "outcome", "seconds", "pages/s", "peak RSS MB (any child so far)"]
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    asyncio.run(main())
