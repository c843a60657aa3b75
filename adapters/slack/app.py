"""The Slack front end: a bolt AsyncApp that turns mentions, direct messages, thread replies,
`/research` and 🔁 reactions into research requests, and answers in the question's thread;
👍/👎 on an answer are its readers' ratings. Thin: parse, submit, render."""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.async_app import AsyncApp, AsyncBoltContext
from slack_bolt.oauth.async_oauth_settings import AsyncOAuthSettings
from slack_bolt.response import BoltResponse
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.web.async_client import AsyncWebClient

from adapters.chat.controls import USAGE, ControlsError, split_options
from adapters.chat.services import (
    NOT_ALLOWED,
    ChatServices,
    FileHosts,
    queued,
    refinement,
    refusal,
)
from adapters.slack.delivery import (
    PLATFORM,
    RETRY_REACTION,
    WORKING_REACTION,
    SlackDelivery,
    key,
)
from adapters.slack.render import escape_mrkdwn
from core.errors import (
    DocumentRefusedError,
    FetchError,
    InvalidQuestionError,
    JobNotFoundError,
    RateLimitedError,
)
from core.jobs.delivery import Steps
from core.models import ConversationTurn, ResearchRequest
from core.retrieval.kb.adding import DocumentAdder
from core.store.feedback import Rating

log = logging.getLogger(__name__)

T = TypeVar("T")
_LEADING_MENTION = re.compile(r"^\s*<@[A-Z0-9]+>")
RATINGS = {"+1": Rating.UP, "thumbsup": Rating.UP, "-1": Rating.DOWN, "thumbsdown": Rating.DOWN}
# The message shortcut "Research this" (manifest.json)
RESEARCH_MESSAGE = "research_message"
# "add <link>" to the bot: Slack sends a link as <url> or <url|label>
_ADD_LINK = re.compile(r"^add\s+<(https?://[^>|\s]+)(?:\|[^>]*)?>\s*$", re.I)


# Shared files are downloaded from Slack's file host only, with the workspace's bot token.
SLACK_FILE_HOSTS = FileHosts(frozenset({"files.slack.com"}))


def web_client(token: str | None, base_url: str = "https://slack.com/api/") -> AsyncWebClient:
    """A Web API client that waits out 429s (Retry-After) instead of failing. Per-request
    clients (one per workspace with OAuth) inherit its base URL and retry handlers."""
    return AsyncWebClient(
        token=token,
        base_url=base_url,
        retry_handlers=[AsyncRateLimitErrorRetryHandler(max_retry_count=3)],
    )


def build_app(
    desk: ChatServices, signing_secret: str, client: AsyncWebClient,
    oauth_settings: AsyncOAuthSettings | None = None, files: FileHosts = SLACK_FILE_HOSTS,
) -> AsyncApp:
    """One workspace when `client` carries a bot token; with `oauth_settings`, every
    workspace that installs the app, each with its token from the installation store.
    `files`: where shared files are downloaded from."""
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
        text = _strip_mention(event.get("text", ""), context.bot_user_id)
        if event.get("files") or _ADD_LINK.match(text):
            await _add(desk, client, files, event, team, thread, text)
            return
        feedback = refinement(text)
        if feedback is not None and event.get("thread_ts"):
            await _refine(desk, client, event, team, thread, feedback)
            return
        turns = await _thread_history(desk, team, event)
        await _ask(desk, client, event["channel"], event["ts"], thread, ResearchRequest(
            question=text, history=turns, tenant=team, user=event.get("user", ""),
            platform=PLATFORM, depth=desk.depth))

    @app.event("message")
    async def on_message(event: dict[str, Any], context: AsyncBoltContext,
                         client: AsyncWebClient) -> None:
        """Direct messages, and replies in a thread the bot has answered in."""
        user = event.get("user")
        if event.get("subtype") not in (None, "file_share") or event.get("bot_id") \
                or not user or user == context.bot_user_id:
            return
        text = event.get("text", "")
        direct = event.get("channel_type") == "im"
        if not direct and (not event.get("thread_ts")
                           or f"<@{context.bot_user_id}>" in text):
            return  # not a follow-up, or a mention: on_mention answers those
        team = _team(context, event)
        thread = event.get("thread_ts") or event["ts"]
        turns = await _thread_history(desk, team, event)
        if not direct and not turns:
            return  # a conversation between people that the bot has no part in
        if event.get("files") or _ADD_LINK.match(text.strip()):
            await _add(desk, client, files, event, team, thread, text.strip())
            return
        feedback = refinement(text)
        if feedback is not None:
            await _refine(desk, client, event, team, thread, feedback)
            return
        await _ask(desk, client, event["channel"], event["ts"], thread, ResearchRequest(
            question=_strip_mention(text, context.bot_user_id), history=turns, tenant=team,
            user=user, platform=PLATFORM, depth=desk.depth))

    @app.event("reaction_added")
    async def on_reaction(event: dict[str, Any], context: AsyncBoltContext,
                          client: AsyncWebClient) -> None:
        """👍/👎 on an answer: the person's rating of it. 🔁: research it again, bypassing
        the cache, in the same thread."""
        item = event.get("item") or {}
        user = event.get("user")
        if item.get("type") != "message" or not user or user == context.bot_user_id:
            return
        team = _team(context, event)
        answer = key(item["channel"], item["ts"])
        rating = rating_of(str(event.get("reaction", "")))
        if rating is not None:
            await desk.rate(PLATFORM, team, answer, rater(team, user), rating, added=True)
            return
        if event.get("reaction") != RETRY_REACTION:
            return
        found = await desk.conversations.answered(PLATFORM, team, answer)
        if found is None:
            return  # not one of our answers
        request, thread = found
        await _ask(desk, client, item["channel"], item["ts"], thread.partition(":")[2],
                   request.model_copy(update={"bypass_cache": True, "user": user}))

    @app.event("reaction_removed")
    async def on_reaction_removed(event: dict[str, Any], context: AsyncBoltContext) -> None:
        """👍/👎 taken off an answer: the rating is withdrawn."""
        item = event.get("item") or {}
        user = event.get("user")
        rating = rating_of(str(event.get("reaction", "")))
        if rating is None or item.get("type") != "message" or not user \
                or user == context.bot_user_id:
            return
        team = _team(context, event)
        await desk.rate(PLATFORM, team, key(item["channel"], item["ts"]), rater(team, user),
                        rating, added=False)

    @app.command("/research")
    async def on_command(ack: Callable[..., Awaitable[None]], command: dict[str, Any],
                         context: AsyncBoltContext, client: AsyncWebClient) -> None:
        """`/research [options] question`: options that cannot be used are answered, to
        the person alone, with what was wrong and how options are written."""
        try:
            question, controls = split_options(command.get("text", ""))
        except ControlsError as error:
            await ack(f"{escape_mrkdwn(str(error))}.\n{USAGE}")
            return
        await ack()
        user = command.get("user_id", "")
        asker = f"<@{user}>" if re.fullmatch(r"[UW][A-Z0-9]+", user) else "Someone"
        root = await _attempt(client.chat_postMessage(
            channel=command["channel_id"], unfurl_links=False,
            text=f"{asker} asked: {escape_mrkdwn(question.strip()) or '(nothing)'}"),
            "post the question")
        where = str(root["ts"]) if root is not None else None
        await _ask(desk, client, command["channel_id"], where, where, ResearchRequest(
            question=question, tenant=context.team_id or command.get("team_id", ""),
            user=user, platform=PLATFORM, depth=desk.depth, controls=controls))

    @app.shortcut(RESEARCH_MESSAGE)
    async def on_research_message(ack: Callable[..., Awaitable[None]], body: dict[str, Any],
                                  context: AsyncBoltContext, client: AsyncWebClient) -> None:
        """"Research this" on a message: its text is the question, answered in a thread
        under it, with the limits, dedupe and delivery of any question."""
        await ack()
        message = body.get("message") or {}
        channel = (body.get("channel") or {}).get("id", "")
        user = (body.get("user") or {}).get("id", "")
        team = context.team_id or (body.get("team") or {}).get("id") or "slack"
        text = _strip_mention(str(message.get("text", "")), context.bot_user_id)
        ts = str(message.get("ts") or body.get("message_ts") or "")
        if not text or not channel or not ts:
            await _attempt(client.chat_postEphemeral(
                channel=channel, user=user, text="That message has no text to research."),
                "refuse an empty message")
            return
        await _ask(desk, client, channel, ts, str(message.get("thread_ts") or ts),
                   ResearchRequest(question=text, tenant=team, user=user, platform=PLATFORM,
                                   depth=desk.depth))

    return app


async def _ask(desk: ChatServices, client: AsyncWebClient, channel: str,
               marked: str | None, thread: str | None, request: ResearchRequest) -> None:
    """Acknowledge the question (👀 on the message `marked`, a status message in `thread`)
    and submit it; the job answers there. Every call here is best effort: when Slack
    refuses one, the question is still researched and its answer still delivered."""
    working = await _acknowledged(desk, client, request.tenant, request.user, channel, marked,
                                  thread, ":mag: Researching…")
    if working is None:
        return
    delivery, wait_s = working
    try:
        await desk.jobs.submit(request, delivery, start_after_s=wait_s)
    except InvalidQuestionError as error:
        await _attempt(delivery.failure(str(error), Steps({}, _nowhere)), "show an error")


async def _acknowledged(desk: ChatServices, client: AsyncWebClient, team: str, user: str,
                        channel: str, marked: str | None, thread: str | None, doing: str,
                        limited: bool = True) -> tuple[SlackDelivery, float] | None:
    """👀 on the message `marked`, the person's and the workspace's question limits (when
    `limited`), then a status message in `thread` saying what is being done (`doing`) or how
    long it waits: the delivery the job answers through, and its wait. None when over a
    limit (the person is told privately, the 👀 comes off). Every call is best effort."""
    if marked is not None and await _attempt(client.reactions_add(
            channel=channel, timestamp=marked, name=WORKING_REACTION), "add 👀") is None:
        marked = None
    try:
        wait_s = await desk.limiter.admit(team, user) if limited else 0.0
    except RateLimitedError as error:
        await _attempt(client.chat_postEphemeral(
            channel=channel, user=user, thread_ts=thread,
            text=refusal(error, "workspace")), "refuse a request")
        if marked is not None:
            await _attempt(client.reactions_remove(channel=channel, timestamp=marked,
                                                   name=WORKING_REACTION), "remove 👀")
        return None
    status = await _attempt(client.chat_postMessage(
        channel=channel, thread_ts=thread, unfurl_links=False,
        text=f":hourglass: {queued(wait_s)}" if wait_s > 0.5 else doing),
        "post a status message")
    delivery = SlackDelivery(client, desk.conversations, team, channel, thread,
                             str(status["ts"]) if status is not None else None, marked,
                             answer_page=desk.answer_page)
    return delivery, wait_s


async def _refine(desk: ChatServices, client: AsyncWebClient, event: dict[str, Any],
                  team: str, thread: str, feedback: str) -> None:
    """Revise the thread's latest answer with `feedback` ("refine: shorter"): an improve job
    whose revision is posted in the thread like any answer. Without a model, the person is
    told in one line which setting enables it."""
    channel, user = event["channel"], event.get("user", "")
    job_id = await desk.conversations.latest_answer(PLATFORM, team, key(channel, thread))
    if job_id is None:
        return  # not a thread the bot has answered in
    working = await _acknowledged(desk, client, team, user, channel, event["ts"], thread,
                                  ":pencil2: Revising the answer…")
    if working is None:
        return
    delivery, wait_s = working
    try:
        await desk.jobs.improve(feedback, team, job_id, delivery=delivery, user=user,
                                start_after_s=wait_s)
    except (InvalidQuestionError, JobNotFoundError) as error:
        await _attempt(delivery.failure(str(error), Steps({}, _nowhere)), "show an error")


async def _add(desk: ChatServices, client: AsyncWebClient, files: FileHosts,
               event: dict[str, Any], team: str, thread: str, text: str) -> None:
    """Add the files shared in `event`, or the link of "add <link>", to the workspace's
    knowledge base as a documents job, which replies in the thread with what it added.
    Refused at once (nothing kept), with why: a person not allowed, a file too large or of a
    type it cannot read, a link it may not fetch."""
    channel, user = event["channel"], event.get("user", "")
    if not desk.may_add_documents(user) or not desk.jobs.adds_documents:
        why = NOT_ALLOWED if desk.jobs.adds_documents else "This bot adds no documents."
        await _attempt(client.chat_postEphemeral(channel=channel, user=user, thread_ts=thread,
                                                 text=why), "refuse a document")
        return
    working = await _acknowledged(desk, client, team, user, channel, event["ts"], thread,
                                  ":inbox_tray: Reading what you shared…", limited=False)
    assert working is not None  # not limited: never refused
    delivery, _ = working
    try:
        link = _ADD_LINK.match(text)
        if link is not None and not event.get("files"):
            await desk.jobs.add_url(team, user, PLATFORM, link.group(1), delivery=delivery)
            return
        shared = [await _download(client, files, desk.jobs.documents, item)
                  for item in event.get("files") or []]
        await desk.jobs.add_files(team, user, PLATFORM, shared, delivery)
    except (DocumentRefusedError, FetchError) as error:
        await _attempt(delivery.failure(str(error), Steps({}, _nowhere)), "show an error")


async def _download(client: AsyncWebClient, files: FileHosts, adder: DocumentAdder,
                    item: dict[str, Any]) -> tuple[str, bytes]:
    """A shared file's name and bytes: its details from files.info, its content from
    Slack's file host with the workspace's bot token (FetchError, DocumentRefusedError)."""
    try:
        info = (await client.files_info(file=str(item.get("id", ""))))["file"]
    except Exception as error:  # no such file, no files:read scope, Slack away
        log.warning("Slack: files.info failed: %s", error)
        raise FetchError("Slack would not say where the file is (the app needs the "
                         "files:read scope)") from None
    name = str(info.get("name") or "file")
    adder.check_size(name, int(info.get("size") or 0))
    url = info.get("url_private_download") or info.get("url_private")
    if not url:
        raise FetchError(f"{name}: Slack gave no address to download it from")
    data = await files.download(str(url), adder.max_bytes,
                                {"Authorization": f"Bearer {client.token}"})
    return name, data


async def _attempt(call: Awaitable[T], what: str) -> T | None:
    """A Slack call that may fail without losing the question: None when it did."""
    try:
        return await call
    except Exception as error:
        log.warning("Slack: could not %s: %s", what, error)
        return None


async def _nowhere(_: dict[str, Any]) -> None:
    """Steps of a delivery outside any job are not stored."""


async def _thread_history(desk: ChatServices, team: str, event: dict[str, Any]
                          ) -> list[ConversationTurn]:
    """The earlier turns of the event's thread; a message outside a thread starts one."""
    if not event.get("thread_ts"):
        return []
    return await desk.conversations.history(PLATFORM, team,
                                            key(event["channel"], event["thread_ts"]))


def rating_of(reaction: str) -> Rating | None:
    """The rating a reaction stands for, whatever its skin tone (`+1::skin-tone-2`)."""
    return RATINGS.get(reaction.partition("::")[0])


def rater(team: str, user: str) -> str:
    return f"{PLATFORM}:{team}:{user}"


def _team(context: AsyncBoltContext, event: dict[str, Any]) -> str:
    return context.team_id or event.get("team") or "slack"


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
