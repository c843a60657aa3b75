"""A process's first knowledge-base search, as the knowledge base grows.

    .venv/bin/python bench/kb_cold.py [--sizes 1000,5000,20000,50000] [--baseline REF]
        [--postgres URL] [--warm 10]

For each size, a tenant of that many chunks (~250 generated words each, 50 to a file, with a
Zipf-like vocabulary) beside a second tenant of 1,000, so that every table holds more than
one tenant. Indexing through the real embedder runs at ~30 chunks/s, so the data is written
the fast way, but in the stores' own formats: the catalogue rows through
`KnowledgeCatalogue.add_file` (as an index run leaves them), and each chunk's vector into its
Chroma collection through `VectorCollection.upsert`. The vectors are not each chunk's own
embedding: 128 generated chunks are embedded for real and every chunk gets one of those
mixed half and half with Gaussian noise (then normalised), so the HNSW graph holds distinct,
spread-out points. Each process then searches the tenant once to fill the BM25 index cache
(`index-cache` in the data dir, as `bot.wiring` opens it).

Then, in a fresh process each: the first search with the BM25 index cached (`--repeat`
processes, the median) and `--warm` searches after it in each (p50 of them all), and the
first search with the cache emptied (the index rebuilt). "open" is opening the database,
Chroma and the embedder; "first" is the first `KnowledgeBase.search` alone. Every search is
hybrid (BM25 and dense).

`--baseline REF` runs the same on git revision REF (a temporary worktree; each checkout builds
its own data with its own code, so that its own schema is measured) and prints both.
`--postgres URL` runs every size on that PostgreSQL database too: the bench DROPS the
researchbot tables there, so give it a database of its own.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
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
HERE = Path(__file__).resolve().parent
# A child measures the checkout it is given (--code); the parent, this one.
CODE = Path(sys.argv[sys.argv.index("--code") + 1]) if "--code" in sys.argv else HERE.parent
sys.path.insert(0, str(CODE))

import numpy as np  # noqa: E402

TENANT = "bench"
NEIGHBOUR = "neighbour"
NEIGHBOUR_CHUNKS = 1000
PER_FILE = 50
WORDS_PER_CHUNK = 250
REAL_VECTORS = 128


# ---- generated data (a child, on the checkout being measured) ------------------------------

class Words:
    """Made-up words with a Zipf-like spread, like a real vocabulary's."""

    def __init__(self, seed: int, size: int = 20000) -> None:
        self._rng = np.random.default_rng(seed)
        syllables = [c + v for c in "bcdfghklmnprstvz" for v in "aeiou"]
        picks = self._rng.integers(0, len(syllables), size=(size, 3))
        self.vocabulary = np.array(["".join(syllables[i] for i in row) for row in picks])
        weights = 1.0 / np.arange(1, size + 1)
        self._cumulative = np.cumsum(weights / weights.sum())

    def texts(self, count: int, words: int) -> list[str]:
        picks = np.searchsorted(self._cumulative, self._rng.random((count, words)))
        picks = np.minimum(picks, len(self.vocabulary) - 1)
        return [" ".join(row) for row in self.vocabulary[picks]]

    def query(self) -> str:
        """Three words from the middle of the vocabulary: rare enough to rank, common enough
        to be found."""
        return " ".join(self.vocabulary[self._rng.integers(20, 2000, size=3)])


def queries(count: int) -> list[str]:
    words = Words(99)
    return [words.query() for _ in range(count)]


async def write_tenant(catalogue: Any, collection: Any, tenant: str, chunks: int,
                       words: Words, bases: np.ndarray, rng: np.random.Generator) -> None:
    from core.store.catalogue import CatalogueChunk, CatalogueFile

    for number in range(0, chunks, PER_FILE):
        file_id = f"{tenant}-{number // PER_FILE}"
        count = min(PER_FILE, chunks - number)
        texts = words.texts(count, WORDS_PER_CHUNK)
        ids = [f"{file_id}-{n}" for n in range(count)]
        mixed = bases[rng.integers(0, len(bases), size=count)] \
            + rng.normal(size=(count, bases.shape[1])) / np.sqrt(bases.shape[1])
        vectors = (mixed / np.linalg.norm(mixed, axis=1, keepdims=True)).astype(np.float32)
        await collection.upsert(ids, vectors, [{"file_id": file_id} for _ in ids])
        file = CatalogueFile(path=f"/docs/{tenant}/{file_id}.md", file_id=file_id,
                             sha256="0" * 64, title=" ".join(words.texts(1, 4)), author=None,
                             published=None, words=WORDS_PER_CHUNK * count)
        await catalogue.add_file(tenant, file, [
            CatalogueChunk(id=chunk_id, ordinal=n, text=text, location=f"part {n}")
            for n, (chunk_id, text) in enumerate(zip(ids, texts, strict=True))])


async def build(data: Path, url: str, chunks: int) -> dict[str, Any]:
    from core.retrieval.embedding import OnnxMiniLMEmbedder
    from core.retrieval.vectors import VectorCollection, open_chroma
    from core.store.catalogue import KnowledgeCatalogue
    from core.store.database import metadata, open_database

    if url.startswith("postgresql"):
        from sqlalchemy.ext.asyncio import create_async_engine

        probe = create_async_engine(url)
        async with probe.begin() as connection:
            await connection.run_sync(metadata.drop_all)
        await probe.dispose()
    engine = await open_database(url)
    chroma = open_chroma(data / "chroma", None)
    words = Words(1)
    bases = OnnxMiniLMEmbedder().embed(words.texts(REAL_VECTORS, WORDS_PER_CHUNK))
    rng = np.random.default_rng(2)
    catalogue = KnowledgeCatalogue(engine)
    started = time.perf_counter()
    for tenant, size in ((NEIGHBOUR, NEIGHBOUR_CHUNKS), (TENANT, chunks)):
        await write_tenant(catalogue, VectorCollection(chroma, "kb", tenant), tenant, size,
                           words, bases, rng)
    written = time.perf_counter() - started
    chroma.close()
    await engine.dispose()
    return {"write_s": written}


# ---- one process's first search (a child, on the checkout being measured) -----------------

async def first_search(data: Path, url: str, warm: int) -> dict[str, Any]:
    import diskcache

    from core.config import KnowledgeBaseSettings
    from core.retrieval.embedding import OnnxMiniLMEmbedder
    from core.retrieval.kb.knowledge_base import KnowledgeBase
    from core.retrieval.vectors import open_chroma
    from core.store.catalogue import KnowledgeCatalogue
    from core.store.database import open_database

    asked = queries(warm + 1)
    started = time.perf_counter()
    engine = await open_database(url)
    chroma = open_chroma(data / "chroma", None)
    index_cache = diskcache.Cache(str(data / "index-cache"), size_limit=2**30)
    kb = KnowledgeBase(KnowledgeCatalogue(engine), chroma, OnnxMiniLMEmbedder(),
                       KnowledgeBaseSettings(), index_cache)
    opened = time.perf_counter()
    hits = await kb.search(asked[0], TENANT)
    first = time.perf_counter() - opened
    times = []
    for question in asked[1:]:
        began = time.perf_counter()
        await kb.search(question, TENANT)
        times.append((time.perf_counter() - began) * 1000)
    result = {"open_s": opened - started, "first_s": first, "hits": len(hits),
              "warm_ms": times, "rss_mb": rss_mb()}
    index_cache.close()
    chroma.close()
    await engine.dispose()
    return result


def rss_mb() -> float:
    import psutil

    return float(psutil.Process().memory_info().rss) / 2**20


# ---- the parent: processes, checkouts, the table -------------------------------------------

def child(code: Path, *arguments: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--code", str(code),
                           *arguments], cwd=code, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(code)})
    if done.returncode:
        raise RuntimeError(f"{arguments[0]} failed on {code}:\n{done.stderr[-3000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def measure(code: Path, url_template: str, size: int, args: argparse.Namespace
            ) -> dict[str, Any]:
    """Data of `size` chunks written by the checkout at `code`, and its first searches."""
    data = Path(tempfile.mkdtemp(prefix="kb-cold-"))
    try:
        common = ["--data", str(data), "--url", url_template.format(data=data)]
        built = child(code, "--build", str(size), *common)
        child(code, "--first", *common, "--warm", "0")  # fills the BM25 index cache
        cached = [child(code, "--first", *common, "--warm", str(args.warm))
                  for _ in range(args.repeat)]
        shutil.rmtree(data / "index-cache")
        cold = child(code, "--first", *common, "--warm", "0")
    finally:
        shutil.rmtree(data, ignore_errors=True)
    return {"write_s": built["write_s"],
            "open_s": statistics.median(r["open_s"] for r in cached),
            "cached_s": statistics.median(r["first_s"] for r in cached),
            "cold_s": cold["first_s"],
            "warm_p50_ms": statistics.median(t for r in cached for t in r["warm_ms"]),
            "rss_mb": statistics.median(r["rss_mb"] for r in cached)}


def measure_all(checkouts: dict[str, Path], databases: dict[str, str], sizes: list[int],
                args: argparse.Namespace) -> None:
    """Each size on each database, the checkouts one after the other, in turn first (paired
    in time: the machine's load drifts)."""
    rows: list[list[object]] = []
    for database, url_template in databases.items():
        for number, size in enumerate(sizes):
            order = list(checkouts.items())
            results = {}
            for name, code in order[::-1] if number % 2 else order:
                results[name] = measure(code, url_template, size, args)
                print(f"{name} {database} {size}: {results[name]}", file=sys.stderr,
                      flush=True)
            for name in checkouts:
                got = results[name]
                rows.append([database, size, name, got["cached_s"],
                             got["cached_s"] / size * 1e6, got["cold_s"], got["warm_p50_ms"],
                             got["open_s"], got["rss_mb"]])
    from bench.tables import table

    table(f"First search of a fresh process ({os.cpu_count()} cores; with the BM25 index "
          f"cached: median of {args.repeat} processes, and the p50 of their {args.warm} "
          "searches after the first)",
          ["database", "chunks", "code", "first search s, BM25 cached", "µs per chunk",
           "first search s, BM25 rebuilt", "warm search p50 ms",
           "open s", "RSS after first search MB"], rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,5000,20000,50000")
    parser.add_argument("--baseline", help="a git revision to measure alongside")
    parser.add_argument("--postgres", help="a PostgreSQL URL whose tables may be dropped")
    parser.add_argument("--warm", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--code", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--build", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--first", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.build is not None:
        print(json.dumps(asyncio.run(build(args.data, args.url, args.build))))
        return
    if args.first:
        print(json.dumps(asyncio.run(first_search(args.data, args.url, args.warm))))
        return
    databases = {"sqlite": "sqlite+aiosqlite:///{data}/store.sqlite3"}
    if args.postgres:
        databases["postgresql"] = args.postgres
    sizes = [int(size) for size in args.sizes.split(",")]
    checkouts: dict[str, Path] = {}
    if args.baseline:
        base = Path(tempfile.mkdtemp(prefix="kb-cold-baseline-"))
        subprocess.run(["git", "worktree", "add", "--detach", str(base), args.baseline],
                       cwd=HERE.parent, check=True, capture_output=True)
        checkouts[args.baseline] = base
    checkouts["this"] = HERE.parent
    try:
        measure_all(checkouts, databases, sizes, args)
    finally:
        if args.baseline:
            subprocess.run(["git", "worktree", "remove", "--force", str(base)],
                           cwd=HERE.parent, check=False, capture_output=True)
            shutil.rmtree(base, ignore_errors=True)

if __name__ == "__main__":
    main()
