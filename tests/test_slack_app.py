import asyncio
import hashlib
import hmac
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import aiohttp
import pytest

from adapters.slack.app import build_app, web_app, web_client
from core.config import PipelineSettings
from core.models import ProgressEvent, ResearchRequest, ResearchResult, Source
from core.pipeline import ResearchPipeline
from core.sources.base import SearchQuery
from core.sources.local import LocalKnowledgeBaseSource
from core.store import JobStore
from core.synthesis.extractive import ExtractiveSynthesizer
from tests.fake_slack import FakeSlack
from tests.local_server import LocalServer

SECRET = "test-signing-secret"


class _Server:
    def __init__(self, url: str, slack: FakeSlack, requests: list[ResearchRequest]) -> None:
        self.url = url
        self.slack = slack
        self.requests = requests

    async def post(self, payload: dict[str, Any], *, secret: str = SECRET,
                   timestamp: int | None = None, form: bool = False) -> int:
        body = urlencode(payload) if form else json.dumps(payload)
        stamp = str(timestamp if timestamp is not None else int(time.time()))
        digest = hmac.new(secret.encode(), f"v0:{stamp}:{body}".encode(),
                          hashlib.sha256).hexdigest()
        headers = {"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": f"v0={digest}",
                   "Content-Type": "application/x-www-form-urlencoded" if form
                   else "application/json"}
        async with aiohttp.ClientSession() as session, session.post(
                self.url, data=body, headers=headers) as response:
            return response.status


class _SlowSource:
    """A remote source that takes its time and finds nothing."""

    name = "slow"
    label = "a slow archive"

    def __init__(self, delay_s: float) -> None:
        self._delay_s = delay_s

    async def search(self, query: SearchQuery) -> list[Source]:
        await asyncio.sleep(self._delay_s)
        return []


@pytest.fixture
async def server(request: pytest.FixtureRequest, sqlite_engine: Any, chroma: Any,
                 embedder: Any, knowledge_base: Any, corpus: Path) -> AsyncIterator[_Server]:
    """The bolt app over HTTP; `indirect` parametrisation adds a source that takes N s."""
    await knowledge_base.index([corpus], "T1")
    sources: dict[str, Any] = {"local": LocalKnowledgeBaseSource(knowledge_base, 3)}
    delay_s = getattr(request, "param", 0)
    if delay_s:
        sources["slow"] = _SlowSource(delay_s)
    pipeline = ResearchPipeline(
        store=JobStore(sqlite_engine), sources=sources,
        synthesizer=ExtractiveSynthesizer(embedder), embedder=embedder,
        settings=PipelineSettings())
    requests: list[ResearchRequest] = []

    async def research(request: ResearchRequest, progress: Any) -> ResearchResult:
        requests.append(request)
        return await pipeline.run(request, progress)

    slack = FakeSlack()
    await slack.start()
    client = web_client("xoxb-test", slack.base_url)
    bot = LocalServer(web_app(build_app(research, SECRET, client)))
    await bot.start()
    yield _Server(f"http://127.0.0.1:{bot.port}/slack/events", slack, requests)
    await bot.stop()
    await slack.stop()


def _mention(text: str, event_id: str = "Ev1", ts: str = "1700000000.000100") -> dict[str, Any]:
    return {"type": "event_callback", "team_id": "T1", "api_app_id": "A1",
            "event_id": event_id, "event_time": int(time.time()),
            "event": {"type": "app_mention", "user": "U1", "text": f"<@UBOT> {text}",
                      "ts": ts, "channel": "C1", "event_ts": ts}}


def _answered(slack: FakeSlack) -> bool:
    return any(a.get("name") == "repeat" for a in slack.named("reactions.add"))


async def test_a_mention_is_answered_in_its_thread(server: _Server) -> None:
    started = time.perf_counter()
    assert await server.post(_mention("How many hours a day do cats sleep?")) == 200
    assert time.perf_counter() - started < 3
    await server.slack.wait_for(lambda: _answered(server.slack))
    slack = server.slack
    eyes = slack.named("reactions.add")[0]
    assert (eyes["channel"], eyes["timestamp"], eyes["name"]) == (
        "C1", "1700000000.000100", "eyes")
    assert slack.named("reactions.remove")[0]["name"] == "eyes"
    posts = slack.named("chat.postMessage")
    assert all(p["thread_ts"] == "1700000000.000100" for p in posts)
    answer = slack.named("chat.update")[-1]
    blocks = answer["blocks"] if isinstance(answer["blocks"], list) else json.loads(
        answer["blocks"])
    text = json.dumps(blocks)
    assert "12 and 16 hours" in text and "[1]" in text
    assert "Sources (" in json.dumps(posts[-1])
    assert all("link_names" not in p and "parse" not in p for p in posts)
    assert server.requests[0].tenant == "T1" and server.requests[0].platform == "slack"
    assert server.requests[0].question == "How many hours a day do cats sleep?"


async def test_a_redelivered_event_is_answered_once(server: _Server) -> None:
    event = _mention("What is the largest planet?", event_id="EvSame")
    assert await server.post(event) == 200
    assert await server.post(event) == 200
    await server.slack.wait_for(lambda: _answered(server.slack))
    assert len(server.requests) == 1
    assert len(server.slack.named("reactions.add")) == 2  # eyes, then repeat


@pytest.mark.parametrize("kind", ["forged", "stale"])
async def test_bad_signatures_do_no_work(server: _Server, kind: str) -> None:
    event = _mention("What is the largest planet?")
    if kind == "forged":
        status = await server.post(event, secret="wrong")
    else:
        status = await server.post(event, timestamp=int(time.time()) - 600)
    assert status == 401
    assert server.requests == []
    assert [name for name, _ in server.slack.calls if name != "auth.test"] == []


async def test_bad_input_gets_a_friendly_message(server: _Server) -> None:
    assert await server.post(_mention("   ")) == 200
    await server.slack.wait_for(lambda: bool(server.slack.named("chat.update")))
    update = server.slack.named("chat.update")[-1]
    assert "question is empty" in json.dumps(update)
    assert "Traceback" not in json.dumps(update)


def test_progress_events_render_as_text() -> None:
    from adapters.slack.render import render_progress
    from core.models import Stage

    event = ProgressEvent(job_id="j", stage=Stage.SEARCH, kind="finished", progress=0.5,
                          message="Found 3 passages in 2 documents <!channel>")
    assert render_progress(event).endswith("Found 3 passages in 2 documents &lt;!channel&gt;…")



async def test_a_429_is_waited_out_and_retried(server: _Server) -> None:
    server.slack.rate_limited["chat.postMessage"] = 1
    started = time.perf_counter()
    assert await server.post(_mention("How many hours a day do cats sleep?")) == 200
    await server.slack.wait_for(lambda: _answered(server.slack))
    posts = server.slack.named("chat.postMessage")
    assert posts[0] == posts[1]  # the refused status message, sent again
    assert time.perf_counter() - started >= 1.0  # Retry-After was honoured
    assert "Sources (" in json.dumps(posts[-1])


async def test_the_slash_command_asks_in_the_channel_and_answers_in_a_thread(
    server: _Server,
) -> None:
    command = {"command": "/research", "text": "Which city did Mount Vesuvius bury? <!here>",
               "user_id": "U1", "channel_id": "C9", "team_id": "T1",
               "response_url": "http://127.0.0.1:9/unused", "trigger_id": "1.2"}
    started = time.perf_counter()
    assert await server.post(command, form=True) == 200
    assert time.perf_counter() - started < 3
    await server.slack.wait_for(lambda: _answered(server.slack))
    root, *replies = server.slack.named("chat.postMessage")
    assert root["channel"] == "C9" and "thread_ts" not in root
    assert root["text"].startswith("<@U1> asked: Which city") and "&lt;!here&gt;" in root["text"]
    assert all(r["thread_ts"] == "1700000000.000001" for r in replies)
    assert "Pompeii" in json.dumps(server.slack.named("chat.update")[-1])


@pytest.mark.parametrize("server", [1.2], indirect=True)
async def test_progress_shows_in_the_status_message_at_most_once_a_second(
    server: _Server,
) -> None:
    assert await server.post(_mention("How many hours a day do cats sleep?")) == 200
    await server.slack.wait_for(lambda: _answered(server.slack))
    updates = [u["text"] for u in server.slack.named("chat.update")]
    progress = [t for t in updates if t.startswith(":hourglass_flowing_sand:")]
    assert progress and "Found" in progress[0]  # the slow search finished after 1.2 s
    assert len(progress) <= 2  # ~1.3 s of research: never one update per stage
