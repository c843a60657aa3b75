"""Servers failing under a running deployment: what is lost.

    .venv/bin/python bench/outages.py [--questions 200] [--code DIR] [--only pg,redis,serve]

Each scenario starts its own servers (a PostgreSQL and a Redis of its own, on free loopback
ports: the shared ones are never touched), `researchbot serve` and two `researchbot worker`
processes (`python -m bot` in --code with PYTHONPATH=--code, default this checkout: point it
at another checkout to measure that revision), a fake Wikipedia whose every call takes a second,
and asks through the HTTP API at concurrency 20:

- pg: --questions asked over 10 s, the database stopped for 6 s four seconds in, the jobs
  read all along (GET);
- redis: --questions asked over ~30 s, the queue's Redis killed for 20 s five seconds in (it
  comes back empty, as a Redis without persistence does);
- chroma: --questions asked over 20 s to workers searching a Chroma server, which is
  killed for 10 s five seconds in and started again on the same data;
- serve: 24 questions to `serve` without a queue (SQLite), killed with SIGKILL while they run
  and started again.

Then it waits up to --settle-s for every job to end and prints, per scenario: questions
asked, accepted (202), refused (503), 5xx answers (POST and GET), and the jobs completed,
failed (with accepted-then-failed apart) and stuck (pending or in progress at the end).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import signal
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx

from bench.tables import table
from tests.core.jobs.test_outages import QUESTIONS, TENANT, _rows, _serve, _web_settings
from tests.support.cluster import Cluster, cluster, free_port, wait_until
from tests.support.fake_web import Article, FakeWeb
from tests.support.private_servers import private_chroma, private_postgres, private_redis

CONCURRENCY = 20


@dataclass
class Tally:
    asked: int = 0
    posts: Counter[int] = field(default_factory=Counter)
    reads: Counter[int] = field(default_factory=Counter)
    accepted: list[str] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)

    async def ask(self, client: httpx.AsyncClient, n: int) -> None:
        self.asked += 1
        try:
            response = await client.post("/v1/research", json={
                "question": f"{QUESTIONS[n % len(QUESTIONS)]} (asked {n})"})
        except httpx.TransportError as error:
            self.posts[0] += 1  # no answer at all
            self.errors[type(error).__name__] += 1
            return
        self.posts[response.status_code] += 1
        if response.status_code == 202:
            self.accepted.append(response.json()["job_id"])

    async def read(self, client: httpx.AsyncClient, stop: asyncio.Event) -> None:
        while not stop.is_set():
            if self.accepted:
                try:
                    response = await client.get(f"/v1/jobs/{random.choice(self.accepted)}")
                    self.reads[response.status_code] += 1
                except httpx.TransportError:
                    self.reads[0] += 1
            await asyncio.sleep(0.05)


async def _asking(tally: Tally, client: httpx.AsyncClient, count: int,
                  every_s: float = 0.0) -> None:
    turns = asyncio.Semaphore(CONCURRENCY)

    async def one(n: int) -> None:
        async with turns:
            await tally.ask(client, n)

    tasks = []
    for n in range(count):
        tasks.append(asyncio.create_task(one(n)))
        if every_s:
            await asyncio.sleep(every_s)
    await asyncio.gather(*tasks)


async def _settle(store_url: str, settle_s: float) -> None:
    async def ended() -> bool:
        try:
            return all(row["status"] not in ("pending", "in_progress")
                       for row in await _rows(store_url))
        except OSError:
            return False

    with contextlib.suppress(TimeoutError):
        await wait_until(ended, settle_s, every_s=1.0)


async def _row(name: str, tally: Tally, store_url: str, seconds: float) -> list[object]:
    rows = await _rows(store_url)
    status = Counter(row["status"] for row in rows)
    accepted = set(tally.accepted)
    failed_after = sum(row["status"] == "failed" and row["id"] in accepted for row in rows)
    fives = sum(n for code, n in tally.posts.items() if code >= 500 and code != 503)
    read_fives = sum(n for code, n in tally.reads.items() if code >= 500 and code != 503)
    print(f"{name}: POST {dict(tally.posts)}, GET {dict(tally.reads)}, no answer "
          f"{dict(tally.errors)}", flush=True)
    return [name, tally.asked, tally.posts[202], tally.posts[503], fives, read_fives,
            tally.reads[503], status["completed"], failed_after,
            status["failed"] - failed_after,
            status["pending"] + status["in_progress"], round(seconds)]


def _env(code: Path) -> dict[str, str]:
    extra = {"PYTHONPATH": str(code)}
    if "lost_job_seconds" in (code / "core" / "config.py").read_text():
        extra["RESEARCHBOT_ADVANCED__QUEUE__LOST_JOB_SECONDS"] = "10"
    return extra


async def _deployment(made: Cluster, workers: int = 2) -> str:
    url = await _serve(made)
    for n in range(workers):
        await made.worker(f"worker-{n + 1}")
    return url


class Restartable(Protocol):
    async def stop(self) -> None: ...

    async def start(self) -> None: ...


async def _outage(made: Cluster, server: Restartable, store_url: str, label: str,
                  questions: int, ask_for_s: float, up_s: float, down_s: float,
                  settle_s: float) -> list[object]:
    """`questions` asked over `ask_for_s` through serve and two workers while `server` is
    stopped `up_s` into the run for `down_s`; the tally once every job has settled."""
    url = await _deployment(made)
    tally, stop = Tally(), asyncio.Event()
    started = time.perf_counter()
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        reading = asyncio.create_task(tally.read(client, stop))
        asking = asyncio.create_task(_asking(tally, client, questions,
                                             every_s=ask_for_s / questions))
        await asyncio.sleep(up_s)
        await server.stop()
        await asyncio.sleep(down_s)
        await server.start()
        await asking
        await _settle(store_url, settle_s)
        stop.set()
        await reading
    return await _row(label, tally, store_url, time.perf_counter() - started)


async def pg_restart(folder: Path, web: FakeWeb, code: Path, questions: int,
                     settle_s: float) -> list[object]:
    async with private_postgres() as pg, private_redis() as redis, \
            cluster(folder, TENANT, fresh=True, RESEARCHBOT_STORE__URL=pg.url,
                    RESEARCHBOT_REDIS__URL=redis.url, **_web_settings(web),
                    **_env(code)) as made:
        return await _outage(made, pg, pg.url, f"pg restart 6 s, {questions} q", questions,
                             ask_for_s=10, up_s=4, down_s=6, settle_s=settle_s)


async def redis_down(folder: Path, web: FakeWeb, code: Path, questions: int,
                     settle_s: float) -> list[object]:
    async with private_postgres() as pg, private_redis() as redis, \
            cluster(folder, TENANT, fresh=True, RESEARCHBOT_STORE__URL=pg.url,
                    RESEARCHBOT_REDIS__URL=redis.url, **_web_settings(web),
                    **_env(code)) as made:
        return await _outage(made, redis, pg.url, f"redis down 20 s, {questions} q",
                             questions, ask_for_s=30, up_s=5, down_s=20, settle_s=settle_s)


async def chroma_stopped(folder: Path, web: FakeWeb, code: Path, questions: int,
                         settle_s: float) -> list[object]:
    async with private_postgres() as pg, private_redis() as redis, \
            private_chroma(folder) as chroma, \
            cluster(folder, TENANT, fresh=True, RESEARCHBOT_STORE__URL=pg.url,
                    RESEARCHBOT_REDIS__URL=redis.url,
                    RESEARCHBOT_KNOWLEDGE_BASE__CHROMA_URL=chroma.url, **_web_settings(web),
                    **_env(code)) as made:
        return await _outage(made, chroma, pg.url, f"chroma down 10 s, {questions} q",
                             questions, ask_for_s=20, up_s=5, down_s=10, settle_s=settle_s)


async def serve_killed(folder: Path, web: FakeWeb, code: Path, questions: int,
                       settle_s: float) -> list[object]:
    store = f"sqlite+aiosqlite:///{folder / 'data' / 'jobs.sqlite3'}"
    web.latency["/w/api.php"] = 3.0
    async with cluster(folder, TENANT, fresh=True, RESEARCHBOT_STORE__URL=store,
                       RESEARCHBOT_REDIS__URL="", **_web_settings(web), **_env(code)) as made:
        port = free_port()
        url = await _serve(made, "serve-1", port)
        tally = Tally()
        started = time.perf_counter()
        async with httpx.AsyncClient(base_url=url, timeout=60) as client:
            await _asking(tally, client, questions)
        await asyncio.sleep(1.5)
        made.processes[0].handle.send_signal(signal.SIGKILL)
        await made.processes[0].handle.wait()
        web.latency["/w/api.php"] = 0.2
        await _serve(made, "serve-2", port)
        await _settle(store, settle_s)
        return await _row(f"serve killed, {questions} q", tally, store,
                          time.perf_counter() - started)


SCENARIOS: dict[str, Callable[..., Awaitable[list[object]]]] = {
    "pg": pg_restart, "redis": redis_down, "chroma": chroma_stopped, "serve": serve_killed}


async def main(args: argparse.Namespace, code: Path) -> None:
    os.environ["PYTHONPATH"] = str(code)  # the processes cluster() starts run this code
    rows = []
    for name in args.only.split(","):
        web = FakeWeb()
        web.articles.append(Article("Cat", "The cat is a small domesticated carnivorous "
                                    "mammal.", "https://en.wikipedia.org/wiki/Cat"))
        web.latency["/w/api.php"] = 1.0
        await web.start()
        try:
            with tempfile.TemporaryDirectory(prefix=f"outage-{name}-") as folder:
                count = 24 if name == "serve" else args.questions
                rows.append(await SCENARIOS[name](Path(folder), web, code, count,
                                                  args.settle_s))
        finally:
            await web.stop()
        print(rows[-1], flush=True)
    table(f"Outages ({code})",
          ["scenario", "asked", "202", "503", "POST 5xx", "GET 5xx", "GET 503", "completed",
           "accepted then failed", "other failed", "stuck", "s"], rows)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--code", default=str(Path(__file__).resolve().parent.parent))
    parser.add_argument("--only", default="pg,redis,chroma,serve")
    parser.add_argument("--settle-s", type=float, default=120.0)
    arguments = parser.parse_args()
    checkout = Path(arguments.code).resolve()
    os.chdir(checkout)  # `python -m bot` puts its working directory first on the path
    asyncio.run(main(arguments, checkout))
