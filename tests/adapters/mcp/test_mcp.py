"""The MCP server through the official SDK's own client: over stdio (`researchbot mcp` as a
subprocess, as an agent starts it) and over streamable HTTP (/mcp on the running API server,
behind its API keys). Every tool: research with progress notifications, search, get_job and
add_document; another tenant's job is refused; a job that outlives the wait is returned to
poll; a request without a key is refused before any tool runs."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.support.api_harness import OTHER_TENANT, TENANT, api_settings, running_api, server_keys

pytestmark = pytest.mark.integration

QUESTION = "What gives sourdough bread its sour taste?"
TOOLS = {"research", "search", "get_job", "add_document"}


def _payload(result: Any) -> dict[str, Any]:
    """A tool's structured result (or its JSON text)."""
    assert not result.is_error, result.content
    if result.structured_content is not None:
        structured: dict[str, Any] = result.structured_content
        return structured.get("result", structured) if set(structured) == {"result"} \
            else structured
    return json.loads(result.content[0].text)  # type: ignore[no-any-return]


async def _exercise(session: ClientSession) -> dict[str, Any]:
    """Every tool once; the research result."""
    tools = {tool.name for tool in (await session.list_tools()).tools}
    assert tools == TOOLS
    progress: list[tuple[float, str | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, message))

    answered = _payload(await session.call_tool("research", {"question": QUESTION},
                                                progress_callback=on_progress))
    assert answered["status"] == "completed", answered
    assert "acid" in answered["answer"]["summary"] + answered["answer"]["detail"]
    assert answered["answer"]["confidence"] in ("high", "medium", "low")
    assert answered["references"] and answered["citations"]
    assert progress and any(message for _, message in progress)

    found = _payload(await session.call_tool("search", {"query": "sourdough acidity",
                                                        "limit": 3}))
    assert 1 <= len(found["passages"]) <= 3
    assert any("bread" in (p.get("path") or "") for p in found["passages"])
    assert all(p["text"] for p in found["passages"])

    again = _payload(await session.call_tool("get_job", {"job_id": answered["job_id"]}))
    assert again["answer"] == answered["answer"]
    missing = await session.call_tool("get_job", {"job_id": "nosuchjob"})
    assert missing.is_error
    empty = await session.call_tool("research", {"question": "   "})
    assert empty.is_error and "Traceback" not in str(empty.content)
    controlled = _payload(await session.call_tool("research", {
        "question": QUESTION, "context": "for a baker", "max_iterations": 1}))
    assert controlled["context"] == "for a baker" and controlled["max_iterations"] == 1
    for bad, said in (({"max_iterations": 0}, "max_iterations must be 1 to 50"),
                      ({"context": "bread\x07"}, "context contains control characters")):
        refused = await session.call_tool("research", {"question": QUESTION, **bad})
        assert refused.is_error and said in str(refused.content), refused.content
    return answered






@asynccontextmanager
async def _http_session(url: str, key: str | None) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as client, \
            streamable_http_client(url, http_client=client) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        yield session


async def test_over_http_behind_the_api_keys(served_store: Path) -> None:
    async with running_api(api_settings(served_store)) as api:
        async with server_keys(api) as keys:
            _, mine = await keys.create(TENANT)
            _, theirs = await keys.create(OTHER_TENANT)
        async with _http_session(f"{api.url}/mcp", mine) as session:
            answered = await _exercise(session)
        async with _http_session(f"{api.url}/mcp", theirs) as session:
            other = await session.call_tool("get_job", {"job_id": answered["job_id"]})
            assert other.is_error  # another tenant's job: as if it did not exist
        async with api.client() as client:  # no key: refused before the SDK sees it
            refused = await client.post("/mcp", json={"jsonrpc": "2.0", "id": 1,
                                                      "method": "tools/list"})
            assert refused.status_code == 401
            assert refused.json()["error"]["type"] == "unauthorized"
        async with api.client(mine) as client:  # the same search over the API
            found = await client.post("/v1/search", json={"query": "sourdough acidity",
                                                          "limit": 2})
            assert found.status_code == 200, found.text
            assert len(found.json()["passages"]) == 2
            assert (await client.post("/v1/search", json={"query": ""})).status_code == 422


INSPECTOR = "@modelcontextprotocol/inspector@0.15.0"




async def test_a_long_job_outlives_a_short_client_timeout(served_store: Path) -> None:
    """Wikipedia holds the search: the client allows a call 2 s, the tool waits 1 s and
    returns the job to poll; get_job follows it to its answer once Wikipedia answers."""
    from tests.support.fake_web import slow_wikipedia

    async with slow_wikipedia() as web:
        web.hold("/w/api.php")
        settings = api_settings(served_store, pipeline={"local_only": False}, sources={
            "wikipedia_api": f"{web.base}/w/api.php", "arxiv": False, "pubmed": False,
            "cache_ttl_hours": 0, "fetch_pages": 0})
        async with running_api(settings) as api, \
                _http_session(f"{api.url}/mcp", None) as session:
            started = _payload(await session.call_tool(
                "research", {"question": "What kind of animal is a cat?", "wait_seconds": 1},
                read_timeout_seconds=2))
            assert started["status"] in ("pending", "in_progress"), started
            web.release("/w/api.php")
            for _ in range(300):
                job = _payload(await session.call_tool("get_job",
                                                       {"job_id": started["job_id"]}))
                if job["status"] not in ("pending", "in_progress"):
                    break
                await asyncio.sleep(0.1)
            assert job["status"] == "completed" and job["answer"]["summary"]
