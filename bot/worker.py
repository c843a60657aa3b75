"""`researchbot worker`: takes research jobs from the queue (in `redis.url`), researches them and
delivers the answers to Slack and Discord itself, with the credentials in its settings."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import timedelta
from typing import TYPE_CHECKING

from bot.config import Settings
from bot.wiring import answer_pages, open_research, worker_id
from core.errors import ConfigurationError
from core.jobs.delivery import DeliveryRegistry

if TYPE_CHECKING:
    import discord
    from slack_sdk.web.async_client import AsyncWebClient
    from sqlalchemy.ext.asyncio import AsyncEngine

    from adapters.chat.services import AnswerPage
    from core.jobs.queue import JobQueue
    from core.store.conversations import ConversationStore

log = logging.getLogger(__name__)

async def run_worker_process(settings: Settings, stop: asyncio.Event | None = None) -> None:
    """Run until SIGTERM or SIGINT (or `stop`): then finish the jobs running here for up to
    `advanced.queue.shutdown_grace_seconds` and hand the rest back to the queue."""
    from bot.doctor import require_models
    from bot.logs import configure_logging
    from core.jobs.queue_worker import run_worker

    if settings.queue_url is None:
        raise ConfigurationError("researchbot worker needs redis.url (redis://host:6379/0), "
                                 "where the chat front ends queue jobs, and queue.enabled")
    configure_logging(settings.log)
    logging.getLogger("LiteLLM").setLevel(logging.WARNING)  # a line per model call
    await require_models(settings)
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    registry = DeliveryRegistry()
    async with open_research(settings, deliveries=registry) as research, \
            platforms(settings, registry, research.conversations, research.engine,
                      answer_pages(settings, research.links)):
        queue = research.jobs.queue
        assert queue is not None
        async with metrics_server(settings.queue.metrics_port, queue,
                                  settings.queue.metrics_host):
            await run_worker(research.jobs, queue, stop, name=worker_id(),
                             stale_after=timedelta(minutes=settings.store.stale_job_minutes))


@asynccontextmanager
async def metrics_server(port: int, queue: JobQueue | None,
                         host: str) -> AsyncIterator[None]:
    """GET /metrics on `port` while the block runs (port 0: no server). An aiohttp app in
    this event loop rather than prometheus_client's own server, which runs in a thread: the
    queue depth is read from Redis at each scrape, by the async client of this loop."""
    if port == 0:
        yield
        return
    from aiohttp import web

    from core.metrics import render_metrics

    async def metrics(_request: web.Request) -> web.Response:
        body, content_type = await render_metrics(queue)
        return web.Response(body=body, headers={"Content-Type": content_type})

    app = web.Application()
    app.router.add_get("/metrics", metrics)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        try:
            await web.TCPSite(runner, host, port).start()
        except OSError as error:
            raise ConfigurationError(
                f"queue.metrics_port: cannot serve metrics on port {port} "
                f"({error.strerror or error}): choose a free port, or 0 for none") from None
        log.info("serving metrics on %s port %d (GET /metrics)", host, port)
        yield
    finally:
        await runner.cleanup()


@asynccontextmanager
async def platforms(settings: Settings, registry: DeliveryRegistry,
                    conversations: ConversationStore, engine: AsyncEngine,
                    answer_page: AnswerPage | None = None) -> AsyncIterator[None]:
    """Register a delivery maker for each platform the settings hold credentials for; their
    answers link to `answer_page` (web.public_url)."""
    async with AsyncExitStack() as stack:
        if settings.slack.bot_token is not None or settings.slack.client_id is not None:
            from adapters.slack.delivery import SlackDeliveries

            registry.register("slack", SlackDeliveries(
                await slack_clients(settings, engine), conversations, answer_page=answer_page))
        if settings.discord.token is not None:
            from adapters.discord.delivery import DiscordDeliveries

            client = await stack.enter_async_context(discord_rest_client(settings))
            registry.register("discord", DiscordDeliveries(client, conversations,
                                                           answer_page=answer_page))
        yield


async def slack_clients(settings: Settings, engine: AsyncEngine
                        ) -> Callable[[str], Awaitable[AsyncWebClient]]:
    """`client_for(tenant)`: the one workspace's client, or (OAuth) a client carrying the
    token of the tenant's installation, from the installation store."""
    from adapters.slack.app import web_client

    slack = settings.slack
    if slack.client_id is None:
        assert slack.bot_token is not None
        client = web_client(slack.bot_token.get_secret_value(), slack.api_base_url)

        async def only(_tenant: str) -> AsyncWebClient:
            return client

        return only
    from slack_sdk.oauth.installation_store.sqlalchemy import AsyncSQLAlchemyInstallationStore

    installations = AsyncSQLAlchemyInstallationStore(slack.client_id, engine)
    await installations.create_tables()
    clients: dict[str, AsyncWebClient] = {}

    async def per_workspace(tenant: str) -> AsyncWebClient:
        if tenant not in clients:
            bot = await installations.async_find_bot(enterprise_id=None, team_id=tenant)
            if bot is None or not bot.bot_token:
                raise ConfigurationError(f"no Slack installation for workspace {tenant}")
            clients[tenant] = web_client(bot.bot_token, slack.api_base_url)
        return clients[tenant]

    return per_workspace


@asynccontextmanager
async def discord_rest_client(settings: Settings) -> AsyncIterator[discord.Client]:
    """A discord.py client logged in over REST only: a worker posts and edits messages and
    never connects to the gateway."""
    import discord

    from adapters.discord.delivery import NO_MENTIONS
    from bot.discord import point_at

    point_at(settings.discord)
    assert settings.discord.token is not None
    client = discord.Client(intents=discord.Intents.none(), allowed_mentions=NO_MENTIONS)
    try:
        await client.login(settings.discord.token.get_secret_value())
    except discord.LoginFailure as error:
        await client.close()
        raise ConfigurationError(f"discord.token was refused: {error}") from None
    try:
        yield client
    finally:
        await client.close()
