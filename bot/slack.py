"""`researchbot slack`: the Slack front end wired to the research core."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from bot.config import Settings, SlackSettings
from bot.logs import configure_logging
from bot.wiring import open_chat_services, open_front_end
from core.errors import ConfigurationError

if TYPE_CHECKING:
    from slack_bolt.oauth.async_oauth_settings import AsyncOAuthSettings
    from sqlalchemy.ext.asyncio import AsyncEngine

log = logging.getLogger(__name__)


def check_slack_settings(slack: SlackSettings) -> None:
    if slack.client_id is not None and slack.client_secret is None:
        raise ConfigurationError("slack.client_secret is required with slack.client_id")
    if slack.bot_token is None and slack.client_id is None:
        raise ConfigurationError(
            "set slack.bot_token (one workspace) or slack.client_id and slack.client_secret "
            "(OAuth, many workspaces)")
    if slack.app_token is None and slack.signing_secret is None:
        raise ConfigurationError(
            "slack.signing_secret is required in HTTP mode (or set slack.app_token for "
            "Socket Mode)")
    if slack.app_token is not None and slack.client_id is not None:
        raise ConfigurationError(
            "OAuth installs need HTTP mode: unset slack.app_token or slack.client_id")


async def oauth_settings(slack: SlackSettings, engine: AsyncEngine) -> AsyncOAuthSettings:
    """Installations and OAuth states in the job store's database."""
    from slack_bolt.oauth.async_oauth_settings import AsyncOAuthSettings
    from slack_sdk.oauth.installation_store.sqlalchemy import AsyncSQLAlchemyInstallationStore
    from slack_sdk.oauth.state_store.sqlalchemy import AsyncSQLAlchemyOAuthStateStore

    assert slack.client_id is not None and slack.client_secret is not None
    installations = AsyncSQLAlchemyInstallationStore(slack.client_id, engine)
    states = AsyncSQLAlchemyOAuthStateStore(expiration_seconds=600, engine=engine)
    await installations.create_tables()
    await states.create_tables()
    return AsyncOAuthSettings(
        client_id=slack.client_id, client_secret=slack.client_secret.get_secret_value(),
        scopes=slack.scopes, installation_store=installations, state_store=states,
        install_path=slack.install_path, redirect_uri_path=slack.redirect_path)


async def run_slack(settings: Settings) -> None:
    from aiohttp import web

    from adapters.slack.app import build_app, web_app, web_client

    slack = settings.slack
    check_slack_settings(slack)
    configure_logging(settings.log)
    token = slack.bot_token.get_secret_value() if slack.client_id is None \
        and slack.bot_token else None
    client = web_client(token, slack.api_base_url)
    secret = slack.signing_secret.get_secret_value() if slack.signing_secret else ""
    from bot.doctor import require_models

    await require_models(settings)
    async with open_front_end(settings) as research, open_chat_services(settings, research) as desk:
        oauth = await oauth_settings(slack, research.engine) if slack.client_id else None
        app = build_app(desk, secret, client, oauth)
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
