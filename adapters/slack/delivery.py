"""How a job's progress and answer reach Slack: the status message in the question's thread
is edited into the answer (or, when it could not be posted, the answer is posted once),
the rest of the answer and the sources follow in the thread, 🔁 goes on the answer and the
👀 on the question comes off. Each call is a delivery step done at most once per job. The
target holds all but the workspace's token, so any process that can find the token (the
settings, or the OAuth installation store) finishes a delivery: `SlackDeliveries`."""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.render import render_answer, render_error, render_progress, render_sources
from core.jobs.conversations import ConversationStore
from core.jobs.delivery import Steps, transient
from core.models import ProgressEvent, ResearchResult

log = logging.getLogger(__name__)

PLATFORM = "slack"
RETRY_REACTION = "repeat"
WORKING_REACTION = "eyes"


class SlackDelivery:
    platform = PLATFORM

    def __init__(self, client: AsyncWebClient, conversations: ConversationStore, tenant: str,
                 channel: str, thread: str | None, status_ts: str | None,
                 marked: str | None) -> None:
        self._client = client
        self._conversations = conversations
        self._tenant = tenant
        self.channel = channel
        self.thread = thread  # None: the question could not be threaded (its root failed)
        self.status_ts = status_ts  # the "Researching…" message, when it could be posted
        self.marked = marked  # the message carrying 👀, when it got one

    def target(self) -> dict[str, Any]:
        return {"tenant": self._tenant, "channel": self.channel, "thread": self.thread,
                "status_ts": self.status_ts, "marked": self.marked}

    async def progress(self, event: ProgressEvent) -> None:
        if self.status_ts is not None:
            await self._client.chat_update(channel=self.channel, ts=self.status_ts,
                                           text=render_progress(event))

    async def answer(self, result: ResearchResult, steps: Steps) -> None:
        first, *rest = render_answer(result)
        answer_ts: str = await steps.once("answer", lambda: self._show(first))
        thread = self.thread or answer_ts
        await steps.once("remembered", lambda: self._remember(thread, answer_ts, result.job_id))
        for number, page in enumerate([*rest, *render_sources(result)], start=1):
            await steps.once(f"page {number}", functools.partial(self._post, thread, page))
        await steps.once("retry reaction", lambda: self._react(answer_ts))
        await steps.once("unmarked", self._unmark)

    async def failure(self, message: str, steps: Steps) -> None:
        await steps.once("error", lambda: self._show(render_error(message)))
        await steps.once("unmarked", self._unmark)

    async def _show(self, page: dict[str, Any]) -> str:
        """The status message becomes `page`; without one, `page` is posted in the thread."""
        if self.status_ts is not None:
            await self._client.chat_update(channel=self.channel, ts=self.status_ts, **page)
            return self.status_ts
        return await self._post(self.thread, page)

    async def _post(self, thread: str | None, page: dict[str, Any]) -> str:
        response = await self._client.chat_postMessage(
            channel=self.channel, thread_ts=thread, unfurl_links=False, unfurl_media=False,
            **page)
        return str(response["ts"])

    async def _remember(self, thread: str, answer_ts: str, job_id: str) -> bool:
        await self._conversations.remember(PLATFORM, self._tenant, key(self.channel, thread),
                                           key(self.channel, answer_ts), job_id)
        return True

    async def _react(self, answer_ts: str) -> bool:
        return await _unless(self._client.reactions_add(
            channel=self.channel, timestamp=answer_ts, name=RETRY_REACTION), "already_reacted")

    async def _unmark(self) -> bool:
        if self.marked is None:
            return True
        return await best_effort(_unless(self._client.reactions_remove(
            channel=self.channel, timestamp=self.marked, name=WORKING_REACTION),
            "no_reaction"), "remove 👀")


async def _unless(call: Awaitable[Any], done_already: str) -> bool:
    """Run a Slack call; the error `done_already` (e.g. already_reacted) counts as done."""
    try:
        await call
    except SlackApiError as error:
        if error.response.get("error") != done_already:
            raise
    return True


async def best_effort(call: Awaitable[Any], what: str) -> bool:
    """Run a cosmetic Slack call; a failure that a retry would not fix is logged and
    skipped (False). Transient failures are raised, for the caller's retry."""
    try:
        await call
    except Exception as error:
        if isinstance(error, SlackApiError | OSError) and not transient(error):
            log.info("Slack: could not %s: %s", what, error)
            return False
        raise
    return True


class SlackDeliveries:
    """Rebuilds Slack deliveries from their stored targets; `client_for(tenant)` is a Web API
    client carrying the workspace's bot token."""

    def __init__(self, client_for: Callable[[str], Awaitable[AsyncWebClient]],
                 conversations: ConversationStore) -> None:
        self._client_for = client_for
        self._conversations = conversations

    async def __call__(self, target: dict[str, Any]) -> SlackDelivery:
        tenant = str(target["tenant"])
        return SlackDelivery(await self._client_for(tenant), self._conversations, tenant,
                             str(target["channel"]), target.get("thread"),
                             target.get("status_ts"), target.get("marked"))


def key(channel: str, ts: str) -> str:
    return f"{channel}:{ts}"
