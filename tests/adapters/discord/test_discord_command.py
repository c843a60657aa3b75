"""`researchbot discord` as a real process against the fake Discord."""

import os
from pathlib import Path

import pytest

from tests.support import researchbot
from tests.support.corpus import index_corpus
from tests.support.fake_discord import GUILD_ID, FakeDiscord

pytestmark = pytest.mark.system


def test_a_missing_token_is_named(clean_env: Path) -> None:
    result = researchbot.run("discord", timeout=60)
    assert result.returncode == 1 and "discord.token" in result.stderr


@pytest.fixture
def guild_docs(clean_env: Path) -> Path:
    """The server's knowledge base, indexed through the CLI."""
    return index_corpus(clean_env, GUILD_ID)


async def test_the_discord_command_answers_research(guild_docs: Path) -> None:
    fake = FakeDiscord()
    await fake.start()
    env = {**os.environ, "RESEARCHBOT_DISCORD__TOKEN": "fake-token",
           "RESEARCHBOT_ENDPOINTS__DISCORD_API": fake.api_base,
           "RESEARCHBOT_ENDPOINTS__DISCORD_GATEWAY": fake.gateway_url}
    try:
        async with researchbot.running("discord", env=env,
                                       log=guild_docs.parent / "discord.log"):
            await fake.wait_for(lambda: bool(fake.identified), within_s=60)
            await fake.interaction("Which city did Mount Vesuvius bury?")
            await fake.wait_for(lambda: bool(fake.named("PUT", "/reactions/")), within_s=60)
            answer = fake.named("PATCH", "/messages/@original")[-1].body
            assert "Pompeii" in answer["embeds"][0]["description"]
    finally:
        await fake.stop()
