"""Hostile requests against the running server (bot.serve's app under uvicorn, a real HTTP
client): text no store or tokenizer takes is refused with 400 before a job exists; rows that
cannot be read, written straight into SQLite and PostgreSQL, leave the tenant's reads working;
keys and page tokens of another shape are refused without a database query and without a 500
(the connection stays open); the page token reads and rates its job only, one rating per
browser; failed authentication is limited per client address; every JSON answer and page
says nosniff and no-store."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import event, select, text, update

from core.models import Job, JobStatus, ResearchRequest, utcnow
from core.store.database import jobs, open_database
from core.store.feedback import FeedbackStore, Rating
from tests.support.api_harness import (
    TENANT,
    OpenApiSpec,
    RunningApi,
    api_settings,
    running_api,
    server_keys,
)

pytestmark = pytest.mark.integration

QUESTION = "How long do cats sleep?"
JSON = {"content-type": "application/json"}


@pytest.fixture
def store(served_store: Path) -> Path:
    return served_store


@pytest.fixture
async def api(store: Path) -> AsyncIterator[RunningApi]:
    async with running_api(api_settings(store)) as running:
        yield running


async def _answered(client: httpx.AsyncClient, question: str = QUESTION) -> dict[str, Any]:
    """A job asked and followed to its end."""
    accepted = await client.post("/v1/research", json={"question": question})
    assert accepted.status_code == 202, accepted.text
    job: dict[str, Any] = accepted.json()
    async with client.stream("GET", job["links"]["events"]) as stream:
        async for _ in stream.aiter_lines():
            pass
    return job


async def _new_key(api: RunningApi) -> str:
    """A key of the tenant's, made through the server's own key store; from here on keyless
    requests are refused."""
    async with server_keys(api) as keys:
        _, key = await keys.create(TENANT)
    return key


def _safe(response: httpx.Response) -> None:
    assert response.headers["x-content-type-options"] == "nosniff", response.url
    assert response.headers["cache-control"] == "no-store", response.url


@contextlib.contextmanager
def _statements(api: RunningApi) -> Iterator[list[str]]:
    """The SQL the server sends to its database meanwhile."""
    engine = api.app.state.services.jobs.store.engine.sync_engine
    sent: list[str] = []

    def seen(*args: Any) -> None:
        sent.append(args[2])

    event.listen(engine, "before_cursor_execute", seen)
    try:
        yield sent
    finally:
        event.remove(engine, "before_cursor_execute", seen)


def _local_port(response: httpx.Response) -> int:
    port: int = response.extensions["network_stream"].get_extra_info("client_addr")[1]
    return port


# ---- text that cannot be processed -------------------------------------------------------

# (body, status, what the message says). The conversation's fields have lengths, and pydantic
# refuses a lone surrogate where it measures one (422); the job service refuses the rest (400),
# for every front end.
UNPROCESSABLE = [
    (rb'{"question": "\ud800 cats"}', 400, "not text (U+D800)"),
    (rb'{"question": "why do cats \udfff sleep"}', 400, "not text (U+DFFF)"),
    (rb'{"question": "' + QUESTION.encode() + rb'", "context": [{"question": "\ud83d why"}]}',
     422, "history.0.question: Input should be a valid string, unable to parse raw data"),
    (rb'{"question": "' + QUESTION.encode() + rb'", "context": [{"question": "Do cats sleep?",'
     rb' "answer": "Yes \udbff"}]}', 422, "history.0.answer: Input should be a valid string"),
    (rb'{"question": "' + QUESTION.encode() + rb'", "context": [{"question": "Do cats sleep?",'
     rb' "answer": "Yes \u0000 they do"}]}', 400, "earlier answer contains characters that are "
     "not text (U+0000)"),
]


async def test_text_no_store_can_take_is_refused_before_a_job_exists(api: RunningApi) -> None:
    async with api.client() as client:
        spec = OpenApiSpec((await client.get("/openapi.json")).json())
        for body, status, message in UNPROCESSABLE:
            refused = await client.post("/v1/research", content=body, headers=JSON)
            spec.check("POST", "/v1/research", refused)
            assert refused.status_code == status, (body, refused.text)
            error = refused.json()["error"]
            assert error["type"] == ("invalid_question" if status == 400 else "invalid_request")
            assert message in error["message"] and error["retryable"] is False
            _safe(refused)
        # a field named with one: the 422 quotes the name, and still encodes
        named = await client.post("/v1/research", content=rb'{"question": "cats", "\ud800": 1}',
                                  headers=JSON)
        assert named.status_code == 422 and named.json()["error"]["type"] == "invalid_request"

        listed = await client.get("/v1/jobs")  # the tenant's reads work, and list nothing
        assert listed.status_code == 200 and listed.json()["jobs"] == []
        job = await _answered(client)
        path = f"/v1/jobs/{job['job_id']}/feedback"
        for comment, message in ((rb'"\ud800"', "comment: Input should be a valid string"),
                                 (rb'"fine\u0000"', "comment: Value error, holds characters "
                                  "that are not text (U+0000)")):  # PostgreSQL refuses NUL
            rated = await client.post(path, content=rb'{"rating": "up", "comment": ' + comment
                                      + b"}", headers=JSON)
            spec.check("POST", "/v1/jobs/{job_id}/feedback", rated)
            assert rated.status_code == 422, rated.text
            assert message in rated.json()["error"]["message"]
        assert [j["job_id"] for j in (await client.get("/v1/jobs")).json()["jobs"]] \
            == [job["job_id"]]

    engine = await open_database(api.settings.store_url)
    async with engine.connect() as connection:
        stored = (await connection.execute(select(jobs.c.id))).scalars().all()
    feedback = await FeedbackStore(engine).for_job(job["job_id"])
    await engine.dispose()
    assert stored == [job["job_id"]] and feedback == []


# ---- rows that cannot be read --------------------------------------------------------------

def _row(job_id: str, question: str, **columns: Any) -> dict[str, Any]:
    """A job row as the store writes it (then changed by `columns`)."""
    job = Job(id=job_id, tenant=TENANT, user="anonymous", platform="api",
              request=ResearchRequest(question=question, tenant=TENANT, platform="api"),
              status=JobStatus.FAILED, error="TypeError: TextEncodeInput must be Union[...]",
              created_at=utcnow() - timedelta(minutes=1))
    data = job.model_dump(mode="json", exclude={"trace", "added"})
    data.update(state={}, created_at=job.created_at, started_at=None, completed_at=None)
    return {**data, **columns}


async def test_rows_that_cannot_be_read_leave_the_tenants_reads_working(
        any_engine: Any, store: Path) -> None:
    """Rows written straight into the database: a question holding a lone surrogate (as an
    earlier release stored it), a status this version does not know, a request without a
    question, and (SQLite, which stores any text) JSON that does not decode."""
    url = any_engine.url.render_as_string(hide_password=False)
    async with running_api(api_settings(store, store={"url": url})) as api, \
            api.client() as client:
        good = await _answered(client)
        broken = ["unknownstatus", "noquestion"]
        async with any_engine.begin() as connection:
            await connection.execute(jobs.insert().values(_row("surrogate", "\ud800 cats")))
            await connection.execute(jobs.insert().values(
                _row("unknownstatus", "cats?", status="exploded")))
            await connection.execute(jobs.insert().values(
                _row("noquestion", "cats?", request={"tenant": TENANT})))
            if any_engine.dialect.name == "sqlite":
                await connection.execute(jobs.insert().values(_row("notjson", "cats?")))
                await connection.execute(text(
                    "UPDATE jobs SET request = '{\"question\": \"ca' WHERE id = 'notjson'"))
                broken.append("notjson")

        for query, expected in (({}, [good["job_id"], "surrogate"]),
                                ({"status": "failed"}, ["surrogate"])):
            listed = await client.get("/v1/jobs", params=query)
            assert listed.status_code == 200, listed.text
            _safe(listed)
            assert [j["job_id"] for j in listed.json()["jobs"]] == expected
            assert listed.json()["jobs"][-1]["question"] == "\ufffd cats"

        one = await client.get("/v1/jobs/surrogate")
        assert one.status_code == 200 and one.json()["question"] == "\ufffd cats"
        page = await client.get(one.json()["links"]["page"])
        assert page.status_code == 200 and "\ufffd cats" in page.text
        # asked again, the unreadable character is refused, not researched
        again = await client.post("/v1/jobs/surrogate/retry")
        assert again.status_code == 400 and again.json()["error"]["type"] == "invalid_question"

        for job_id in broken:
            for path in (f"/v1/jobs/{job_id}", f"/v1/jobs/{job_id}/events"):
                missing = await client.get(path)
                assert missing.status_code == 404, (path, missing.text)
                assert missing.json()["error"]["type"] == "not_found"
            token = api.app.state.services.links.token(job_id)
            assert (await client.get(f"/jobs/{job_id}?token={token}")).status_code == 404
        listed = (await client.get("/v1/jobs", params={"limit": 100})).json()["jobs"]
        assert len(listed) == 2  # the retry stored nothing


# ---- tokens and keys ------------------------------------------------------------------------

async def test_tokens_and_keys_of_another_shape_are_refused_without_the_database(
        api: RunningApi) -> None:
    async with api.client() as client:
        job = await _answered(client)
    token = job["links"]["page"].split("token=")[1]
    job_id = job["job_id"]
    wrong = [token[:-1] + "é", "é" * 32, token[:-1] + "\u0661", "０" * 32, token + "0"]
    async with api.client(address="198.51.100.1") as browser:
        kept = _local_port(await browser.get("/healthz"))
        with _statements(api) as sent:
            for bad in wrong:
                page = await browser.get(f"/jobs/{job_id}", params={"token": bad})
                assert page.status_code == 404, (bad, page.text)
                assert "No such answer" in page.text
                read = await browser.get(f"/v1/jobs/{job_id}", params={"token": bad})
                assert read.status_code == 404 and read.json()["error"]["type"] == "not_found"
                rated = await browser.post(f"/v1/jobs/{job_id}/feedback", params={"token": bad},
                                           json={"rating": "down"})
                assert rated.status_code == 404
                # no 500, so uvicorn kept the connection open
                assert _local_port(rated) == kept
        assert sent == []

    await _new_key(api)
    shapes: list[bytes] = [b"rb_" + "é".encode() * 20, b"rb_0123456789ab_" + "é".encode() * 43,
                           b"rb_0123456789ab_" + b"!" * 43, b"rb_0123456789AB_" + b"a" * 43,
                           b"rb_0123456789ab_" + b"a" * 44, b"\xff\xfe"]
    async with api.client(address="198.51.100.2") as client:
        kept = _local_port(await client.get("/healthz"))
        with _statements(api) as sent:
            for key in shapes:
                response = await client.get("/v1/jobs",
                                            headers={"Authorization": b"Bearer " + key})
                assert response.status_code == 401, (key, response.text)
                assert _local_port(response) == kept
        assert sent == []
        with _statements(api) as sent:  # a key of the right shape is looked up
            unknown = await client.get("/v1/jobs", headers={
                "Authorization": "Bearer rb_0123456789ab_" + "a" * 43})
        assert unknown.status_code == 401 and sent


# ---- what the page token allows --------------------------------------------------------------

async def test_the_page_token_reads_and_rates_its_job_only(api: RunningApi) -> None:
    async with api.client() as client:
        job = await _answered(client)
    key = await _new_key(api)
    query = {"token": job["links"]["page"].split("token=")[1]}
    self_link = job["links"]["self"]
    async with api.client() as holder:  # a shared link, no key
        for method, path in (("DELETE", self_link), ("POST", f"{self_link}/retry")):
            refused = await holder.request(method, path, params=query)
            assert refused.status_code == 401, (method, refused.text)
            assert "needs an API key" in refused.json()["error"]["message"]
            _safe(refused)
        assert (await holder.get(self_link, params=query)).status_code == 200
        async with holder.stream("GET", job["links"]["events"], params=query) as stream:
            assert stream.status_code == 200
    async with api.client(key) as owner:
        listed = (await owner.get("/v1/jobs")).json()["jobs"]
        assert [(j["job_id"], j["status"]) for j in listed] == [(job["job_id"], "completed")]

    feedback = f"{self_link}/feedback"
    cookies = set()
    for number in range(20):  # a script that never keeps the cookie it is given
        async with api.client() as script:
            rated = await script.post(feedback, params=query,
                                      json={"rating": "up" if number % 2 else "down"})
            assert rated.status_code == 201, rated.text
            cookies.add(rated.cookies["rb_reader"])
    assert len(cookies) == 1  # its address's reader, every time

    async with api.client() as browser:  # a browser opens the page, then rates three times
        opened = await browser.get(job["links"]["page"])
        reader = opened.cookies["rb_reader"]
        assert reader not in cookies
        again = await browser.get(job["links"]["page"])
        assert "rb_reader" not in again.cookies  # it keeps the cookie it has
        for rating in ("up", "down", "up"):
            rated = await browser.post(feedback, params=query, json={"rating": rating})
            assert rated.status_code == 201 and "rb_reader" not in rated.cookies
    async with api.client() as forger:  # a cookie not of the server's shape is not a reader
        forger.cookies.set("rb_reader", "../../everyone")
        assert (await forger.post(feedback, params=query,
                                  json={"rating": "down"})).status_code == 201

    engine = await open_database(api.settings.store_url)
    stored = await FeedbackStore(engine).for_job(job["job_id"])
    await engine.dispose()
    assert {(f.rater, f.rating) for f in stored} == {
        (f"web:{cookies.pop()}", Rating.DOWN), (f"web:{reader}", Rating.UP)}


# ---- failed authentication ---------------------------------------------------------------------

async def test_failed_authentication_is_limited_per_client_address(api: RunningApi) -> None:
    async with api.client() as client:
        job = await _answered(client)
    key = await _new_key(api)
    guesses = [f"rb_{n:012x}_{'a' * 43}" for n in range(25)]
    statuses = []
    async with api.client(address="203.0.113.1") as attacker:
        for guess in guesses:
            response = await attacker.get("/v1/jobs", headers={"Authorization": f"Bearer {guess}"})
            statuses.append(response.status_code)
        assert statuses == [401] * 20 + [429] * 5
        assert 1 <= int(response.headers["retry-after"]) <= 60
        error = response.json()["error"]
        assert error["type"] == "rate_limited" and error["retryable"] is True
        _safe(response)
        # locked out, whatever it sends: a right key is not checked either
        right = await attacker.get("/v1/jobs", headers={"Authorization": f"Bearer {key}"})
        assert right.status_code == 429

    async with api.client(key, address="203.0.113.2") as busy:  # successes are never counted
        for _ in range(40):
            assert (await busy.get("/v1/jobs")).status_code == 200

    token = job["links"]["page"].split("token=")[1]
    wrong = token[:-1] + ("1" if token.endswith("0") else "0")
    async with api.client(address="203.0.113.3") as guesser:
        pages = [(await guesser.get(f"/jobs/{job['job_id']}", params={"token": wrong}))
                 for _ in range(21)]
        assert [p.status_code for p in pages] == [404] * 20 + [429]
        assert "Too many attempts" in pages[-1].text and pages[-1].headers["retry-after"]
        locked = await guesser.get(job["links"]["page"])  # the right token too
        assert locked.status_code == 429
    async with api.client(address="203.0.113.4") as reader:
        assert (await reader.get(job["links"]["page"])).status_code == 200


# ---- headers -------------------------------------------------------------------------------------

async def test_every_json_answer_and_page_says_nosniff_and_no_store(api: RunningApi) -> None:
    async with api.client() as client:
        job = await _answered(client)
        page = job["links"]["page"]
        answers = [
            await client.post("/v1/research", json={"question": QUESTION}),  # 202
            await client.get("/v1/jobs"),
            await client.get(job["links"]["self"]),
            await client.post("/v1/research", json={"question": ""}),  # 400
            await client.get("/v1/jobs/nosuchjob"),  # 404
            await client.get("/v2/nowhere"),  # 404, routing's
            await client.put("/v1/jobs"),  # 405
            await client.post("/v1/research", content=b" " * 100_000, headers=JSON),  # 413
            await client.post("/v1/research", json={}),  # 422
            await client.get("/openapi.json"),
            await client.get("/healthz"),
            await client.get("/readyz"),
        ]
        assert {a.status_code for a in answers} >= {200, 202, 400, 404, 405, 413, 422}
        for answer in answers:
            assert answer.headers["content-type"].startswith("application/json"), answer.url
            _safe(answer)
        async with client.stream("GET", job["links"]["events"]) as stream:
            _safe(stream)

        pages = [await client.get(page), await client.get(f"/jobs/{job['job_id']}"),
                 await client.get(f"/jobs/{job['job_id']}?token=0123"),
                 await client.get("/jobs/nosuchjob?token=" + "0" * 32)]
        assert [p.status_code for p in pages] == [200, 404, 404, 404]
        for shown in pages:
            assert shown.headers["content-type"].startswith("text/html")
            _safe(shown)
            assert "default-src 'none'" in shown.headers["content-security-policy"]
        asset = await client.get("/assets/page.js")
        assert asset.headers["x-content-type-options"] == "nosniff"
        assert asset.headers["cache-control"] == "public, max-age=3600"  # its own policy
        await _new_key(api)
        unauthorized = await client.get("/v1/jobs")
        assert unauthorized.status_code == 401
        _safe(unauthorized)


# ---- the store alone ----------------------------------------------------------------------------

async def test_a_row_that_cannot_be_read_is_left_out_of_recent_and_not_found_alone(
        any_engine: Any) -> None:
    from core.errors import JobNotFoundError
    from core.store.jobs import JobStore

    store = JobStore(any_engine)
    kept = await store.create(Job(tenant=TENANT, request=ResearchRequest(question=QUESTION)))
    async with any_engine.begin() as connection:
        await connection.execute(jobs.insert().values(_row("odd", "cats?")))
        await connection.execute(update(jobs).where(jobs.c.id == "odd").values(
            stage="teleport"))
    assert [job.id for job in await store.recent(TENANT)] == [kept.id]
    with pytest.raises(JobNotFoundError, match="cannot be read"):
        await store.get("odd")
