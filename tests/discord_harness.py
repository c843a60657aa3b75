"""The real discord.py client (our ResearchBot) connected to a FakeDiscord on 127.0.0.1,
wired to the real pipeline."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import discord.gateway
import discord.http

from adapters.desk import ResearchDesk
from adapters.discord.bot import ResearchBot, ShardedResearchBot
from bot.config import DiscordSettings
from bot.discord import point_at
from core.cache import SemanticAnswerCache
from core.config import CacheSettings, PipelineSettings
from core.conversations import ConversationStore
from core.dedupe import LocalEventLog
from core.limits import LocalQuestionLimiter
from core.models import ResearchRequest, ResearchResult
from core.pipeline import ResearchPipeline
from core.sources.local import LocalKnowledgeBaseSource
from core.store import JobStore
from core.synthesis.extractive import ExtractiveSynthesizer
from tests.fake_discord import GUILD_ID, FakeDiscord
from tests.slack_harness import BrokenSynthesizer, Options, SlowSource


@dataclass
class DiscordHarness:
    discord: FakeDiscord
    client: ResearchBot
    requests: list[ResearchRequest] = field(default_factory=list)

    def reactions(self) -> list[str]:
        """Messages the bot put 🔁 on: its answers."""
        return [c.path.split("/")[4] for c in self.discord.named("PUT", "/reactions/")]

    async def wait_answers(self, count: int, within_s: float = 30.0) -> None:
        await self.discord.wait_for(lambda: len(self.reactions()) >= count, within_s)


class _QuickShards(ShardedResearchBot):
    async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
        """discord.py waits 5 s between shards' IDENTIFYs, as Discord asks; not in tests."""


@contextlib.asynccontextmanager
async def serve_discord(options: Options, engine: Any, chroma: Any, embedder: Any,
                        knowledge_base: Any, corpus: Path, shards: int | None = None,
                        dev_guild: int | None = None) -> AsyncIterator[DiscordHarness]:
    await knowledge_base.index([corpus], GUILD_ID)
    sources: dict[str, Any] = {"local": LocalKnowledgeBaseSource(knowledge_base, 3)}
    if options.delay_s:
        sources["slow"] = SlowSource(options.delay_s)
    pipeline = ResearchPipeline(
        store=JobStore(engine), sources=sources,
        synthesizer=BrokenSynthesizer() if options.broken_synthesis
        else ExtractiveSynthesizer(embedder),
        embedder=embedder, settings=PipelineSettings(),
        cache=SemanticAnswerCache(chroma, embedder, CacheSettings()))
    fake = FakeDiscord(shards=shards or 1)
    await fake.start()
    requests: list[ResearchRequest] = []

    async def research(request: ResearchRequest, progress: Any) -> ResearchResult:
        requests.append(request)
        return await pipeline.run(request, progress)

    desk = ResearchDesk(research, ConversationStore(engine),
                        LocalQuestionLimiter(options.per_user, options.per_tenant,
                                             options.window_s, options.max_wait_s),
                        LocalEventLog())
    saved = discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY
    point_at(DiscordSettings(api_base_url=fake.api_base, gateway_url=fake.gateway_url))
    client: ResearchBot = _QuickShards(desk, shard_count=None) if shards \
        else ResearchBot(desk, dev_guild=dev_guild)
    await client.login("fake-token")
    runner = asyncio.create_task(client.connect())
    try:
        async with asyncio.timeout(30):
            await client.wait_until_ready()
        yield DiscordHarness(fake, client, requests)
    finally:
        await client.close()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await runner
        discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = saved
        await fake.stop()
