"""The Slack front end: a bolt AsyncApp that turns mentions and direct messages into research
requests and answers in the question's thread. Thin: parse, submit, render."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.async_app import AsyncApp
from slack_bolt.response import BoltResponse
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.render import (
    escape_mrkdwn,
    render_answer,
    render_error,
    render_progress,
    render_sources,
)
from core.errors import InvalidQuestionError
from core.models import ProgressEvent, ResearchRequest, ResearchResult

log = logging.getLogger(__name__)

Research = Callable[[ResearchRequest, Callable[[ProgressEvent], Awaitable[None]]],
                    Awaitable[ResearchResult]]
FAILURE = "Sorry, the research failed before it finished. Please try again in a moment."
PROGRESS_INTERVAL_S = 1.0
_MENTION = re.compile(r"<@[A-Z0-9]+>")


class RecentEvents:
    """event_ids seen in the last `ttl` seconds: Slack re-delivers slow events."""

    def __init__(self, ttl: float = 600.0) -> None:
        self._ttl = ttl
        self._seen: dict[str, float] = {}

    def first_time(self, event_id: str) -> bool:
        now = time.monotonic()
        # Insertion order is arrival order: expired ids are at the front.
        while self._seen and now - next(iter(self._seen.values())) >= self._ttl:
            del self._seen[next(iter(self._seen))]
        if event_id in self._seen:
            return False
        self._seen[event_id] = now
        return True


def web_client(token: str, base_url: str = "https://slack.com/api/") -> AsyncWebClient:
    """A Web API client that waits out 429s (Retry-After) instead of failing."""
    return AsyncWebClient(
        token=token,
        base_url=base_url,
        retry_handlers=[AsyncRateLimitErrorRetryHandler(max_retry_count=3)],
    )


def build_app(
    research: Research, signing_secret: str, client: AsyncWebClient,
    recent: RecentEvents | None = None,
) -> AsyncApp:
    app = AsyncApp(signing_secret=signing_secret, client=client)
    seen = recent or RecentEvents()

    @app.middleware
    async def drop_redeliveries(body: dict[str, Any], next: Callable[[], Awaitable[None]]) -> Any:
        event_id = body.get("event_id")
        if isinstance(event_id, str) and not seen.first_time(event_id):
            return BoltResponse(status=200, body="")
        return await next()

    @app.event("app_mention")
    async def on_mention(event: dict[str, Any], body: dict[str, Any],
                         client: AsyncWebClient) -> None:
        await answer_in_thread(research, client, event, body.get("team_id", ""))

    @app.event("message")
    async def on_message(event: dict[str, Any], body: dict[str, Any],
                         client: AsyncWebClient) -> None:
        if event.get("channel_type") == "im" and not event.get("subtype") \
                and not event.get("bot_id"):
            await answer_in_thread(research, client, event, body.get("team_id", ""))

    @app.command("/research")
    async def on_command(ack: Callable[..., Awaitable[None]], command: dict[str, Any],
                         client: AsyncWebClient) -> None:
        await ack()
        question = command.get("text", "")
        user = command.get("user_id", "")
        asker = f"<@{user}>" if re.fullmatch(r"[UW][A-Z0-9]+", user) else "Someone"
        root = await client.chat_postMessage(
            channel=command["channel_id"], unfurl_links=False,
            text=f"{asker} asked: {escape_mrkdwn(question.strip()) or '(nothing)'}")
        await answer_in_thread(research, client, {
            "channel": command["channel_id"], "ts": root["ts"], "text": question,
            "user": user,
        }, command.get("team_id", ""))

    return app


async def answer_in_thread(
    research: Research, client: AsyncWebClient, event: dict[str, Any], team: str
) -> None:
    channel, ts = event["channel"], event["ts"]
    thread = event.get("thread_ts") or ts
    question = _MENTION.sub("", event.get("text", "")).strip()
    await client.reactions_add(channel=channel, timestamp=ts, name="eyes")
    status = await client.chat_postMessage(
        channel=channel, thread_ts=thread, text=":mag: Researching…", unfurl_links=False)
    status_ts = status["ts"]

    last_update = time.monotonic()

    async def progress(event: ProgressEvent) -> None:
        # Each update costs a Web API call (rate-limited per workspace) on the research's
        # critical path: at most one a second, the rest are replaced before anyone reads them.
        nonlocal last_update
        if event.kind == "finished" and time.monotonic() - last_update >= PROGRESS_INTERVAL_S:
            last_update = time.monotonic()
            await client.chat_update(channel=channel, ts=status_ts,
                                     text=render_progress(event))

    try:
        result = await research(
            ResearchRequest(question=question, tenant=team or "slack",
                            user=event.get("user", ""), platform="slack"),
            progress,
        )
    except InvalidQuestionError as error:
        await _replace(client, channel, status_ts, render_error(str(error)))
        return
    except Exception:
        log.exception("research failed for a Slack question")
        await _replace(client, channel, status_ts, render_error(FAILURE))
        return
    finally:
        await client.reactions_remove(channel=channel, timestamp=ts, name="eyes")
    pages = render_answer(result)
    await _replace(client, channel, status_ts, pages[0])
    for page in pages[1:]:
        await client.chat_postMessage(channel=channel, thread_ts=thread, unfurl_links=False,
                                      **page)
    for page in render_sources(result):
        await client.chat_postMessage(channel=channel, thread_ts=thread, unfurl_links=False,
                                      unfurl_media=False, **page)
    await client.reactions_add(channel=channel, timestamp=status_ts, name="repeat")


async def _replace(client: AsyncWebClient, channel: str, ts: str,
                   message: dict[str, Any]) -> None:
    await client.chat_update(channel=channel, ts=ts, **message)


def web_app(app: AsyncApp, path: str = "/slack/events") -> web.Application:
    """HTTP mode: Slack's requests, signature-checked by bolt, on an aiohttp route."""

    async def handle(request: web.Request) -> web.Response:
        response = await app.async_dispatch(await to_bolt_request(request))
        return await to_aiohttp_response(response)

    application = web.Application()
    application.router.add_post(path, handle)
    return application
