"""The composition root: every resource opened once from the settings and passed down,
closed on the way out; the research core and the job service built from them. Tests and
benchmarks build the application through the same functions (`build_research`,
`build_jobs`, `open_research`), injecting local fakes for the network."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import socket
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from bot.config import Settings
from core.models import Source, utcnow
from core.redact import redact
from core.store.jobs import JobStore

if TYPE_CHECKING:  # imported lazily at run time: the CLI's fast paths need neither
    from sqlalchemy.ext.asyncio import AsyncEngine

    from adapters.chat.services import AnswerPage, ChatServices
    from adapters.mcp.server import Searcher
    from core.answer.cache import SemanticAnswerCache
    from core.answer.synthesis.base import Synthesizer
    from core.config import LLMSettings, PipelineSettings
    from core.jobs.delivery import RetryPolicy
    from core.jobs.queue import JobQueue
    from core.jobs.reading import JobReader
    from core.jobs.service import DeliveryFactory, JobService
    from core.research.record import Research
    from core.research.repeats import ScopeFunction
    from core.research.researcher import Researcher
    from core.retrieval.embedding import Embedder
    from core.retrieval.kb.adding import DocumentAdder
    from core.retrieval.kb.knowledge_base import KnowledgeBase
    from core.retrieval.vectors import VectorStore
    from core.sources.pages import PageReader
    from core.sources.protocol import SearchSource
    from core.store.access import ShareLinks
    from core.store.conversations import ConversationStore
    from core.store.deliveries import DeliveryStore
    from core.store.events import JobEvents
    from core.store.feedback import FeedbackStore
    from core.web.fetch import PageFetcher

log = logging.getLogger(__name__)


@dataclass
class FrontEndServices:
    """What a front end needs: the job service, thread memory, the database, readers'
    feedback, the signer of answer-page links, and the knowledge base whose documents it
    lists and removes."""

    jobs: JobService
    conversations: ConversationStore
    engine: AsyncEngine
    feedback: FeedbackStore
    links: ShareLinks
    knowledge_base: KnowledgeBase


@dataclass
class ResearchServices(FrontEndServices):
    """The wired research core: what front ends submit requests to, and workers run."""

    researcher: Researcher


def searcher(front: FrontEndServices) -> Searcher:
    """Search without answering (POST /v1/search, the MCP `search` tool): the research core's
    sources, ranked, where this process has it; with a queue (the research runs in
    workers), the knowledge base alone."""
    from core.research.intake import validate_question

    async def search(query: str, tenant: str, limit: int) -> dict[str, Any]:
        if isinstance(front, ResearchServices):
            found = await front.researcher.search(query, tenant, limit)
            sources, failures = found.sources, found.failures
        else:
            query = validate_question(query, what="query")
            sources, failures = await front.knowledge_base.search(query, tenant, limit), []
        return {"query": query,
                "passages": [passage_json(source) for source in sources],
                "failures": [{"source": failure.label or failure.source, "kind": failure.kind}
                             for failure in failures]}

    return search


def passage_json(source: Source) -> dict[str, Any]:
    """A passage found, as the API and the MCP tool give it: the source's fields as `ask
    --json` gives them, and its text."""
    shown = source.model_dump(mode="json", exclude={"content", "document_id", "snippet"},
                              exclude_none=True)
    shown["text"] = source.content or source.snippet
    return shown


def worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def worker_alive(worker: str) -> bool:
    """False only when the worker ran on this host and its process is gone."""
    host, _, pid = worker.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def local_sources(knowledge_base: KnowledgeBase, settings: PipelineSettings
                  ) -> dict[str, SearchSource]:
    """The tenant's knowledge base as the first source."""
    from core.sources.local import LocalKnowledgeBaseSource

    return {"local": LocalKnowledgeBaseSource(knowledge_base, settings.max_per_document)}


def build_research(sources: dict[str, SearchSource], embedder: Embedder,
                   settings: PipelineSettings, llm: LLMSettings | None = None, *,
                   cache: SemanticAnswerCache | None = None,
                   cache_scope: ScopeFunction | None = None, pages: PageReader | None = None,
                   synthesizer: Synthesizer | None = None) -> Researcher:
    """The research core over `sources`: extractive answers, and the model's steps when
    `llm` names a model."""
    from core.answer.synthesis.extractive import ExtractiveSynthesizer
    from core.research.researcher import Researcher

    extractive = synthesizer or ExtractiveSynthesizer(embedder, settings.answer_sentences)
    loop = None
    if llm is not None and llm.enabled:
        from core.llm.gateway import ModelGateway
        from core.llm.prompts import PromptLibrary
        from core.research.model_steps import ResearchLoop

        loop = ResearchLoop(ModelGateway(llm, PromptLibrary.load()), llm, embedder, settings,
                            extractive)
    return Researcher(sources, extractive, embedder, settings, cache=cache,
                      cache_scope=cache_scope, loop=loop, pages=pages)


def build_jobs(research: Research | None, engine: AsyncEngine,
               retry: RetryPolicy | None = None, progress_interval_s: float = 1.0, *,
               queue: JobQueue | None = None, deliveries_for: DeliveryFactory | None = None,
               worker: str = "", attempt_timeout_s: float = 1800.0,
               documents: DocumentAdder | None = None) -> JobService:
    """The job service over the research core and its database (no research core: it reads
    jobs, and with a `queue` submits them for workers). `documents`: it adds documents."""
    from core.jobs.service import JobService

    return JobService(research, *_job_stores(engine), retry, progress_interval_s,
                      queue=queue, deliveries_for=deliveries_for, worker=worker or worker_id(),
                      attempt_timeout_s=attempt_timeout_s, documents=documents)


def document_adder(settings: Settings, engine: AsyncEngine,
                   knowledge_base: KnowledgeBase) -> DocumentAdder:
    """What admits and runs documents jobs: uploads kept in the job database, pages read
    through the guarded page fetcher."""
    from core.retrieval.kb.adding import DocumentAdder
    from core.store.uploads import UploadStore

    return DocumentAdder(knowledge_base, UploadStore(engine),
                         functools.partial(open_page_fetcher, settings),
                         settings.knowledge_base)


def _job_stores(engine: AsyncEngine) -> tuple[JobStore, JobEvents, DeliveryStore]:
    """The tables the job service reads and writes: jobs, their events, their deliveries."""
    from core.store.deliveries import DeliveryStore
    from core.store.events import JobEvents

    return JobStore(engine), JobEvents(engine), DeliveryStore(engine)


@asynccontextmanager
async def open_job_reader(settings: Settings) -> AsyncIterator[JobReader]:
    """The reading side of the job service: jobs, events and deliveries (the CLI's `jobs`,
    `show` and `keys`, which should not load models and indexes to print a row)."""
    from core.jobs.reading import JobReader

    async with _opened_database(settings) as engine:
        yield JobReader(*_job_stores(engine))


@asynccontextmanager
async def open_queue(settings: Settings) -> AsyncIterator[JobQueue | None]:
    """The job queue in `redis.url` (None: no redis.url, or queue.enabled = false; jobs run
    in the process that took them). A queue that cannot be reached stops start-up naming the
    setting."""
    if settings.queue_url is None:
        yield None
        return
    from core.errors import ConfigurationError
    from core.jobs.queue import JobQueue
    from core.redact import safe_url

    url = settings.queue_url.get_secret_value()
    queue = JobQueue(url, settings.queue)
    try:
        await queue.connect()
        await queue.stats()
    except Exception as error:  # bad URL or no server: name the setting
        await queue.close()
        raise ConfigurationError(f"redis.url: cannot use {safe_url(url)!r}: "
                                 f"{str(error).rstrip('.')}; start Redis there, fix redis.url, "
                                 "or set queue.enabled = false to run jobs in process") from None
    try:
        yield queue
    finally:
        await queue.close()


def attempt_timeout_s(settings: Settings) -> float:
    """How long one queued attempt may run: the deepest tier's research time, the delivery's
    retries, and a margin."""
    return settings.llm.deep.seconds + settings.chat.delivery_retry_minutes * 60 + 120


def delivery_retry(settings: Settings) -> RetryPolicy:
    from core.jobs.delivery import RetryPolicy

    return RetryPolicy(first_wait_s=settings.chat.delivery_first_wait_seconds,
                       give_up_after_s=settings.chat.delivery_retry_minutes * 60)


@asynccontextmanager
async def open_front_end(settings: Settings) -> AsyncIterator[FrontEndServices]:
    """What a chat front end needs. With a queue, only the job store and the queue: the
    research runs in workers, so no model, index or source is loaded here."""
    if settings.queue_url is None:
        async with open_research(settings, resume_abandoned=True) as research:
            yield research
        return
    from core.store.access import ShareLinks
    from core.store.conversations import ConversationStore
    from core.store.feedback import FeedbackStore

    async with _opened_database(settings) as engine, open_queue(settings) as queue, \
            _knowledge(settings, engine, on_demand=True) as knowledge:
        jobs = build_jobs(None, engine, delivery_retry(settings), queue=queue,
                          worker=worker_id(), attempt_timeout_s=attempt_timeout_s(settings),
                          documents=document_adder(settings, engine, knowledge.knowledge_base))
        yield FrontEndServices(jobs, ConversationStore(engine), engine,
                               FeedbackStore(engine), await ShareLinks.load(engine),
                               knowledge.knowledge_base)


@asynccontextmanager
async def open_asking(settings: Settings) -> AsyncIterator[JobService]:
    """The job service of one CLI question: an exact repeat is answered from the cached
    answers in the job database; the research core (embedder, vector store, indexes,
    sources, models) is opened only when the question needs research."""
    if not settings.cache.enabled:
        async with open_research(settings, in_process=True) as services:
            yield services.jobs
        return
    from core.research.repeats import CacheFirstResearch, CacheScope
    from core.store.answers import CachedAnswerStore
    from core.store.catalogue import KnowledgeCatalogue

    async with _opened_database(settings) as engine, AsyncExitStack() as stack:
        catalogue = KnowledgeCatalogue(engine)

        async def cache_scope(tenant: str) -> CacheScope:
            scope = _cache_scope(await catalogue.generation(tenant))
            return CacheScope(scope, scope)

        opened: list[Researcher] = []

        async def open_core() -> Researcher:
            if not opened:
                core = open_research(settings, in_process=True, engine=engine)
                opened.append((await stack.enter_async_context(core)).researcher)
            return opened[0]

        cache_first = CacheFirstResearch(CachedAnswerStore(engine), cache_scope, open_core,
                                         can_improve=settings.llm.enabled)
        jobs = build_jobs(cache_first, engine, delivery_retry(settings),
                          attempt_timeout_s=attempt_timeout_s(settings))
        try:
            yield jobs
        finally:
            await jobs.close()


def _cache_scope(generation: int) -> str:
    """The answer cache's scope of a tenant whose searches answer from `generation` of its
    knowledge base: an answer is served only while the documents it was found in are."""
    return f"kb{generation}"


@asynccontextmanager
async def _opened_database(settings: Settings) -> AsyncIterator[AsyncEngine]:
    """The job database (its data dir made first, for SQLite), disposed on the way out."""
    from core.store.database import open_database

    settings.data_dir.mkdir(parents=True, exist_ok=True)
    engine = await open_database(settings.store_url)
    try:
        yield engine
    finally:
        await engine.dispose()


@asynccontextmanager
async def open_research(settings: Settings, *, deliveries: DeliveryFactory | None = None,
                        in_process: bool = False, engine: AsyncEngine | None = None,
                        resume_abandoned: bool = False) -> AsyncIterator[ResearchServices]:
    """The research core. `deliveries` rebuilds stored deliveries (a worker's). With a queue
    (`redis.url`, queue.enabled), jobs are submitted to it and run by `JobService.run_queued`
    in workers, unless `in_process` (the CLI answers at once). `engine`: the job database when
    the caller has it open already. Without a queue, the jobs of a process that stopped are
    failed, or, with `resume_abandoned` (a long-running front end), run again here."""
    async with AsyncExitStack() as opened:
        if engine is None:
            engine = await opened.enter_async_context(_opened_database(settings))
        yield await opened.enter_async_context(
            _research_core(settings, engine, deliveries, in_process, resume_abandoned))


@asynccontextmanager
async def _research_core(settings: Settings, engine: AsyncEngine,
                         deliveries: DeliveryFactory | None, in_process: bool,
                         resume_abandoned: bool = False) -> AsyncIterator[ResearchServices]:
    from core.answer.cache import SemanticAnswerCache
    from core.research.repeats import CacheScope
    from core.store.access import ShareLinks
    from core.store.answers import CachedAnswerStore
    from core.store.conversations import ConversationStore
    from core.store.feedback import FeedbackStore

    async with AsyncExitStack() as stack:
        queue = None if in_process else await stack.enter_async_context(open_queue(settings))
        knowledge = await stack.enter_async_context(
            _knowledge(settings, engine, on_demand=False))
        knowledge_base, embedder = knowledge.knowledge_base, knowledge.embedder

        async def cache_scope(tenant: str) -> CacheScope:
            now, searched = await knowledge_base.generations(tenant)
            return CacheScope(_cache_scope(now), _cache_scope(searched))

        if settings.llm.enabled:
            from core.llm.providers import check_llm_models

            check_llm_models(settings.llm)
        web = await stack.enter_async_context(open_web(settings, embedder))
        researcher = build_research(
            {**local_sources(knowledge_base, settings.pipeline), **web.sources},
            embedder, settings.pipeline, settings.llm, pages=web.pages,
            cache=SemanticAnswerCache(CachedAnswerStore(engine), knowledge.vectors, embedder,
                                      settings.cache)
            if settings.cache.enabled else None,
            cache_scope=cache_scope)
        adder = document_adder(settings, engine, knowledge_base)
        jobs = build_jobs(researcher, engine, delivery_retry(settings), queue=queue,
                          deliveries_for=deliveries, worker=worker_id(),
                          attempt_timeout_s=attempt_timeout_s(settings), documents=adder)
        stale = timedelta(minutes=settings.store.stale_job_minutes)
        if not in_process:  # files of documents jobs that ended without reading them
            await adder.discard_stale(stale)
        if settings.queue_url is None:  # with a queue, the queue takes up a dead worker's jobs
            if resume_abandoned:
                await jobs.resume_abandoned(worker_alive, stale)
            else:  # the CLI ends its own kind only: a stopped `serve` resumes its jobs itself
                await jobs.fail_abandoned(worker_alive, stale,
                                          ("cli",) if in_process else None)
        refreshing = None if in_process or not settings.knowledge_base.refresh_hours \
            else asyncio.create_task(refresh_sites_periodically(settings, knowledge_base),
                                     name="refresh-sites")
        try:
            yield ResearchServices(jobs, ConversationStore(engine), engine,
                                   FeedbackStore(engine), await ShareLinks.load(engine),
                                   knowledge_base, researcher)
        finally:
            if refreshing is not None:
                refreshing.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await refreshing
            await jobs.close()


async def refresh_sites_periodically(settings: Settings, knowledge_base: KnowledgeBase,
                                     pause_s: float | None = None) -> None:
    """In a long-running process (serve, the chat bots, a worker): the sites indexed from a
    URL that were not read for `advanced.knowledge_base.refresh_hours` are read again, each by one
    process however many run. Looks every quarter period (at most every 10 minutes)."""
    period = timedelta(hours=settings.knowledge_base.refresh_hours)
    pause_s = pause_s or min(max(period.total_seconds() / 4, 1.0), 600.0)
    while True:
        await asyncio.sleep(pause_s)
        try:
            due = utcnow() - period
            if not any(site.refreshed_at < due for site in await knowledge_base.sites()):
                continue
            async with open_page_fetcher(settings) as fetcher:
                for done in await knowledge_base.refresh_sites(fetcher, period):
                    report = done.report
                    log.info("refreshed %s for %s: %d added, %d updated, %d unchanged, "
                             "%d removed, %d skipped", done.site.url, done.site.tenant,
                             len(report.added), len(report.updated), len(report.unchanged),
                             len(report.removed), len(report.skipped))
        except Exception as error:  # an outage, a bug: the next round tries again
            log.warning("refreshing indexed sites failed: %s: %s", type(error).__name__,
                        redact(str(error))[:300])


@dataclass
class Knowledge:
    """The knowledge base and the embedder and vector store it is built on (the answer
    cache and the page reader use them too)."""

    knowledge_base: KnowledgeBase
    embedder: Embedder
    vectors: VectorStore


@asynccontextmanager
async def open_indexing(settings: Settings) -> AsyncIterator[KnowledgeBase]:
    """The knowledge base alone, for `researchbot index`: the embedding model and the vector
    store are loaded only when a file is new, changed or removed."""
    async with _opened_database(settings) as engine, \
            _knowledge(settings, engine, on_demand=True) as knowledge:
        yield knowledge.knowledge_base


@asynccontextmanager
async def _knowledge(settings: Settings, engine: AsyncEngine, *, on_demand: bool
                     ) -> AsyncIterator[Knowledge]:
    """The knowledge base over the job database's catalogue. `on_demand`: the embedder and
    the vector store are built on first use (a long-running process builds them at once, so
    that its first question does not wait for them)."""
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import diskcache

    from core.retrieval.embedding import (
        EmbedderOnDemand,
        build_embedder,
        check_embedding_model,
    )
    from core.retrieval.kb.knowledge_base import KnowledgeBase
    from core.retrieval.vectors import VectorStoreOnDemand, open_chroma
    from core.store.catalogue import KnowledgeCatalogue

    chroma_url = settings.knowledge_base.chroma_url
    chroma_path = settings.data_dir / "chroma"

    def chroma() -> VectorStore:
        return open_chroma(chroma_path, chroma_url)

    def embedding_model() -> Embedder:
        return build_embedder(settings.embedding)

    if on_demand:
        check_embedding_model(settings.embedding)
    embedder = EmbedderOnDemand(embedding_model) if on_demand else embedding_model()
    vectors = VectorStoreOnDemand(chroma, None if chroma_url else chroma_path) \
        if on_demand else chroma()
    index_cache = diskcache.Cache(str(settings.data_dir / "index-cache"), size_limit=2**30)
    try:
        yield Knowledge(KnowledgeBase(KnowledgeCatalogue(engine), vectors, embedder,
                                      settings.knowledge_base, index_cache, worker_id(),
                                      worker_alive), embedder, vectors)
    finally:
        index_cache.close()
        vectors.close()


@asynccontextmanager
async def open_page_fetcher(settings: Settings) -> AsyncIterator[PageFetcher]:
    """A fetcher of web pages to index, under the same guard and limits as the pages read
    behind search hits (sources.trusted_pages may be private)."""
    from core.web.fetch import PageFetcher
    from core.web.net import AddressGuard, guarded_session

    config = settings.sources
    guard = AddressGuard.trusting(*config.trusted_pages)
    async with guarded_session(config.user_agent, guard=guard) as session:
        yield PageFetcher(session, user_agent="researchbot",
                          max_bytes=int(settings.knowledge_base.max_file_mb * 1024 * 1024),
                          concurrency=config.fetch_concurrency,
                          per_host=config.fetch_per_host, timeout_s=config.timeout_s,
                          guard=guard)


@dataclass
class Web:
    sources: dict[str, SearchSource]
    pages: PageReader | None


@asynccontextmanager
async def open_web(settings: Settings, embedder: Embedder) -> AsyncIterator[Web]:
    """The web and academic sources the settings switch on (core.sources.registry), their
    HTTP sessions, response cache and circuit breakers (shared through the data dir, or
    Redis), and the page reader; nothing at all when every tenant is local-only."""
    config = settings.sources
    if settings.pipeline.local_only:
        yield Web({}, None)
        return
    import diskcache

    from core.sources.breaker import CircuitBreaker
    from core.sources.breaker_file import BreakerFile
    from core.sources.pages import PageReader
    from core.sources.policy import SourcePolicy
    from core.sources.registry import SOURCES
    from core.web.fetch import PageFetcher
    from core.web.net import AddressGuard, api_session, guarded_session

    shared = redis = None
    if settings.redis.url is not None:
        from redis.asyncio import Redis
        from redis.asyncio.retry import Retry
        from redis.backoff import NoBackoff

        from core.errors import ConfigurationError
        from core.redact import safe_url
        from core.sources.shared_limits import SharedLimits

        url = settings.redis.url.get_secret_value()
        try:  # short timeouts, one quick retry: a slow Redis sends a process to its own limits
            redis = Redis.from_url(url, socket_connect_timeout=1.0, socket_timeout=1.0,
                                   retry=Retry(NoBackoff(), 1))
        except ValueError as error:
            raise ConfigurationError(f"redis.url: cannot use {safe_url(url)!r}: "
                                     f"{error}") from None
        shared = SharedLimits(redis)
    cache = diskcache.Cache(str(settings.data_dir / "source-cache"), size_limit=2**28) \
        if config.cache_ttl_hours > 0 else None
    breakers = BreakerFile(settings.data_dir / "source-breakers.sqlite3")

    def policy(name: str, rate_per_s: float | None = None) -> SourcePolicy:
        return SourcePolicy(
            name, concurrency=config.concurrency,
            rate_per_s=rate_per_s or config.rate_per_second,
            timeout_s=config.timeout_s, attempts=config.attempts,
            breaker=CircuitBreaker(config.breaker_failures, config.breaker_reset_s),
            cache=cache, cache_ttl_s=config.cache_ttl_hours * 3600,
            max_response_bytes=int(config.max_response_mb * 1024 * 1024), shared=shared,
            breakers=breakers)

    enabled = [spec for spec in SOURCES if spec.enabled(config)]
    # The configured API endpoints may be on the user's LAN; names a redirect leads to may not.
    api = api_session(config.user_agent, connect_timeout_s=max(1.0, config.timeout_s / 2),
                      trusted=[spec.endpoint(config) or "" for spec in enabled])
    page_guard = AddressGuard.trusting(*config.trusted_pages)
    pages = guarded_session(config.user_agent, guard=page_guard)
    opened = AsyncExitStack()
    try:
        found: dict[str, SearchSource] = {
            spec.name: await opened.enter_async_context(spec.open(config, api, policy))
            for spec in enabled}
        fetcher = PageFetcher(pages, user_agent="researchbot",
                              max_bytes=int(config.max_page_mb * 1024 * 1024),
                              concurrency=config.fetch_concurrency,
                              per_host=config.fetch_per_host, timeout_s=config.timeout_s,
                              guard=page_guard)
        reader = PageReader(fetcher, embedder, config.fetch_pages) if config.fetch_pages \
            else None
        yield Web(found, reader)
    finally:
        await opened.aclose()
        await api.close()
        await pages.close()
        breakers.close()
        if cache is not None:
            cache.close()
        if redis is not None:
            await redis.aclose()


def answer_pages(settings: Settings, links: ShareLinks) -> AnswerPage | None:
    """Signed links to answers' pages under `web.public_url`; None when it is not set."""
    public_url = settings.web.public_url
    if public_url is None:
        return None
    return functools.partial(links.page, public_url)


@asynccontextmanager
async def open_chat_services(settings: Settings, research: FrontEndServices
                             ) -> AsyncIterator[ChatServices]:
    """What the chat front ends share: limits and event dedupe in this process, or in Redis
    when `redis.url` is set (several bot processes behind one load balancer)."""
    from adapters.chat.dedupe import LocalEventLog, RedisEventLog
    from adapters.chat.limits import LocalQuestionLimiter, RedisQuestionLimiter
    from adapters.chat.services import ChatServices

    chat = settings.chat
    limits = (chat.user_questions_per_minute, chat.tenant_questions_per_minute, 60.0,
              chat.max_queue_seconds)
    if settings.redis.url is None:
        yield ChatServices(research.jobs, research.conversations,
                           LocalQuestionLimiter(*limits), LocalEventLog(chat.event_ttl_seconds),
                           research.feedback, chat.depth, answer_pages(settings, research.links),
                           frozenset(chat.document_adders))
        return
    from redis.asyncio import Redis

    from core.errors import ConfigurationError

    url = settings.redis.url.get_secret_value()
    try:
        redis = Redis.from_url(url, socket_connect_timeout=10)
        await redis.ping()
    except Exception as error:  # bad URL or no server: stop at start-up, name the setting
        from core.redact import safe_url

        raise ConfigurationError(f"redis.url: cannot use {safe_url(url)!r}: "
                                 f"{str(error).rstrip('.')}; start Redis there, fix "
                                 "redis.url, or unset it to keep limits in this "
                                 "process") from error
    try:
        yield ChatServices(research.jobs, research.conversations,
                           RedisQuestionLimiter(redis, *limits),
                           RedisEventLog(redis, chat.event_ttl_seconds), research.feedback,
                           chat.depth, answer_pages(settings, research.links),
                           frozenset(chat.document_adders))
    finally:
        await redis.aclose()
