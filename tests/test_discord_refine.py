"""Refining an answer and researching a message from Discord: "refine: ..." in an answer's
thread revises that answer (the scripted model server writes the revision) and posts it in
the thread; without a model, one line says which setting enables it; the "Research this"
message command researches the message's text, pings removed, as /research answers."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.chat_harness import Options
from tests.conftest import Indexed
from tests.discord_harness import DiscordHarness, serve_discord
from tests.fake_discord import APP_ID
from tests.fake_openai import FakeOpenAI
from tests.scripted_analyst import script

QUESTION = "How many hours a day do cats sleep?"


@pytest.fixture
async def model() -> AsyncIterator[FakeOpenAI]:
    fake = script(FakeOpenAI())
    await fake.start()
    yield fake
    await fake.stop()


def _shown(bot: DiscordHarness) -> str:
    return json.dumps([c.body for c in bot.discord.calls
                       if c.method in ("POST", "PATCH") and isinstance(c.body, dict)],
                      ensure_ascii=False)


async def test_refine_in_the_thread_revises_the_answer(model: FakeOpenAI, indexed: Indexed,
                                                      embedder: Any) -> None:
    async with serve_discord(Options(model_url=model.base_url), indexed, embedder) as bot:
        fake = bot.discord
        await fake.interaction(QUESTION)
        await bot.wait_answers(1)
        thread = fake.named("POST", "/threads")[0].path.split("/")[4]
        model.chats.clear()
        await fake.message(thread, "refine: Say how long kittens sleep too")
        await bot.wait_answers(2)
        assert model.tasks() == ["improve", "synthesize", "verify"]
        status = fake.named("POST", f"/channels/{thread}/messages")[1]
        assert status.body["embeds"][0]["description"] == "✏️ Revising the answer…"
        assert bot.reactions()[-1] == fake.named("PATCH", f"/channels/{thread}/messages/")[-1] \
            .path.split("/")[4]


async def test_refine_without_a_model_says_what_it_needs(bot: DiscordHarness) -> None:
    fake = bot.discord
    await fake.interaction(QUESTION)
    await bot.wait_answers(1)
    thread = fake.named("POST", "/threads")[0].path.split("/")[4]
    await fake.message(thread, "refine: shorter")
    await fake.wait_for(lambda: "needs a language model" in _shown(bot))
    assert "llm.fast\\\\_model" in _shown(bot) or "llm.fast_model" in _shown(bot)
    assert len(bot.requests) == 1


async def test_research_this_answers_a_messages_text(bot: DiscordHarness) -> None:
    fake = bot.discord
    token = await fake.message_command("Research this", f"@everyone {QUESTION}")
    await bot.wait_answers(1)
    request = bot.requests[0]
    assert request.question == f"@everyone {QUESTION}" and request.platform == "discord"
    edits = fake.named("PATCH", f"/webhooks/{APP_ID}/{token}/messages/@original")
    answer = edits[-1].body
    assert "12 and 16 hours" in answer["embeds"][0]["description"]
    assert answer.get("allowed_mentions") == {"parse": []}
    empty = await fake.message_command("Research this", "")
    await fake.wait_for(lambda: "no text to research" in _shown(bot))
    assert empty and len(bot.requests) == 1
