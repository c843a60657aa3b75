"""Sharing the vector store between processes on one machine: what each way gives and costs.

    .venv/bin/python bench/store_sharing.py [--vectors 20000] [--searches 200]

Three ways: the embedded PersistentClient as before (each process on its own), the embedded
store with a file lock and a reopen after another process's writes (core.retrieval.vectors.
SharedLocalChroma, the default now), and a Chroma server (`chroma run`) every process talks to.

1. Questions that fail: a reader holds the knowledge base open (as a bot does) while
   `researchbot index` adds, changes and removes files in another process; then it asks 12.
2. Cost: a collection of N random 384-d vectors; one search = the 40 nearest plus those 40
   with their vectors (what KnowledgeBase.search asks of the store), steady and right after
   another process wrote; one write = an upsert of 100 vectors.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from bench.tables import table
from core.errors import StoreError
from core.retrieval.vectors import SharedLocalChroma, VectorCollection, VectorStore

MODES = ("embedded, as before", "embedded, lock + reopen", "Chroma server")
QUESTIONS = ["How long do cats sleep?", "What raises the tides?", "Which eruption buried Pompeii?",
             "What gives sourdough bread its sour taste?"] * 3
WRITER = """
import sys
sys.path.insert(0, {root!r})
import numpy as np
from pathlib import Path
from core.retrieval.vectors import open_chroma
store = open_chroma(Path({path!r}), {url!r})
store.write({name!r}, "upsert", ids=["w%d" % {n}],
                         embeddings=np.random.default_rng({n}).normal(size=(1, 384)).tolist())
"""


def open_store(mode: str, path: Path, url: str) -> VectorStore:
    import chromadb
    from chromadb.config import Settings

    settings = Settings(anonymized_telemetry=False, allow_reset=False)
    if mode == MODES[0]:
        return VectorStore(chromadb.PersistentClient(path=str(path), settings=settings))
    if mode == MODES[1]:
        return SharedLocalChroma(path, settings)
    port = int(url.rsplit(":", 1)[1])
    return VectorStore(chromadb.HttpClient(host="127.0.0.1", port=port, settings=settings))


def start_server(path: Path, port: int) -> tuple[subprocess.Popen[bytes], float]:
    started = time.perf_counter()
    server = subprocess.Popen([str(Path(sys.executable).parent / "chroma"), "run", "--path",
                               str(path), "--port", str(port)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    for _ in range(400):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v2/heartbeat", timeout=1)
            return server, time.perf_counter() - started
        except OSError:
            time.sleep(0.025)
    raise RuntimeError("chroma run did not start")


async def index(docs: Path, env: dict[str, str]) -> None:
    """`researchbot index DOCS` in a process of its own."""
    from tests.support import researchbot

    done = await researchbot.run_async("index", str(docs), env=env)
    if done.returncode != 0:
        raise RuntimeError(f"indexing failed: {done.stderr[-2000:]}")


async def failing_questions(mode: str, workdir: Path, url: str) -> int:
    """How many of 12 questions fail in a reader after another process's index run."""
    from core.config import KnowledgeBaseSettings
    from core.retrieval.embedding import OnnxMiniLMEmbedder
    from core.retrieval.kb.knowledge_base import KnowledgeBase
    from core.store.catalogue import KnowledgeCatalogue
    from core.store.database import open_database, sqlite_url
    from tests.support.corpus import CORPUS, write_documents

    data, docs = workdir / "data", write_documents(workdir / "docs")
    env = {**os.environ, "RESEARCHBOT_DATA_DIR": str(data),
           "RESEARCHBOT_PIPELINE__LOCAL_ONLY": "true"}
    if mode == MODES[2]:
        env["RESEARCHBOT_KNOWLEDGE_BASE__CHROMA_URL"] = url
    await index(docs, env)
    engine = await open_database(sqlite_url(str(data / "researchbot.sqlite3")))
    store = open_store(mode, data / "chroma", url)
    kb = KnowledgeBase(KnowledgeCatalogue(engine), store, OnnxMiniLMEmbedder(threads=2),
                       KnowledgeBaseSettings())
    await kb.search(QUESTIONS[0], "local")
    (docs / "cats.md").write_text(CORPUS["cats.md"] + "\nCats purr.\n")
    (docs / "tea.txt").unlink()
    (docs / "moon.md").write_text("# Moon\n\nThe Moon's gravity raises the tides.\n")
    await index(docs, env)
    failed = 0
    for question in QUESTIONS:
        try:
            await kb.search(question, "local")
        except StoreError:
            failed += 1
    store.close()
    await engine.dispose()
    return failed


def costs(mode: str, path: Path, url: str, vectors: int, searches: int) -> list[object]:
    rng = np.random.default_rng(7)
    store = open_store(mode, path, url)
    name = VectorCollection(store, "bench", "t").name
    for start in range(0, vectors, 5000):
        block = rng.normal(size=(min(5000, vectors - start), 384)).astype(np.float32)
        store.write(name, "upsert", ids=[f"v{start + i}" for i in range(len(block))],
                    embeddings=block.tolist())
    probes = rng.normal(size=(searches, 384)).astype(np.float32)

    def search(probe: np.ndarray) -> None:
        hits = store.read(name, "query", query_embeddings=[probe.tolist()], n_results=40,
                          include=[])
        store.read(name, "get", ids=hits["ids"][0], include=["embeddings"])

    steady = timed(search, list(probes))
    after_write, seen = [], 0
    for n in range(5):
        writer = WRITER.format(root=str(Path(__file__).resolve().parent.parent), path=str(path),
                               url=url if mode == MODES[2] else None, name=name, n=n)
        subprocess.run([sys.executable, "-c", writer], check=True, capture_output=True)
        after_write += timed(search, [probes[n]])
        try:
            got = store.read(name, "get", ids=[f"w{n}"], include=["embeddings"])
            seen += len(got["ids"]) == 1
        except Exception:  # the embedded store as before: "Error finding id"
            pass
    batch = rng.normal(size=(100, 384)).astype(np.float32).tolist()
    writes = timed(lambda n: store.write(name, "upsert", ids=[f"x{n}-{i}" for i in range(100)],
                                         embeddings=batch), list(range(20)))
    store.close()
    return [mode, f"{pct(steady, 50):.1f}", f"{pct(steady, 95):.1f}",
            f"{statistics.median(after_write):.1f}", f"{seen} of 5", f"{pct(writes, 50):.1f}"]


def timed(action: Callable[[Any], None], inputs: list[Any]) -> list[float]:
    times = []
    for item in inputs:
        started = time.perf_counter()
        action(item)
        times.append((time.perf_counter() - started) * 1000)
    return times


def pct(values: list[float], q: int) -> float:
    return float(np.percentile(values, q))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--vectors", type=int, default=20000)
    parser.add_argument("--searches", type=int, default=200)
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="store-sharing-"))
    try:
        server, start_s = start_server(workdir / "server", 18765)
        rss = int(subprocess.run(["ps", "-o", "rss=", "-p", str(server.pid)],
                                 capture_output=True, text=True).stdout.strip() or 0)
        url = "http://127.0.0.1:18765"
        try:
            failures: list[list[object]] = [
                [mode, f"{asyncio.run(failing_questions(mode, workdir / f'q{n}', url))} of 12"]
                for n, mode in enumerate(MODES)]
            table("Questions failing in a reader after another process's index run",
                  ["store", "failed"], failures)
            rows = [costs(mode, workdir / f"c{n}", url, args.vectors, args.searches)
                    for n, mode in enumerate(MODES)]
        finally:
            server.terminate()
            server.wait(10)
        table(f"Cost per operation, ms ({args.vectors} vectors of 384 dimensions, 2 cores)",
              ["store", "search p50", "search p95",
                               "first search after another process wrote",
                               "sees that write", "write 100 p50"],
              rows)
        print(f"\nChroma server: ready {start_s:.2f} s after `chroma run`, {rss / 1024:.0f} MB "
              "resident at start")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
