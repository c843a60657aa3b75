"""The HTTP API through a real HTTP client against the running server (bot.serve under
uvicorn): every endpoint, every error shape, keys and tenants, Server-Sent Events resumed with
Last-Event-ID, cancel; every response checked against the server's own OpenAPI document."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from core.errors import ConfigurationError
from core.models import ResearchResult
from core.store.access import ApiKeys, ShareLinks
from core.store.database import open_database
from core.store.feedback import FeedbackStore, Rating
from tests.support.api_harness import (
    OTHER_TENANT,
    TENANT,
    OpenApiSpec,
    RunningApi,
    api_settings,
    read_events,
    running_api,
    server_keys,
)
from tests.support.fake_web import FakeWeb, slow_wikipedia

pytestmark = pytest.mark.integration

QUESTION = "How long do cats sleep?"


@pytest.fixture
def store(served_store: Path) -> Path:
    return served_store


WIKIPEDIA = "/w/api.php"


@pytest.fixture
async def slow_web() -> AsyncIterator[FakeWeb]:
    """A job is still running while a test watches, disconnects or cancels it: Wikipedia
    holds its calls until the test releases them."""
    async with slow_wikipedia() as web:
        web.hold(WIKIPEDIA)
        yield web


def _slow(store: Path, web: FakeWeb, **sections: Any) -> Any:
    return api_settings(store, pipeline={"local_only": False}, sources={
        "wikipedia_api": f"{web.base}/w/api.php", "arxiv": False, "pubmed": False,
        "cache_ttl_hours": 0, "fetch_pages": 0}, **sections)


@pytest.fixture
async def api(store: Path) -> AsyncIterator[RunningApi]:
    async with running_api(api_settings(store)) as running:
        yield running


async def _spec(api: RunningApi) -> OpenApiSpec:
    async with api.client() as client:
        response = await client.get("/openapi.json")
    assert response.status_code == 200
    return OpenApiSpec(response.json())


async def _events(client: httpx.AsyncClient, path: str,
                  last_event_id: str | None = None, limit: int | None = None
                  ) -> list[dict[str, str]]:
    """The events of one connection (up to `limit` of them, then it disconnects)."""
    headers = {"Last-Event-ID": last_event_id} if last_event_id else {}
    found = []
    async with client.stream("GET", path, headers=headers) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        async for event in read_events(response):
            found.append(event)
            if limit is not None and len(found) >= limit:
                break
    return found


def _seqs(events: list[dict[str, str]]) -> list[int]:
    return [int(event["id"]) for event in events if event.get("event") == "progress"]


# ---- submitting, following, reading ----------------------------------------------------------

async def test_a_question_is_accepted_followed_and_answered_as_ask_json(api: RunningApi) -> None:
    spec = await _spec(api)
    async with api.client() as client:
        accepted = await client.post("/v1/research", json={"question": QUESTION})
        spec.check("POST", "/v1/research", accepted)
        assert accepted.status_code == 202
        body = accepted.json()
        job_id = body["job_id"]
        assert accepted.headers["location"] == f"/v1/jobs/{job_id}"
        assert body["links"]["self"] == f"/v1/jobs/{job_id}"
        assert body["links"]["events"] == f"/v1/jobs/{job_id}/events"

        events = await _events(client, body["links"]["events"])
        assert events[-1]["event"] == "result"
        assert "id" not in events[-1]  # resuming after the result replays only the result
        progress = [json.loads(e["data"]) for e in events[:-1]]
        assert _seqs(events) == list(range(1, len(progress) + 1))
        assert progress[0]["kind"] == "queued" and progress[-1]["kind"] == "completed"
        assert {"search", "synthesize", "verify"} <= {p["stage"] for p in progress}
        searching = next(p for p in progress if p["stage"] == "search")
        assert searching["detail"]["round"] == 1 and searching["detail"]["rounds_allowed"] == 2
        assert searching["detail"]["queries"][0] == {"label": "the knowledge base",
                                                     "query": QUESTION}
        assert searching["message"].startswith(f"Round 1/2: searching the knowledge base: "
                                               f"'{QUESTION}'")
        weighed = next(p for p in progress if p["stage"] == "rank" and p["kind"] == "finished")
        assert weighed["detail"]["checklist"]["total"] == 1

        shown = await client.get(body["links"]["self"])
        spec.check("GET", "/v1/jobs/{job_id}", shown)
        job = shown.json()
        assert json.loads(events[-1]["data"]) == job
        assert job["status"] == "completed" and job["question"] == QUESTION
        assert "12 and 16 hours" in job["answer"]["summary"]
        trace = job["trace"]  # how it was researched
        assert trace["iterations_used"] >= 1 and trace["iterations_allowed"] == 2
        assert trace["stopped_by"] == "completed" and trace["limit_reached"] is False
        assert trace["checklist"][0]["status"] == "satisfied"
        assert {s["id"] for s in job["sources"]} <= set(trace["checklist"][0]["evidence"])
        assert trace["rounds"][0]["searches"][0] == {
            "source": "local", "label": "the knowledge base", "query": QUESTION,
            "results": trace["rounds"][0]["searches"][0]["results"], "failed": False}
        assert trace["totals"]["queries"]["local"] == \
            sum(len(r["searches"]) for r in trace["rounds"])
        assert {s["id"] for s in job["sources"]} <= set(trace["found_by"])

    # once completed, the same object `researchbot ask --json` prints, plus where it is
    engine = await open_database(api.settings.store_url)
    from core.store.jobs import JobStore

    stored = await JobStore(engine).get(job_id)
    await engine.dispose()
    public = ResearchResult.model_validate(stored.result).to_public_json(stored.trace)
    assert {key: job[key] for key in public} == public


async def test_a_finished_job_replays_its_events_and_closes(api: RunningApi) -> None:
    async with api.client() as client:
        job_id = (await client.post("/v1/research", json={"question": QUESTION})).json()["job_id"]
        first = await _events(client, f"/v1/jobs/{job_id}/events")
        again = await _events(client, f"/v1/jobs/{job_id}/events")
        assert again == first
        after_three = await _events(client, f"/v1/jobs/{job_id}/events", last_event_id="3")
        assert _seqs(after_three) == _seqs(first)[3:]
        assert after_three[-1] == first[-1]
        last = str(_seqs(first)[-1])
        assert await _events(client, f"/v1/jobs/{job_id}/events",
                             last_event_id=last) == [first[-1]]


async def test_reconnecting_with_last_event_id_resumes_without_gaps_or_repeats(
        store: Path, slow_web: FakeWeb) -> None:
    async with running_api(_slow(store, slow_web)) as api, api.client() as client:
        job_id = (await client.post("/v1/research", json={"question": QUESTION})).json()["job_id"]
        seen: list[dict[str, str]] = []
        last: str | None = None
        for _ in range(100):  # a client that drops the connection after every 3 events
            part = await _events(client, f"/v1/jobs/{job_id}/events", last, limit=3)
            seen += part
            slow_web.release(WIKIPEDIA)  # the first three came while the job ran
            if part[-1]["event"] == "result":
                break
            last = part[-1]["id"]
        assert seen[-1]["event"] == "result"
        seqs = _seqs(seen)
        assert seqs == list(range(1, len(seqs) + 1))  # no gap, no repeat
        assert json.loads(seen[-1]["data"])["status"] == "completed"
        running = [json.loads(e["data"]) for e in seen[:-1]]
        assert any(p["stage"] == "search" for p in running)
        status = (await client.get(f"/v1/jobs/{job_id}")).json()
        assert status["status"] == "completed"


async def test_a_running_job_reports_its_stage_and_cancel_stops_it(
        store: Path, slow_web: FakeWeb) -> None:
    async with running_api(_slow(store, slow_web)) as api, api.client() as client:
        spec = await _spec(api)
        job_id = (await client.post("/v1/research", json={"question": QUESTION})).json()["job_id"]
        async with client.stream("GET", f"/v1/jobs/{job_id}/events") as stream:
            events = read_events(stream)
            async for event in events:
                if event.get("event") == "progress" and \
                        json.loads(event["data"])["kind"] == "started" and \
                        json.loads(event["data"])["stage"] == "search":
                    break
            running = await client.get(f"/v1/jobs/{job_id}")
            spec.check("GET", "/v1/jobs/{job_id}", running)
            assert running.json()["status"] == "in_progress"
            assert running.json()["answer"] is None

            cancelled = await client.delete(f"/v1/jobs/{job_id}")
            spec.check("DELETE", "/v1/jobs/{job_id}", cancelled)
            assert cancelled.status_code == 202
            rest = [event async for event in events]
        assert [json.loads(e["data"])["kind"] for e in rest if e["event"] == "progress"][-1] \
            == "cancelled"
        assert json.loads(rest[-1]["data"])["status"] == "cancelled"
        assert (await client.get(f"/v1/jobs/{job_id}")).json()["status"] == "cancelled"

        again = await client.delete(f"/v1/jobs/{job_id}")
        spec.check("DELETE", "/v1/jobs/{job_id}", again)
        assert again.status_code == 409
        assert again.json()["error"]["type"] == "conflict"


async def test_retry_asks_again_without_the_cache(api: RunningApi) -> None:
    spec = await _spec(api)
    async with api.client() as client:
        first = (await client.post("/v1/research", json={"question": QUESTION})).json()
        await _events(client, first["links"]["events"])
        cached = (await client.post("/v1/research", json={"question": QUESTION})).json()
        await _events(client, cached["links"]["events"])
        assert (await client.get(cached["links"]["self"])).json()["metadata"]["cached"] is True

        retried = await client.post(f"/v1/jobs/{cached['job_id']}/retry")
        spec.check("POST", "/v1/jobs/{job_id}/retry", retried)
        assert retried.status_code == 202
        fresh = retried.json()
        assert fresh["job_id"] not in (first["job_id"], cached["job_id"])
        await _events(client, fresh["links"]["events"])
        answer = (await client.get(fresh["links"]["self"])).json()
        assert answer["question"] == QUESTION and answer["metadata"]["cached"] is False


async def test_recent_jobs_by_status_and_limit(api: RunningApi) -> None:
    spec = await _spec(api)
    async with api.client() as client:
        ids = []
        for question in (QUESTION, "What do cats eat?", "x"):
            response = await client.post("/v1/research", json={"question": question})
            if response.status_code == 202:
                ids.append(response.json()["job_id"])
                await _events(client, response.json()["links"]["events"])
        listed = await client.get("/v1/jobs", params={"limit": 10})
        spec.check("GET", "/v1/jobs", listed)
        jobs = listed.json()["jobs"]
        assert [job["job_id"] for job in jobs] == ids[::-1]
        assert all(job["platform"] == "api" and job["confidence"] for job in jobs)
        one = (await client.get("/v1/jobs", params={"limit": 1})).json()["jobs"]
        assert [job["job_id"] for job in one] == [ids[-1]]
        failed = await client.get("/v1/jobs", params={"status": "failed"})
        assert failed.json()["jobs"] == []
        for bad in ({"limit": 0}, {"limit": 101}, {"status": "done"}):
            refused = await client.get("/v1/jobs", params=bad)
            spec.check("GET", "/v1/jobs", refused)
            assert refused.status_code == 422
            assert refused.json()["error"]["type"] == "invalid_request"


async def test_feedback_is_stored_with_the_job(api: RunningApi) -> None:
    spec = await _spec(api)
    async with api.client() as client:
        job = (await client.post("/v1/research", json={"question": QUESTION})).json()
        await _events(client, job["links"]["events"])
        path = f"/v1/jobs/{job['job_id']}/feedback"
        stored = await client.post(path, json={"rating": "down", "comment": "too short"})
        spec.check("POST", "/v1/jobs/{job_id}/feedback", stored)
        assert stored.status_code == 201
        changed = await client.post(path, json={"rating": "up"})
        assert changed.status_code == 201
        bad = await client.post(path, json={"rating": "meh"})
        spec.check("POST", "/v1/jobs/{job_id}/feedback", bad)
        assert bad.status_code == 422
        token = job["links"]["page"].split("token=")[1]
        by_page = await httpx.AsyncClient(base_url=api.url).post(
            f"{path}?token={token}", json={"rating": "down", "comment": "<b>wrong</b>"})
        assert by_page.status_code == 201
    engine = await open_database(api.settings.store_url)
    found = await FeedbackStore(engine).for_job(job["job_id"])
    await engine.dispose()
    by_channel = {(f.channel, f.rating, f.comment) for f in found}
    # the API caller's second rating replaced its first
    assert by_channel == {("api", Rating.UP, ""), ("web", Rating.DOWN, "<b>wrong</b>")}
    assert all(f.tenant == TENANT for f in found)


# ---- errors ---------------------------------------------------------------------------------

async def test_bad_input_gets_the_error_shape_and_loses_nothing(api: RunningApi) -> None:
    spec = await _spec(api)
    cases: list[tuple[Any, int, str]] = [
        ({"question": ""}, 400, "invalid_question"),
        ({"question": "   "}, 400, "invalid_question"),
        ({"question": "a\x00b\x00c"}, 400, "invalid_question"),
        ({"question": "why " * 1000}, 400, "invalid_question"),
        ({}, 422, "invalid_request"),
        ({"question": 42}, 422, "invalid_request"),
        ({"question": QUESTION, "depth": "bottomless"}, 422, "invalid_request"),
        ({"question": QUESTION, "surprise": True}, 422, "invalid_request"),
        ({"question": QUESTION, "context": [{"question": ""}]}, 400, "invalid_question"),
    ]
    async with api.client() as client:
        for body, status, kind in cases:
            response = await client.post("/v1/research", json=body)
            spec.check("POST", "/v1/research", response)
            assert response.status_code == status, (body, response.text)
            error = response.json()["error"]
            assert error["type"] == kind and error["retryable"] is False
            assert error["message"] and "Traceback" not in error["message"]
        not_json = await client.post("/v1/research", content=b"\xff\xfe binary",
                                     headers={"content-type": "application/json"})
        assert not_json.status_code == 400
        assert not_json.json()["error"]["type"] == "invalid_request"
        huge = await client.post("/v1/research", content=b"{" + b" " * 200_000 + b"}",
                                 headers={"content-type": "application/json"})
        assert huge.status_code == 413
        assert huge.json()["error"]["type"] == "payload_too_large"

        async def chunks() -> AsyncIterator[bytes]:
            for _ in range(100):
                yield b" " * 4096

        streamed = await client.post("/v1/research", content=chunks(),
                                     headers={"content-type": "application/json"})
        assert streamed.status_code == 413
        # nothing was stored for any of them
        assert (await client.get("/v1/jobs")).json()["jobs"] == []

        for method, path in (("GET", "/v1/jobs/{job_id}"), ("DELETE", "/v1/jobs/{job_id}"),
                             ("GET", "/v1/jobs/{job_id}/events")):
            missing = await client.request(method, path.replace("{job_id}", "nosuchjob"))
            spec.check(method, path, missing)
            assert missing.status_code == 404
            assert missing.json()["error"] == {"type": "not_found", "message": "no such job",
                                               "retryable": False}
        nowhere = await client.get("/v2/anything")
        assert nowhere.status_code == 404 and nowhere.json()["error"]["type"] == "not_found"

        job = (await client.post("/v1/research", json={"question": QUESTION})).json()
        await _events(client, job["links"]["events"])
        bad_resume = await client.get(job["links"]["events"],
                                      headers={"Last-Event-ID": "yesterday"})
        assert bad_resume.status_code == 400
        assert bad_resume.json()["error"]["type"] == "invalid_request"


async def test_over_the_limit_is_429_with_retry_after(store: Path) -> None:
    settings = api_settings(store, web={"questions_per_minute": 2},
                            chat={"max_queue_seconds": 0})
    async with running_api(settings) as api, api.client() as client:
        spec = await _spec(api)
        statuses = []
        for _ in range(3):
            response = await client.post("/v1/research", json={"question": QUESTION})
            statuses.append(response.status_code)
        spec.check("POST", "/v1/research", response)
        assert statuses == [202, 202, 429]
        assert 1 <= int(response.headers["retry-after"]) <= 60
        assert response.json()["error"]["type"] == "rate_limited"
        assert response.json()["error"]["retryable"] is True
        assert len((await client.get("/v1/jobs")).json()["jobs"]) == 2


# ---- keys and tenants -------------------------------------------------------------------------

async def test_keys_decide_the_tenant_and_hide_other_tenants_jobs(api: RunningApi) -> None:
    spec = await _spec(api)
    async with api.client() as anonymous:  # no key exists yet, loopback: served as `tenant`
        before = await anonymous.post("/v1/research", json={"question": QUESTION})
        assert before.status_code == 202
    async with server_keys(api) as keys:
        _, mine = await keys.create(TENANT, "tests")
        _, theirs = await keys.create(OTHER_TENANT)
        revoked_row, revoked = await keys.create(TENANT)
        assert await keys.revoke(revoked_row.id)

    async with api.client(mine) as client:
        job = (await client.post("/v1/research", json={"question": QUESTION})).json()
        await _events(client, job["links"]["events"])
        assert (await client.get(job["links"]["self"])).status_code == 200
        listed = [j["job_id"] for j in (await client.get("/v1/jobs")).json()["jobs"]]
        assert job["job_id"] in listed and before.json()["job_id"] in listed  # same tenant

    # each from an address of its own: one address failing this often is locked out (429),
    # which test_http_hostile tests
    for number, key in enumerate((None, "rb_nothing_here", mine[:-2] + "xx", revoked,
                                  "not-a-key")):
        async with api.client(key, address=f"192.0.2.{number + 1}") as client:
            for method, path, template in (
                    ("POST", "/v1/research", "/v1/research"),
                    ("GET", "/v1/jobs", "/v1/jobs"),
                    ("GET", job["links"]["self"], "/v1/jobs/{job_id}"),
                    ("GET", job["links"]["events"], "/v1/jobs/{job_id}/events")):
                response = await client.request(
                    method, path, json={"question": QUESTION} if method == "POST" else None)
                spec.check(method, template, response)
                assert response.status_code == 401, (key, path)
                assert response.json()["error"]["type"] == "unauthorized"
                assert response.headers["www-authenticate"] == "Bearer"
    async with httpx.AsyncClient(base_url=api.url,
                                 headers={"Authorization": f"Basic {mine}"}) as client:
        assert (await client.get("/v1/jobs")).status_code == 401

    async with api.client(theirs) as client:  # another tenant: as if the job did not exist
        for method, path in (("GET", job["links"]["self"]), ("GET", job["links"]["events"]),
                             ("DELETE", job["links"]["self"]),
                             ("POST", f"{job['links']['self']}/retry"),
                             ("POST", f"{job['links']['self']}/feedback")):
            response = await client.request(
                method, path, json={"rating": "up"} if path.endswith("feedback") else None)
            assert response.status_code == 404, path
            assert response.json()["error"]["type"] == "not_found"
        assert (await client.get("/v1/jobs")).json()["jobs"] == []
        own = (await client.post("/v1/research", json={"question": QUESTION})).json()
        await _events(client, own["links"]["events"])
        # T2's knowledge base and cache are its own: no cached answer from T1's question
        shown = (await client.get(own["links"]["self"])).json()
        assert shown["metadata"]["cached"] is False


async def test_a_page_token_opens_one_job_only(api: RunningApi) -> None:
    async with api.client() as client:
        one = (await client.post("/v1/research", json={"question": QUESTION})).json()
        two = (await client.post("/v1/research", json={"question": "What do cats eat?"})).json()
        await _events(client, one["links"]["events"])
    async with server_keys(api) as keys:
        await keys.create(TENANT)  # anonymous access ends here
    token_one = one["links"]["page"].split("token=")[1]
    mistyped = token_one[:-1] + ("1" if token_one.endswith("0") else "0")  # one digit off
    async with httpx.AsyncClient(base_url=api.url) as browser:
        assert (await browser.get(one["links"]["page"])).status_code == 200
        assert (await browser.get(f"/v1/jobs/{one['job_id']}?token={token_one}")).status_code \
            == 200
        for path in (f"/jobs/{two['job_id']}?token={token_one}",
                     f"/v1/jobs/{two['job_id']}?token={token_one}",
                     f"/jobs/{one['job_id']}", f"/jobs/{one['job_id']}?token=",
                     f"/jobs/{one['job_id']}?token={mistyped}",
                     f"/jobs/nosuchjob?token={token_one}"):
            assert (await browser.get(path)).status_code == 404, path
        assert (await browser.get("/v1/jobs")).status_code == 401  # a token lists nothing


async def test_the_server_refuses_other_addresses_without_keys(store: Path) -> None:
    from bot.serve import open_api

    settings = api_settings(store)
    with pytest.raises(ConfigurationError, match=r"web\.allow_anonymous"):
        async with open_api(settings, "0.0.0.0"):
            pass
    opened = api_settings(store, web={"allow_anonymous": True})
    async with open_api(opened, "0.0.0.0"):
        pass
    engine = await open_database(settings.store_url)
    await ApiKeys(engine).create(TENANT)
    await engine.dispose()
    async with open_api(settings, "0.0.0.0"):
        pass




# ---- the document, health, readiness ------------------------------------------------------------

async def test_the_openapi_document_describes_every_route(api: RunningApi) -> None:
    spec = await _spec(api)
    paths = spec.document["paths"]
    assert set(paths) >= {"/v1/research", "/v1/jobs", "/v1/jobs/{job_id}",
                          "/v1/jobs/{job_id}/events", "/v1/jobs/{job_id}/retry",
                          "/v1/jobs/{job_id}/feedback", "/jobs/{job_id}", "/healthz",
                          "/readyz"}
    assert set(paths["/v1/jobs/{job_id}"]) == {"get", "delete"}
    assert "text/event-stream" in \
        paths["/v1/jobs/{job_id}/events"]["get"]["responses"]["200"]["content"]
    error = spec.document["components"]["schemas"]["ErrorBody"]
    assert set(error["required"]) == {"type", "message", "retryable"}
    async with api.client() as client:
        health = await client.get("/healthz")
        spec.check("GET", "/healthz", health)
        assert health.json() == {"status": "ok"}
        ready = await client.get("/readyz")
        spec.check("GET", "/readyz", ready)
        assert ready.json() == {"status": "ready", "checks": {
            "database": "ok", "queue": "not used", "vector_store": "ok", "disk": "ok"}}




def test_share_links_are_unguessable_and_stable() -> None:
    links = ShareLinks(b"k" * 32)
    other = ShareLinks(b"j" * 32)
    assert links.token("a") == links.token("a") != links.token("b")
    assert links.token("a") != other.token("a")
    assert len(links.token("a")) == 32
    assert links.check("a", links.token("a")) and not links.check("a", links.token("b"))
    assert links.page("https://x.example/", "a") == f"https://x.example/jobs/a?token={links.token('a')}"


# ---- with workers -------------------------------------------------------------------------------

async def test_with_a_queue_the_server_queues_and_a_worker_answers(store: Path,
                                                                   redis: Any) -> None:
    """The server holds no research core: it stores and queues; a worker (here in this
    process, as `researchbot worker` runs it) researches; the API follows the job across."""
    from bot.wiring import open_research
    from core.jobs.queue_worker import run_worker
    from tests.support.services import REDIS_URL

    settings = api_settings(store, redis={"url": REDIS_URL}, advanced={
        "queue": {"heartbeat_seconds": 10, "sweep_seconds": 1}})
    async with running_api(settings) as api, api.client() as client:
        assert (await client.get("/readyz")).json()["checks"]["vector_store"] == "not used"
        waiting = (await client.post("/v1/research", json={"question": QUESTION})).json()
        cancelled = await client.delete(waiting["links"]["self"])  # no worker has it yet
        assert cancelled.status_code == 202
        assert (await client.get(waiting["links"]["self"])).json()["status"] == "cancelled"

        job = (await client.post("/v1/research", json={"question": QUESTION})).json()
        async with open_research(settings) as research:
            stop = asyncio.Event()
            assert research.jobs.queue is not None
            worker = asyncio.create_task(run_worker(research.jobs, research.jobs.queue, stop,
                                                    "w1"))
            try:
                events = await asyncio.wait_for(_events(client, job["links"]["events"]), 60)
            finally:
                stop.set()
                await worker
        result = json.loads(events[-1]["data"])
        assert result["status"] == "completed"
        assert "12 and 16 hours" in result["answer"]["summary"]
        assert _seqs(events) == list(range(1, len(_seqs(events)) + 1))


