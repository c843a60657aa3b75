"""The knowledge base's documents through the HTTP API (a real client against the running
server, every response checked against its OpenAPI document): listed a page at a time,
read, removed from search and from the answer cache at once; another tenant's documents are
not there, not even by id."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

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
from tests.support.corpus import CORPUS

pytestmark = pytest.mark.integration

QUESTION = "What gives sourdough bread its sour taste?"


@pytest.fixture
async def api(served_store: Path) -> AsyncIterator[RunningApi]:
    async with running_api(api_settings(served_store)) as running:
        yield running


async def _ask(client: httpx.AsyncClient, question: str) -> dict[str, Any]:
    """The job's result event, once it has one."""
    accepted = await client.post("/v1/research", json={"question": question})
    assert accepted.status_code == 202, accepted.text
    async with client.stream("GET", accepted.json()["links"]["events"]) as response:
        async for event in read_events(response):
            if event.get("event") == "result":
                result: dict[str, Any] = json.loads(event["data"])
                return result
    raise AssertionError("the stream closed without a result")


async def test_documents_are_listed_read_and_removed_per_tenant(api: RunningApi) -> None:
    async with api.client() as client:
        spec = OpenApiSpec((await client.get("/openapi.json")).json())
    async with server_keys(api) as keys:
        _, mine = await keys.create(TENANT)
        _, theirs = await keys.create(OTHER_TENANT)
        _, stranger = await keys.create("T9")

    async with api.client(mine) as client:
        first = await client.get("/v1/documents", params={"limit": 2})
        spec.check("GET", "/v1/documents", first)
        assert first.status_code == 200
        page = first.json()
        assert len(page["documents"]) == 2 and page["next_cursor"]
        rest = await client.get("/v1/documents", params={"cursor": page["next_cursor"]})
        spec.check("GET", "/v1/documents", rest)
        assert rest.json()["next_cursor"] is None
        documents = page["documents"] + rest.json()["documents"]
        names = sorted(Path(d["path"]).name for d in documents)
        assert names == sorted([*CORPUS, "planets.pdf"])
        assert len({d["document_id"] for d in documents}) == len(documents)
        bread = next(d for d in documents if d["path"].endswith("bread.html"))
        assert (bread["title"], bread["origin"], bread["status"]) == \
            ("Baking sourdough bread", "path", "indexed")
        one = await client.get(f"/v1/documents/{bread['document_id']}")
        spec.check("GET", "/v1/documents/{document_id}", one)
        assert one.json() == bread

        answered = await _ask(client, QUESTION)
        assert any(s["path"].endswith("bread.html") for s in answered["sources"])
        cached = await _ask(client, QUESTION)
        assert cached["metadata"]["cached"] is True

    async with api.client(stranger) as client:  # a tenant without it: as if it did not exist
        assert (await client.get("/v1/documents")).json() == {"documents": [],
                                                              "next_cursor": None}
        for method in ("GET", "DELETE"):
            response = await client.request(method, f"/v1/documents/{bread['document_id']}")
            spec.check(method, "/v1/documents/{document_id}", response)
            assert response.status_code == 404
            assert response.json()["error"] == {"type": "not_found",
                                                "message": "no such document",
                                                "retryable": False}
    async with api.client(theirs) as client:  # T2 indexed the same files: its own copies
        assert (await client.delete(f"/v1/documents/{bread['document_id']}")).status_code \
            == 200
    async with api.client(mine) as client:  # T2's removal left T1's copy and cache alone
        assert (await client.get(f"/v1/documents/{bread['document_id']}")).status_code == 200
        assert (await _ask(client, QUESTION))["metadata"]["cached"] is True

    async with api.client(mine) as client:
        removed = await client.delete(f"/v1/documents/{bread['document_id']}")
        spec.check("DELETE", "/v1/documents/{document_id}", removed)
        assert removed.json() == {"document_id": bread["document_id"], "status": "removed"}
        assert (await client.get(f"/v1/documents/{bread['document_id']}")).status_code == 404
        left = (await client.get("/v1/documents", params={"limit": 200})).json()["documents"]
        assert bread["document_id"] not in {d["document_id"] for d in left}
        after = await _ask(client, QUESTION)  # not served from the cache, not cited
        assert after["metadata"]["cached"] is False
        assert not any(s["path"].endswith("bread.html") for s in after["sources"])
        again = await client.delete(f"/v1/documents/{bread['document_id']}")
        assert again.status_code == 404



async def test_bad_document_requests_are_refused_with_the_error_shape(api: RunningApi) -> None:
    async with api.client() as client:
        spec = OpenApiSpec((await client.get("/openapi.json")).json())
        for params in ({"cursor": "%%%not-base64"}, {"cursor": "_-8"}, {"limit": 0},
                       {"limit": 201}):
            response = await client.get("/v1/documents", params=params)
            spec.check("GET", "/v1/documents", response)
            assert response.status_code in (400, 422), params
            assert "error" in response.json()
        missing = await client.get("/v1/documents/nope")
        spec.check("GET", "/v1/documents/{document_id}", missing)
        assert missing.status_code == 404
    async with server_keys(api) as keys:
        await keys.create(TENANT)
    async with api.client() as client:  # once a key exists, a key is needed
        response = await client.get("/v1/documents")
        assert response.status_code == 401
        assert (await client.delete("/v1/documents/anything")).status_code == 401
