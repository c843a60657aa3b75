"""`researchbot slack`: the Slack front end wired to the research core."""

from __future__ import annotations

import asyncio
import logging
import sys

from bot.config import Settings
from bot.wiring import open_research
from core.errors import ConfigurationError

log = logging.getLogger(__name__)


async def run_slack(settings: Settings) -> None:
    from aiohttp import web

    from adapters.slack.app import build_app, web_app, web_client

    slack = settings.slack
    if slack.bot_token is None:
        raise ConfigurationError("slack.bot_token is required (RESEARCHBOT_SLACK__BOT_TOKEN)")
    if slack.app_token is None and slack.signing_secret is None:
        raise ConfigurationError(
            "slack.signing_secret is required in HTTP mode (or set slack.app_token for "
            "Socket Mode)"
        )
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    client = web_client(slack.bot_token.get_secret_value(), slack.api_base_url)
    secret = slack.signing_secret.get_secret_value() if slack.signing_secret else ""
    async with open_research(settings) as research:
        app = build_app(research.pipeline.run, secret, client)
        if slack.app_token is not None:
            from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler

            handler = AsyncSocketModeHandler(app, slack.app_token.get_secret_value())
            await handler.start_async()
            return
        runner = web.AppRunner(web_app(app, slack.path))
        await runner.setup()
        site = web.TCPSite(runner, slack.host, slack.port)
        await site.start()
        log.info("Slack events at http://%s:%s%s", slack.host, slack.port, slack.path)
        try:
            await asyncio.Event().wait()
        finally:
            await runner.cleanup()
