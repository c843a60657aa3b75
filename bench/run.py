"""Benchmarks of issue 2 on the Python 3.11 HTML docs; prints tables.

    .venv/bin/python bench/run.py [--pages N] [--cache-sizes 10000,100000]

Installs Debian's python3.11-doc when the corpus is missing (needs root and the package
registry). Numbers are ratios measured in one run: the machine is shared and noisy.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from bench.questions import QUESTIONS
from bench.tables import table
from bot.wiring import build_jobs, build_research, local_sources
from core.answer.cache import SemanticAnswerCache
from core.config import CacheSettings, KnowledgeBaseSettings, PipelineSettings
from core.models import ResearchRequest
from core.retrieval.embedding import OnnxMiniLMEmbedder
from core.retrieval.kb.knowledge_base import KnowledgeBase
from core.retrieval.vectors import VectorCollection, open_chroma
from core.store.answers import CachedAnswerStore
from core.store.catalogue import KnowledgeCatalogue
from core.store.database import open_database, sqlite_url

DOCS = Path("/usr/share/doc/python3.11/html")


def ensure_corpus() -> None:
    if not DOCS.is_dir():
        subprocess.run(["apt-get", "install", "-y", "python3.11-doc"], check=True,
                       capture_output=True)


def pick_pages(limit: int | None, workdir: Path) -> Path:
    pages = sorted(p for p in DOCS.rglob("*.html") if "_static" not in p.parts)
    wanted = {DOCS / page for _, page in QUESTIONS}
    chosen = sorted(wanted) + [p for p in pages if p not in wanted]
    chosen = chosen[: limit or len(chosen)]
    target = workdir / "corpus"
    if target.exists():
        shutil.rmtree(target)
    for page in chosen:
        destination = target / page.relative_to(DOCS)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(page, destination)
    return target


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=None, help="index only N pages")
    parser.add_argument("--cache-sizes", default="10000,100000")
    parser.add_argument("--only-cache", action="store_true", help="run table 3 alone")
    parser.add_argument("--data-dir", type=Path, help="keep the stores here (a re-run reuses "
                        "the index: table 1 then measures an unchanged re-index)")
    args = parser.parse_args()
    workdir = args.data_dir or Path(tempfile.mkdtemp(prefix="researchbot-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    embedder = OnnxMiniLMEmbedder()
    engine = await open_database(sqlite_url(str(workdir / "bench.sqlite3")))
    chroma = open_chroma(workdir / "chroma", None)
    if not args.only_cache:
        ensure_corpus()
        corpus = pick_pages(args.pages, workdir)
        catalogue = KnowledgeCatalogue(engine)
        kb = KnowledgeBase(catalogue, chroma, embedder, KnowledgeBaseSettings())
        await bench_index_and_retrieval(kb, catalogue, embedder, corpus)
    await bench_cache_latency(engine, chroma, embedder, args.cache_sizes)
    if not args.only_cache:
        await bench_ask(engine, chroma, embedder, kb)
    await engine.dispose()
    if args.data_dir is None:
        shutil.rmtree(workdir, ignore_errors=True)


async def bench_index_and_retrieval(kb: KnowledgeBase, catalogue: KnowledgeCatalogue,
                                    embedder: OnnxMiniLMEmbedder, corpus: Path) -> None:
    # 1. Indexing vs embedding alone
    report = await kb.index([corpus], "bench")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if not report.added:
        table("1. Re-index of an unchanged corpus (stores reused from --data-dir)",
              ["documents", "seconds"], [[len(report.unchanged), report.seconds]])
    else:
        texts = [f"{p.title}\n{p.text}" for p in await catalogue.passages("bench")]
        started = time.perf_counter()
        embedder.embed(texts)
        embed_s = time.perf_counter() - started
        documents = len(report.added)
        table("1. Indexing", ["documents", "chunks", "index s", "docs/s", "chunks/s",
                              "embed-only s", "index/embed", "peak RSS MB"],
              [[documents, report.chunks, report.seconds, documents / report.seconds,
                report.chunks / report.seconds, embed_s, report.seconds / embed_s, peak_mb]])

    # 2. Retrieval quality
    quality = []
    for mode in ("bm25", "dense", "hybrid"):
        recall, reciprocal, latency = 0, 0.0, []
        for question, page in QUESTIONS:
            started = time.perf_counter()
            hits = await kb.search(question, "bench", limit=10, mode=mode)  # type: ignore[arg-type]
            latency.append(time.perf_counter() - started)
            pages = list(dict.fromkeys(str(Path(h.path or "").relative_to(corpus))
                                       for h in hits))
            if page in pages[:5]:
                recall += 1
            if page in pages:
                reciprocal += 1 / (pages.index(page) + 1)
        quality.append([mode, recall / len(QUESTIONS), reciprocal / len(QUESTIONS),
                        statistics.median(latency) * 1000])
    table(f"2. Retrieval quality ({len(QUESTIONS)} questions, page-level)",
          ["retriever", "recall@5", "MRR@10", "p50 ms"], quality)


async def bench_cache_latency(engine: Any, chroma: Any, embedder: OnnxMiniLMEmbedder,
                              sizes: str) -> None:
    latency_rows = []
    cache = SemanticAnswerCache(CachedAnswerStore(engine), chroma, embedder, CacheSettings())
    for size in (int(s) for s in sizes.split(",")):
        tenant = f"cache{size}"
        collection = VectorCollection(chroma, "cache", tenant)
        rng = np.random.default_rng(size)
        filler = rng.normal(size=(size, 384)).astype(np.float32)
        filler /= np.linalg.norm(filler, axis=1, keepdims=True)
        now = time.time()
        started = time.perf_counter()
        await collection.upsert([f"f{i}" for i in range(size)], filler,
                                [{"question": "", "created_at": now, "expires_at": now + 1e6,
                                  "scope": ""}] * size, ["{}"] * size)
        fill_s = time.perf_counter() - started
        timings = []
        for question, _ in QUESTIONS[:40] * 3:
            started = time.perf_counter()
            await cache.lookup(question, tenant)
            timings.append((time.perf_counter() - started) * 1000)
        latency_rows.append([size, fill_s, np.percentile(timings, 50),
                             np.percentile(timings, 99)])
    table("3. Cache lookup latency (miss path: exact get + embed + ANN query)",
          ["entries", "fill s", "p50 ms", "p99 ms"], latency_rows)


async def bench_ask(engine: Any, chroma: Any, embedder: OnnxMiniLMEmbedder,
                    kb: KnowledgeBase) -> None:
    jobs = build_jobs(build_research(local_sources(kb, PipelineSettings()), embedder,
                                     PipelineSettings(),
                                     cache=SemanticAnswerCache(CachedAnswerStore(engine),
                                                               chroma, embedder,
                                                               CacheSettings())), engine)
    miss, hit = [], []
    for question, _ in QUESTIONS[:8]:
        started = time.perf_counter()
        await jobs.answer(await jobs.submit(ResearchRequest(question=question,
                                                            tenant="bench")))
        miss.append(time.perf_counter() - started)
        started = time.perf_counter()
        cached = await jobs.answer(await jobs.submit(ResearchRequest(question=question,
                                                                     tenant="bench")))
        if cached.cached:  # an Insufficient answer (a small --pages corpus) is never cached
            hit.append(time.perf_counter() - started)
    table("4. ask: cache miss vs hit (8 questions)",
          ["miss p50 ms", "hit p50 ms", "miss/hit", "hits on the second ask"],
          [[statistics.median(miss) * 1000, statistics.median(hit) * 1000,
            statistics.median(miss) / statistics.median(hit), f"{len(hit)} of {len(miss)}"]])


if __name__ == "__main__":
    asyncio.run(main())
