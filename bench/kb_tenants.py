"""Many tenants in one knowledge base: one tenant's rebuilds against the others' searches, and
memory with many tenants.

    .venv/bin/python bench/kb_tenants.py [--small 20] [--large-chunks 5000] [--searches 400]
        [--concurrency 10] [--rss-tenants 200] [--rss-chunks 200]

1. Latency. `--small` tenants with a small corpus each (the test corpus, indexed for real) and
   one tenant with `--large-chunks` chunks of generated text, written straight into the
   catalogue (its rebuild reads every row and builds BM25; it needs no vectors). The small
   tenants' searches run `--concurrency` at a time, once with nothing else going on and once
   while the large tenant's catalogue changes and is searched again and again, so that it is
   rebuilt back to back. "one lock" is the code before per-tenant loading (one lock for every
   tenant, held during a rebuild; `GlobalLockCorpora` below reproduces it), "per tenant" the
   code now.
2. Memory. `--rss-tenants` tenants of `--rss-chunks` generated chunks each, each searched once
   in a process of its own: RSS growth with `max_loaded_tenants` 64 against no cap.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import shutil
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

from bench.tables import table
from core.config import KnowledgeBaseSettings
from core.retrieval.embedding import Embedder, OnnxMiniLMEmbedder
from core.retrieval.kb.corpus import Corpus, TenantCorpora
from core.retrieval.kb.knowledge_base import KnowledgeBase
from core.retrieval.kb.search import KnowledgeSearch
from core.retrieval.vectors import TenantCollections, VectorStore, open_chroma
from core.store.catalogue import CatalogueChunk, CatalogueFile, KnowledgeCatalogue
from core.store.database import open_database, sqlite_url
from tests.support.corpus import CORPUS

LARGE = "large"
QUESTIONS = ["How many hours a day do cats sleep?", "Which city did Mount Vesuvius bury?",
             "How much caffeine is in black tea?", "Why does sourdough bread taste sour?"]
UNCAPPED = 10**9


class GlobalLockCorpora(TenantCorpora):
    """The code before per-tenant loading: one lock for every tenant, held while a tenant's
    corpus is rebuilt, and every corpus kept."""

    def __init__(self, catalogue: KnowledgeCatalogue, settings: KnowledgeBaseSettings) -> None:
        super().__init__(catalogue, settings)
        self._generations = catalogue
        self._lock = asyncio.Lock()
        self._corpora: dict[str, Corpus] = {}

    async def get(self, tenant: str, generation: int | None = None) -> Corpus:
        async with self._lock:
            generation = await self._generations.generation(tenant)
            cached = self._corpora.get(tenant)
            if cached is not None and cached.generation == generation:
                return cached
            corpus = await self.build(tenant, generation)
            self._corpora[tenant] = corpus
            return corpus


class GlobalLockKnowledgeBase:
    """Search as it was before per-tenant loading (nothing is indexed through it)."""

    def __init__(self, catalogue: KnowledgeCatalogue, vectors: VectorStore, embedder: Embedder,
                 settings: KnowledgeBaseSettings) -> None:
        self.corpora = GlobalLockCorpora(catalogue, settings)
        self._search = KnowledgeSearch(catalogue, self.corpora, TenantCollections(vectors, "kb"),
                                       embedder, settings)

    async def search(self, query: str, tenant: str) -> Any:
        return await self._search.search(query, tenant)


# ---- generated text ------------------------------------------------------------------------

class Words:
    """Made-up words with a Zipf-like spread, like a real vocabulary's."""

    def __init__(self, seed: int, size: int = 20000) -> None:
        self._rng = np.random.default_rng(seed)
        syllables = [c + v for c in "bcdfghklmnprstvz" for v in "aeiou"]
        picks = self._rng.integers(0, len(syllables), size=(size, 3))
        self._vocabulary = np.array(["".join(syllables[i] for i in row) for row in picks])
        weights = 1.0 / np.arange(1, size + 1)
        self._weights = weights / weights.sum()

    def text(self, words: int) -> str:
        return " ".join(self._rng.choice(self._vocabulary, size=words, p=self._weights))


async def write_catalogue(catalogue: KnowledgeCatalogue, tenant: str, chunks: int,
                          words: Words, per_file: int = 50) -> None:
    """`chunks` chunks of ~250 words straight into the catalogue, as an index run leaves them."""
    for number in range(0, chunks, per_file):
        file_id = f"{tenant}-{number // per_file}"[-32:]
        count = min(per_file, chunks - number)
        file = CatalogueFile(path=f"/docs/{tenant}/{file_id}.md", file_id=file_id,
                             sha256="0" * 64, title=words.text(4), author=None,
                             published=None, words=250 * count)
        await catalogue.add_file(tenant, file, [
            CatalogueChunk(id=f"{file_id}-{n}", ordinal=n, text=words.text(250),
                           location=None) for n in range(count)])


async def change(catalogue: KnowledgeCatalogue, tenant: str) -> None:
    """What an index run leaves for search: a new catalogue generation (here, the removal of
    a file that was never there)."""
    await catalogue.forget_file(tenant, "/docs/nowhere.md", "nowhere", worker="bench")
    await catalogue.settle(tenant, "nowhere")


# ---- 1. latency ----------------------------------------------------------------------------

async def latency(args: argparse.Namespace, workdir: Path) -> None:
    engine = await open_database(sqlite_url(str(workdir / "bench.sqlite3")))
    chroma = open_chroma(workdir / "chroma", None)
    embedder = OnnxMiniLMEmbedder()
    settings = KnowledgeBaseSettings()
    small = [f"small-{n}" for n in range(args.small)]
    catalogue = KnowledgeCatalogue(engine)
    setup = KnowledgeBase(catalogue, chroma, embedder, settings)
    docs = workdir / "docs"
    docs.mkdir()
    for name, text in CORPUS.items():
        (docs / name).write_text(text, encoding="utf-8")
    for tenant in small:
        await setup.index([docs], tenant)
    await write_catalogue(catalogue, LARGE, args.large_chunks, Words(1))
    rows = []
    for label, kind in (("one lock", GlobalLockKnowledgeBase), ("per tenant", KnowledgeBase)):
        kb = kind(catalogue, chroma, embedder, settings)
        for tenant in [*small, LARGE]:  # everything loaded once, as in a running bot
            await kb.search(QUESTIONS[0], tenant)
        rows.append([label, "idle",
                     *await measure(kb, catalogue, small, args, rebuilding=False)])
        rows.append([label, "rebuilt back to back",
                     *await measure(kb, catalogue, small, args, rebuilding=True)])
    table(f"1. Search latency of {args.small} small tenants, {args.concurrency} searches at a "
          f"time, while a tenant of {args.large_chunks} chunks is idle or rebuilt back to back "
          f"({args.searches} searches, {os.cpu_count()} cores)",
          ["code", "large tenant", "small p50 ms", "small p99 ms", "small max ms",
           "large tenant's search p50 ms", "rebuilds", "change to new corpus s"], rows)
    chroma.close()
    await engine.dispose()


async def measure(kb: Any, catalogue: KnowledgeCatalogue, small: list[str],
                  args: argparse.Namespace, rebuilding: bool) -> list[object]:
    stop = asyncio.Event()
    rebuilds: list[float] = []
    large_searches: list[float] = []
    rebuilder = asyncio.create_task(rebuild_until(kb, catalogue, stop, rebuilds, large_searches)
                                    if rebuilding else stop.wait())
    times = await search_small(kb, small, args.searches, args.concurrency)
    stop.set()
    await rebuilder
    return [pct(times, 50), pct(times, 99), max(times),
            pct(large_searches, 50) if large_searches else "-", len(rebuilds),
            float(np.mean(rebuilds)) if rebuilds else "-"]


async def rebuild_until(kb: Any, catalogue: KnowledgeCatalogue, stop: asyncio.Event,
                        rebuilds: list[float], large_searches: list[float]) -> None:
    while not stop.is_set():
        await change(catalogue, LARGE)
        started = time.perf_counter()
        await kb.search(QUESTIONS[1], LARGE)  # one lock: rebuilds; per tenant: starts one
        large_searches.append((time.perf_counter() - started) * 1000)
        rebuild = kb.corpora.rebuild_of(LARGE)
        if rebuild is not None:
            await rebuild
        rebuilds.append(time.perf_counter() - started)


async def search_small(kb: Any, small: list[str], searches: int,
                       concurrency: int) -> list[float]:
    times: list[float] = []
    gate = asyncio.Semaphore(concurrency)

    async def one(n: int) -> None:
        async with gate:
            started = time.perf_counter()
            await kb.search(QUESTIONS[n % len(QUESTIONS)], small[n % len(small)])
            times.append((time.perf_counter() - started) * 1000)

    await asyncio.gather(*(one(n) for n in range(searches)))
    return times


def pct(values: list[float], q: int) -> float:
    return float(np.percentile(values, q))


# ---- 2. memory -----------------------------------------------------------------------------

async def write_rss_tenants(workdir: Path, tenants: int, chunks: int) -> None:
    engine = await open_database(sqlite_url(str(workdir / "rss.sqlite3")))
    catalogue = KnowledgeCatalogue(engine)
    words = Words(2)
    for n in range(tenants):
        await write_catalogue(catalogue, f"t{n}", chunks, words)
    await engine.dispose()


async def rss_child(workdir: Path, tenants: int, cap: int) -> dict[str, Any]:
    """Run in a process of its own: RSS before and after searching every tenant once."""
    engine = await open_database(sqlite_url(str(workdir / "rss.sqlite3")))
    chroma = open_chroma(workdir / "rss-chroma", None)
    kb = KnowledgeBase(KnowledgeCatalogue(engine), chroma, OnnxMiniLMEmbedder(),
                       KnowledgeBaseSettings(max_loaded_tenants=cap))
    await kb.search(QUESTIONS[0], "t0")  # models, bm25s and the store loaded
    gc.collect()
    before = rss_mb()
    for n in range(tenants):
        await kb.search(QUESTIONS[n % len(QUESTIONS)], f"t{n}")
    gc.collect()
    result = {"before": before, "after": rss_mb(), "loaded": len(kb.corpora.loaded_tenants())}
    chroma.close()
    await engine.dispose()
    return result


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def memory(args: argparse.Namespace, workdir: Path) -> None:
    asyncio.run(write_rss_tenants(workdir, args.rss_tenants, args.rss_chunks))
    rows = []
    for label, cap in (("64 (default)", 64), ("none", UNCAPPED)):
        done = subprocess.run([sys.executable, __file__, "--rss-child", str(workdir),
                               "--rss-tenants", str(args.rss_tenants), "--cap", str(cap)],
                              capture_output=True, text=True, check=True)
        got = json.loads(done.stdout.strip().splitlines()[-1])
        rows.append([label, got["loaded"], got["before"], got["after"],
                     got["after"] - got["before"]])
    table(f"2. Memory: {args.rss_tenants} tenants of {args.rss_chunks} chunks, each searched "
          "once (a process each)", ["max_loaded_tenants", "loaded after", "RSS before MB",
                                    "RSS after MB", "growth MB"], rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--small", type=int, default=20)
    parser.add_argument("--large-chunks", type=int, default=5000)
    parser.add_argument("--searches", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=10)
    parser.add_argument("--rss-tenants", type=int, default=200)
    parser.add_argument("--rss-chunks", type=int, default=200)
    parser.add_argument("--rss-child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--cap", type=int, default=64, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rss_child:
        print(json.dumps(asyncio.run(rss_child(args.rss_child, args.rss_tenants, args.cap))))
        return
    workdir = Path(tempfile.mkdtemp(prefix="kb-tenants-"))
    try:
        asyncio.run(latency(args, workdir))
        memory(args, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
