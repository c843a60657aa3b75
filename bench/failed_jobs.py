"""Memory over thousands of failed jobs: a long-running process (`serve`, a worker) must not
keep what each failed job raised.

    .venv/bin/python bench/failed_jobs.py [--jobs 4000]

Every job's answer fails in the writer with a fresh exception (its message 10 kB, its
traceback holding the research's frames); nobody asks for the answers, as in `serve` and
workers. Prints the Python heap (tracemalloc, after a collection) and the process's RSS after
each step, and the exceptions still reachable. Runs on this checkout, or on one from before
research was a function of its request (the job service kept each failure until `answer`).
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
import weakref
from pathlib import Path
from typing import Any

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
sys.path.insert(0, os.getcwd())

import psutil

from bench.tables import table
from core.config import KnowledgeBaseSettings, PipelineSettings
from core.models import ResearchRequest
from core.retrieval.embedding import OnnxMiniLMEmbedder
from core.retrieval.kb.knowledge_base import KnowledgeBase
from core.retrieval.vectors import open_chroma


class WriterError(RuntimeError):
    """The writer's failure (a class of its own: built-in exceptions take no weak refs)."""


class FailingWriter:
    name = "failing"

    def __init__(self) -> None:
        self.raised: list[weakref.ref[BaseException]] = []

    async def synthesize(self, *args: Any) -> Any:
        error = WriterError("the writer fell over: " + "x" * 10_000)
        self.raised.append(weakref.ref(error))
        raise error


def job_service(engine: Any, kb: Any, embedder: Any, writer: FailingWriter) -> Any:
    """The job service as this checkout's composition root builds it."""
    if has("core.research.build"):  # before the composition root moved to bot/
        from core.jobs.store import JobStore
        from core.research.build import build_jobs, build_pipeline, local_sources

        pipeline = build_pipeline(JobStore(engine), local_sources(kb, PipelineSettings()),
                                  embedder, PipelineSettings(), synthesizer=writer)
        return build_jobs(pipeline, engine, progress_interval_s=0.0)
    from bot.wiring import build_jobs, build_research, local_sources

    research = build_research(local_sources(kb, PipelineSettings()), embedder,
                              PipelineSettings(), synthesizer=writer)
    return build_jobs(research, engine, progress_interval_s=0.0)


def has(module: str) -> bool:
    """Whether the checkout being measured has `module`: decided by its files, since the
    installed package's import finder would otherwise supply one from another tree."""
    where = Path(os.getcwd(), *module.split("."))
    return where.with_suffix(".py").is_file() or (where / "__init__.py").is_file()


def catalogue(engine: Any) -> Any:
    """What the knowledge base keeps its catalogue in (the engine itself, before core/store
    owned the catalogue)."""
    if not has("core.store.catalogue"):
        return engine
    from core.store.catalogue import KnowledgeCatalogue

    return KnowledgeCatalogue(engine)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=4000)
    args = parser.parse_args()
    logging.disable(logging.CRITICAL)  # each failure is logged; the measure is the memory
    if has("core.db"):
        from core.db import open_database, sqlite_url
    else:
        from core.store.database import open_database, sqlite_url

    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        (work / "docs").mkdir()
        (work / "docs" / "cats.md").write_text("# Cats\n\nCats sleep 12 to 16 hours a day.\n")
        engine = await open_database(sqlite_url(str(work / "jobs.sqlite3")))
        embedder = OnnxMiniLMEmbedder()
        kb = KnowledgeBase(catalogue(engine), open_chroma(work / "chroma", None), embedder,
                           KnowledgeBaseSettings())
        await kb.index([work / "docs"], "bench")
        writer = FailingWriter()
        jobs = job_service(engine, kb, embedder, writer)
        request = ResearchRequest(question="How long do cats sleep?", tenant="bench",
                                  bypass_cache=True)

        async def fail(count: int) -> None:
            for _ in range(count):
                job_id = await jobs.submit(request)
                job = await jobs.wait(job_id)
                assert job.status.value == "failed", job.status

        await fail(100)  # warm: imports, caches, the first connections
        gc.collect()
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        process = psutil.Process()
        rows: list[list[object]] = []
        done = 0
        for step in (args.jobs // 4, args.jobs // 4, args.jobs // 2):
            await fail(step)
            done += step
            gc.collect()
            alive = sum(ref() is not None for ref in writer.raised)
            heap = (tracemalloc.get_traced_memory()[0] - base) / 2**20
            rows.append([done, heap, process.memory_info().rss / 2**20, alive,
                         heap * 1024 / done])
        await engine.dispose()
    title = "job service over Researcher" if hasattr(jobs, "research") \
        else "job service over ResearchPipeline"
    table(f"Failed jobs in one process ({title})",
          ["failed jobs", "heap growth MB", "RSS MB", "exceptions still reachable",
           "KB per job"], rows)


if __name__ == "__main__":
    asyncio.run(main())
