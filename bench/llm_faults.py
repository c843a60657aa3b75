"""How many of a flawed model's fabrications reach the final answer.

    .venv/bin/python bench/llm_faults.py [--seeds 30] [--verifier-error 0.1]

The pipeline runs with a language model against the local OpenAI-compatible server playing
tests/support/flawed_model.py: it answers from the passages, but at the fault rate (0, 20%, 50%)
invents sentences, cites [99], leaves sentences out of its `claims`, writes uncited ones and
sometimes sends no `claims`; its verdicts are wrong at --verifier-error and sometimes missing.
Every question of the test corpus is asked once per seed. Prints, per fault rate: fabricated
sentences written / surviving, true cited sentences written / removed, true sentences written
without a valid citation (removed by rule; their words come back only when nothing the model
wrote held up and the answer is the sources' own sentences, "extractive answers"), invented
citations surviving, verdicts overruled by a verbatim quote, and the jobs whose claim check did
not run, with their confidence and whether they were cached.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.run import table
from bot.wiring import build_jobs, build_research, local_sources
from core.answer.cache import SemanticAnswerCache
from core.answer.references import DOCUMENT_MARKER, document_numbers
from core.config import CacheSettings, KnowledgeBaseSettings, LLMSettings, PipelineSettings
from core.models import Depth, ResearchRequest, ResearchResult
from core.retrieval.embedding import OnnxMiniLMEmbedder
from core.retrieval.kb.knowledge_base import KnowledgeBase
from core.retrieval.vectors import open_chroma
from core.store.answers import CachedAnswerStore
from core.store.catalogue import KnowledgeCatalogue
from core.store.database import open_database, sqlite_url
from tests.support.corpus import CORPUS
from tests.support.fake_openai import FakeOpenAI
from tests.support.flawed_model import FlawedModel, survivors

QUESTIONS = [
    "How many hours a day do domestic cats sleep?",
    "What amino acid do cats need in their diet?",
    "When are cats most active during the day?",
    "How much caffeine is in a cup of black tea and green tea?",
    "Why is black tea darker than green tea?",
    "When did Mount Vesuvius erupt and what did it bury?",
    "What causes explosive volcanic eruptions?",
    "Why does sourdough bread rise and taste sour?",
    "How long is a sourdough loaf baked in a covered pot, and how hot?",
    "Which plant do green tea and black tea come from?",
]


def invented_citations(result: ResearchResult) -> int:
    """Citation numbers in the answer that name no entry of its reference list."""
    numbers = {r.number for r in result.references}
    text = f"{result.answer.summary}\n{result.answer.detail}"
    return sum(1 for group in DOCUMENT_MARKER.finditer(text)
               for n in document_numbers(group.group(1)) if n not in numbers)


async def run_rate(workdir: Path, fault_rate: float, verifier_error: float, seeds: int,
                   embedder: Any) -> list[object]:
    engine = await open_database(sqlite_url(str(workdir / f"faults-{fault_rate}.sqlite3")))
    chroma = open_chroma(workdir / f"chroma-{fault_rate}", None)
    knowledge_base = KnowledgeBase(KnowledgeCatalogue(engine), chroma, embedder,
                                   KnowledgeBaseSettings())
    corpus = workdir / "corpus"
    if not corpus.exists():
        corpus.mkdir()
        for name, text in CORPUS.items():
            (corpus / name).write_text(text, encoding="utf-8")
    await knowledge_base.index([corpus], "bench")
    fake = FakeOpenAI()
    await fake.start()
    settings = LLMSettings(fast_model="openai/fast", strong_model="openai/strong",
                           api_base=fake.base_url, api_key="test-key", backoff_s=0.05)
    jobs = build_jobs(build_research(local_sources(knowledge_base, PipelineSettings()),
                                     embedder, PipelineSettings(), settings,
                                     cache=SemanticAnswerCache(CachedAnswerStore(engine),
                                                               chroma, embedder,
                                                               CacheSettings())), engine)
    counts: Counter[str] = Counter()
    unchecked: list[str] = []
    for seed in range(seeds):
        model = FlawedModel(fault_rate, verifier_error=verifier_error, seed=seed)
        model.install(fake)
        for question in QUESTIONS:
            model.written.clear()
            job_id = await jobs.submit(ResearchRequest(
                question=question, tenant="bench", depth=Depth.QUICK, bypass_cache=True))
            result = await jobs.answer(job_id)
            job = await jobs.result(job_id)
            kept = {id(w) for w in survivors(model, f"{result.answer.summary}\n"
                                                    f"{result.answer.detail}")}
            for w in model.written:
                if w.invented:
                    counts["fabricated"] += 1
                    counts["fabricated kept"] += id(w) in kept
                elif w.fault in ("cite99", "uncited"):
                    counts["true uncited"] += 1
                    counts["true uncited kept"] += id(w) in kept
                else:
                    counts["true"] += 1
                    counts["true removed"] += id(w) not in kept
            counts["invented citations"] += invented_citations(result)
            counts["extractive"] += result.answer.metadata.get("synthesizer") == "extractive"
            counts["jobs"] += 1
            counts["disagreements"] += job.metrics.get("verdict_disagreements", 0)
            counts["tokens"] += job.metrics.get("tokens", 0)
            if job.metrics.get("verification") == "not run":
                unchecked.append(f"{result.answer.confidence.value}/"
                                 f"{'cached' if job.metrics.get('cache_stored') else 'not cached'}")
    await fake.stop()
    await engine.dispose()

    def share(part: str, whole: str) -> str:
        percent = 100 * counts[part] / max(1, counts[whole])
        return f"{counts[part]} / {counts[whole]} ({percent:.1f}%)"

    return [f"{fault_rate:.0%}", counts["jobs"], share("fabricated kept", "fabricated"),
            share("true removed", "true"),
            f"{counts['true uncited']} ({counts['true uncited kept']} kept)",
            counts["extractive"],
            counts["invented citations"], counts["disagreements"],
            len(unchecked), ", ".join(f"{n}x {k}" for k, n in Counter(unchecked).items()) or "-",
            counts["tokens"] // max(1, counts["jobs"])]


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--verifier-error", type=float, default=0.1)
    args = parser.parse_args()
    embedder = OnnxMiniLMEmbedder()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for rate in (0.0, 0.2, 0.5):
            rows.append(await run_rate(Path(folder), rate, args.verifier_error, args.seeds,
                                       embedder))
    table(f"Flawed model, verifier error {args.verifier_error:.0%}, {len(QUESTIONS)} questions "
          f"x {args.seeds} seeds per fault rate",
          ["fault rate", "jobs", "fabricated kept", "true removed",
           "true w/o valid cite (text kept)", "extractive answers", "invented cites kept",
           "verdicts overruled",
           "check not run", "their confidence/cache", "tokens/job"], rows)


if __name__ == "__main__":
    asyncio.run(main())
