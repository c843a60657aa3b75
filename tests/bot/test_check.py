"""`researchbot check` through the real CLI: the embedded stores, the real PostgreSQL and Redis
servers, and the web sources and models as local fakes on 127.0.0.1."""

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bot.cli import main
from tests.support.fake_openai import FakeOpenAI
from tests.support.fake_web import Failure, FakeWeb, point_sources_at
from tests.support.services import POSTGRES_URL, REDIS_URL, skip_or_fail

pytestmark = pytest.mark.integration

SECRET = "s3cret-pass-4711"


@pytest.fixture
async def web() -> AsyncIterator[FakeWeb]:
    server = FakeWeb()
    await server.start()
    yield server
    await server.stop()


async def _check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """The CLI in a worker thread, so that the fakes keep serving on this loop."""
    code = await asyncio.to_thread(main, ["check", *args])
    out = capsys.readouterr()
    assert "Traceback" not in out.err + out.out and SECRET not in out.err + out.out
    return code, out.out


def _rows(output: str) -> dict[str, dict[str, Any]]:
    return {row["component"]: row for row in json.loads(output)["checks"]}


def _server_up(port: int, what: str) -> None:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    except OSError as error:
        skip_or_fail(f"{what} not reachable at 127.0.0.1:{port}: {error}")


async def test_everything_embedded_and_every_source_reachable_is_ok(
        clean_env: Path, web: FakeWeb, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    point_sources_at(web, monkeypatch)
    code, table = await _check(capsys)
    assert code == 0, table
    lines = {line.split("  ")[0]: line for line in table.splitlines() if line}
    for component in ("data", "database", "vector store", "embedding", "source wikipedia",
                      "source arxiv", "source pubmed", "source searxng", "source tavily",
                      "source exa"):
        assert "  ok  " in lines[component], lines[component]
    assert "  off  " in lines["redis"] and "  off  " in lines["model"]
    assert "sqlite" in lines["database"] and "tables present" in lines["database"]
    assert table.rstrip().endswith("everything configured is ok")
    assert {"/w/api.php", "/arxiv/query", "/eutils/esearch.fcgi", "/searx/search",
            "/tavily/search", "/exa/search"} <= set(web.hit_paths())


async def test_postgresql_and_redis_servers_are_ok(
        clean_env: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    _server_up(5432, "PostgreSQL")
    _server_up(6379, "Redis")
    monkeypatch.setenv("RESEARCHBOT_STORE__URL", POSTGRES_URL)
    monkeypatch.setenv("RESEARCHBOT_REDIS__URL", REDIS_URL)
    code, output = await _check(capsys, "--json")
    rows = _rows(output)
    assert code == 0, output
    assert rows["queue"]["status"] == "ok" and "research 0 queued" in rows["queue"]["detail"]
    assert rows["database"]["status"] == "ok" and "postgresql" in rows["database"]["detail"]
    assert rows["redis"]["status"] == "ok" and "PING answered" in rows["redis"]["detail"]
    assert rows["source wikipedia"] == {"component": "source wikipedia",
                                        "setting": "endpoints.wikipedia_api", "status": "off",
                                        "detail": "pipeline.local_only = true"}


async def test_an_unreachable_redis_or_source_is_a_failed_row(
        clean_env: Path, web: FakeWeb, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    point_sources_at(web, monkeypatch)
    monkeypatch.setenv("RESEARCHBOT_ENDPOINTS__ARXIV_API", "http://127.0.0.1:1/arxiv/query")
    monkeypatch.setenv("RESEARCHBOT_SOURCES__SEARXNG_URL", "")
    monkeypatch.setenv("RESEARCHBOT_REDIS__URL", f"redis://:{SECRET}@127.0.0.1:1/0")
    web.fail("/eutils/esearch.fcgi", Failure(503))
    code, output = await _check(capsys, "--json")
    assert code == 1
    payload = json.loads(output)
    rows = _rows(output)
    assert payload["ok"] is False
    assert rows["redis"]["status"] == "FAIL" and "unreachable" in rows["redis"]["detail"]
    assert rows["queue"]["status"] == "FAIL" and SECRET not in rows["queue"]["detail"]
    assert rows["source arxiv"]["status"] == "FAIL"
    assert rows["source arxiv"]["detail"].startswith("unreachable")
    assert rows["source pubmed"]["status"] == "FAIL"
    assert "answered HTTP 503" in rows["source pubmed"]["detail"]
    assert rows["source searxng"]["status"] == "off"
    assert rows["source wikipedia"]["status"] == rows["database"]["status"] == "ok"
    assert all("\n" not in row["detail"] for row in rows.values())


async def test_models_are_checked_and_called_on_request(
        clean_env: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeOpenAI()
    fake.script["unknown"] = lambda chat: "OK"
    await fake.start()
    try:
        for name, value in {"LLM__FAST_MODEL": "openai/test-model",
                            "ADVANCED__LLM__STRONG_FALLBACKS": "nosuchprovider/foo",
                            "LLM__API_BASE": fake.base_url, "LLM__API_KEY": "test-key",
                            "EMBEDDING__MODEL": "openai/test-embedder",
                            "EMBEDDING__API_BASE": fake.base_url,
                            "EMBEDDING__API_KEY": "test-key"}.items():
            monkeypatch.setenv(f"RESEARCHBOT_{name}", value)
        code, output = await _check(capsys, "--json")
        assert code == 1 and not fake.chats and not fake.requests
        fallback = [row for row in json.loads(output)["checks"]
                    if row["setting"] == "advanced.llm.strong_fallbacks"]
        assert fallback[0]["status"] == "FAIL"
        assert "names no provider litellm knows" in fallback[0]["detail"]

        monkeypatch.delenv("RESEARCHBOT_ADVANCED__LLM__STRONG_FALLBACKS")
        code, output = await _check(capsys, "--json", "--call-models")
        rows = _rows(output)
        assert code == 0, output
        assert rows["model"]["detail"].startswith("openai/test-model: called")
        assert rows["embedding"]["detail"].startswith("openai/test-embedder: called")
        assert [chat.model for chat in fake.chats] == ["test-model"]
    finally:
        await fake.stop()
