"""What the chat front-end tests share: the options of a test server, test doubles of a
remote source and a synthesis back end, and the real pipeline and ChatServices behind a
front end, recording the requests it receives."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from adapters.chat.dedupe import LocalEventLog
from adapters.chat.limits import LocalQuestionLimiter
from adapters.chat.services import ChatServices
from bot.wiring import build_jobs, build_research
from core.answer.cache import SemanticAnswerCache
from core.answer.synthesis.base import Draft
from core.config import CacheSettings, KnowledgeBaseSettings, LLMSettings, PipelineSettings
from core.jobs.delivery import RetryPolicy
from core.jobs.service import JobService
from core.models import QueryIntent, ResearchRequest, Source
from core.retrieval.kb.adding import DocumentAdder
from core.sources.local import LocalKnowledgeBaseSource
from core.sources.protocol import Capabilities, SearchQuery, SourceKind
from core.store.access import ShareLinks
from core.store.answers import CachedAnswerStore
from core.store.conversations import ConversationStore
from core.store.feedback import FeedbackStore
from core.store.uploads import UploadStore
from core.web.fetch import PageFetcher
from core.web.net import AddressGuard, guarded_session


@dataclass
class Options:
    delay_s: float = 0.0  # a remote source that takes this long and finds nothing
    held: bool = False  # a remote source that holds every search until harness.slow.release()
    per_user: int = 100
    per_tenant: int = 1000
    max_wait_s: float = 20.0
    window_s: float = 60.0
    oauth: bool = False  # workspaces T1 and T2 installed, each with its own token
    broken_synthesis: bool = False
    teams: tuple[str, ...] = ("T1",)
    progress_interval_s: float = 1.0
    give_up_delivery_s: float = 30.0
    public_url: str | None = None  # web.public_url: answers link to their page
    document_adders: tuple[str, ...] = ("everyone",)  # chat.document_adders
    trusted_pages: tuple[str, ...] = ()  # sources.trusted_pages: a local site to add links of
    max_file_mb: float = 20.0
    guild_roles: tuple[str, ...] = ()  # Discord: the test server's roles (it is announced)
    model_url: str | None = None  # an OpenAI-compatible server: answers and refinements


class SlowSource:
    """A remote source that takes its time and finds nothing: `delay_s` a search (a
    benchmark's latency), and while held (`held`, `hold`) until `release`, so that a test
    keeps a job in its search exactly as long as it needs. `searching` is set once a search
    has begun."""

    name = "slow"
    label = "a slow archive"
    capabilities = Capabilities(SourceKind.REFERENCE)

    def __init__(self, delay_s: float = 0.0, *, held: bool = False) -> None:
        self._delay_s = delay_s
        self._released = asyncio.Event()
        if not held:
            self._released.set()
        self.searching = asyncio.Event()

    def hold(self) -> None:
        self._released.clear()

    def release(self) -> None:
        self._released.set()

    async def search(self, query: SearchQuery) -> list[Source]:
        self.searching.set()
        await self._released.wait()
        await asyncio.sleep(self._delay_s)
        return []


class BrokenSynthesizer:
    """A synthesis back end that fails mid-research (e.g. its model server went away)."""

    name = "broken"

    async def synthesize(self, question: str, intent: QueryIntent,
                         sources: list[Source]) -> Draft:
        raise ConnectionResetError("connection reset by peer at 10.0.0.7:8000")


# Delivery retries a second apart at most, for half a minute: the tests' fake platforms
# recover within a few failures.
QUICK_RETRY = RetryPolicy(first_wait_s=0.05, max_wait_s=1.0, give_up_after_s=30.0)


class _RecordingJobs:
    """The real job service, noting each request it accepts (every call goes through)."""

    def __init__(self, jobs: JobService, requests: list[ResearchRequest]) -> None:
        self._jobs = jobs
        self._requests = requests

    async def submit(self, request: ResearchRequest, *args: Any, **kwargs: Any) -> str:
        job_id = await self._jobs.submit(request, *args, **kwargs)
        self._requests.append(request)
        return job_id

    def __getattr__(self, name: str) -> Any:
        return getattr(self._jobs, name)


def slow_source(options: Options) -> SlowSource | None:
    """The remote source `options` ask for (`delay_s`, `held`), if any."""
    if options.delay_s or options.held:
        return SlowSource(options.delay_s, held=options.held)
    return None


async def research_desk(options: Options, engine: Any, chroma: Any, embedder: Any,
                        knowledge_base: Any, requests: list[ResearchRequest],
                        slow: SlowSource | None = None) -> ChatServices:
    """The real pipeline over the tenant's knowledge base (plus `slow`, a remote source),
    behind the job service and a ChatServices; each request submitted is noted in
    `requests`. With `options.public_url`, answers link to their page as bot/wiring.py's
    `answer_pages` does."""
    sources: dict[str, Any] = {"local": LocalKnowledgeBaseSource(knowledge_base, 3)}
    if slow is not None:
        sources["slow"] = slow
    llm = LLMSettings(fast_model="openai/fast", strong_model="openai/strong",
                      api_base=options.model_url, api_key="test-key") \
        if options.model_url else None
    research = build_research(
        sources, embedder, PipelineSettings(), llm,
        cache=SemanticAnswerCache(CachedAnswerStore(engine), chroma, embedder, CacheSettings()),
        synthesizer=BrokenSynthesizer() if options.broken_synthesis else None)
    retry = dataclasses.replace(QUICK_RETRY, give_up_after_s=options.give_up_delivery_s)
    documents = DocumentAdder(knowledge_base, UploadStore(engine),
                              functools.partial(_page_fetcher, options.trusted_pages),
                              KnowledgeBaseSettings(max_file_mb=options.max_file_mb))
    jobs = build_jobs(research, engine, retry, progress_interval_s=options.progress_interval_s,
                      documents=documents)
    links = await ShareLinks.load(engine)
    return ChatServices(_RecordingJobs(jobs, requests),  # type: ignore[arg-type]
                        ConversationStore(engine),
                        LocalQuestionLimiter(options.per_user, options.per_tenant,
                                             options.window_s, options.max_wait_s),
                        LocalEventLog(), FeedbackStore(engine),
                        answer_page=functools.partial(links.page, options.public_url)
                        if options.public_url else None,
                        document_adders=frozenset(options.document_adders))


@contextlib.asynccontextmanager
async def _page_fetcher(trusted: tuple[str, ...]) -> AsyncIterator[PageFetcher]:
    guard = AddressGuard.trusting(*trusted)
    async with guarded_session("researchbot", guard=guard) as session:
        yield PageFetcher(session, guard=guard)
