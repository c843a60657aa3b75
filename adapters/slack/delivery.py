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

from adapters.chat.services import AnswerPage
from adapters.slack.render import (
    render_added,
    render_answer,
    render_error,
    render_progress,
    render_sources,
)
from core.jobs.delivery import Steps, transient
from core.models import DocumentsOutcome, ProgressEvent, ResearchResult
from core.store.conversations import ConversationStore

log = logging.getLogger(__name__)

PLATFORM = "slack"
RETRY_REACTION = "repeat"
WORKING_REACTION = "eyes"
# Message metadata on every message a delivery posts: which job and step posted it, so that
# a retry after a crash finds a post whose success was never stored instead of posting again.
METADATA_TYPE = "researchbot_delivery"


class SlackDelivery:
    platform = PLATFORM

    def __init__(self, client: AsyncWebClient, conversations: ConversationStore, tenant: str,
                 channel: str, thread: str | None, status_ts: str | None,
                 marked: str | None, *, answer_page: AnswerPage | None = None) -> None:
        self._client = client
        self._answer_page = answer_page
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
        link = self._answer_page(result.job_id) if self._answer_page is not None else None
        first, *rest = render_answer(result, link)
        answer_ts: str = await self._once_shown(steps, "answer", first)
        thread = self.thread or answer_ts
        await steps.once("remembered", lambda: self._remember(thread, answer_ts, result.job_id))
        for number, page in enumerate([*rest, *render_sources(result)], start=1):
            name = f"page {number}"
            await steps.once(name, functools.partial(self._post, thread, page, steps, name),
                             functools.partial(self._find, thread, steps, name))
        await steps.once("retry reaction", lambda: self._react(answer_ts))
        await steps.once("unmarked", self._unmark)

    async def failure(self, message: str, steps: Steps) -> None:
        await self._once_shown(steps, "error", render_error(message))
        await steps.once("unmarked", self._unmark)

    async def added(self, outcome: DocumentsOutcome, steps: Steps) -> None:
        await self._once_shown(steps, "added", render_added(outcome))
        await steps.once("unmarked", self._unmark)

    async def _once_shown(self, steps: Steps, name: str, page: dict[str, Any]) -> str:
        """The status message becomes `page` (an edit: repeating it is harmless); without
        one, `page` is posted in the thread, once."""
        if self.status_ts is not None:
            return await steps.once(name, functools.partial(self._edit, page))
        return await steps.once(name, functools.partial(self._post, self.thread, page, steps,
                                                        name),
                                functools.partial(self._find, self.thread, steps, name))

    async def _edit(self, page: dict[str, Any]) -> str:
        assert self.status_ts is not None
        await self._client.chat_update(channel=self.channel, ts=self.status_ts, **page)
        return self.status_ts

    async def _post(self, thread: str | None, page: dict[str, Any], steps: Steps,
                    name: str) -> str:
        response = await self._client.chat_postMessage(
            channel=self.channel, thread_ts=thread, unfurl_links=False, unfurl_media=False,
            metadata={"event_type": METADATA_TYPE,
                      "event_payload": {"job": steps.job_id, "step": name}},
            **page)
        return str(response["ts"])

    async def _find(self, thread: str | None, steps: Steps, name: str) -> str | None:
        """The ts of the message this job's step `name` posted in `thread`, if it did."""
        if thread is None:
            return None
        response = await self._client.conversations_replies(
            channel=self.channel, ts=thread, include_all_metadata=True, limit=1000)
        wanted = {"job": steps.job_id, "step": name}
        for message in response.get("messages") or []:
            metadata = message.get("metadata") or {}
            if metadata.get("event_type") == METADATA_TYPE \
                    and metadata.get("event_payload") == wanted:
                return str(message["ts"])
        return None

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
    client carrying the workspace's bot token; `answer_page` links answers to their page."""

    def __init__(self, client_for: Callable[[str], Awaitable[AsyncWebClient]],
                 conversations: ConversationStore, *,
                 answer_page: AnswerPage | None = None) -> None:
        self._client_for = client_for
        self._conversations = conversations
        self._answer_page = answer_page

    async def __call__(self, target: dict[str, Any]) -> SlackDelivery:
        tenant = str(target["tenant"])
        return SlackDelivery(await self._client_for(tenant), self._conversations, tenant,
                             str(target["channel"]), target.get("thread"),
                             target.get("status_ts"), target.get("marked"),
                             answer_page=self._answer_page)


def key(channel: str, ts: str) -> str:
    return f"{channel}:{ts}"
