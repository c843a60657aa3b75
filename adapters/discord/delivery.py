"""How a job's progress and answer reach Discord: the deferred interaction response is edited
while its token lives (15 minutes), else a channel message is posted once and edited; an
answer in a server's text channel starts a thread for its sources and follow-ups. Each call
is a delivery step done at most once per job. Everything a delivery needs is in its target
(channel, interaction token and its expiry), so any process with the bot token can finish
it: `DiscordDeliveries` rebuilds one from its target over REST alone."""

from __future__ import annotations

import functools
import hashlib
import logging
import time
from typing import Any

import discord

from adapters.chat.services import AnswerPage
from adapters.chat.text import trim
from adapters.discord.render import (
    Embed,
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

PLATFORM = "discord"
RETRY_EMOJI = "🔁"
NO_MENTIONS = discord.AllowedMentions.none()
# The interaction token is gone (expired after 15 minutes, or never acknowledged in time):
# 10062 Unknown interaction, 10015 Unknown webhook, 50027 Invalid webhook token.
TOKEN_GONE = {10062, 10015, 50027}
# An interaction token lives 15 minutes; past this many seconds it is not tried any more.
TOKEN_LIFE_S = 14 * 60
# Discord's name for an interaction's own response among its webhook's messages.
ORIGINAL = "@original"
# 160004: a thread was started from this message already (by an earlier attempt).
THREAD_EXISTS = 160004


class Status:
    """Where a job shows its progress and answer: the deferred interaction response (through
    the interaction's webhook, `original`) while its token works, else a channel message
    (posted once, then edited)."""

    def __init__(self, channel: discord.abc.Messageable, original: discord.Webhook | None,
                 expires_at: float = 0.0) -> None:
        self.original = original
        self.expires_at = expires_at
        self.channel = channel
        self.message: discord.Message | discord.PartialMessage | None = None

    @classmethod
    def of(cls, channel: discord.abc.Messageable, interaction: discord.Interaction) -> Status:
        # Counted from now, as the interaction arrives (its snowflake's clock is Discord's).
        return cls(channel, interaction.followup, time.time() + TOKEN_LIFE_S)

    async def show(self, embeds: list[Embed], nonce: str | None = None
                   ) -> discord.Message | discord.PartialMessage:
        """Show `embeds` in the status message; `nonce` makes a channel post idempotent
        (Discord returns the message already posted with it instead of a second one)."""
        if self.original is not None and time.time() >= self.expires_at:
            self.drop_original()
        if self.original is not None:
            try:
                # The interaction's own response is the webhook's message "@original".
                self.message = await self.original.edit_message(
                    ORIGINAL, embeds=embeds_of(embeds),  # type: ignore[call-overload]
                    allowed_mentions=NO_MENTIONS)
                return self.message
            except discord.HTTPException as error:
                if error.code not in TOKEN_GONE:
                    raise
                log.info("interaction token gone (%s): answering in the channel", error.code)
                self.drop_original()
        # The client's default is no mentions; edits of a message carry it only when the
        # message's author is known to be the bot, so every call says so itself.
        if self.message is None:
            once: dict[str, Any] = {"nonce": nonce} if nonce else {}
            self.message = await self.channel.send(embeds=embeds_of(embeds),
                                                   allowed_mentions=NO_MENTIONS, **once)
        else:
            self.message = await self.message.edit(embeds=embeds_of(embeds),
                                                   allowed_mentions=NO_MENTIONS)
        return self.message

    def drop_original(self) -> None:
        """The interaction's token no longer works: answer in the channel from now on."""
        self.original = None
        self.message = None


class DiscordDelivery:
    platform = PLATFORM

    def __init__(self, client: discord.Client, conversations: ConversationStore, tenant: str,
                 status: Status, threads: bool, *,
                 answer_page: AnswerPage | None = None) -> None:
        self._client = client
        self._answer_page = answer_page
        self._conversations = conversations
        self._tenant = tenant
        self.status = status
        self.threads = threads  # a server text channel: the answer starts a thread in it

    def target(self) -> dict[str, Any]:
        original = self.status.original
        return {"tenant": self._tenant, "channel": str(getattr(self.status.channel, "id", "")),
                "application_id": str(original.id) if original is not None else None,
                "interaction_token": original.token if original is not None else None,
                "expires_at": self.status.expires_at, "threads": self.threads,
                "status_message": str(self.status.message.id) if self.status.message else None}

    async def progress(self, event: ProgressEvent) -> None:
        await self.status.show([render_progress(event)])

    async def answer(self, result: ResearchResult, steps: Steps) -> None:
        link = self._answer_page(result.job_id) if self._answer_page is not None else None
        first, *rest = render_answer(result, link)
        shown = await steps.once("answer", lambda: self._show(first, nonce(steps, "answer")))
        answer = self._client.get_partial_messageable(int(shown["channel"])) \
            .get_partial_message(int(shown["message"]))
        thread = await steps.once("thread", lambda: self._thread(result, answer))
        where = thread or shown["channel"]
        # Follow-ups are read in the answer's thread, or where the answer already is a
        # conversation (a thread, a DM). An answer left in a server channel (no thread could
        # be started) is keyed by the answer itself: the channel's chat is not a follow-up.
        conversation = where if thread or not self.threads \
            else f"{shown['channel']}:{shown['message']}"
        await steps.once("remembered", lambda: self._remember(conversation, shown["message"],
                                                              result.job_id))
        channel = self._client.get_partial_messageable(int(where))
        for number, page in enumerate([*rest, *render_sources(result)], start=1):
            name = f"page {number}"
            await steps.once(name, functools.partial(self._send, channel, page,
                                                     nonce(steps, name)))
        await steps.once("retry reaction", lambda: self._react(answer))

    async def failure(self, message: str, steps: Steps) -> None:
        await steps.once("error", lambda: self._show([render_error(message)],
                                                     nonce(steps, "error")))

    async def added(self, outcome: DocumentsOutcome, steps: Steps) -> None:
        await steps.once("added", lambda: self._show([render_added(outcome)],
                                                     nonce(steps, "added")))

    async def _show(self, embeds: list[Embed], once: str) -> dict[str, str]:
        message = await self.status.show(embeds, once)
        return {"message": str(message.id), "channel": str(message.channel.id)}

    async def _thread(self, result: ResearchResult,
                      answer: discord.PartialMessage) -> str | None:
        if not self.threads:
            return None
        try:
            thread = await self._client.http.start_thread_with_message(
                answer.channel.id, answer.id, auto_archive_duration=1440,
                name=trim(" ".join(result.question.split()), 100) or "Research")
        except discord.HTTPException as error:
            if error.code == THREAD_EXISTS:  # an attempt that died started it: same id
                return str(answer.id)
            if transient(error):
                raise
            # No permission to create threads, say: the sources follow in the channel.
            log.warning("could not start a thread from the answer: %s", error)
            return None
        return str(thread["id"])

    async def _remember(self, conversation: str, answer: str, job_id: str) -> bool:
        await self._conversations.remember(PLATFORM, self._tenant, conversation, answer, job_id)
        return True

    @staticmethod
    async def _send(channel: discord.PartialMessageable, page: list[Embed], once: str) -> str:
        message = await channel.send(embeds=embeds_of(page), nonce=once,
                                     allowed_mentions=NO_MENTIONS)
        return str(message.id)

    @staticmethod
    async def _react(answer: discord.PartialMessage) -> bool:
        await answer.add_reaction(RETRY_EMOJI)  # a PUT: adding it twice changes nothing
        return True


def nonce(steps: Steps, name: str) -> str:
    """The job's step as a message nonce (25 characters at most): a retry of a post that
    reached Discord gets the same message back."""
    return hashlib.sha256(f"{steps.job_id}:{name}".encode()).hexdigest()[:25]


def embeds_of(payloads: list[Embed]) -> list[discord.Embed]:
    return [discord.Embed.from_dict(payload) for payload in payloads]


class DiscordDeliveries:
    """Rebuilds Discord deliveries from their stored targets, in any process whose client is
    logged in (REST only: a worker needs no gateway connection); `answer_page` links answers
    to their page."""

    def __init__(self, client: discord.Client, conversations: ConversationStore, *,
                 answer_page: AnswerPage | None = None) -> None:
        self._client = client
        self._conversations = conversations
        self._answer_page = answer_page

    async def __call__(self, target: dict[str, Any]) -> DiscordDelivery:
        channel = self._client.get_partial_messageable(int(target["channel"]))
        original = None
        if target.get("interaction_token") and target.get("application_id"):
            original = discord.Webhook.partial(int(target["application_id"]),
                                               str(target["interaction_token"]),
                                               client=self._client)
        status = Status(channel, original, float(target.get("expires_at") or 0.0))
        if target.get("status_message") and original is None:
            status.message = channel.get_partial_message(int(target["status_message"]))
        return DiscordDelivery(self._client, self._conversations, str(target["tenant"]),
                               status, bool(target.get("threads")),
                               answer_page=self._answer_page)
