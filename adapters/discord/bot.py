"""The Discord front end: `/research`, follow-ups in the answer's thread and 🔁 retries, turned
into research requests and answered with embeds; 👍/👎 on an answer are its readers' ratings.
Thin: parse, submit, render."""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable
from typing import Any, Literal

import discord
from discord import app_commands

from adapters.chat.controls import ControlsError, search_controls
from adapters.chat.services import (
    NOT_ALLOWED,
    ChatServices,
    FileHosts,
    queued,
    refinement,
    refusal,
)
from adapters.chat.text import trim
from adapters.discord.delivery import (
    NO_MENTIONS,
    PLATFORM,
    RETRY_EMOJI,
    THREAD_EXISTS,
    TOKEN_GONE,
    DiscordDelivery,
    Status,
)
from adapters.discord.render import render_error, render_status
from core.errors import (
    DocumentRefusedError,
    FetchError,
    InvalidQuestionError,
    JobNotFoundError,
    RateLimitedError,
)
from core.jobs.service import FAILURE
from core.models import Depth, ResearchRequest
from core.store.feedback import Rating

log = logging.getLogger(__name__)

RATINGS = {"\N{THUMBS UP SIGN}": Rating.UP, "\N{THUMBS DOWN SIGN}": Rating.DOWN}
_SKIN_TONES = re.compile("[\U0001F3FB-\U0001F3FF]")
_VARIATION = "\ufe0f"
# Attachments are downloaded from Discord's CDN only.
DISCORD_FILE_HOSTS = FileHosts(frozenset({"cdn.discordapp.com", "media.discordapp.net"}))
# "add <link>" to the bot (Discord keeps a link in <> when its preview is suppressed)
_ADD_LINK = re.compile(r"^add\s+<?(https?://[^\s<>]+)>?\s*$", re.I)
# The message context-menu command (right-click a message > Apps > Research this)
RESEARCH_THIS = "Research this"
_THREADS = {discord.ChannelType.public_thread, discord.ChannelType.private_thread,
            discord.ChannelType.news_thread}


def intents() -> discord.Intents:
    """Guild and DM messages and reactions; message content (privileged: enable it in the
    developer portal) to read follow-ups in threads. No members or presences."""
    wanted = discord.Intents.none()
    wanted.guilds = True
    wanted.guild_messages = True
    wanted.dm_messages = True
    wanted.guild_reactions = True
    wanted.dm_reactions = True
    wanted.message_content = True
    return wanted


def invite_url(application_id: int) -> str:
    """The link that adds the bot to a server with exactly the permissions it uses."""
    permissions = discord.Permissions(
        view_channel=True, send_messages=True, send_messages_in_threads=True,
        create_public_threads=True, embed_links=True, read_message_history=True,
        add_reactions=True)
    return discord.utils.oauth_url(application_id, permissions=permissions,
                                   scopes=("bot", "applications.commands"))


class ResearchBot(discord.Client):
    def __init__(self, desk: ChatServices, *, dev_guild: int | None = None,
                 sync_commands: bool = True, files: FileHosts = DISCORD_FILE_HOSTS,
                 **options: Any) -> None:
        """`files`: where attachments are downloaded from."""
        super().__init__(intents=intents(), allowed_mentions=NO_MENTIONS,
                         **options)
        self.desk = desk
        self.files = files
        self.tree = app_commands.CommandTree(self)
        self._dev_guild = dev_guild
        self._sync_commands = sync_commands
        self.tree.on_error = self._on_command_error  # type: ignore[method-assign]
        self.tree.add_command(app_commands.Command(
            name="research", description="Research a question and answer with cited sources",
            callback=self._research_command))
        self.tree.add_command(app_commands.ContextMenu(
            name=RESEARCH_THIS, callback=self._research_message))

    async def setup_hook(self) -> None:
        if self.application_id is not None:
            log.info("invite the bot with %s", invite_url(self.application_id))
        if not self._sync_commands:
            return
        if self._dev_guild is not None:
            guild = discord.Object(self._dev_guild)
            self.tree.copy_global_to(guild=guild)
            await self.tree.sync(guild=guild)
        else:
            await self.tree.sync()

    async def _research_message(self, interaction: discord.Interaction,
                                message: discord.Message) -> None:
        """"Research this" on a message: its text is the question, answered as /research
        answers (the sources in a thread started from the answer)."""
        question = message.content.strip()
        if not question:
            await interaction.response.send_message(
                embed=discord.Embed.from_dict(render_status(
                    "That message has no text to research.")), ephemeral=True)
            return
        if not isinstance(interaction.channel, discord.TextChannel):
            await self._research_command(interaction, question[:4000])  # a DM, a thread
            return
        tenant = _tenant(interaction.guild_id, interaction.user.id)
        user = str(interaction.user.id)
        wait_s = await self._admitted(interaction, tenant, user)
        if wait_s is None:
            return
        # Discord's 3-second deadline: acknowledged (to this person only) before the thread
        await _attempt(interaction.response.defer(ephemeral=True, thinking=True),
                       "acknowledge the command")
        thread = await self._thread_under(message, question)
        said = f"🔎 Researching in <#{thread}>" if thread is not None else \
            "🔎 Researching: the answer follows in this channel"
        await _attempt(interaction.edit_original_response(
            embed=discord.Embed.from_dict(render_status(said))), "say where")
        request = ResearchRequest(question=question[:4000], tenant=tenant, user=user,
                                  platform=PLATFORM, depth=self.desk.depth)
        where = self._channel(thread or message.channel.id, interaction.guild_id)
        await self._answer(request, Status(where, None), thread is None, wait_s)

    async def _admitted(self, interaction: discord.Interaction, tenant: str,
                        user: str) -> float | None:
        """How long the person's question waits for its turn; None (and the person told,
        privately, when to ask again) when it is over a limit."""
        try:
            return await self.desk.limiter.admit(tenant, user)
        except RateLimitedError as error:
            await interaction.response.send_message(
                embed=discord.Embed.from_dict(render_status(refusal(error, _group(tenant)))),
                ephemeral=True)
            return None

    async def _thread_under(self, message: discord.Message, question: str) -> int | None:
        """A thread started from `message` for its research (None when one cannot be)."""
        try:
            thread = await self.http.start_thread_with_message(
                message.channel.id, message.id, auto_archive_duration=1440,
                name=trim(" ".join(question.split()), 100) or "Research")
        except discord.HTTPException as error:
            if error.code == THREAD_EXISTS:  # the message has a thread: answer there
                return message.id
            log.warning("could not start a thread under the message: %s", error)
            return None
        return int(thread["id"])

    @app_commands.describe(
        question="What to research",
        depth="How far to search (default: the server's setting)",
        recency="Only results this recent (default: the question decides)",
        include_domains="Only results from these sites, comma-separated (nature.com, arxiv.org)",
        exclude_domains="Never results from these sites, comma-separated",
        content_type="news, academic (arXiv, PubMed, papers) or general")
    async def _research_command(
        self, interaction: discord.Interaction,
        question: app_commands.Range[str, 1, 4000],
        depth: Literal["quick", "standard", "deep"] | None = None,
        recency: Literal["day", "week", "month", "year", "any"] | None = None,
        include_domains: app_commands.Range[str, 1, 1000] | None = None,
        exclude_domains: app_commands.Range[str, 1, 1000] | None = None,
        content_type: Literal["news", "academic", "general"] | None = None,
    ) -> None:
        try:
            controls = search_controls(recency, include_domains, exclude_domains,
                                       content_type)
        except ControlsError as error:
            await interaction.response.send_message(embed=discord.Embed.from_dict(
                render_status(f"{error}. Sites are comma-separated, like nature.com, "
                              "arxiv.org.")), ephemeral=True)
            return
        tenant = _tenant(interaction.guild_id, interaction.user.id)
        user = str(interaction.user.id)
        wait_s = await self._admitted(interaction, tenant, user)
        if wait_s is None:
            return
        status = Status.of(self._channel(interaction.channel_id, interaction.guild_id),
                           interaction)
        try:  # Discord's 3-second deadline: acknowledge before anything else
            await interaction.response.defer(thinking=True)
        except discord.HTTPException as error:
            if error.code not in TOKEN_GONE:
                raise
            status.drop_original()
        in_thread = getattr(interaction.channel, "type", None) in _THREADS
        turns = await self.desk.conversations.history(
            PLATFORM, tenant, str(interaction.channel_id)) if in_thread else []
        request = ResearchRequest(question=question, history=turns, tenant=tenant, user=user,
                                  platform=PLATFORM,
                                  depth=Depth(depth) if depth else self.desk.depth,
                                  controls=controls)
        # Answers in a server's text channel start a thread for sources and follow-ups; in a
        # thread (a follow-up by command) or a DM they stay where they are.
        threads = isinstance(interaction.channel, discord.TextChannel)
        await self._answer(request, status, threads, wait_s)

    async def on_message(self, message: discord.Message) -> None:
        """A person's message in a thread (or DM) where the bot has answered: a follow-up.
        Files attached to a message that mentions the bot, is sent to it directly or
        follows up its answer, or "@researchbot add <link>": added to the knowledge base."""
        if message.author.bot or message.webhook_id is not None \
                or message.type not in (discord.MessageType.default, discord.MessageType.reply) \
                or not (message.content.strip() or message.attachments):
            return
        guild_id = message.guild.id if message.guild else getattr(message.channel, "guild_id",
                                                                   None)
        tenant = _tenant(guild_id, message.author.id)
        turns = await self.desk.conversations.history(PLATFORM, tenant,
                                                      str(message.channel.id))
        mentioned = self.user is not None and any(m.id == self.user.id
                                                  for m in message.mentions)
        text = self._without_mention(message.content)
        if (message.attachments or _ADD_LINK.match(text)) and \
                (mentioned or guild_id is None or turns):
            await self._add(message, tenant, text)
            return
        if not turns or not message.content.strip():
            return  # not a conversation the bot is part of
        feedback = refinement(text)
        if feedback is not None:
            await self._refine(message, tenant, feedback)
            return
        request = ResearchRequest(question=message.content, history=turns, tenant=tenant,
                                  user=str(message.author.id), platform=PLATFORM,
                                  depth=self.desk.depth)
        await self._queue_and_answer(request, message.channel)

    async def on_raw_reaction_add(self, payload: discord.RawReactionActionEvent) -> None:
        """👍/👎 from a person on an answer: their rating of it. 🔁: research again without
        the cache, as a new message (the original interaction's token may have expired)."""
        if self.user is None or payload.user_id == self.user.id:
            return
        tenant = _tenant(payload.guild_id, payload.user_id)
        answer = str(payload.message_id)
        rating = rating_of(payload.emoji)
        if rating is not None:
            await self.desk.rate(PLATFORM, tenant, answer, rater(payload.user_id), rating,
                                 added=True)
            return
        if str(payload.emoji) != RETRY_EMOJI:
            return
        found = await self.desk.conversations.answered(PLATFORM, tenant, answer)
        if found is None:
            return  # not one of the bot's answers
        request, thread = found
        retry = request.model_copy(update={"bypass_cache": True, "user": str(payload.user_id)})
        # The conversation is a thread or DM's id, or "channel:answer" for an answer left in
        # a server channel: the retry goes to that channel.
        channel = int(thread.partition(":")[0])
        await self._queue_and_answer(retry, self._channel(channel, payload.guild_id))

    async def on_raw_reaction_remove(self, payload: discord.RawReactionActionEvent) -> None:
        """👍/👎 taken off an answer: the rating is withdrawn."""
        rating = rating_of(payload.emoji)
        if rating is None or self.user is None or payload.user_id == self.user.id:
            return
        await self.desk.rate(PLATFORM, _tenant(payload.guild_id, payload.user_id),
                             str(payload.message_id), rater(payload.user_id), rating,
                             added=False)

    async def _queue_and_answer(self, request: ResearchRequest,
                                channel: discord.abc.Messageable) -> None:
        wait_s = await self._admitted_in(channel, request.tenant, request.user)
        if wait_s is not None:
            await self._answer(request, Status(channel, None), False, wait_s)

    async def _admitted_in(self, channel: discord.abc.Messageable, tenant: str,
                           user: str) -> float | None:
        """How long a request written in `channel` waits for its turn; None (and the person
        told there when to ask again) when it is over a limit."""
        try:
            return await self.desk.limiter.admit(tenant, user)
        except RateLimitedError as error:
            await channel.send(f"<@{user}> {refusal(error, _group(tenant))}",
                               allowed_mentions=discord.AllowedMentions(users=True))
            return None

    async def _working(self, status: Status, tenant: str, threads: bool, wait_s: float,
                       doing: str) -> DiscordDelivery:
        """Show in `status` how long the job waits and what it does (`doing`); the delivery
        it shows its progress and answer through, the sources in a new thread started from
        the answer (`threads`), or after it."""
        if wait_s > 0.5:
            await _attempt(status.show([render_status(f"⏳ {queued(wait_s)}")]), "show the wait")
        # A deferred interaction shows "thinking…" already; elsewhere a status is posted.
        if status.original is None:
            await _attempt(status.show([render_status(doing)]), "show a status")
        return DiscordDelivery(self, self.desk.conversations, tenant, status, threads,
                               answer_page=self.desk.answer_page)

    async def _answer(self, request: ResearchRequest, status: Status, threads: bool,
                      wait_s: float) -> None:
        """Submit the job; it answers through `status` (see `_working`)."""
        fresh = status.original is None
        delivery = await self._working(status, request.tenant, threads, wait_s,
                                       "🔎 Researching…")
        try:
            await self.desk.jobs.submit(request, delivery, start_after_s=wait_s,
                                        progress_shown=fresh)
        except InvalidQuestionError as error:
            await _attempt(status.show([render_error(str(error))]), "show an error")

    async def _refine(self, message: discord.Message, tenant: str, feedback: str) -> None:
        """Revise the thread's latest answer with `feedback` ("refine: shorter"): an improve
        job whose revision is posted here like any answer. Without a model, the person is
        told in one line which setting enables it."""
        job_id = await self.desk.conversations.latest_answer(PLATFORM, tenant,
                                                            str(message.channel.id))
        if job_id is None:
            return
        user = str(message.author.id)
        wait_s = await self._admitted_in(message.channel, tenant, user)
        if wait_s is None:
            return
        status = Status(message.channel, None)
        delivery = await self._working(status, tenant, False, wait_s,
                                       "✏️ Revising the answer…")
        try:
            await self.desk.jobs.improve(feedback, tenant, job_id, delivery=delivery,
                                         user=user, start_after_s=wait_s)
        except (InvalidQuestionError, JobNotFoundError) as error:
            await _attempt(status.show([render_error(str(error))]), "show an error")

    async def _add(self, message: discord.Message, tenant: str, text: str) -> None:
        """Add the message's attachments (downloaded from Discord's CDN), or the link of
        "add <link>", to the server's knowledge base as a documents job, which replies with
        what it added; refused at once, with why, when it cannot be."""
        roles = [str(role.id) for role in getattr(message.author, "roles", [])]
        jobs = self.desk.jobs
        status = Status(message.channel, None)
        if not jobs.adds_documents or \
                not self.desk.may_add_documents(str(message.author.id), roles):
            why = NOT_ALLOWED if jobs.adds_documents else "This bot adds no documents."
            await _attempt(status.show([render_error(why)]), "refuse a document")
            return
        delivery = await self._working(status, tenant, False, 0.0,
                                       "📥 Reading what you shared…")
        user = str(message.author.id)
        try:
            link = _ADD_LINK.match(text)
            if link is not None and not message.attachments:
                await jobs.add_url(tenant, user, PLATFORM, link.group(1), delivery=delivery)
                return
            shared = []
            for attachment in message.attachments:
                jobs.documents.check_size(attachment.filename, attachment.size)
                shared.append((attachment.filename, await self.files.download(
                    attachment.url, jobs.documents.max_bytes)))
            await jobs.add_files(tenant, user, PLATFORM, shared, delivery)
        except (DocumentRefusedError, FetchError) as error:
            await _attempt(status.show([render_error(str(error))]), "show an error")

    def _without_mention(self, content: str) -> str:
        if self.user is None:
            return content.strip()
        return re.sub(rf"<@!?{self.user.id}>", " ", content).strip()

    def _channel(self, channel_id: int | None, guild_id: int | None
                 ) -> discord.PartialMessageable:
        return self.get_partial_messageable(channel_id or 0, guild_id=guild_id)

    async def _on_command_error(self, interaction: discord.Interaction,
                                error: app_commands.AppCommandError) -> None:
        log.error("the /research command failed", exc_info=error)
        try:
            if interaction.response.is_done():
                await interaction.followup.send(
                    embed=discord.Embed.from_dict(render_error(FAILURE)), ephemeral=True)
            else:
                await interaction.response.send_message(
                    embed=discord.Embed.from_dict(render_error(FAILURE)), ephemeral=True)
        except discord.HTTPException:
            log.warning("could not tell the user that the command failed")


class ShardedResearchBot(ResearchBot, discord.AutoShardedClient):
    """The same bot over several gateway connections (large bots: Discord requires sharding
    from 2,500 servers)."""


async def _attempt(call: Awaitable[object], what: str) -> None:
    """A Discord call that may fail without losing the question."""
    try:
        await call
    except discord.HTTPException as error:
        log.warning("Discord: could not %s: %s", what, error)


def rating_of(emoji: discord.PartialEmoji) -> Rating | None:
    """👍 or 👎 in any skin tone (a custom emoji is never a rating)."""
    if emoji.is_custom_emoji():
        return None
    return RATINGS.get(_SKIN_TONES.sub("", emoji.name or "").replace(_VARIATION, ""))


def rater(user_id: int) -> str:
    return f"{PLATFORM}:{user_id}"


def _tenant(guild_id: int | None, user_id: int) -> str:
    """The server; in direct messages, the person."""
    return str(guild_id) if guild_id else f"dm-{user_id}"


def _group(tenant: str) -> str:
    return "conversation" if tenant.startswith("dm-") else "server"

