"""Servers that fail under a running deployment lose nothing: `researchbot serve` and two
workers on a PostgreSQL and a Redis of the test's own, driven by a real HTTP client while the
database restarts and the queue goes away; a `serve` killed with jobs in flight resumes them;
a full disk or a stopped Chroma server turns the API not ready and refuses questions (503)."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import create_async_engine

from bot.serve import ADMISSION_PROBE_S
from core.store.database import job_events, jobs
from tests.support.api_harness import api_settings, running_api
from tests.support.clock import FakeClock
from tests.support.cluster import Cluster, cluster, free_port, wait_until
from tests.support.fake_web import FakeWeb, slow_wikipedia, wikipedia_only
from tests.support.private_servers import private_chroma, private_postgres, private_redis

pytestmark = pytest.mark.system

TENANT = "T1"
QUESTIONS = ["How many hours a day do cats sleep?", "Why does sourdough bread taste sour?",
             "When did Mount Vesuvius bury Pompeii?", "How much caffeine is in black tea?",
             "What do cats need to eat?", "How do cats see in the dark?"]
UNFINISHED = ("pending", "in_progress")
WIKIPEDIA = "/w/api.php"


@pytest.fixture
async def slow_web() -> AsyncIterator[FakeWeb]:
    """Jobs are in flight when a server fails."""
    async with slow_wikipedia(2.0) as web:
        yield web


def _web_settings(web: FakeWeb) -> dict[str, str]:
    return {**wikipedia_only(web), "RESEARCHBOT_TENANT": TENANT,
            "RESEARCHBOT_ADVANCED__WEB__QUESTIONS_PER_MINUTE": "100000",
            "RESEARCHBOT_ADVANCED__WEB__TENANT_QUESTIONS_PER_MINUTE": "100000"}


async def _serve(made: Cluster, name: str = "serve", port: int | None = None) -> str:
    port = port or free_port()
    process = await made.start(name, "serve", "--host", "127.0.0.1", "--port", str(port))
    url = f"http://127.0.0.1:{port}"
    await process.wait_for_http(f"{url}/healthz")
    return url


async def _ask(client: httpx.AsyncClient, count: int, first: int = 0) -> list[httpx.Response]:
    return list(await asyncio.gather(*(
        client.post("/v1/research", json={"question": QUESTIONS[n % len(QUESTIONS)] +
                                          f" (asked {n})"})
        for n in range(first, first + count))))


async def _rows(url: str, table: Any = jobs) -> list[dict[str, Any]]:
    engine = create_async_engine(url)
    try:
        async with engine.connect() as connection:
            return [dict(row._mapping) for row in await connection.execute(select(table))]
    finally:
        await engine.dispose()


def _refused_for_now(response: httpx.Response) -> None:
    """503 with a reason and when to ask again: never a 500."""
    assert response.status_code == 503, (response.status_code, response.text)
    assert response.json()["error"]["type"] == "unavailable"
    assert response.json()["error"]["retryable"] is True
    assert int(response.headers["Retry-After"]) >= 1


async def _read_until(client: httpx.AsyncClient, ids: list[str], stop: asyncio.Event,
                      seen: Counter[int]) -> None:
    """Read the jobs over and over, as a waiting client does, counting the statuses."""
    while not stop.is_set():
        for job_id in ids[:6]:
            response = await client.get(f"/v1/jobs/{job_id}")
            seen[response.status_code] += 1
            if response.status_code == 503:
                _refused_for_now(response)
        await asyncio.sleep(0.05)


async def test_a_database_restart_and_a_queue_outage_lose_no_question(
    tmp_path: Path, slow_web: FakeWeb,
) -> None:
    async with private_postgres() as pg, private_redis() as redis, \
            cluster(tmp_path, TENANT, fresh=True, RESEARCHBOT_STORE__URL=pg.url,
                    RESEARCHBOT_REDIS__URL=redis.url,
                    RESEARCHBOT_ADVANCED__QUEUE__LOST_JOB_SECONDS="5",
                    **_web_settings(slow_web)) as made:
        url = await _serve(made)
        await made.worker("worker-1")
        await made.worker("worker-2")
        async with httpx.AsyncClient(base_url=url, timeout=60) as client:
            accepted = await _ask(client, 24)
            assert [r.status_code for r in accepted] == [202] * 24
            ids = [r.json()["job_id"] for r in accepted]
            await wait_until(lambda: _some(pg.url, "in_progress", 8), 60)

            # The database restarts under 16 running and 8 waiting jobs, read all along.
            seen: Counter[int] = Counter()
            stop = asyncio.Event()
            reading = asyncio.create_task(_read_until(client, ids, stop, seen))
            await pg.stop()

            async def readers_refused() -> bool:
                return seen[503] > 0

            await wait_until(readers_refused, 30, every_s=0.05)
            for refused in await _ask(client, 3, first=100):
                _refused_for_now(refused)
            await asyncio.sleep(5)  # the outage lasts while the running jobs go on
            await pg.start()
            await wait_until(lambda: _all_ended(pg.url), 120, every_s=0.5)
            stop.set()
            await reading
            assert seen[503] > 0 and set(seen) <= {200, 503}, seen
            rows = await _rows(pg.url)
            assert Counter(row["status"] for row in rows) == {"completed": 24}, \
                [(r["status"], r["error"]) for r in rows if r["status"] != "completed"]
            shown = [(await client.get(f"/v1/jobs/{i}")).json()["status"] for i in ids]
            assert shown == ["completed"] * 24

            # The queue goes away under 24 more: a question is refused at once (503), never
            # accepted and then failed; it comes back empty (no persistence), and the workers'
            # sweep queues again the jobs it lost.
            more = await _ask(client, 24, first=200)
            assert [r.status_code for r in more] == [202] * 24
            await wait_until(lambda: _some(pg.url, "in_progress", 8), 60)
            await redis.stop()
            refused = await _ask(client, 3, first=300)
            for response in refused:
                _refused_for_now(response)
                assert "queue" in response.json()["error"]["message"]
            await redis.start()
            await wait_until(lambda: _all_ended(pg.url), 120, every_s=0.5)
            rows = await _rows(pg.url)
            answered = {row["id"] for row in rows if row["status"] == "completed"}
            assert {r.json()["job_id"] for r in more} <= answered
            never_queued = [row for row in rows if row["id"] not in answered]
            assert all(row["error"].startswith("queue unavailable") for row in never_queued)
            requeued = [e for e in await _rows(pg.url, job_events)
                        if e["message"].startswith("Queued again")]
            assert requeued, "Redis lost no queued job: the sweep was not needed"

            again = await client.post("/v1/research", json={"question": QUESTIONS[1]})
            assert again.status_code == 202, again.text
            await wait_until(lambda: _all_ended(pg.url), 60, every_s=0.5)
            ended = await client.get(f"/v1/jobs/{again.json()['job_id']}")
            assert ended.json()["status"] == "completed"


async def _some(url: str, status: str, at_least: int) -> bool:
    return sum(row["status"] == status for row in await _rows(url)) >= at_least


async def _all_ended(url: str) -> bool:
    try:
        return not [row for row in await _rows(url) if row["status"] in UNFINISHED]
    except OSError:  # still starting
        return False


async def test_jobs_in_flight_when_serve_is_killed_resume_when_it_starts_again(
    tmp_path: Path, slow_web: FakeWeb,
) -> None:
    """Without a queue, a `serve` killed (SIGKILL) with jobs running: the next `serve` runs
    them again from their stored request, their events continuing on the same stream, and
    the answer page says what happened."""
    slow_web.latency.clear()
    slow_web.hold(WIKIPEDIA)  # the jobs stay in their search until a `serve` is gone
    store = f"sqlite+aiosqlite:///{tmp_path / 'data' / 'jobs.sqlite3'}"
    async with cluster(tmp_path, TENANT, fresh=True, RESEARCHBOT_STORE__URL=store,
                       RESEARCHBOT_REDIS__URL="", **_web_settings(slow_web)) as made:
        port = free_port()
        url = await _serve(made, "serve-1", port)
        async with httpx.AsyncClient(base_url=url, timeout=60) as client:
            accepted = await _ask(client, 4)
            assert [r.status_code for r in accepted] == [202] * 4
            ids = [r.json()["job_id"] for r in accepted]
            await wait_until(lambda: _some(store, "in_progress", 4), 60)
        made.kill(made.processes[0])
        await made.processes[0].handle.wait()
        assert await _some(store, "in_progress", 4)  # nobody ended them

        slow_web.release(WIKIPEDIA)
        url = await _serve(made, "serve-2", port)
        await wait_until(lambda: _all_ended(store), 60, every_s=0.5)
        async with httpx.AsyncClient(base_url=url, timeout=60) as client:
            for job_id, accepted_response in zip(ids, accepted, strict=True):
                job = (await client.get(f"/v1/jobs/{job_id}")).json()
                assert job["status"] == "completed", job
                page = await client.get(accepted_response.json()["links"]["page"])
                assert "Resumed after a restart" in page.text
        events = [row for row in await _rows(store, job_events) if row["job_id"] == ids[0]]
        kinds = [row["kind"] for row in sorted(events, key=lambda row: row["seq"])]
        assert [row["seq"] for row in sorted(events, key=lambda row: row["seq"])] == \
            list(range(1, len(events) + 1))  # one stream, numbered on
        assert kinds[0] == "queued" and kinds.count("resumed") == 1
        assert kinds.index("resumed") < kinds.index("completed") == len(kinds) - 1

        # Stopped gracefully (SIGTERM), `serve` hands its running jobs back for the next start.
        slow_web.hold(WIKIPEDIA)
        async with httpx.AsyncClient(base_url=url, timeout=60) as client:
            stopped = [r.json()["job_id"] for r in await _ask(client, 2, first=10)]
        await wait_until(lambda: _some(store, "in_progress", 2), 60)
        made.processes[-1].handle.terminate()
        assert await made.processes[-1].handle.wait() == 0
        rows = {row["id"]: row for row in await _rows(store)}
        assert [rows[i]["status"] for i in stopped] == ["pending"] * 2
        slow_web.release(WIKIPEDIA)
        url = await _serve(made, "serve-3", port)
        await wait_until(lambda: _all_ended(store), 60, every_s=0.5)
        rows = {row["id"]: row for row in await _rows(store)}
        assert [rows[i]["status"] for i in stopped] == ["completed"] * 2
        told = [row["message"] for row in await _rows(store, job_events)
                if row["job_id"] == stopped[0]]
        assert "Handed back to the next start: its process stopped" in told


async def test_a_full_disk_or_a_stopped_chroma_turns_the_api_not_ready(
    tmp_path: Path, served_store: Path,
) -> None:
    """/readyz names the part that is down (503), and a question is refused with 503 and
    Retry-After while it is, instead of a job that could only fail; reads go on."""
    store = served_store
    full = api_settings(store, store={"min_free_mb": 10**12})  # more than any disk holds
    async with running_api(full) as api, api.client() as client:
        ready = await client.get("/readyz")
        assert ready.status_code == 503
        assert ready.json()["checks"]["disk"].startswith("full: the data folder's disk has")
        refused = await client.post("/v1/research", json={"question": QUESTIONS[0]})
        _refused_for_now(refused)
        assert "disk: full" in refused.json()["error"]["message"]
        assert (await client.get("/v1/jobs")).status_code == 200

    async with private_chroma(tmp_path) as chroma:
        settings = api_settings(store, knowledge_base={"chroma_url": chroma.url})
        clock = FakeClock()
        async with running_api(settings, clock=clock) as api, api.client() as client:
            assert (await client.get("/readyz")).status_code == 200
            # A blank question is judged (400) only once admitted: a look without a job.
            blank = {"question": "   "}
            assert (await client.post("/v1/research", json=blank)).status_code == 400
            await chroma.stop()
            ready = await client.get("/readyz")
            assert ready.status_code == 503
            assert ready.json()["checks"]["vector_store"] != "ok"
            clock.advance(ADMISSION_PROBE_S - 0.1)  # the last probe's answer still holds
            assert (await client.post("/v1/research", json=blank)).status_code == 400
            clock.advance(0.1)  # the next question probes again
            refused = await client.post("/v1/research", json={"question": QUESTIONS[0]})
            _refused_for_now(refused)
            assert "vector_store" in refused.json()["error"]["message"]
