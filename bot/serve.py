"""`researchbot serve`: the HTTP API and answer pages, on the job service.

Without a queue (`redis.url`) the server runs jobs in its own process (it loads the research core);
with it, it only stores and queues them for `researchbot worker` processes."""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import shutil
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Any

from bot.config import Settings
from bot.wiring import FrontEndServices, ResearchServices, open_front_end, searcher
from core.errors import ConfigurationError
from core.models import Clock

if TYPE_CHECKING:
    from fastapi import FastAPI

    from adapters.chat.limits import QuestionLimiter

log = logging.getLogger(__name__)

PROBE_TIMEOUT_S = 3.0


def is_loopback(host: str) -> bool:
    """Whether `host` is only reachable from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@asynccontextmanager
async def open_api(settings: Settings, host: str, *,
                   clock: Clock = time.monotonic) -> AsyncIterator[FastAPI]:
    """The app with everything it serves from opened; closed on the way out. Refuses (a
    ConfigurationError) to serve a non-loopback address without keys unless
    web.allow_anonymous is set. `clock` times how often questions probe readiness."""
    from adapters.http.app import ApiServices, create_app
    from core.store.access import ApiKeys

    web = settings.web
    async with AsyncExitStack() as stack:
        front = await stack.enter_async_context(open_front_end(settings))
        keys = ApiKeys(front.engine)
        local = is_loopback(host)
        if not local and not web.allow_anonymous and not await keys.any_active():
            raise ConfigurationError(
                f"web.host: {host} is reachable from other machines and no API key exists: "
                "create one (researchbot keys create --tenant NAME), listen on 127.0.0.1, or "
                "set web.allow_anonymous = true to serve without keys")

        limiter = await stack.enter_async_context(_limiter(settings))
        search = searcher(front)
        mcp = None
        if web.mcp:
            from adapters.mcp.server import build_mcp, http_caller
            from bot.mcp import mcp_services

            mcp = build_mcp(mcp_services(settings, front, http_caller))
        services = ApiServices(
            jobs=front.jobs, documents=front.knowledge_base, keys=keys, links=front.links,
            feedback=front.feedback,
            limiter=limiter, default_tenant=settings.tenant,
            loopback=local, allow_anonymous=web.allow_anonymous,
            readiness=(readiness := _readiness(front, settings)),
            admission=_admission(readiness, clock),
            metrics=_metrics(front) if web.metrics else None,
            search=search, mcp=mcp, host=host)
        yield create_app(services)


async def run_server(settings: Settings, host: str | None = None,
                     port: int | None = None) -> None:
    import uvicorn

    from bot.logs import configure_logging

    configure_logging(settings.log)
    host = host or settings.web.host
    port = settings.web.port if port is None else port
    from bot.doctor import require_models

    await require_models(settings)
    async with open_api(settings, host) as app:
        config = uvicorn.Config(app, host=host, port=port, log_config=None,
                                access_log=False, lifespan="on",
                                timeout_graceful_shutdown=10)
        server = uvicorn.Server(config)
        _freeze_startup_heap()
        # uvicorn raises SIGTERM again once it has shut down, to the handler it found: with
        # Python's default the process would die there, before the jobs running here are
        # handed back for the next start and the database is let go.
        signal.signal(signal.SIGTERM, _stopped)
        try:
            await server.serve()
        except SystemExit:  # uvicorn exits when it cannot bind; say which setting to change
            raise ConfigurationError(f"web.port: cannot listen on {host}:{port} (another "
                                     "process may be using it); choose another with --port "
                                     "or web.port") from None


def _freeze_startup_heap() -> None:
    """Move what start-up built (~245k objects: the libraries, the app, the models) out of
    the collector's reach. Python's oldest-generation collection walks every tracked object:
    with them it paused the event loop for ~160 ms every ~9 s under cache hits, which was
    the whole p99 tail of 20 clients (bench/api.py 4); the objects live as long as the
    process, so the collector has nothing to find among them."""
    import gc

    gc.collect()
    gc.freeze()


def _stopped(_signum: int, _frame: object) -> None:
    """SIGTERM after uvicorn's shutdown: run_server returns and closes what it opened."""


@asynccontextmanager
async def _limiter(settings: Settings) -> AsyncIterator[QuestionLimiter]:
    """Questions per key and per tenant: in this process, or in Redis (redis.url) when
    several API servers share the load."""
    from adapters.chat.limits import LocalQuestionLimiter, RedisQuestionLimiter

    web = settings.web
    limits = (web.questions_per_minute, web.tenant_questions_per_minute, 60.0,
              settings.chat.max_queue_seconds)
    if settings.redis.url is None:
        yield LocalQuestionLimiter(*limits)
        return
    from redis.asyncio import Redis

    redis = Redis.from_url(settings.redis.url.get_secret_value(),
                           socket_connect_timeout=10)
    try:
        yield RedisQuestionLimiter(redis, *limits, prefix="researchbot:api-limit")
    finally:
        await redis.aclose()


def _readiness(front: FrontEndServices, settings: Settings
               ) -> Callable[[], Awaitable[dict[str, str]]]:
    """Probes of what answering needs: the database, the queue, the vector store (here, or
    the Chroma server the workers search), and room on the data folder's disk."""

    async def database() -> str:
        from sqlalchemy import text

        async with front.engine.connect() as connection:
            await connection.execute(text("SELECT 1"))
        return "ok"

    async def queue() -> str:
        if front.jobs.queue is None:
            return "not used"
        await front.jobs.queue.stats()
        return "ok"

    async def vectors() -> str:
        if isinstance(front, ResearchServices):
            await asyncio.to_thread(front.knowledge_base.vectors.heartbeat)
            return "ok"
        chroma = settings.knowledge_base.chroma_url
        if chroma is None:
            return "not used"  # the workers' embedded store; `researchbot check` probes it
        import aiohttp

        async with aiohttp.ClientSession() as session, \
                session.get(f"{str(chroma).rstrip('/')}/api/v2/heartbeat") as answer:
            answer.raise_for_status()
        return "ok"

    async def disk() -> str:
        free_mb = shutil.disk_usage(settings.data_dir).free / 2**20
        if free_mb < settings.store.min_free_mb:
            return f"full: the data folder's disk has {free_mb:.0f} MB free " \
                   f"(advanced.store.min_free_mb: {settings.store.min_free_mb:g})"
        return "ok"

    async def probe(check: Callable[[], Awaitable[str]]) -> str:
        try:
            return await asyncio.wait_for(check(), PROBE_TIMEOUT_S)
        except TimeoutError:
            return f"no answer within {PROBE_TIMEOUT_S:g} s"
        except Exception as error:  # any failure is "not ready", with its kind, no details
            log.warning("readiness probe failed: %s", type(error).__name__)
            return f"failed ({type(error).__name__})"

    async def readiness() -> dict[str, str]:
        names = ("database", "queue", "vector_store", "disk")
        found = await asyncio.gather(*(probe(c) for c in (database, queue, vectors, disk)))
        return dict(zip(names, found, strict=True))

    return readiness


# A question is refused (503) while one of these is not ready: its job could only fail (or,
# the queue, not be queued: refused before a job row is even written). The database needs
# no probe: a question that cannot be stored is refused by the error itself.
_NEEDED = ("queue", "vector_store", "disk")
ADMISSION_PROBE_S = 2.0


def _admission(readiness: Callable[[], Awaitable[dict[str, str]]], clock: Clock
               ) -> Callable[[], Awaitable[str | None]]:
    """Why a question would be refused now (None: it is taken), from the readiness probes,
    run at most once every ADMISSION_PROBE_S whatever the load; questions asked while they
    run are judged by the last result rather than wait."""
    last: dict[str, Any] = {"at": -ADMISSION_PROBE_S, "reason": None}
    probing = asyncio.Lock()

    async def refusal() -> str | None:
        now = clock()
        if now - last["at"] >= ADMISSION_PROBE_S and not probing.locked():
            async with probing:
                checks = await readiness()
                failed = [f"{name}: {checks[name]}" for name in _NEEDED
                          if checks.get(name) not in ("ok", "not used")]
                last.update(at=now, reason="not ready to answer ("
                            + "; ".join(failed) + ")" if failed else None)
        reason: str | None = last["reason"]
        return reason

    return refusal


def _metrics(front: FrontEndServices) -> Callable[[], Awaitable[tuple[bytes, str]]]:
    async def render() -> tuple[bytes, str]:
        from core.metrics import render_metrics

        return await render_metrics(front.jobs.queue)

    return render
