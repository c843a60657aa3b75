"""Documents added from Discord: a file attached to a message that mentions the bot is
downloaded from the CDN (here the fake's), indexed into that server's knowledge base and
cited by the next answer, with a reply saying what was added; a message without a mention is
left alone; chat.document_adders (users or roles) says who may add, and a file too large is
refused before it is downloaded."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.chat_harness import Options
from tests.support.discord_harness import DiscordHarness
from tests.support.fake_discord import BOT_ID, CHANNEL_ID, GUILD_ID

pytestmark = pytest.mark.integration

FACT = b"# Lighthouse rota\n\nThe lamp of the Skerry lighthouse is cleaned every Thursday " \
    b"at dawn by the junior keeper.\n"
QUESTION = "When is the lamp of the Skerry lighthouse cleaned?"


def _shown(bot: DiscordHarness) -> str:
    """Every embed the bot posted or edited."""
    return json.dumps([c.body for c in bot.discord.calls
                       if c.method in ("POST", "PATCH") and isinstance(c.body, dict)],
                      ensure_ascii=False)


async def _shows(bot: DiscordHarness, words: str, within_s: float = 30.0) -> None:
    await bot.discord.wait_for(lambda: words in _shown(bot), within_s)


async def test_an_attachment_with_a_mention_is_added_and_cited(bot: DiscordHarness,
                                                               indexed: Any) -> None:
    fake = bot.discord
    await fake.message(CHANNEL_ID, "just sharing", files={"rota.md": FACT})  # no mention
    await fake.message(CHANNEL_ID, f"<@{BOT_ID}> for the team", files={"rota.md": FACT},
                       mentions_bot=True)
    await _shows(bot, "Added Lighthouse rota")
    assert len(fake.downloads) == 1  # the message without a mention was not read
    documents = await indexed.knowledge_base.documents(GUILD_ID)
    added = [d for d in documents if d.origin == "upload"]
    assert [(d.path, d.added_by) for d in added] == [("upload:rota.md",
                                                      "700000000000000001")]

    await fake.interaction(QUESTION)
    await bot.wait_answers(1)
    assert "Thursday" in _shown(bot).split("Added Lighthouse rota", 1)[1]


@pytest.mark.parametrize("bot", [Options(document_adders=("555",), max_file_mb=0.5,
                                         guild_roles=("555",))], indirect=True)
async def test_who_may_add_is_a_setting_and_a_large_file_is_refused(bot: DiscordHarness,
                                                                    indexed: Any) -> None:
    fake = bot.discord
    await fake.message(CHANNEL_ID, f"<@{BOT_ID}>", files={"rota.md": FACT}, mentions_bot=True)
    await _shows(bot, "chat.document\\\\_adders")  # as Discord markdown escapes it
    await fake.message(CHANNEL_ID, f"<@{BOT_ID}>", files={"big.md": FACT * 6000},
                       mentions_bot=True, roles=("555",))  # a role listed: may add
    await _shows(bot, "larger than the 0.5 MB")
    assert fake.downloads == []
    await fake.message(CHANNEL_ID, f"<@{BOT_ID}>", files={"rota.md": FACT},
                       mentions_bot=True, roles=("555",))
    await _shows(bot, "Added Lighthouse rota")
    documents = await indexed.knowledge_base.documents(GUILD_ID)
    assert [d.path for d in documents if d.origin == "upload"] == ["upload:rota.md"]


async def test_a_file_sent_to_the_bot_directly_goes_to_the_persons_knowledge_base(
        bot: DiscordHarness, indexed: Any) -> None:
    await bot.discord.message("800000000000000099", "", files={"rota.md": FACT}, guild=None)
    await _shows(bot, "Added Lighthouse rota")
    mine = await indexed.knowledge_base.documents("dm-700000000000000001")
    assert [d.path for d in mine] == ["upload:rota.md"]
    server = await indexed.knowledge_base.documents(GUILD_ID)
    assert not any(d.origin == "upload" for d in server)
