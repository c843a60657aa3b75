"""Open every resource once from the settings and pass it down; close it on the way out."""

from __future__ import annotations

import functools
import os
import socket
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from bot.config import Settings
from core.store.jobs import JobStore

if TYPE_CHECKING:  # imported lazily at run time: the CLI's fast paths need neither
    from sqlalchemy.ext.asyncio import AsyncEngine

    from adapters.chat.desk import AnswerPage, ResearchDesk
    from core.jobs.delivery import RetryPolicy
    from core.jobs.queue import JobQueue
    from core.jobs.service import DeliveryFactory, JobService
    from core.research.pipeline import ResearchPipeline
    from core.retrieval.embedding import Embedder
    from core.retrieval.kb.knowledge_base import KnowledgeBase
    from core.sources.base import SearchSource
    from core.store.access import ShareLinks
    from core.store.conversations import ConversationStore
    from core.store.feedback import FeedbackStore
    from core.web.fetch import PageReader


@dataclass
class Front:
    """What a front end needs: the job service, thread memory, the database, readers'
    feedback, and the signer of answer-page links."""

    jobs: JobService
    conversations: ConversationStore
    engine: AsyncEngine
    feedback: FeedbackStore
    links: ShareLinks


@dataclass
class Research(Front):
    """The wired research core: what front ends submit requests to, and workers run."""

    pipeline: ResearchPipeline
    knowledge_base: KnowledgeBase


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


@asynccontextmanager
async def open_jobs(settings: Settings) -> AsyncIterator[JobService]:
    """The job service without a research core: it reads jobs, events and deliveries (the
    CLI's `jobs` and `show`, which should not load models and indexes to print a row)."""
    from core.research.build import build_jobs
    from core.store.database import open_database

    settings.data_dir.mkdir(parents=True, exist_ok=True)
    engine = await open_database(settings.store_url)
    try:
        yield build_jobs(None, engine)
    finally:
        await engine.dispose()


@asynccontextmanager
async def open_queue(settings: Settings) -> AsyncIterator[JobQueue | None]:
    """The job queue when `queue.url` is set (None: jobs run in the process that took them).
    A queue that cannot be reached stops start-up naming the setting."""
    if settings.queue.url is None:
        yield None
        return
    from core.errors import ConfigurationError
    from core.jobs.queue import JobQueue
    from core.redact import safe_url

    url = settings.queue.url.get_secret_value()
    queue = JobQueue(url, settings.queue)
    try:
        await queue.connect()
        await queue.stats()
    except Exception as error:  # bad URL or no server: name the setting
        await queue.close()
        raise ConfigurationError(f"queue.url: cannot use {safe_url(url)!r}: "
                                 f"{str(error).rstrip('.')}; start Redis there, fix queue.url, "
                                 "or unset it to run jobs in process") from None
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
async def open_front(settings: Settings) -> AsyncIterator[Front]:
    """What a chat front end needs. With a queue, only the job store and the queue: the
    research runs in workers, so no model, index or source is loaded here."""
    if settings.queue.url is None:
        async with open_research(settings) as research:
            yield research
        return
    from core.research.build import build_jobs
    from core.store.access import ShareLinks
    from core.store.conversations import ConversationStore
    from core.store.database import open_database
    from core.store.feedback import FeedbackStore

    settings.data_dir.mkdir(parents=True, exist_ok=True)
    engine = await open_database(settings.store_url)
    try:
        async with open_queue(settings) as queue:
            jobs = build_jobs(None, engine, delivery_retry(settings), queue=queue,
                              worker=worker_id(), attempt_timeout_s=attempt_timeout_s(settings))
            yield Front(jobs, ConversationStore(engine), engine, FeedbackStore(engine),
                        await ShareLinks.load(engine))
    finally:
        await engine.dispose()


@asynccontextmanager
async def open_research(settings: Settings, *, trusted_pages: Sequence[str] = (),
                        deliveries: DeliveryFactory | None = None,
                        in_process: bool = False) -> AsyncIterator[Research]:
    """The research core. `trusted_pages`: URLs whose host and port the page reader may read
    although they are private or this machine (benches' fake servers; never from settings).
    `deliveries` rebuilds stored deliveries (a worker's). With `queue.url` set, jobs are
    submitted to the queue and run by `JobService.run_queued` in workers, unless
    `in_process` (the CLI, which has the research core loaded anyway, answers at once)."""
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import diskcache

    from core.answer.cache import SemanticAnswerCache
    from core.research.build import build_jobs, build_pipeline, local_sources
    from core.retrieval.embedding import build_embedder
    from core.retrieval.kb.knowledge_base import KnowledgeBase
    from core.retrieval.vectors import open_chroma
    from core.store.access import ShareLinks
    from core.store.catalogue import KnowledgeCatalogue
    from core.store.conversations import ConversationStore
    from core.store.database import open_database
    from core.store.feedback import FeedbackStore

    settings.data_dir.mkdir(parents=True, exist_ok=True)
    engine = await open_database(settings.store_url)
    stack = AsyncExitStack()
    try:
        store = JobStore(engine)
        if settings.queue.url is None:  # with a queue, the queue takes up a dead worker's jobs
            await store.fail_abandoned(
                worker_alive, timedelta(minutes=settings.store.stale_job_minutes)
            )
        queue = None if in_process else await stack.enter_async_context(open_queue(settings))
        embedder = build_embedder(settings.embedding)
        chroma = open_chroma(settings.data_dir / "chroma", settings.knowledge_base.chroma_url)
        stack.callback(chroma.close)
        index_cache = diskcache.Cache(str(settings.data_dir / "index-cache"),
                                      size_limit=2**30)
        knowledge_base = KnowledgeBase(KnowledgeCatalogue(engine), chroma, embedder,
                                       settings.knowledge_base, index_cache, worker_id(),
                                       worker_alive)

        async def cache_scope(tenant: str) -> str:
            return f"kb{await knowledge_base.generation(tenant)}"

        if settings.llm.enabled:
            from core.llm.providers import check_llm_models

            check_llm_models(settings.llm)
        web = await stack.enter_async_context(open_web(settings, embedder, trusted_pages))
        pipeline = build_pipeline(
            store, {**local_sources(knowledge_base, settings.pipeline), **web.sources},
            embedder, settings.pipeline, settings.llm, pages=web.pages,
            cache=SemanticAnswerCache(chroma, embedder, settings.cache)
            if settings.cache.enabled else None,
            cache_scope=cache_scope, worker=worker_id())
        jobs = build_jobs(pipeline, engine, delivery_retry(settings), queue=queue,
                          deliveries_for=deliveries, worker=worker_id(),
                          attempt_timeout_s=attempt_timeout_s(settings))
        try:
            yield Research(jobs, ConversationStore(engine), engine, FeedbackStore(engine),
                           await ShareLinks.load(engine), pipeline, knowledge_base)
        finally:
            await jobs.close()
            index_cache.close()
    finally:
        await stack.aclose()
        await engine.dispose()


@dataclass
class Web:
    sources: dict[str, SearchSource]
    pages: PageReader | None


@asynccontextmanager
async def open_web(settings: Settings, embedder: Embedder,
                   trusted_pages: Sequence[str] = ()) -> AsyncIterator[Web]:
    """The web and academic sources the settings switch on, their HTTP sessions and response
    cache, and the page reader; nothing at all when every tenant is local-only."""
    config = settings.sources
    if settings.pipeline.local_only:
        yield Web({}, None)
        return
    import diskcache

    from core.sources.arxiv import ArxivSource
    from core.sources.policy import CircuitBreaker, SourcePolicy
    from core.sources.pubmed import PubMedSource
    from core.sources.searxng import SearxngSource
    from core.sources.tavily import TavilySource
    from core.sources.wikipedia import WikipediaSource
    from core.web.fetch import PageFetcher, PageReader
    from core.web.net import AddressGuard, api_session, capped_http_client, guarded_session

    shared = redis = None
    if config.redis_url is not None:
        from redis.asyncio import Redis
        from redis.asyncio.retry import Retry
        from redis.backoff import NoBackoff

        from core.errors import ConfigurationError
        from core.redact import safe_url
        from core.sources.shared import SharedLimits

        url = config.redis_url.get_secret_value()
        try:  # short timeouts, one quick retry: a slow Redis sends a process to its own limits
            redis = Redis.from_url(url, socket_connect_timeout=1.0, socket_timeout=1.0,
                                   retry=Retry(NoBackoff(), 1))
        except ValueError as error:
            raise ConfigurationError(f"sources.redis_url: cannot use {safe_url(url)!r}: "
                                     f"{error}") from None
        shared = SharedLimits(redis)
    cache = diskcache.Cache(str(settings.data_dir / "source-cache"), size_limit=2**28) \
        if config.cache_ttl_hours > 0 else None

    max_response = int(config.max_response_mb * 1024 * 1024)

    def policy(name: str, rate: float | None = None) -> SourcePolicy:
        return SourcePolicy(
            name, concurrency=config.concurrency, rate_per_s=rate or config.rate_per_second,
            timeout_s=config.timeout_s, attempts=config.attempts,
            breaker=CircuitBreaker(config.breaker_failures, config.breaker_reset_s),
            cache=cache, cache_ttl_s=config.cache_ttl_hours * 3600,
            max_response_bytes=max_response, shared=shared)

    # The configured API endpoints may be on the user's LAN; names a redirect leads to may not.
    api = api_session(config.user_agent, connect_timeout_s=max(1.0, config.timeout_s / 2),
                      trusted=[config.searxng_url or "", config.wikipedia_api, config.arxiv_api,
                               config.pubmed_api])
    page_guard = AddressGuard.trusting(*trusted_pages)
    pages = guarded_session(config.user_agent, guard=page_guard)
    tavily = None
    tavily_http = None
    try:
        found: dict[str, SearchSource] = {}
        if config.wikipedia:
            found["wikipedia"] = WikipediaSource(api, policy("wikipedia"), config.wikipedia_api)
        if config.arxiv:
            found["arxiv"] = ArxivSource(api, policy("arxiv", min(config.rate_per_second, 1.0)),
                                         config.arxiv_api)
        if config.pubmed:
            key = config.pubmed_api_key.get_secret_value() if config.pubmed_api_key else None
            found["pubmed"] = PubMedSource(api, policy("pubmed", 10.0 if key else None),
                                           config.pubmed_api, key)
        if config.searxng_url:
            found["searxng"] = SearxngSource(api, policy("searxng"), config.searxng_url)
        if config.tavily_api_key is not None:
            from tavily import AsyncTavilyClient

            tavily_http = capped_http_client(max_response)
            tavily = AsyncTavilyClient(api_key=config.tavily_api_key.get_secret_value(),
                                       api_base_url=config.tavily_api, client=tavily_http)
            found["tavily"] = TavilySource(
                tavily, policy("tavily"), search_depth=config.tavily_search_depth,
                include_domains=config.tavily_include_domains,
                exclude_domains=config.tavily_exclude_domains)
        fetcher = PageFetcher(pages, user_agent="researchbot",
                              max_bytes=int(config.max_page_mb * 1024 * 1024),
                              concurrency=config.fetch_concurrency,
                              per_host=config.fetch_per_host, timeout_s=config.timeout_s,
                              guard=page_guard)
        reader = PageReader(fetcher, embedder, config.fetch_pages) if config.fetch_pages \
            else None
        yield Web(found, reader)
    finally:
        if tavily is not None:
            await tavily.close()
        if tavily_http is not None:
            await tavily_http.aclose()
        await api.close()
        await pages.close()
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
async def open_desk(settings: Settings, research: Front) -> AsyncIterator[ResearchDesk]:
    """What the chat front ends share: limits and event dedupe in this process, or in Redis
    when `chat.redis_url` is set (several bot processes behind one load balancer)."""
    from adapters.chat.dedupe import LocalEventLog, RedisEventLog
    from adapters.chat.desk import ResearchDesk
    from adapters.chat.limits import LocalQuestionLimiter, RedisQuestionLimiter

    chat = settings.chat
    limits = (chat.user_questions_per_minute, chat.tenant_questions_per_minute, 60.0,
              chat.max_queue_seconds)
    if chat.redis_url is None:
        yield ResearchDesk(research.jobs, research.conversations,
                           LocalQuestionLimiter(*limits), LocalEventLog(chat.event_ttl_seconds),
                           research.feedback, chat.depth, answer_pages(settings, research.links))
        return
    from redis.asyncio import Redis

    from core.errors import ConfigurationError

    url = chat.redis_url.get_secret_value()
    try:
        redis = Redis.from_url(url, socket_connect_timeout=10)
        await redis.ping()
    except Exception as error:  # bad URL or no server: stop at start-up, name the setting
        from core.redact import safe_url

        raise ConfigurationError(f"chat.redis_url: cannot use {safe_url(url)!r}: "
                                 f"{str(error).rstrip('.')}; start Redis there, fix "
                                 "chat.redis_url, or unset it to keep limits in this "
                                 "process") from error
    try:
        yield ResearchDesk(research.jobs, research.conversations,
                           RedisQuestionLimiter(redis, *limits),
                           RedisEventLog(redis, chat.event_ttl_seconds), research.feedback,
                           chat.depth, answer_pages(settings, research.links))
    finally:
        await redis.aclose()
