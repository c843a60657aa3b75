"""👍/👎 on a Discord answer are stored as the reader's rating of its job (the real discord.py
client, gateway events from the fake Discord); answers link to their page when
web.public_url is set."""

import json
from typing import Any

import pytest

from core.store.feedback import Rating
from tests.support.chat_feedback import (
    PUBLIC_URL,
    assert_signed_page_link,
    discord_handler,
    every_rating,
    handlers_ended,
    ratings_become,
)
from tests.support.chat_harness import Options
from tests.support.discord_harness import DiscordHarness
from tests.support.discord_limits import assert_within_limits
from tests.support.fake_discord import APP_ID, BOT_USER, CHANNEL_ID, GUILD_ID, USER_ID

pytestmark = pytest.mark.integration

QUESTION = "How many hours a day do cats sleep?"
OTHER = "700000000000000009"


async def _answered(bot: DiscordHarness) -> tuple[str, str, str, Any]:
    """Ask once: the interaction token, the answer message's id, its job id, the database."""
    token = await bot.discord.interaction(QUESTION)
    await bot.wait_answers(1)
    store = bot.client.desk.jobs.store
    (job,) = await store.recent()
    return token, bot.reactions()[0], job.id, store.engine


async def test_thumbs_on_an_answer_rate_it_and_rating_again_replaces(
    bot: DiscordHarness,
) -> None:
    fake = bot.discord
    _, answer, job_id, engine = await _answered(bot)
    await fake.reaction(CHANNEL_ID, answer, "👍🏽")
    (up,) = await ratings_become(engine, job_id, [(f"discord:{USER_ID}", "up")])
    assert (up.tenant, up.channel, up.rating) == (GUILD_ID, "discord", Rating.UP)
    await fake.reaction(CHANNEL_ID, answer, "👎")
    await ratings_become(engine, job_id, [(f"discord:{USER_ID}", "down")])
    await fake.reaction(CHANNEL_ID, answer, "👍", user_id=OTHER)
    await ratings_become(engine, job_id, [(f"discord:{USER_ID}", "down"),
                                          (f"discord:{OTHER}", "up")])
    # Taking off the 👍 that the 👎 replaced changes nothing; taking off the 👎 withdraws it.
    await fake.reaction(CHANNEL_ID, answer, "👍", removed=True)
    await fake.reaction(CHANNEL_ID, answer, "👎🏿", removed=True)
    await ratings_become(engine, job_id, [(f"discord:{OTHER}", "up")])


async def test_reactions_elsewhere_or_by_the_bot_rate_nothing_and_retry_still_works(
    bot: DiscordHarness,
) -> None:
    fake = bot.discord
    _, answer, job_id, engine = await _answered(bot)
    await fake.reaction(CHANNEL_ID, "800000000000000999", "👍")  # not an answer
    await fake.reaction(CHANNEL_ID, answer, "👍", user_id=str(BOT_USER["id"]))
    await fake.reaction(CHANNEL_ID, answer, "❤️")
    await fake.reaction(CHANNEL_ID, answer, "🔁", user_id=OTHER)
    await bot.wait_answers(2)
    await fake.reaction(CHANNEL_ID, answer, "👎", user_id=OTHER)
    await ratings_become(engine, job_id, [(f"discord:{OTHER}", "down")])
    await handlers_ended(discord_handler)  # those rating nothing too
    assert await every_rating(engine) == [(job_id, f"discord:{OTHER}", "down")]
    assert bot.requests[1].bypass_cache


@pytest.mark.parametrize("bot", [Options(public_url=PUBLIC_URL)], indirect=True)
async def test_with_a_public_url_the_answer_embed_links_to_its_page(bot: DiscordHarness) -> None:
    token, _, job_id, engine = await _answered(bot)
    edit = bot.discord.named("PATCH", f"/webhooks/{APP_ID}/{token}/messages/@original")[-1]
    assert_within_limits(edit.body)
    (embed,) = edit.body["embeds"]
    await assert_signed_page_link(engine, embed["url"], job_id)
    link = embed["fields"][-1]
    assert link["name"] == "Full analysis" and link["value"].startswith("[View full analysis](")
    await assert_signed_page_link(engine, link["value"], job_id)


async def test_without_a_public_url_there_is_no_link(bot: DiscordHarness) -> None:
    await _answered(bot)
    sent = json.dumps([call.body for call in bot.discord.calls])
    assert "View full analysis" not in sent and "/jobs/" not in sent


async def test_a_workers_rebuilt_delivery_links_to_the_page(clean_env: Any,
                                                            sqlite_engine: Any) -> None:
    """With a queue the answer is posted by `researchbot worker`, from its own wiring."""
    import discord.gateway
    import discord.http

    from bot.config import Settings
    from bot.wiring import answer_pages
    from bot.worker import platforms
    from core.jobs.delivery import DeliveryRegistry, Steps
    from core.store.access import ShareLinks
    from core.store.conversations import ConversationStore
    from tests.adapters.slack.test_slack_render import _result
    from tests.support.fake_discord import FakeDiscord

    fake = FakeDiscord()
    await fake.start()
    saved = discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY
    settings = Settings(discord={"token": "fake-token", "api_base_url": fake.api_base},
                        web={"public_url": PUBLIC_URL})
    registry = DeliveryRegistry()
    pages = answer_pages(settings, await ShareLinks.load(sqlite_engine))

    async def save(_: dict[str, Any]) -> None:
        pass

    try:
        async with platforms(settings, registry, ConversationStore(sqlite_engine),
                             sqlite_engine, pages):
            delivery = await registry("discord", {
                "tenant": GUILD_ID, "channel": CHANNEL_ID, "application_id": None,
                "interaction_token": None, "expires_at": 0.0, "threads": False,
                "status_message": None})
            await delivery.answer(_result("Cats sleep [1]."), Steps({}, save, "job1"))
    finally:
        discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = saved
        await fake.stop()
    answer = fake.named("POST", f"/channels/{CHANNEL_ID}/messages")[0].body["embeds"][0]
    await assert_signed_page_link(sqlite_engine, answer["url"], "job1")
