"""The real bolt app served over HTTP on 127.0.0.1, wired to the real pipeline, its Web API
client pointed at a FakeSlack; signed requests as Slack sends them."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import aiohttp

from adapters.chat.services import ChatServices, FileHosts
from adapters.slack.app import build_app, web_app, web_client
from core.models import ResearchRequest
from core.web.net import AddressGuard
from tests.support.chat_harness import Options, SlowSource, research_desk, slow_source
from tests.support.corpus import Indexed
from tests.support.fake_slack import FakeSlack
from tests.support.local_server import LocalServer

SECRET = "test-signing-secret"


@dataclass
class SlackHarness:
    url: str
    slack: FakeSlack
    requests: list[ResearchRequest] = field(default_factory=list)
    desk: ChatServices | None = None
    bodies: list[str] = field(default_factory=list)  # what the app answered each post
    slow: SlowSource | None = None  # the remote source Options asked for

    async def post(self, payload: dict[str, Any], *, secret: str = SECRET,
                   timestamp: int | None = None, form: bool = False,
                   headers: dict[str, str] | None = None) -> int:
        body = urlencode(payload) if form else json.dumps(payload)
        stamp = str(timestamp if timestamp is not None else int(time.time()))
        digest = hmac.new(secret.encode(), f"v0:{stamp}:{body}".encode(),
                          hashlib.sha256).hexdigest()
        sent = {"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": f"v0={digest}",
                "Content-Type": "application/x-www-form-urlencoded" if form
                else "application/json", **(headers or {})}
        async with aiohttp.ClientSession() as session, session.post(
                f"{self.url}/slack/events", data=body, headers=sent) as response:
            self.bodies.append(await response.text())
            return response.status

    def answers(self) -> list[dict[str, Any]]:
        """The answer messages: the 🔁 reactions the bot added."""
        return [a for a in self.slack.named("reactions.add") if a.get("name") == "repeat"]

    def finished(self) -> int:
        """Questions handled to the end: the 👀 is removed last, whatever the outcome."""
        return len(self.slack.named("reactions.remove"))

    async def wait_answers(self, count: int, within_s: float = 30.0) -> None:
        await self.slack.wait_for(
            lambda: len(self.answers()) >= count and self.finished() >= count, within_s)


def blocks_text(message: dict[str, Any]) -> str:
    blocks = message.get("blocks", [])
    return json.dumps(blocks if isinstance(blocks, list) else json.loads(blocks))


def mention(text: str, event_id: str = "Ev1", ts: str = "1700000000.000100", *,
            team: str = "T1", user: str = "U1", thread_ts: str | None = None,
            channel: str = "C1") -> dict[str, Any]:
    event = {"type": "app_mention", "user": user, "text": f"<@UBOT> {text}", "ts": ts,
             "channel": channel, "event_ts": ts}
    if thread_ts:
        event["thread_ts"] = thread_ts
    return envelope(event, event_id, team)


def envelope(event: dict[str, Any], event_id: str, team: str = "T1") -> dict[str, Any]:
    return {"type": "event_callback", "team_id": team, "api_app_id": "A1",
            "event_id": event_id, "event_time": int(time.time()), "event": event}


@asynccontextmanager
async def serve_slack(options: Options, world: Indexed, embedder: Any
                      ) -> AsyncIterator[SlackHarness]:
    engine, chroma, knowledge_base = world.engine, world.chroma, world.knowledge_base
    for team in options.teams:
        await knowledge_base.index([world.corpus], team)
    slack = FakeSlack()
    await slack.start()
    harness = SlackHarness("", slack, slow=slow_source(options))
    desk = await research_desk(options, engine, chroma, embedder, knowledge_base,
                               harness.requests, harness.slow)
    harness.desk = desk
    if options.oauth:
        app = build_app(desk, SECRET, web_client(None, slack.base_url),
                        await _installed(engine, slack, {"T1": "xoxb-one", "T2": "xoxb-two"}))
    else:
        files = FileHosts(frozenset({f"127.0.0.1:{slack.port}"}),
                          AddressGuard.trusting(slack.base_url))
        app = build_app(desk, SECRET, web_client("xoxb-test", slack.base_url), files=files)
    bot = LocalServer(web_app(app))
    await bot.start()
    harness.url = f"http://127.0.0.1:{bot.port}"
    try:
        yield harness
    finally:
        await bot.stop()
        await desk.jobs.close()  # jobs still running let go of the database
        await slack.stop()


async def _installed(engine: Any, slack: FakeSlack, tokens: dict[str, str]) -> Any:
    """OAuth settings whose installation store (in the job database) holds `tokens`."""
    from slack_sdk.oauth.installation_store.models.installation import Installation

    from bot.config import SlackSettings
    from bot.slack import oauth_settings

    settings = await oauth_settings(
        SlackSettings(client_id="111.222", client_secret="shh", signing_secret=SECRET), engine)
    for team, token in tokens.items():
        slack.teams[token] = team
        await settings.installation_store.async_save(Installation(
            app_id="A1", enterprise_id=None, team_id=team, bot_token=token,
            bot_id=f"B{team}", bot_user_id="UBOT", user_id="U0", bot_scopes=["chat:write"]))
    return settings
