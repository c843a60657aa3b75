"""The Slack front end: a bolt AsyncApp that turns mentions, direct messages, thread replies,
`/research` and 🔁 reactions into research requests, and answers in the question's thread.
Thin: parse, submit, render."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.async_app import AsyncApp, AsyncBoltContext
from slack_bolt.oauth.async_oauth_settings import AsyncOAuthSettings
from slack_bolt.response import BoltResponse
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.web.async_client import AsyncWebClient

from adapters.desk import FAILURE, ResearchDesk, queued, refusal, throttled
from adapters.slack.render import (
    escape_mrkdwn,
    render_answer,
    render_error,
    render_progress,
    render_sources,
)
from core.errors import InvalidQuestionError
from core.limits import RateLimitedError
from core.models import ConversationTurn, ResearchRequest

log = logging.getLogger(__name__)

PLATFORM = "slack"
RETRY_REACTION = "repeat"
_LEADING_MENTION = re.compile(r"^\s*<@[A-Z0-9]+>")


def web_client(token: str | None, base_url: str = "https://slack.com/api/") -> AsyncWebClient:
    """A Web API client that waits out 429s (Retry-After) instead of failing. Per-request
    clients (one per workspace with OAuth) inherit its base URL and retry handlers."""
    return AsyncWebClient(
        token=token,
        base_url=base_url,
        retry_handlers=[AsyncRateLimitErrorRetryHandler(max_retry_count=3)],
    )


def build_app(
    desk: ResearchDesk, signing_secret: str, client: AsyncWebClient,
    oauth_settings: AsyncOAuthSettings | None = None,
) -> AsyncApp:
    """One workspace when `client` carries a bot token; with `oauth_settings`, every
    workspace that installs the app, each with its token from the installation store."""
    app = AsyncApp(signing_secret=signing_secret, client=client,
                   oauth_settings=oauth_settings)

    @app.middleware
    async def drop_redeliveries(body: dict[str, Any], next: Callable[[], Awaitable[None]]) -> Any:
        event_id = body.get("event_id")
        if isinstance(event_id, str) and not await desk.events.first_time(event_id):
            return BoltResponse(status=200, body="")
        return await next()

    @app.event("app_mention")
    async def on_mention(event: dict[str, Any], context: AsyncBoltContext,
                         client: AsyncWebClient) -> None:
        team = _team(context, event)
        thread = event.get("thread_ts") or event["ts"]
        turns = await _thread_context(desk, team, event)
        await _ask(desk, client, event["channel"], event["ts"], thread, ResearchRequest(
            question=_strip_mention(event.get("text", ""), context.bot_user_id),
            context=turns, tenant=team, user=event.get("user", ""), platform=PLATFORM,
            depth=desk.depth))

    @app.event("message")
    async def on_message(event: dict[str, Any], context: AsyncBoltContext,
                         client: AsyncWebClient) -> None:
        """Direct messages, and replies in a thread the bot has answered in."""
        user = event.get("user")
        if event.get("subtype") or event.get("bot_id") or not user \
                or user == context.bot_user_id:
            return
        text = event.get("text", "")
        direct = event.get("channel_type") == "im"
        if not direct and (not event.get("thread_ts")
                           or f"<@{context.bot_user_id}>" in text):
            return  # not a follow-up, or a mention: on_mention answers those
        team = _team(context, event)
        thread = event.get("thread_ts") or event["ts"]
        turns = await _thread_context(desk, team, event)
        if not direct and not turns:
            return  # a conversation between people that the bot has no part in
        await _ask(desk, client, event["channel"], event["ts"], thread, ResearchRequest(
            question=_strip_mention(text, context.bot_user_id), context=turns, tenant=team,
            user=user, platform=PLATFORM, depth=desk.depth))

    @app.event("reaction_added")
    async def on_reaction(event: dict[str, Any], context: AsyncBoltContext,
                          client: AsyncWebClient) -> None:
        """🔁 on an answer: research it again, bypassing the cache, in the same thread."""
        item = event.get("item") or {}
        user = event.get("user")
        if event.get("reaction") != RETRY_REACTION or item.get("type") != "message" \
                or not user or user == context.bot_user_id:
            return
        team = _team(context, event)
        answer = _key(item["channel"], item["ts"])
        found = await desk.conversations.answered(PLATFORM, team, answer)
        if found is None:
            return  # not one of our answers
        request, thread = found
        await _ask(desk, client, item["channel"], item["ts"], thread.partition(":")[2],
                   request.model_copy(update={"bypass_cache": True, "user": user}))

    @app.command("/research")
    async def on_command(ack: Callable[..., Awaitable[None]], command: dict[str, Any],
                         context: AsyncBoltContext, client: AsyncWebClient) -> None:
        await ack()
        question = command.get("text", "")
        user = command.get("user_id", "")
        asker = f"<@{user}>" if re.fullmatch(r"[UW][A-Z0-9]+", user) else "Someone"
        root = await client.chat_postMessage(
            channel=command["channel_id"], unfurl_links=False,
            text=f"{asker} asked: {escape_mrkdwn(question.strip()) or '(nothing)'}")
        await _ask(desk, client, command["channel_id"], root["ts"], root["ts"], ResearchRequest(
            question=question, tenant=context.team_id or command.get("team_id", ""),
            user=user, platform=PLATFORM, depth=desk.depth))

    return app


async def _ask(desk: ResearchDesk, client: AsyncWebClient, channel: str, marked: str,
               thread: str, request: ResearchRequest) -> None:
    """Research `request` and answer in `thread`; 👀 on the message `marked` meanwhile."""
    await client.reactions_add(channel=channel, timestamp=marked, name="eyes")
    try:
        await _answer(desk, client, channel, thread, request)
    finally:
        await client.reactions_remove(channel=channel, timestamp=marked, name="eyes")


async def _answer(desk: ResearchDesk, client: AsyncWebClient, channel: str, thread: str,
                  request: ResearchRequest) -> None:
    try:
        wait_s = await desk.limiter.admit(request.tenant, request.user)
    except RateLimitedError as error:
        await client.chat_postEphemeral(channel=channel, user=request.user, thread_ts=thread,
                                        text=refusal(error, "workspace"))
        return
    status = await client.chat_postMessage(
        channel=channel, thread_ts=thread, unfurl_links=False,
        text=f":hourglass: {queued(wait_s)}" if wait_s > 0.5 else ":mag: Researching…")
    status_ts = status["ts"]
    if wait_s > 0:
        await asyncio.sleep(wait_s)

    progress = throttled(lambda event: client.chat_update(
        channel=channel, ts=status_ts, text=render_progress(event)))

    try:
        result = await desk.research(request, progress)
    except InvalidQuestionError as error:
        await client.chat_update(channel=channel, ts=status_ts, **render_error(str(error)))
        return
    except Exception:
        log.exception("research failed for a Slack question")
        await client.chat_update(channel=channel, ts=status_ts, **render_error(FAILURE))
        return
    pages = render_answer(result)
    await client.chat_update(channel=channel, ts=status_ts, **pages[0])
    await desk.conversations.remember(PLATFORM, request.tenant, _key(channel, thread),
                                      _key(channel, status_ts), result.job_id)
    for page in pages[1:]:
        await client.chat_postMessage(channel=channel, thread_ts=thread, unfurl_links=False,
                                      **page)
    for page in render_sources(result):
        await client.chat_postMessage(channel=channel, thread_ts=thread, unfurl_links=False,
                                      unfurl_media=False, **page)
    await client.reactions_add(channel=channel, timestamp=status_ts, name=RETRY_REACTION)


async def _thread_context(desk: ResearchDesk, team: str, event: dict[str, Any]
                          ) -> list[ConversationTurn]:
    """The earlier turns of the event's thread; a message outside a thread starts one."""
    if not event.get("thread_ts"):
        return []
    return await desk.conversations.context(PLATFORM, team,
                                            _key(event["channel"], event["thread_ts"]))


def _team(context: AsyncBoltContext, event: dict[str, Any]) -> str:
    return context.team_id or event.get("team") or "slack"


def _key(channel: str, ts: str) -> str:
    return f"{channel}:{ts}"


def _strip_mention(text: str, bot_user_id: str | None) -> str:
    if bot_user_id:
        return text.replace(f"<@{bot_user_id}>", " ").strip()
    return _LEADING_MENTION.sub("", text).strip()


def web_app(app: AsyncApp, path: str = "/slack/events") -> web.Application:
    """HTTP mode: Slack's requests, signature-checked by bolt, on an aiohttp route; with
    OAuth, the install page and the redirect that stores an installation too."""

    async def handle(request: web.Request) -> web.Response:
        response = await app.async_dispatch(await to_bolt_request(request))
        return await to_aiohttp_response(response)

    application = web.Application()
    application.router.add_post(path, handle)
    flow = app.oauth_flow
    if flow is not None:
        async def install(request: web.Request) -> web.Response:
            return await to_aiohttp_response(
                await flow.handle_installation(await to_bolt_request(request)))

        async def callback(request: web.Request) -> web.Response:
            return await to_aiohttp_response(
                await flow.handle_callback(await to_bolt_request(request)))

        application.router.add_get(flow.install_path, install)
        application.router.add_get(flow.redirect_uri_path, callback)
    return application
