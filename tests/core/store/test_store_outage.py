"""Which database failures are an outage (503, worth asking again) and which are not, on the
real drivers: SQLite's full file, a constraint broken by a bug; a write that outlasts an
outage; a job whose Chroma server stopped under it."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError, OperationalError

from bot.wiring import build_jobs, build_research, local_sources
from core.answer.cache import SemanticAnswerCache
from core.config import CacheSettings, KnowledgeBaseSettings, PipelineSettings
from core.errors import StoreUnavailableError, VectorStoreUnavailableError
from core.models import Job, JobStatus, ResearchRequest
from core.retrieval.kb.knowledge_base import KnowledgeBase
from core.retrieval.vectors import open_chroma
from core.store.answers import CachedAnswerStore
from core.store.catalogue import KnowledgeCatalogue
from core.store.database import open_database
from core.store.jobs import JobStore
from core.store.outage import outlast, store_outage
from tests.support.cluster import wait_until
from tests.support.private_servers import private_chroma

pytestmark = pytest.mark.system


async def test_a_full_sqlite_file_is_an_outage_and_a_broken_constraint_is_not(
    tmp_path: Path,
) -> None:
    engine = await open_database(f"sqlite+aiosqlite:///{tmp_path / 'jobs.sqlite3'}")
    store = JobStore(engine)
    job = Job(tenant="t1", request=ResearchRequest(question="How long do cats sleep?"))
    await store.create(job)
    with pytest.raises(IntegrityError) as duplicate:
        await store.create(job)
    assert store_outage(duplicate.value) is None  # a bug stays a bug (500)
    async with engine.connect() as connection:  # the file may grow no further: SQLITE_FULL
        pages = (await connection.execute(text("PRAGMA page_count"))).scalar()
        await connection.execute(text(f"PRAGMA max_page_count = {pages}"))
        with pytest.raises(OperationalError) as full:
            await connection.execute(text("CREATE TABLE filler (x TEXT)"))
            await connection.execute(text("INSERT INTO filler VALUES (:x)"), {"x": "x" * 10**6})
    outage = store_outage(full.value)
    assert isinstance(outage, StoreUnavailableError)
    assert "disk is full" in str(outage) and outage.retry_after_s >= 5
    await engine.dispose()


async def test_a_write_outlasts_an_outage_and_gives_up_after_its_grace() -> None:
    tries: list[int] = []

    async def write() -> str:
        tries.append(1)
        if len(tries) < 3:
            raise StoreUnavailableError("away")
        return "stored"

    assert await outlast(write, give_up_after_s=5, first_wait_s=0.01) == "stored"
    assert len(tries) == 3

    async def never() -> str:
        raise StoreUnavailableError("away")

    with pytest.raises(StoreUnavailableError):
        await outlast(never, give_up_after_s=0.05, first_wait_s=0.01)

    async def bug() -> str:
        raise KeyError("not an outage")

    with pytest.raises(KeyError):  # at once, not retried
        await outlast(bug, give_up_after_s=60)


async def test_a_job_cut_off_by_a_stopped_chroma_server_finishes_once_it_is_back(
    sqlite_engine: Any, embedder: Any, corpus: Path, tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A Chroma server down when a question comes is an outage (VectorStoreUnavailableError,
    503), not a bug: the job's research runs again after a wait, and answers once the
    server is back."""
    async with private_chroma(tmp_path) as chroma:
        vectors = open_chroma(None, chroma.url)
        knowledge_base = KnowledgeBase(KnowledgeCatalogue(sqlite_engine), vectors, embedder,
                                       KnowledgeBaseSettings())
        await knowledge_base.index([corpus], "t1")
        cache = SemanticAnswerCache(CachedAnswerStore(sqlite_engine), vectors, embedder,
                                    CacheSettings())
        with pytest.raises(VectorStoreUnavailableError):
            await chroma.stop()
            await cache.lookup("How long do cats sleep?", "t1")
        jobs = build_jobs(build_research(local_sources(knowledge_base, PipelineSettings()),
                                         embedder, PipelineSettings(), cache=cache),
                          sqlite_engine)
        caplog.set_level(logging.WARNING, logger="core.jobs.service")
        job_id = await jobs.submit(ResearchRequest(question="How long do cats sleep?",
                                                   tenant="t1"))

        async def cut_off() -> bool:  # the first run is; the next starts 2 s later
            return any(f"job {job_id}: research cut off" in r.getMessage()
                       for r in caplog.records)

        await wait_until(cut_off, 30, every_s=0.02)
        await chroma.start()
        job = await jobs.wait(job_id)
        assert job.status == JobStatus.COMPLETED, job.error
        assert "12 and 16 hours" in (await jobs.answer(job_id)).answer.summary
        resumed = [e for e in await jobs.stored_events(job_id) if e.kind == "resumed"]
        assert resumed and {e.message for e in resumed} == {  # once or twice: how soon
            "The vector store came back: researching again from the question"}  # it starts
        await jobs.close()
        vectors.close()
