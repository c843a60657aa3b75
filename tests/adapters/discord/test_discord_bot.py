import asyncio
import json
import time
from typing import Any

import pytest

from tests.support.chat_harness import Options
from tests.support.corpus import Indexed
from tests.support.discord_harness import DiscordHarness, serve_discord
from tests.support.discord_limits import assert_within_limits
from tests.support.fake_discord import APP_ID, BOT_USER, CHANNEL_ID, GUILD_ID

pytestmark = pytest.mark.integration

QUESTION = "How many hours a day do cats sleep?"



async def test_research_is_deferred_then_answered_with_a_thread_of_sources(
    bot: DiscordHarness,
) -> None:
    fake = bot.discord
    sync = fake.named("PUT", f"/applications/{APP_ID}/commands")
    assert [(c["name"], c["type"]) for c in sync[0].body] == [("research", 1), ("Research this", 3)]
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


def _message_payloads(bot: DiscordHarness) -> list[dict[str, Any]]:
    """Every payload that creates or edits a message, as recorded by the fake."""
    fake = bot.discord
    payloads = [c.body for c in fake.calls
                if c.method in ("POST", "PATCH") and isinstance(c.body, dict)
                and ("/messages" in c.path or c.path.startswith("/webhooks"))
                and not c.path.endswith("/threads")]
    payloads += [c.body["data"] for c in fake.named("POST", "/callback")
                 if c.body.get("data")]
    return payloads


def _assert_every_payload_safe(bot: DiscordHarness) -> None:
    payloads = _message_payloads(bot)
    assert payloads
    for payload in payloads:
        assert payload.get("allowed_mentions") == {"parse": []}, payload
        assert_within_limits(payload)


async def test_the_command_is_registered_with_its_options(bot: DiscordHarness) -> None:
    (sync,) = bot.discord.named("PUT", f"/applications/{APP_ID}/commands")
    command, research_this = sync.body
    assert (research_this["name"], research_this["type"]) == ("Research this", 3)
    options = {o["name"]: o for o in command["options"]}
    assert options["question"]["type"] == 3 and options["question"]["required"]
    assert options["question"]["max_length"] == 4000
    assert [c["value"] for c in options["depth"]["choices"]] == ["quick", "standard", "deep"]
    assert not options["depth"].get("required")


@pytest.mark.parametrize("bot", [Options(held=True)], indirect=True)
async def test_the_interaction_is_deferred_long_before_the_answer(bot: DiscordHarness) -> None:
    fake, slow = bot.discord, bot.slow
    assert slow is not None
    asked = time.perf_counter()
    await fake.interaction(QUESTION, depth="quick")
    async with asyncio.timeout(30):
        await slow.searching.wait()
    # Deferred, and progress shown, while the research is held in its search.
    await fake.wait_for(lambda: bool(fake.named("PATCH", "/messages/@original")))
    assert fake.named("POST", "/callback") and not bot.reactions()
    slow.release()
    await bot.wait_answers(1)
    (callback,) = fake.named("POST", "/callback")
    assert callback.at - asked < 1.0  # well within the 3 s Discord allows
    progress = [c.body["embeds"][0]["description"]
                for c in fake.named("PATCH", "/messages/@original")[:-1]]
    assert progress and progress[0].startswith("⏳")
    assert bot.requests[0].depth == "quick"
    _assert_every_payload_safe(bot)


async def test_a_thread_follow_up_is_researched_with_the_threads_context(
    bot: DiscordHarness,
) -> None:
    fake = bot.discord
    await fake.interaction(QUESTION)
    await bot.wait_answers(1)
    thread = fake.named("POST", "/threads")[0].path.split("/")[4]
    await fake.message(thread, "I am the bot talking", author=BOT_USER)
    await fake.message(CHANNEL_ID, "What do they need to eat?")  # not in the thread
    await fake.message(thread, "What do they need to eat?")
    await bot.wait_answers(2)
    assert len(bot.requests) == 2
    follow_up = bot.requests[1]
    assert [t.question for t in follow_up.history] == [QUESTION]
    status = fake.named("POST", f"/channels/{thread}/messages")[1]
    answer = fake.named("PATCH", f"/channels/{thread}/messages/")[-1]
    assert status.body["embeds"][0]["description"] == "🔎 Researching…"
    assert "taurine" in answer.body["embeds"][0]["description"]
    assert len(fake.named("POST", "/threads")) == 1  # answered in the same thread
    assert bot.reactions()[-1] == answer.path.split("/")[4]
    _assert_every_payload_safe(bot)


async def test_a_retry_reaction_researches_again_in_a_new_message(bot: DiscordHarness) -> None:
    fake = bot.discord
    await fake.interaction(QUESTION)
    await bot.wait_answers(1)
    answer = bot.reactions()[0]
    thread = fake.named("POST", "/threads")[0].path.split("/")[4]
    original_edits = len(fake.named("PATCH", "/messages/@original"))
    await fake.reaction(CHANNEL_ID, answer, "🔁", user_id=BOT_USER["id"])  # the bot's own
    await fake.reaction(CHANNEL_ID, answer, "👍")
    await fake.reaction(CHANNEL_ID, answer, "🔁", user_id="700000000000000009")
    await bot.wait_answers(2)
    assert len(bot.requests) == 2
    retry = bot.requests[1]
    assert retry.bypass_cache and retry.question == QUESTION
    assert retry.user == "700000000000000009"
    # A new message in the thread; the old interaction token is never used again.
    new = fake.named("PATCH", f"/channels/{thread}/messages/")[-1]
    assert "fresh answer" in new.body["embeds"][-1]["footer"]["text"]
    assert len([c for c in fake.calls if "@original" in c.path]) == original_edits


@pytest.mark.parametrize("code", [10062, 50027])
async def test_a_dead_interaction_token_falls_back_to_a_channel_message(
    bot: DiscordHarness, code: int,
) -> None:
    fake = bot.discord
    fake.fail("PATCH", f"/webhooks/{APP_ID}/", 404 if code == 10062 else 401,
              {"message": "Unknown interaction" if code == 10062 else "Invalid Webhook Token",
               "code": code}, times=20)
    await fake.interaction(QUESTION)
    await bot.wait_answers(1)
    answer = fake.named("PATCH", f"/channels/{CHANNEL_ID}/messages/")[-1]
    assert "12 and 16 hours" in answer.body["embeds"][0]["description"]
    assert fake.named("POST", "/threads")  # the thread still starts from the answer
    _assert_every_payload_safe(bot)


async def test_an_interaction_too_old_to_defer_is_answered_in_the_channel(
    bot: DiscordHarness,
) -> None:
    fake = bot.discord
    fake.fail("POST", "/interactions/", 404, {"message": "Unknown interaction",
                                              "code": 10062})
    await fake.interaction(QUESTION)
    await bot.wait_answers(1)
    assert fake.named("POST", f"/channels/{CHANNEL_ID}/messages")
    assert not fake.named("PATCH", "/messages/@original")


async def test_a_429_is_waited_out_and_retried(bot: DiscordHarness) -> None:
    fake = bot.discord
    fake.fail("POST", "/channels/", 429, {"message": "You are being rate limited.",
                                          "retry_after": 0.4, "global": False})
    await fake.interaction(QUESTION)
    await bot.wait_answers(1)
    threads = fake.named("POST", "/threads")
    assert len(threads) == 2 and threads[1].at - threads[0].at >= 0.35
    assert threads[0].body == threads[1].body


@pytest.mark.parametrize("bot", [Options(broken_synthesis=True)], indirect=True)
async def test_a_failure_mid_research_shows_an_error_embed(bot: DiscordHarness) -> None:
    fake = bot.discord
    await fake.interaction(QUESTION)
    await fake.wait_for(lambda: any(
        "Research failed" in json.dumps(c.body)
        for c in fake.named("PATCH", "/messages/@original")))
    final = json.dumps(fake.named("PATCH", "/messages/@original")[-1].body)
    assert "research failed before it finished" in final
    assert "10.0.0.7" not in final and "ConnectionReset" not in final
    assert bot.reactions() == []
    assert bot.client.is_ready()  # nothing crashed the client


@pytest.mark.parametrize("bot", [Options(per_user=1, max_wait_s=0)], indirect=True)
async def test_over_the_limit_a_person_gets_an_ephemeral_message(bot: DiscordHarness) -> None:
    fake = bot.discord
    await fake.interaction(QUESTION)
    await fake.interaction("What is the largest planet?")
    await fake.wait_for(lambda: len(fake.named("POST", "/callback")) == 2)
    refusal = next(c.body for c in fake.named("POST", "/callback") if c.body["type"] == 4)
    assert refusal["data"]["flags"] == 64  # ephemeral
    assert "You have asked 1 questions" in refusal["data"]["embeds"][0]["description"]
    await bot.wait_answers(1)
    assert len(bot.requests) == 1


async def test_hostile_questions_are_echoed_inert(bot: DiscordHarness) -> None:
    fake = bot.discord
    await fake.interaction("Do cats sleep @everyone <@&800000000000000009> **all day**?")
    await bot.wait_answers(1)
    title = fake.named("PATCH", "/messages/@original")[-1].body["embeds"][0]["title"]
    assert "@\u200beveryone" in title and "<@\u200b&800000000000000009>" in title
    assert "\\*\\*all day\\*\\*" in title
    _assert_every_payload_safe(bot)


async def test_a_direct_message_research_answers_without_a_thread(bot: DiscordHarness) -> None:
    fake = bot.discord
    await fake.interaction(QUESTION, guild=None, channel="800000000000000077")
    await fake.wait_for(lambda: len(bot.requests) == 1)
    await fake.wait_for(lambda: bool(fake.named("POST", "/channels/800000000000000077/")))
    assert bot.requests[0].tenant == "dm-700000000000000001"
    assert not fake.named("POST", "/threads")


async def test_shards_each_identify_and_answer(
    indexed: Indexed, embedder: Any,
) -> None:
    async with serve_discord(Options(), indexed, embedder, shards=2) as bot:
        fake = bot.discord
        assert fake.named("GET", "/gateway/bot")
        assert sorted(tuple(i["shard"]) for i in fake.identified) == [(0, 2), (1, 2)]
        assert all(i["intents"] & (1 << 15) for i in fake.identified)  # message content
        await fake.interaction(QUESTION)
        await bot.wait_answers(1)


@pytest.mark.parametrize("bot", [Options(per_tenant=1, max_wait_s=0)], indirect=True)
async def test_a_server_limit_covers_everyone_in_it(bot: DiscordHarness) -> None:
    fake = bot.discord
    await fake.interaction(QUESTION)
    await fake.interaction(QUESTION, user_id="700000000000000002")
    await fake.wait_for(lambda: len(fake.named("POST", "/callback")) == 2)
    refusal = next(c.body for c in fake.named("POST", "/callback") if c.body["type"] == 4)
    assert refusal["data"]["embeds"][0]["description"].startswith(
        "This server has asked 1 questions in the last 60 seconds")
    await bot.wait_answers(1)


async def test_a_development_server_gets_the_command_at_once(
    indexed: Indexed, embedder: Any,
) -> None:
    async with serve_discord(Options(), indexed, embedder, dev_guild=int(GUILD_ID)) as bot:
        (sync,) = [c for c in bot.discord.calls if c.method == "PUT"]
        assert sync.path == f"/applications/{APP_ID}/guilds/{GUILD_ID}/commands"
        assert [c["name"] for c in sync.body] == ["research", "Research this"]


@pytest.mark.parametrize("bot", [Options(held=True)], indirect=True)
async def test_progress_names_the_round_and_each_sources_query_without_pinging(
        bot: DiscordHarness) -> None:
    assert bot.slow is not None

    def shown() -> list[str]:
        return [c.body["embeds"][0]["description"]
                for c in bot.discord.named("PATCH", "/messages/@original")]

    await bot.discord.interaction(f"{QUESTION} @everyone")
    # the search is held until its progress is shown (a second after the first update)
    await bot.discord.wait_for(lambda: any("Round 1/2: searching" in p for p in shown()))
    bot.slow.release()
    await bot.wait_answers(1)
    progress = shown()[:-1]
    searching = [p for p in progress if "Round 1/2: searching" in p]
    assert "the knowledge base: 'How many hours a day do cats sleep? @\u200beveryone'" \
        in searching[0] and "a slow archive: '" in searching[0]
    assert not any("@everyone" in p for p in progress)
    _assert_every_payload_safe(bot)
