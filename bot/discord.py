"""`researchbot discord`: the Discord front end wired to the research core."""

from __future__ import annotations

import logging

from bot.config import DiscordSettings, Settings
from bot.logs import configure_logging
from bot.wiring import open_chat_services, open_front_end
from core.errors import ConfigurationError

log = logging.getLogger(__name__)


def point_at(discord_settings: DiscordSettings) -> None:
    """Use a REST or gateway proxy instead of discord.com (discord.py reads these per
    request and per connection)."""
    import discord.gateway
    import discord.http
    import yarl

    discord.http.Route.BASE = discord_settings.api_base_url.rstrip("/")
    if discord_settings.gateway_url:
        discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(discord_settings.gateway_url)


async def run_discord(settings: Settings) -> None:
    from adapters.discord.bot import ResearchBot, ShardedResearchBot

    config = settings.discord
    if config.token is None:
        raise ConfigurationError("discord.token is required (RESEARCHBOT_DISCORD__TOKEN)")
    configure_logging(settings.log)
    point_at(config)
    from bot.doctor import require_models

    await require_models(settings)
    async with open_front_end(settings) as research, open_chat_services(settings, research) as desk:
        if config.shards is None:
            client: ResearchBot = ResearchBot(desk, dev_guild=config.dev_guild_id,
                                              sync_commands=config.sync_commands)
        else:
            count = None if config.shards == "auto" else config.shards
            client = ShardedResearchBot(desk, dev_guild=config.dev_guild_id,
                                        sync_commands=config.sync_commands, shard_count=count)
        async with client:
            try:
                await client.start(config.token.get_secret_value())
            except Exception as error:
                import discord

                if isinstance(error, discord.LoginFailure):
                    raise ConfigurationError(f"discord.token was refused: {error}") from None
                if isinstance(error, discord.PrivilegedIntentsRequired):
                    raise ConfigurationError(
                        "enable the Message Content intent for the bot in the Discord "
                        "Developer Portal (Bot > Privileged Gateway Intents)") from None
                raise
