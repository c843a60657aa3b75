"""A finished answer survives the stores that fail around it, each fault injected into the
real component: an answer cache whose Chroma server is stopped is skipped (the question is
researched and answered); a job database that refuses the answer's row (PostgreSQL out of
disk) or goes away while the research runs still returns and delivers the answer, and the row
is written once the database takes writes again."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import REGISTRY
from sqlalchemy import text

from bot.wiring import build_jobs, build_research, local_sources
from core.answer.cache import SemanticAnswerCache
from core.config import CacheSettings, KnowledgeBaseSettings, PipelineSettings
from core.jobs.delivery import RetryPolicy, Steps
from core.jobs.service import JobService
from core.models import JobStatus, ProgressEvent, ResearchRequest, ResearchResult
from core.retrieval.kb.knowledge_base import KnowledgeBase
from core.retrieval.vectors import open_chroma
from core.store.answers import CachedAnswerStore
from core.store.catalogue import KnowledgeCatalogue
from core.store.database import open_database, sqlite_url
from core.store.events import JobEvents
from core.store.jobs import JobStore
from tests.support import researchbot
from tests.support.chat_harness import SlowSource
from tests.support.cluster import wait_until
from tests.support.corpus import index_corpus
from tests.support.private_servers import private_chroma, private_postgres

pytestmark = pytest.mark.system

QUESTION = "How many hours a day do cats sleep?"
QUICK_RETRY = RetryPolicy(first_wait_s=0.01, max_wait_s=0.05, give_up_after_s=5.0)

# PostgreSQL's own words for a full disk (SQLSTATE 53100), said for the answer's row only:
# the job is created and started, its progress stored, and only the write that ends it fails.
REFUSE_ANSWER_ROW = ("""
CREATE OR REPLACE FUNCTION refuse_answer_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = '53100';
END $$""", """
CREATE TRIGGER refuse_answer_row BEFORE UPDATE ON jobs FOR EACH ROW
    WHEN (NEW.status = 'completed') EXECUTE FUNCTION refuse_answer_row()""")
ACCEPT_ANSWER_ROW = ("DROP TRIGGER IF EXISTS refuse_answer_row ON jobs",
                     "DROP FUNCTION IF EXISTS refuse_answer_row()")


async def _run_sql(engine: Any, statements: tuple[str, ...]) -> None:
    async with engine.begin() as connection:
        for statement in statements:
            await connection.execute(text(statement))


def _count(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


class ChatThread:
    """A chat platform that posts whatever it is given (a front end's delivery)."""

    platform = "test"

    def __init__(self) -> None:
        self.posted: list[str] = []

    def target(self) -> dict[str, Any]:
        return {"channel": "c1"}

    async def progress(self, event: ProgressEvent) -> None:
        return None

    async def answer(self, result: ResearchResult, steps: Steps) -> None:
        await steps.once("answer", lambda: self._post(result.answer.summary))

    async def failure(self, message: str, steps: Steps) -> None:
        await steps.once("error", lambda: self._post(f"error: {message}"))

    async def _post(self, what: str) -> str:
        self.posted.append(what)
        return what


async def _stored_to_the_end(engine: Any, job_id: str, within_s: float) -> list[str]:
    """Wait for the job's row to be written completed and its events to end with its
    delivery (written after the row); the kinds of its stored events."""
    store, events = JobStore(engine), JobEvents(engine)

    async def written() -> bool:
        with contextlib.suppress(Exception):  # the database may be starting again
            return (await store.get(job_id)).status == JobStatus.COMPLETED and \
                [event.kind for event in await events.after(job_id)][-1:] == ["delivered"]
        return False

    await wait_until(written, within_s=within_s, every_s=0.25)
    return [event.kind for event in await events.after(job_id)]


async def _running(engine: Any, sources: dict[str, Any], embedder: Any
                   ) -> tuple[JobService, ChatThread, str]:
    """A job service on `engine` and a question submitted to it to a chat thread, once the
    job is in its search (held there while `sources["slow"]` is)."""
    jobs = build_jobs(build_research(sources, embedder, PipelineSettings()), engine,
                      QUICK_RETRY, progress_interval_s=0.0)
    store, thread = JobStore(engine), ChatThread()
    job_id = await jobs.submit(ResearchRequest(question=QUESTION, tenant="t1"), thread)

    async def started() -> bool:
        return (await store.get(job_id)).status == JobStatus.IN_PROGRESS

    await wait_until(started, within_s=10)
    async with asyncio.timeout(10):
        await sources["slow"].searching.wait()
    return jobs, thread, job_id


async def _knowledge_base(engine: Any, chroma: Any, embedder: Any, corpus: Path
                          ) -> KnowledgeBase:
    knowledge_base = KnowledgeBase(KnowledgeCatalogue(engine), chroma, embedder,
                                   KnowledgeBaseSettings())
    await knowledge_base.index([corpus], "t1")
    return knowledge_base


async def test_a_cache_whose_chroma_server_stopped_is_skipped_and_the_question_answered(
    sqlite_engine: Any, chroma: Any, embedder: Any, corpus: Path, tmp_path: Path,
) -> None:
    knowledge_base = await _knowledge_base(sqlite_engine, chroma, embedder, corpus)
    async with private_chroma(tmp_path) as server:
        cache_vectors = open_chroma(None, server.url)
        cache = SemanticAnswerCache(CachedAnswerStore(sqlite_engine), cache_vectors, embedder,
                                    CacheSettings())
        jobs = build_jobs(build_research(local_sources(knowledge_base, PipelineSettings()),
                                         embedder, PipelineSettings(), cache=cache),
                          sqlite_engine, QUICK_RETRY, progress_interval_s=0.0)
        lookups, stores = (_count("cache_errors_total", operation=operation)
                           for operation in ("lookup", "store"))
        await server.stop()
        job_id = await jobs.submit(ResearchRequest(question=QUESTION, tenant="t1"))
        job = await jobs.wait(job_id)
        assert job.status == JobStatus.COMPLETED, job.error
        assert job.result is not None and "12 and 16 hours" in job.result.answer.summary
        assert job.metrics["cache_lookup_error"] == "VectorStoreUnavailableError"
        assert job.metrics["cache_store_error"] == "VectorStoreUnavailableError"
        assert _count("cache_errors_total", operation="lookup") == lookups + 1
        assert _count("cache_errors_total", operation="store") == stores + 1

        await server.start()  # back: the next answer is cached, and the one after served
        first = await jobs.wait(await jobs.submit(
            ResearchRequest(question=QUESTION, tenant="t1")))
        assert first.result is not None and not first.result.cached
        assert first.metrics.get("cache_stored") is True
        again = await jobs.wait(await jobs.submit(
            ResearchRequest(question="How many hours per day do cats sleep?", tenant="t1")))
        assert again.result is not None and again.result.cached
        await jobs.close()
        cache_vectors.close()


async def test_an_answer_whose_row_the_database_refuses_is_delivered_and_stored_later(
    postgres_engine: Any, chroma: Any, embedder: Any, corpus: Path,
) -> None:
    engine = postgres_engine
    knowledge_base = await _knowledge_base(engine, chroma, embedder, corpus)
    jobs = build_jobs(build_research(local_sources(knowledge_base, PipelineSettings()),
                                     embedder, PipelineSettings()),
                      engine, QUICK_RETRY, progress_interval_s=0.0)
    unsaved = _count("job_results_unsaved_total")
    await _run_sql(engine, REFUSE_ANSWER_ROW)
    try:
        thread = ChatThread()
        job_id = await jobs.submit(ResearchRequest(question=QUESTION, tenant="t1"), thread)
        events = [event.kind async for event in jobs.events(job_id)]
        assert events[-1] == "completed"  # a follower here sees the end although not stored
        job = await jobs.wait(job_id)
        assert job.status == JobStatus.COMPLETED
        assert job.result is not None and "12 and 16 hours" in job.result.answer.summary
        assert (await jobs.answer(job_id)).answer.summary == job.result.answer.summary
        assert thread.posted == [job.result.answer.summary]  # delivered all the same
        assert _count("job_results_unsaved_total") == unsaved + 1
        stored = await JobStore(engine).get(job_id)
        assert stored.status == JobStatus.IN_PROGRESS and stored.result is None
    finally:
        await _run_sql(engine, ACCEPT_ANSWER_ROW)

    kinds = await _stored_to_the_end(engine, job_id, within_s=15)
    stored = await JobStore(engine).get(job_id)
    assert stored.result is not None and "12 and 16 hours" in stored.result.answer.summary
    assert kinds[-2:] == ["completed", "delivered"]
    assert kinds.count("completed") == 1
    await jobs.close()


async def test_a_job_database_that_goes_away_mid_research_still_returns_the_answer(
    sqlite_engine: Any, chroma: Any, embedder: Any, corpus: Path,
) -> None:
    """The knowledge base on its own file; the jobs on a PostgreSQL stopped while the
    research waits on a slow source, and started again once the answer is out."""
    knowledge_base = await _knowledge_base(sqlite_engine, chroma, embedder, corpus)
    sources = local_sources(knowledge_base, PipelineSettings())
    sources["slow"] = slow = SlowSource(held=True)
    async with private_postgres() as postgres:
        engine = await open_database(postgres.url)
        jobs, thread, job_id = await _running(engine, sources, embedder)
        await postgres.stop()
        slow.release()
        job = await asyncio.wait_for(jobs.wait(job_id), timeout=60)
        assert job.status == JobStatus.COMPLETED
        assert job.result is not None and "12 and 16 hours" in job.result.answer.summary
        assert thread.posted == [job.result.answer.summary]

        await postgres.start()

        kinds = await _stored_to_the_end(engine, job_id, within_s=60)
        assert kinds[-2:] == ["completed", "delivered"]
        await jobs.close()
        await engine.dispose()


def test_the_cli_answers_when_its_database_file_refuses_the_cache_and_the_answer_row(
    clean_env: Path,
) -> None:
    """`researchbot ask` on a database file that refuses the cache's row and then the
    answer's (SQLite's words for a full disk): exit 0 with the answer, one line on stderr."""
    index_corpus(clean_env)
    database = sqlite3.connect(clean_env / "researchbot.sqlite3")
    database.execute("CREATE TRIGGER refuse_cache BEFORE INSERT ON cached_answers BEGIN "
                     "SELECT RAISE(ABORT, 'database or disk is full'); END")
    database.commit()
    cached = researchbot.run("ask", "How many hours a day do cats sleep?", "--json")
    assert cached.returncode == 0, cached.stderr
    assert "12 and 16 hours" in cached.stdout
    assert "answer cache store skipped" in cached.stderr

    database.execute("CREATE TRIGGER refuse_answer BEFORE UPDATE ON jobs "
                     "WHEN NEW.status = 'completed' BEGIN "
                     "SELECT RAISE(ABORT, 'database or disk is full'); END")
    database.commit()
    asked = researchbot.run("ask", "What gives sourdough bread its sour taste?", "--json")
    assert asked.returncode == 0, asked.stderr
    assert "acid" in asked.stdout
    said = [line for line in asked.stderr.splitlines() if "could not be stored" in line]
    assert len(said) == 1 and "database or disk is full" in said[0]
    assert "Traceback" not in asked.stderr and "[SQL:" not in asked.stderr
    database.close()


@contextlib.contextmanager
def _small_disk(folder: Path, megabytes: int) -> Iterator[Path]:
    """A tmpfs of its own at `folder` (a data folder that can really fill up)."""
    folder.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={megabytes}m", "tmpfs",
                              str(folder)], capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def _fill(folder: Path) -> Path:
    """Write until the disk says it is full; the file that filled it."""
    filler = folder / "filler"
    with filler.open("wb", buffering=0) as out, contextlib.suppress(OSError):
        while True:  # unbuffered: the write that fails leaves nothing to flush at close
            out.write(b"\0" * 65536)
    return filler


async def test_an_answer_finished_when_its_data_folder_fills_up_is_kept_and_stored_later(
    sqlite_engine: Any, chroma: Any, embedder: Any, corpus: Path, tmp_path: Path,
) -> None:
    """The jobs on a SQLite file in a small data folder that fills up (ENOSPC) while the
    research waits on a slow source: the answer is returned and delivered, and written once
    space is freed."""
    knowledge_base = await _knowledge_base(sqlite_engine, chroma, embedder, corpus)
    sources = local_sources(knowledge_base, PipelineSettings())
    sources["slow"] = slow = SlowSource(held=True)
    with _small_disk(tmp_path / "data", 8) as data:
        engine = await open_database(sqlite_url(str(data / "jobs.sqlite3")))
        jobs, thread, job_id = await _running(engine, sources, embedder)
        filler = _fill(data)
        slow.release()
        job = await asyncio.wait_for(jobs.wait(job_id), timeout=60)
        assert job.status == JobStatus.COMPLETED
        assert job.result is not None and "12 and 16 hours" in job.result.answer.summary
        assert thread.posted == [job.result.answer.summary]
        assert (await JobStore(engine).get(job_id)).status == JobStatus.IN_PROGRESS  # not yet
        filler.unlink()

        kinds = await _stored_to_the_end(engine, job_id, within_s=30)
        assert kinds[-2:] == ["completed", "delivered"]
        await jobs.close()
        await engine.dispose()
