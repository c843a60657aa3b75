"""Refining an answer over the API: POST /v1/jobs/{id}/improve starts a job revising that
answer with the reader's feedback (the scripted model server revises it, with the same claim
checks), answered 202 with the new job's links; without a model, one line saying which
setting enables it; another tenant's job is not found; a documents job cannot be improved."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.api_harness import (
    OTHER_TENANT,
    TENANT,
    OpenApiSpec,
    api_settings,
    running_api,
    server_keys,
)
from tests.support.fake_openai import FakeOpenAI

pytestmark = pytest.mark.integration

QUESTION = "How many hours a day do cats sleep?"


async def _ended(client: httpx.AsyncClient, job_id: str) -> dict[str, Any]:
    for _ in range(1200):
        job: dict[str, Any] = (await client.get(f"/v1/jobs/{job_id}")).json()
        if job["status"] not in ("pending", "in_progress"):
            return job
        await asyncio.sleep(0.05)
    raise AssertionError("the job did not end")


async def test_an_answer_is_improved_with_feedback(served_store: Path,
                                                   scripted_model: FakeOpenAI) -> None:
    settings = api_settings(served_store, llm={
        "fast_model": "openai/fast", "strong_model": "openai/strong",
        "api_base": scripted_model.base_url, "api_key": "test-key"})
    async with running_api(settings) as api:
        async with server_keys(api) as keys:
            _, mine = await keys.create(TENANT)
            _, theirs = await keys.create(OTHER_TENANT)
        async with api.client(mine) as client:
            spec = OpenApiSpec((await client.get("/openapi.json")).json())
            asked = (await client.post("/v1/research", json={"question": QUESTION})).json()
            first = await _ended(client, asked["job_id"])
            assert first["status"] == "completed", first
            scripted_model.chats.clear()
            revised = await client.post(f"/v1/jobs/{asked['job_id']}/improve",
                                        json={"feedback": "Say how long kittens sleep too"})
            spec.check("POST", "/v1/jobs/{job_id}/improve", revised)
            assert revised.status_code == 202, revised.text
            assert revised.headers["location"] == f"/v1/jobs/{revised.json()['job_id']}"
            second = await _ended(client, revised.json()["job_id"])
            assert second["status"] == "completed", second
            assert second["job_id"] != first["job_id"] and second["references"]
            assert scripted_model.tasks() == ["improve", "synthesize", "verify"]
            prompt = next(c for c in scripted_model.chats if c.task == "synthesize").prompt
            assert "Say how long kittens sleep too" in prompt
            empty = await client.post(f"/v1/jobs/{asked['job_id']}/improve",
                                      json={"feedback": ""})
            assert empty.status_code == 422
        async with api.client(theirs) as client:
            other = await client.post(f"/v1/jobs/{asked['job_id']}/improve",
                                      json={"feedback": "shorter"})
            assert other.status_code == 404


async def test_without_a_model_improving_says_what_it_needs(served_store: Path) -> None:
    async with running_api(api_settings(served_store)) as api, api.client() as client:
        asked = (await client.post("/v1/research", json={"question": QUESTION})).json()
        await _ended(client, asked["job_id"])
        refused = await client.post(f"/v1/jobs/{asked['job_id']}/improve",
                                    json={"feedback": "shorter"})
        assert refused.status_code == 400
        message = refused.json()["error"]["message"]
        assert "needs a language model" in message and "llm.fast_model" in message
        assert len(message.splitlines()) == 1
        added = await client.post("/v1/documents", files=[
            ("file", ("note.md", b"# Note\n\nA short note.", "text/markdown"))])
        await _ended(client, added.json()["job_id"])
        not_an_answer = await client.post(f"/v1/jobs/{added.json()['job_id']}/improve",
                                          json={"feedback": "shorter"})
        assert not_an_answer.status_code == 409
