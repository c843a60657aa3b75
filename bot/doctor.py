"""`researchbot check`: is everything the settings name there and usable? One row a component:
the data folder, the database, the vector store, Redis, the embedding and language models and
each web source, each ok, FAIL or off (not configured), with one line of detail (secrets
redacted). Nothing is written but what any command would create (the data folder, the tables).

A check that fails is a row, not an exception: the point is to see every problem at once.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Literal

from bot.config import Settings
from core.errors import ConfigurationError
from core.redact import redact, safe_url

if TYPE_CHECKING:
    from pydantic import SecretStr

    from core.sources.protocol import SourceProbe

log = logging.getLogger(__name__)

Status = Literal["ok", "FAIL", "off"]
SOURCE_TIMEOUT_S = 3.0
SERVICE_TIMEOUT_S = 15.0  # the database, the vector store, Redis, a model call
PROBE_QUERY = "test"


@dataclass(frozen=True)
class Check:
    component: str
    setting: str
    status: Status
    detail: str


async def run_checks(settings: Settings, *, call_models: bool = False,
                     source_timeout_s: float = SOURCE_TIMEOUT_S) -> list[Check]:
    """Every check, run side by side, in a stable order."""
    services = asyncio.gather(
        check_data_dir(settings), check_database(settings), check_vectors(settings),
        check_redis(settings), check_queue(settings),
        check_embedding(settings, call_models))
    rows, models, sources = await asyncio.gather(
        services, check_models(settings, call_models), check_sources(settings, source_timeout_s))
    return [*rows, *models, *sources]


def all_ok(checks: list[Check]) -> bool:
    return all(check.status != "FAIL" for check in checks)


# ---- the stores --------------------------------------------------------------------------

async def check_data_dir(settings: Settings) -> Check:
    async def probe() -> str:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        if not os.access(settings.data_dir, os.W_OK | os.X_OK):
            raise ConfigurationError(f"cannot write in {settings.data_dir}")
        return f"{settings.data_dir} (writable)"

    return await _row("data", "data_dir", probe, SERVICE_TIMEOUT_S)


async def check_database(settings: Settings) -> Check:
    async def probe() -> str:
        from sqlalchemy import inspect

        from core.store.database import metadata, open_database

        settings.data_dir.mkdir(parents=True, exist_ok=True)
        engine = await open_database(settings.store_url)
        try:
            async with engine.connect() as connection:
                tables = set(await connection.run_sync(
                    lambda sync: inspect(sync).get_table_names()))
        finally:
            await engine.dispose()
        missing = sorted(set(metadata.tables) - tables)
        if missing:
            raise ConfigurationError(f"tables missing: {', '.join(missing)}")
        where = engine.url.database if engine.dialect.name == "sqlite" \
            else f"{engine.url.host}:{engine.url.port or 5432}/{engine.url.database}"
        return f"{engine.dialect.name} {where}: connected, {len(metadata.tables)} tables present"

    return await _row("database", "store.url", probe, SERVICE_TIMEOUT_S)


async def check_vectors(settings: Settings) -> Check:
    url = settings.knowledge_base.chroma_url

    async def probe() -> str:
        from core.retrieval.vectors import open_chroma

        store = await asyncio.to_thread(open_chroma, settings.data_dir / "chroma", url)
        try:
            await asyncio.to_thread(store.heartbeat)
        finally:
            store.close()
        return f"Chroma server {safe_url(url)}: heartbeat" if url \
            else f"embedded Chroma in {settings.data_dir / 'chroma'}: opens"

    return await _row("vector store", "knowledge_base.chroma_url", probe, SERVICE_TIMEOUT_S)


async def check_redis(settings: Settings) -> Check:
    return await _redis_row("redis", "redis.url", settings.redis.url,
                            "question limits, event dedupe and source rate limits kept in "
                            "each process, circuit breakers in the data dir")


async def _redis_row(component: str, setting: str, secret: SecretStr | None,
                     otherwise: str) -> Check:
    if secret is None:
        return Check(component, setting, "off", f"not configured: {otherwise}")
    url = secret.get_secret_value()

    async def probe() -> str:
        from redis.asyncio import Redis

        redis = Redis.from_url(url, socket_connect_timeout=SERVICE_TIMEOUT_S,
                               socket_timeout=SERVICE_TIMEOUT_S)
        try:
            await redis.ping()
        finally:
            await redis.aclose()
        return f"{safe_url(url)}: PING answered"

    return await _row(component, setting, probe, SERVICE_TIMEOUT_S)


async def check_queue(settings: Settings) -> Check:
    if settings.queue_url is None:
        return Check("queue", "redis.url", "off",
                     "not configured (redis.url unset, or queue.enabled = false): jobs run in "
                     "the process that takes the question")
    url = settings.queue_url.get_secret_value()

    async def probe() -> str:
        from core.jobs.queue import JobQueue

        queue = JobQueue(url, settings.queue)
        try:
            await queue.connect()
            stats = await queue.stats()
        finally:
            await queue.close()
        waiting = ", ".join(f"{name} {s.queued} queued, {s.active} running"
                            for name, s in stats.items())
        return f"{safe_url(url)}: {waiting}"

    return await _row("queue", "redis.url", probe, SERVICE_TIMEOUT_S)


# ---- the models --------------------------------------------------------------------------

async def check_embedding(settings: Settings, call: bool) -> Check:
    """The embedder as core.retrieval.embedding builds it; a model behind litellm is only
    asked for a vector on request (--call-models)."""
    config = settings.embedding

    async def probe() -> str:
        from core.retrieval.embedding import build_embedder

        embedder = await asyncio.to_thread(build_embedder, config)  # the provider must be known
        if config.model == "builtin":
            vectors = await asyncio.to_thread(embedder.embed, [PROBE_QUERY])
            return f"builtin {embedder.name}: loads, {vectors.shape[1]} dimensions"
        if not call:
            return f"{config.model}: provider known (not called; --call-models to try it)"
        started = time.monotonic()
        try:
            await asyncio.to_thread(embedder.embed, [PROBE_QUERY])
        except Exception as error:  # litellm raises many types; named, body not repeated
            raise ConfigurationError(f"called: {_model_failure(error)}") from None
        return f"{config.model}: called, answered in {time.monotonic() - started:.1f} s"

    return await _row("embedding", "embedding.model", probe, SERVICE_TIMEOUT_S)


async def check_models(settings: Settings, call: bool) -> list[Check]:
    from core.llm.providers import llm_models

    named = list(dict.fromkeys(llm_models(settings.llm)))
    if not named:
        return [Check("model", "llm.fast_model", "off",
                      "not configured: extractive answers, no LLM")]
    return list(await asyncio.gather(*(check_model(settings, setting, model, call)
                                       for setting, model in named)))


async def check_model(settings: Settings, setting: str, model: str, call: bool) -> Check:
    config = settings.llm

    async def probe() -> str:
        from core.llm.providers import model_provider

        provider = await asyncio.to_thread(model_provider, setting, model, config.api_base)
        if not call:
            return f"{model}: provider {provider!r} known (not called; --call-models to try it)"
        started = time.monotonic()
        try:
            await _call_model(settings, model)
        except Exception as error:  # litellm raises many types; named, body not repeated
            raise ConfigurationError(f"{model}: called: {_model_failure(error)}") from None
        return f"{model}: called, answered in {time.monotonic() - started:.1f} s"

    return await _row("model", setting, probe, SERVICE_TIMEOUT_S)


async def _call_model(settings: Settings, model: str) -> None:
    from core.llm.gateway import ping_model

    await ping_model(settings.llm, model, SERVICE_TIMEOUT_S)


def _model_failure(error: Exception) -> str:
    """A provider's error body can echo the request, key included: only its kind and status."""
    status = getattr(error, "status_code", None)
    kind = f"{type(error).__name__}" + (f" (HTTP {status})" if isinstance(status, int) else "")
    if status in (401, 403):
        return f"{kind}: the provider refused the key: fix llm.api_key"
    if status == 404:
        return f"{kind}: the provider does not know this model: fix the model name"
    return kind


async def require_models(settings: Settings) -> None:
    """A bot's start-up check (advanced.llm.check_at_start): one cheap call to each model.
    A refused key or an unknown model is a ConfigurationError naming the setting; a model
    that is only unreachable or busy now is logged, and the bot starts."""
    if not settings.llm.enabled or not settings.llm.check_at_start:
        return
    from core.llm.providers import llm_models, model_provider

    for setting, model in dict.fromkeys(llm_models(settings.llm)):
        model_provider(setting, model, settings.llm.api_base)
        try:
            await _call_model(settings, model)
        except Exception as error:  # litellm raises many types; sorted by status
            status = getattr(error, "status_code", None)
            if status in (401, 403, 404):
                raise ConfigurationError(
                    f"{setting}: {model}: {_model_failure(error)} "
                    "(advanced.llm.check_at_start=false skips this check)") from None
            log.warning("%s: %s did not answer the start-up check (%s); starting anyway",
                        setting, model, _model_failure(error))


# ---- the web sources ---------------------------------------------------------------------

async def check_sources(settings: Settings, timeout_s: float) -> list[Check]:
    """One row a registered source (core.sources.registry), probed with the one request its
    module declares."""
    from core.sources.registry import SOURCES

    config = settings.sources
    if settings.pipeline.local_only:
        return [Check(f"source {spec.name}", spec.setting, "off", "pipeline.local_only = true")
                for spec in SOURCES]
    from core.web.net import api_session

    enabled = [spec for spec in SOURCES if spec.enabled(config)]
    async with api_session(config.user_agent,
                           trusted=[spec.endpoint(config) or "" for spec in enabled]) as session:
        return list(await asyncio.gather(*(
            _row(f"source {spec.name}", spec.setting, _reach(session, spec.probe(config)),
                 timeout_s)
            if spec in enabled else _off(f"source {spec.name}", spec.setting, spec.off_reason)
            for spec in SOURCES)))


def _reach(session: Any, probe: SourceProbe) -> Callable[[], Awaitable[str]]:
    async def request() -> str:
        started = time.monotonic()
        method = "POST" if probe.body is not None else "GET"
        async with session.request(method, probe.url, params=probe.params, json=probe.body,
                                   headers=probe.headers) as response:
            await response.read()
            status = response.status
        if status >= 400:
            raise ConfigurationError(f"{safe_url(probe.url)} answered HTTP {status}")
        return f"reachable: {safe_url(probe.url)} answered HTTP {status} in " \
               f"{time.monotonic() - started:.2f} s"

    return request


async def _off(component: str, setting: str, why: str) -> Check:
    return Check(component, setting, "off", why)


# ---- rows --------------------------------------------------------------------------------

async def _row(component: str, setting: str, probe: Callable[[], Awaitable[str]],
               timeout_s: float) -> Check:
    """The probe's detail as an ok row; its failure, whatever it is, as a FAIL row."""
    try:
        async with asyncio.timeout(timeout_s):
            detail = await probe()
    except TimeoutError:
        return Check(component, setting, "FAIL", f"no answer within {timeout_s:g} s")
    except Exception as error:  # every failure is a row: the report shows them all at once
        return Check(component, setting, "FAIL", _failure(setting, error))
    return Check(component, setting, "ok", redact(detail))


def _failure(setting: str, error: Exception) -> str:
    if isinstance(error, ConfigurationError):
        text = str(error).removeprefix(f"{setting}: ")
    else:
        kind = type(error).__name__
        unreachable = isinstance(error, OSError) or "Connect" in kind
        text = f"unreachable ({kind}): {error}" if unreachable else f"{kind}: {error}"
    lines = text.strip().splitlines()
    return redact(lines[0] if lines else type(error).__name__)


def render_table(checks: list[Check]) -> str:
    rows = [("component", "setting", "status", "detail"),
            *((c.component, c.setting, c.status, c.detail) for c in checks)]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = ["  ".join([*(cell.ljust(width) for cell, width in zip(row, widths, strict=False)),
                        row[3]]) for row in rows]
    verdict = "everything configured is ok" if all_ok(checks) else \
        f"{sum(c.status == 'FAIL' for c in checks)} FAIL"
    return "\n".join([*lines, "", verdict])


def render_json(checks: list[Check]) -> str:
    return json.dumps({"ok": all_ok(checks), "checks": [asdict(c) for c in checks]},
                      ensure_ascii=False, indent=2)
