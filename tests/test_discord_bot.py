from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.discord_harness import DiscordHarness, serve_discord
from tests.fake_discord import APP_ID, GUILD_ID
from tests.slack_harness import Options

QUESTION = "How many hours a day do cats sleep?"


@pytest.fixture
async def bot(request: pytest.FixtureRequest, sqlite_engine: Any, chroma: Any, embedder: Any,
              knowledge_base: Any, corpus: Path) -> AsyncIterator[DiscordHarness]:
    options = getattr(request, "param", Options())
    async with serve_discord(options, sqlite_engine, chroma, embedder, knowledge_base,
                             corpus) as harness:
        yield harness


async def test_research_is_deferred_then_answered_with_a_thread_of_sources(
    bot: DiscordHarness,
) -> None:
    fake = bot.discord
    sync = fake.named("PUT", f"/applications/{APP_ID}/commands")
    assert [c["name"] for c in sync[0].body] == ["research"]
    token = await fake.interaction(QUESTION)
    await bot.wait_answers(1)
    callback = fake.named("POST", "/callback")[0]
    assert callback.body["type"] == 5  # deferred: "researchbot is thinking…"
    edits = fake.named("PATCH", f"/webhooks/{APP_ID}/{token}/messages/@original")
    answer = edits[-1].body["embeds"][0]
    assert answer["title"] == QUESTION and "12 and 16 hours" in answer["description"]
    assert "[1]" in answer["description"]
    assert callback.at < edits[-1].at
    thread = fake.named("POST", "/threads")[0]
    assert thread.body["name"] == QUESTION
    sources = fake.named("POST", "/messages")[-1]
    assert sources.path.startswith(f"/channels/{thread.path.split('/')[4]}/")
    assert sources.body["embeds"][0]["title"].startswith("Sources (")
    assert bot.requests[0].tenant == GUILD_ID and bot.requests[0].platform == "discord"
