"""Refining an answer and researching a message from Discord: "refine: ..." in an answer's
thread revises that answer (the scripted model server writes the revision) and posts it in
the thread; without a model, one line says which setting enables it; the "Research this"
message command researches the message's text, pings removed, as /research answers."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.chat_harness import Options
from tests.support.corpus import Indexed
from tests.support.discord_harness import DiscordHarness, serve_discord
from tests.support.fake_discord import APP_ID
from tests.support.fake_openai import FakeOpenAI

pytestmark = pytest.mark.integration

QUESTION = "How many hours a day do cats sleep?"


def _shown(bot: DiscordHarness) -> str:
    return json.dumps([c.body for c in bot.discord.calls
                       if c.method in ("POST", "PATCH") and isinstance(c.body, dict)],
                      ensure_ascii=False)


async def test_refine_in_the_thread_revises_the_answer(scripted_model: FakeOpenAI, indexed: Indexed,
                                                      embedder: Any) -> None:
    async with serve_discord(Options(model_url=scripted_model.base_url), indexed, embedder) as bot:
        fake = bot.discord
        await fake.interaction(QUESTION)
        await bot.wait_answers(1)
        thread = fake.named("POST", "/threads")[0].path.split("/")[4]
        scripted_model.chats.clear()
        await fake.message(thread, "refine: Say how long kittens sleep too")
        await bot.wait_answers(2)
        assert scripted_model.tasks() == ["improve", "synthesize", "verify"]
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


async def test_research_this_answers_in_a_thread_under_the_message(
        bot: DiscordHarness) -> None:
    fake = bot.discord
    await fake.message_command("Research this", f"@everyone {QUESTION}")
    await bot.wait_answers(1)
    request = bot.requests[0]
    assert request.question == f"@everyone {QUESTION}" and request.platform == "discord"
    (started,) = fake.named("POST", "/threads")
    target = started.path.split("/")[4]  # the thread is the message's: same id
    assert started.body["name"] == f"@everyone {QUESTION}"
    acknowledged = fake.named("POST", "/callback")[0].body
    assert acknowledged["data"]["flags"] & 64  # only the person who asked sees it
    answer = fake.named("PATCH", f"/channels/{target}/messages/")[-1].body
    assert "12 and 16 hours" in answer["embeds"][0]["description"]
    assert answer.get("allowed_mentions") == {"parse": []}

    await fake.message(target, "What do they need to eat?")  # a follow-up in that thread
    await bot.wait_answers(2)
    assert [t.question for t in bot.requests[1].history] == [f"@everyone {QUESTION}"]

    await fake.message_command("Research this", "")
    await fake.wait_for(lambda: "no text to research" in _shown(bot))
    assert len(bot.requests) == 2


async def test_research_this_in_a_direct_message_answers_as_research_does(
        bot: DiscordHarness) -> None:
    fake = bot.discord
    token = await fake.message_command("Research this", QUESTION, guild=None)
    await bot.wait_answers(1)
    edits = fake.named("PATCH", f"/webhooks/{APP_ID}/{token}/messages/@original")
    answer = edits[-1].body["embeds"][0]  # the person's own knowledge base has nothing
    assert answer["title"] == QUESTION and "do not answer" in answer["description"]
    assert not fake.named("POST", "/threads")
