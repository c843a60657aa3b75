"""Pure builders: the research core put together from resources already opened (a database
engine, a knowledge base, an embedder, HTTP sessions and sources), the same for `bot/`, the
tests and the benchmarks. Opening and closing resources stays with the caller."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from sqlalchemy.ext.asyncio import AsyncEngine

from core.answer.cache import SemanticAnswerCache
from core.answer.synthesis.base import Synthesizer
from core.answer.synthesis.extractive import ExtractiveSynthesizer
from core.config import LLMSettings, PipelineSettings
from core.jobs.delivery import RetryPolicy
from core.jobs.service import DeliveryFactory, JobService
from core.research.pipeline import ResearchPipeline
from core.retrieval.embedding import Embedder
from core.retrieval.kb.knowledge_base import KnowledgeBase
from core.sources.local import LocalKnowledgeBaseSource
from core.sources.pages import PageReader
from core.sources.protocol import SearchSource
from core.store.deliveries import DeliveryStore
from core.store.events import JobEvents
from core.store.jobs import JobStore

if TYPE_CHECKING:
    from core.jobs.queue import JobQueue


def local_sources(knowledge_base: KnowledgeBase, settings: PipelineSettings
                  ) -> dict[str, SearchSource]:
    """The tenant's knowledge base as the first source."""
    return {"local": LocalKnowledgeBaseSource(knowledge_base, settings.max_per_document)}


def build_pipeline(store: JobStore, sources: Mapping[str, SearchSource], embedder: Embedder,
                   settings: PipelineSettings, llm: LLMSettings | None = None, *,
                   cache: SemanticAnswerCache | None = None,
                   cache_scope: Callable[[str], Awaitable[str]] | None = None,
                   pages: PageReader | None = None, worker: str = "",
                   synthesizer: Synthesizer | None = None,
                   kind: Callable[..., ResearchPipeline] = ResearchPipeline) -> ResearchPipeline:
    """The pipeline over `sources`: extractive answers, and the model's steps when `llm`
    names a model. `kind`: the class to build (a test's recording subclass, say)."""
    extractive = synthesizer or ExtractiveSynthesizer(embedder, settings.answer_sentences)
    loop = None
    if llm is not None and llm.enabled:
        from core.llm.gateway import ModelGateway
        from core.llm.prompts import PromptLibrary
        from core.research.analyst import ResearchLoop

        loop = ResearchLoop(ModelGateway(llm, PromptLibrary.load()), llm, embedder, settings,
                            extractive)
    parts: dict[str, Any] = {"store": store, "sources": sources, "synthesizer": extractive,
                             "embedder": embedder, "settings": settings, "cache": cache,
                             "cache_scope": cache_scope, "worker": worker, "loop": loop,
                             "pages": pages}
    return kind(**parts)


def build_jobs(pipeline: ResearchPipeline | None, engine: AsyncEngine,
               retry: RetryPolicy | None = None, progress_interval_s: float = 1.0, *,
               queue: JobQueue | None = None, deliveries_for: DeliveryFactory | None = None,
               worker: str = "", attempt_timeout_s: float = 1800.0) -> JobService:
    """The job service over a pipeline and its database (no pipeline: it reads jobs, and
    with a `queue` submits them for workers)."""
    return JobService(pipeline, JobStore(engine), JobEvents(engine), DeliveryStore(engine),
                      retry, progress_interval_s, queue=queue, deliveries_for=deliveries_for,
                      worker=worker, attempt_timeout_s=attempt_timeout_s)
