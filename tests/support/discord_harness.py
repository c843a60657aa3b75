"""The real discord.py client (our ResearchBot) connected to a FakeDiscord on 127.0.0.1,
wired to the real pipeline."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import discord.gateway
import discord.http

from adapters.chat.services import FileHosts
from adapters.discord.bot import ResearchBot, ShardedResearchBot
from bot.config import DiscordSettings
from bot.discord import point_at
from core.models import ResearchRequest
from core.web.net import AddressGuard
from tests.support.chat_harness import Options, SlowSource, research_desk, slow_source
from tests.support.corpus import Indexed
from tests.support.fake_discord import GUILD_ID, FakeDiscord


@dataclass
class DiscordHarness:
    discord: FakeDiscord
    client: ResearchBot
    requests: list[ResearchRequest] = field(default_factory=list)
    slow: SlowSource | None = None  # the remote source Options asked for

    def reactions(self) -> list[str]:
        """Messages the bot put 🔁 on: its answers."""
        return [c.path.split("/")[4] for c in self.discord.named("PUT", "/reactions/")]

    async def wait_answers(self, count: int, within_s: float = 30.0) -> None:
        await self.discord.wait_for(lambda: len(self.reactions()) >= count, within_s)


class _QuickShards(ShardedResearchBot):
    async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
        """discord.py waits 5 s between shards' IDENTIFYs, as Discord asks; not in tests."""


@contextlib.asynccontextmanager
async def serve_discord(options: Options, world: Indexed, embedder: Any,
                        shards: int | None = None, dev_guild: int | None = None
                        ) -> AsyncIterator[DiscordHarness]:
    engine, chroma, knowledge_base = world.engine, world.chroma, world.knowledge_base
    await knowledge_base.index([world.corpus], GUILD_ID)
    fake = FakeDiscord(shards=shards or 1)
    fake.guild_roles = options.guild_roles
    await fake.start()
    requests: list[ResearchRequest] = []
    slow = slow_source(options)
    desk = await research_desk(options, engine, chroma, embedder, knowledge_base, requests,
                               slow)
    saved = discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY
    point_at(DiscordSettings(api_base_url=fake.api_base, gateway_url=fake.gateway_url))
    # READY lists no guilds: discord.py would wait guild_ready_timeout (2 s) for them.
    files = FileHosts(frozenset({f"127.0.0.1:{fake.port}"}), AddressGuard.trusting(fake.api_base))
    client: ResearchBot = _QuickShards(desk, shard_count=None, guild_ready_timeout=0.05,
                                       files=files) \
        if shards else ResearchBot(desk, dev_guild=dev_guild, guild_ready_timeout=0.05,
                                   files=files)
    await client.login("fake-token")
    runner = asyncio.create_task(client.connect())
    try:
        async with asyncio.timeout(30):
            await client.wait_until_ready()
        yield DiscordHarness(fake, client, requests, slow)
    finally:
        await client.close()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await runner
        await desk.jobs.close()  # jobs still running let go of the database
        discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = saved
        await fake.stop()
