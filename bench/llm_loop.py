"""The LLM research loop per depth tier, against the scripted OpenAI-compatible server.

    .venv/bin/python bench/llm_loop.py [--latency-ms 300] [--source-ms 200]

Every model call takes --latency-ms (the scripted server sleeps), a remote source takes
--source-ms, and reflection asks for another round until the tier's round budget is spent,
so every tier runs all its rounds. Prints LLM calls, tokens and wall time per tier, and the
overhead: wall time / the latencies on the critical path (sequential steps, concurrent calls
counted once per wave of `advanced.llm.concurrency`).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.run import table
from bot.wiring import build_jobs, build_research, local_sources
from core.answer.fact_check import VERIFY_BATCH
from core.config import KnowledgeBaseSettings, LLMSettings, PipelineSettings
from core.models import Depth, ResearchRequest
from core.retrieval.embedding import OnnxMiniLMEmbedder
from core.retrieval.kb.knowledge_base import KnowledgeBase
from core.retrieval.vectors import open_chroma
from core.store.catalogue import KnowledgeCatalogue
from core.store.database import open_database, sqlite_url
from tests.support.chat_harness import SlowSource
from tests.support.corpus import CORPUS
from tests.support.fake_openai import Chat, FakeOpenAI
from tests.support.scripted_analyst import script


def _reflect_until(rounds: int) -> Any:
    seen: list[int] = []

    def reflect(chat: Chat) -> dict[str, Any]:
        seen.append(1)
        done = len(seen) >= rounds
        return {"items": [{"item": 1, "status": "satisfied" if done else "partial"}],
                "sufficient": done, "confidence": 0.5, "gaps": [] if done else ["more"],
                "new_queries": [] if done else [{"text": f"cats sleep facts {len(seen)}"}]}
    return reflect


async def run_tier(workdir: Path, depth: Depth, latency_s: float, source_s: float
                   ) -> list[Any]:
    engine = await open_database(sqlite_url(str(workdir / f"{depth.value}.sqlite3")))
    chroma = open_chroma(workdir / "chroma", None)
    embedder = OnnxMiniLMEmbedder()
    knowledge_base = KnowledgeBase(KnowledgeCatalogue(engine), chroma, embedder,
                                   KnowledgeBaseSettings())
    corpus = workdir / "corpus"
    if not corpus.exists():
        corpus.mkdir()
        for name, text in CORPUS.items():
            (corpus / name).write_text(text, encoding="utf-8")
    await knowledge_base.index([corpus], "bench")
    fake = script(FakeOpenAI(latency_s=latency_s))
    await fake.start()
    settings = LLMSettings(fast_model="openai/fast", strong_model="openai/strong",
                           api_base=fake.base_url, api_key="test-key")
    budget = getattr(settings, depth.value)
    fake.script["reflect"] = _reflect_until(budget.iterations)
    fake.script["plan"] = lambda chat: {"queries": [  # every source, the slow one too
        {"text": "cats sleep hours", "sources": []}]}
    sources = {**local_sources(knowledge_base, PipelineSettings()),
               "remote": SlowSource(source_s)}
    jobs = build_jobs(build_research(sources, embedder, PipelineSettings(), settings), engine)
    # Warm the embedding model and litellm's imports outside the measurement.
    await jobs.answer(await jobs.submit(ResearchRequest(
        question="What is a volcano?", tenant="bench", depth=Depth.QUICK, bypass_cache=True)))
    fake.chats.clear()
    fake.script["reflect"] = _reflect_until(budget.iterations)
    started = time.perf_counter()
    job_id = await jobs.submit(ResearchRequest(
        question="How many hours a day do cats sleep?", tenant="bench", depth=depth,
        bypass_cache=True))
    await jobs.answer(job_id)
    wall = time.perf_counter() - started
    job = await jobs.result(job_id)
    await fake.stop()
    await engine.dispose()

    waves = 2  # understand, plan
    for round_ in job.trace.iterations:
        batches = math.ceil(round_.new_passages / settings.evidence_batch)
        waves += math.ceil(batches / settings.concurrency) + (1 if round_.reflection
                                                               else 0)
    waves += sum(1 for c in fake.chats if c.task == "compact")
    claims = job.metrics.get("claims_checked", 0)
    waves += 1 + math.ceil(math.ceil(claims / VERIFY_BATCH) / settings.concurrency)
    critical = waves * latency_s + len(job.trace.iterations) * source_s
    return [depth.value, job.metrics["rounds"], job.metrics["llm_calls"],
            job.metrics["tokens"], f"{wall:.2f}", f"{critical:.2f}", f"{wall / critical:.3f}"]


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency-ms", type=float, default=300)
    parser.add_argument("--source-ms", type=float, default=200)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for depth in (Depth.QUICK, Depth.STANDARD, Depth.DEEP):
            rows.append(await run_tier(Path(folder), depth, args.latency_ms / 1000,
                                       args.source_ms / 1000))
    table(f"LLM loop per tier: model calls take {args.latency_ms:g} ms, the remote source "
          f"{args.source_ms:g} ms", ["tier", "rounds", "LLM calls", "tokens", "wall s",
                                     "critical path s", "overhead"], rows)


if __name__ == "__main__":
    asyncio.run(main())
