"""Memory over many jobs of every kind in one long-running process (`serve`, a worker): after
a job ends, nothing of it may stay behind.

    .venv/bin/python bench/job_memory.py [--jobs 10000]

The job service and research core as bot/wiring.py builds them, over a small knowledge base,
with the answer cache on. Of every 20 jobs: 15 are answered from the cache, 2 are researched
afresh, 2 fail in the writer (a fresh exception each, its message 10 kB) and 1 is cancelled
as soon as it starts; each job's events are followed to its end, as an answer page or an SSE
client does. Prints the process's RSS and the Python heap (tracemalloc, after a collection)
every tenth of the run; the figure to judge is the growth over the last half, which a
per-job leak makes grow with the jobs and warm-up does not.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import os
import sys
import tempfile
import tracemalloc
from pathlib import Path
from typing import Any

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
sys.path.insert(0, os.getcwd())

import psutil

from bench.tables import table
from bot.wiring import build_jobs, build_research, local_sources
from core.answer.cache import SemanticAnswerCache
from core.answer.synthesis.extractive import ExtractiveSynthesizer
from core.config import CacheSettings, KnowledgeBaseSettings, PipelineSettings
from core.models import QueryIntent, ResearchRequest, Source
from core.retrieval.embedding import OnnxMiniLMEmbedder
from core.retrieval.kb.knowledge_base import KnowledgeBase
from core.retrieval.vectors import open_chroma
from core.store.answers import CachedAnswerStore
from core.store.catalogue import KnowledgeCatalogue
from core.store.database import open_database, sqlite_url

DOCUMENT = """# Cats

Cats sleep 12 to 16 hours a day. Kittens and old cats sleep even more.

# Dogs

Dogs sleep 12 to 14 hours a day, depending on their age and breed.
"""
FAILING = "Why do cats fail to sleep?"


class WriterError(RuntimeError):
    """The writer's failure for the questions that are meant to fail."""


class SometimesFailingWriter:
    """The extractive writer, except that it raises for `FAILING`."""

    name = "extractive"

    def __init__(self, writer: ExtractiveSynthesizer) -> None:
        self._writer = writer

    async def synthesize(self, question: str, intent: QueryIntent, sources: list[Source]
                         ) -> Any:
        if question == FAILING:
            raise WriterError("the writer fell over: " + "x" * 10_000)
        return await self._writer.synthesize(question, intent, sources)


def request_for(number: int) -> tuple[ResearchRequest, bool]:
    """The request of job `number` and whether it is to be cancelled."""
    kind = number % 20
    if kind < 15:
        return ResearchRequest(question="How long do cats sleep?", tenant="bench"), False
    if kind < 17:
        return ResearchRequest(question="How long do dogs sleep?", tenant="bench",
                               bypass_cache=True), False
    if kind < 19:
        return ResearchRequest(question=FAILING, tenant="bench", bypass_cache=True), False
    return ResearchRequest(question="How long do kittens sleep?", tenant="bench",
                           bypass_cache=True), True


async def run_job(jobs: Any, number: int) -> str:
    request, cancel = request_for(number)
    job_id = await jobs.submit(request)
    if cancel:
        await jobs.cancel(job_id)
    async for _ in jobs.events(job_id):
        pass
    return (await jobs.result(job_id)).status.value


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=10_000)
    args = parser.parse_args()
    logging.disable(logging.CRITICAL)  # each failure is logged; the measure is the memory
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        (work / "docs").mkdir()
        (work / "docs" / "pets.md").write_text(DOCUMENT)
        engine = await open_database(sqlite_url(str(work / "jobs.sqlite3")))
        embedder = OnnxMiniLMEmbedder()
        chroma = open_chroma(work / "chroma", None)
        kb = KnowledgeBase(KnowledgeCatalogue(engine), chroma, embedder,
                           KnowledgeBaseSettings())
        await kb.index([work / "docs"], "bench")
        writer = SometimesFailingWriter(ExtractiveSynthesizer(embedder))
        research = build_research(
            local_sources(kb, PipelineSettings()), embedder, PipelineSettings(),
            synthesizer=writer,
            cache=SemanticAnswerCache(CachedAnswerStore(engine), chroma, embedder,
                                      CacheSettings()))
        jobs = build_jobs(research, engine, progress_interval_s=0.0)
        for number in range(200):  # warm: imports, caches, the first connections
            await run_job(jobs, number)
        gc.collect()
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        process = psutil.Process()
        samples: list[tuple[int, float, float]] = []  # jobs, RSS MB, heap growth MB
        ended: dict[str, int] = {}
        step = max(1, args.jobs // 10)
        for number in range(args.jobs):
            status = await run_job(jobs, number)
            ended[status] = ended.get(status, 0) + 1
            if (number + 1) % step == 0:
                gc.collect()
                heap = (tracemalloc.get_traced_memory()[0] - base) / 2**20
                samples.append((number + 1, process.memory_info().rss / 2**20, heap))
        await jobs.close()
        chroma.close()
        await engine.dispose()
    table(f"One process, {args.jobs} jobs ({', '.join(f'{n} {s}' for s, n in ended.items())})",
          ["jobs", "RSS MB", "heap growth MB"], [list(sample) for sample in samples])
    (middle, rss_then, heap_then), (_, rss_now, heap_now) = samples[len(samples) // 2 - 1], \
        samples[-1]
    print(f"\nOver the last {args.jobs - middle} jobs: RSS {rss_then:.1f} -> {rss_now:.1f} MB "
          f"({(rss_now / rss_then - 1) * 100:+.1f}%), heap {heap_then:.2f} -> "
          f"{heap_now:.2f} MB")


if __name__ == "__main__":
    asyncio.run(main())
