"""Chat front ends under a burst: N questions at once, research taking S seconds each.

    .venv/bin/python bench/chat_burst.py [--questions 50] [--research-seconds 2]

Slack: the real bolt app over HTTP on 127.0.0.1 with signed requests and the fake Slack Web
API. Discord: the real discord.py client on the fake Discord gateway and REST API. Both on the
real pipeline (a small knowledge base plus a source that takes S seconds); the fakes record
when each call arrived. Prints ack, 👀 and defer latencies and how many answers each question
got.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.run import table
from core.config import KnowledgeBaseSettings
from core.retrieval.embedding import OnnxMiniLMEmbedder
from core.retrieval.kb.knowledge_base import KnowledgeBase
from core.retrieval.vectors import open_chroma
from core.store.catalogue import KnowledgeCatalogue
from core.store.database import open_database, sqlite_url
from tests.support.chat_harness import Options
from tests.support.corpus import CORPUS, Indexed
from tests.support.discord_harness import serve_discord
from tests.support.slack_harness import mention, serve_slack

QUESTIONS = ["How many hours a day do cats sleep?", "Which city did Mount Vesuvius bury?",
             "How much caffeine is in black tea?", "Why does sourdough bread taste sour?",
             "What do cats need to eat?"]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def _parts(workdir: Path) -> tuple[Indexed, Any]:
    corpus = workdir / "corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    for name, text in CORPUS.items():
        (corpus / name).write_text(text, encoding="utf-8")
    engine = await open_database(sqlite_url(str(workdir / "bench.sqlite3")))
    chroma = open_chroma(workdir / "chroma", None)
    embedder = OnnxMiniLMEmbedder()
    knowledge_base = KnowledgeBase(KnowledgeCatalogue(engine), chroma, embedder,
                                   KnowledgeBaseSettings())
    return Indexed(engine, chroma, knowledge_base, corpus, workdir), embedder


async def discord_burst(workdir: Path, count: int, research_s: float
                        ) -> tuple[list[Any], list[Any]]:
    world, embedder = await _parts(workdir)
    options = Options(delay_s=research_s, per_user=5, per_tenant=count * 2)
    async with serve_discord(options, world, embedder) as bot:
        fake = bot.discord
        await fake.interaction(QUESTIONS[0], user_id="700000000000000999")  # warm-up
        await bot.wait_answers(1, within_s=120)

        async def ask(n: int) -> tuple[float, str]:
            sent = time.perf_counter()
            token = await fake.interaction(QUESTIONS[n % len(QUESTIONS)],
                                           user_id=str(700000000000001000 + n))
            return sent, token

        started = time.perf_counter()
        sends = await asyncio.gather(*(ask(n) for n in range(count)))
        await bot.wait_answers(count + 1, within_s=600)
        wall = time.perf_counter() - started
        await asyncio.sleep(research_s)
        callbacks = {c.path.split("/")[3]: c.at for c in fake.named("POST", "/callback")}
        defer_s = [callbacks[token] - sent for sent, token in sends]
        answered = {}
        for call in fake.named("PATCH", "/messages/@original"):
            if "footer" in json.dumps(call.body):
                token = call.path.split("/")[3]
                answered[token] = answered.get(token, 0) + 1
        once = sum(1 for _, token in sends if answered.get(token) == 1)
        researched = len(bot.requests) - 1
    await world.engine.dispose()
    return [["defer (interaction callback)", f"{statistics.median(defer_s) * 1000:.0f}",
             f"{percentile(defer_s, 0.99) * 1000:.0f}", f"{max(defer_s) * 1000:.0f}"]], \
        [[count, once, researched, f"{wall:.1f}", f"{count * research_s / wall:.1f}"]]


async def slack_burst(workdir: Path, count: int, research_s: float
                      ) -> tuple[list[Any], list[Any]]:
    world, embedder = await _parts(workdir)
    options = Options(delay_s=research_s, per_user=5, per_tenant=count * 2)
    async with serve_slack(options, world, embedder) as server:
        # One warm-up question: the first request pays for bolt's auth.test and model loads.
        await server.post(mention(QUESTIONS[0], event_id="EvWarm", ts="1600000000.000001"))
        await server.wait_answers(1, within_s=120)
        warm = len(server.slack.calls)

        async def ask(n: int) -> tuple[float, float, int]:
            ts = f"1700000000.{n:06d}"
            event = mention(QUESTIONS[n % len(QUESTIONS)], event_id=f"Ev{n}", ts=ts,
                            user=f"U{n}")
            sent = time.perf_counter()
            status = await server.post(event)
            acked = time.perf_counter()
            if n % 5 == 0:  # Slack re-delivers some events: they must not be answered twice
                await server.post(event, headers={"X-Slack-Retry-Num": "1"})
            return sent, acked - sent, status

        started = time.perf_counter()
        sends = await asyncio.gather(*(ask(n) for n in range(count)))
        await server.wait_answers(count + 1, within_s=600)
        wall = time.perf_counter() - started
        await asyncio.sleep(research_s)  # anything answered twice would show by now
        calls = list(zip(server.slack.calls, server.slack.received_at, strict=True))[warm:]
        eyes: dict[str, float] = {}
        for (method, args), at in calls:
            if method == "reactions.add" and args["name"] == "eyes":
                eyes.setdefault(args["timestamp"], at)
        eyes_s = [eyes[f"1700000000.{n:06d}"] - sends[n][0] for n in range(count)]
        ack_s = [delay for _, delay, _ in sends]
        answers = len(server.answers()) - 1
        statuses = {status for *_, status in sends}
    await world.engine.dispose()
    return [
        ["HTTP ack", f"{statistics.median(ack_s) * 1000:.0f}",
         f"{percentile(ack_s, 0.99) * 1000:.0f}", f"{max(ack_s) * 1000:.0f}"],
        ["👀 reaction", f"{statistics.median(eyes_s) * 1000:.0f}",
         f"{percentile(eyes_s, 0.99) * 1000:.0f}", f"{max(eyes_s) * 1000:.0f}"],
    ], [[count, f"{count // 5}", answers, len(server.requests) - 1, ",".join(map(str, statuses)),
         f"{wall:.1f}", f"{count * research_s / wall:.1f}"]]


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--questions", type=int, default=50)
    parser.add_argument("--research-seconds", type=float, default=2.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        latency, totals = await slack_burst(Path(folder), args.questions,
                                            args.research_seconds)
    with tempfile.TemporaryDirectory() as folder:
        defer, answered = await discord_burst(Path(folder), args.questions,
                                              args.research_seconds)
    table(f"Slack: {args.questions} mentions at once, research {args.research_seconds:g} s "
          "each (ms from sending the event)", ["", "p50", "p99", "max"], latency)
    table("Slack: answers", ["questions", "re-deliveries", "answers", "researched",
                             "HTTP statuses", "wall s", "concurrency"], totals)
    table(f"Discord: {args.questions} /research at once, research {args.research_seconds:g} s "
          "each (ms from dispatching the interaction)", ["", "p50", "p99", "max"], defer)
    table("Discord: answers", ["interactions", "answered exactly once", "researched", "wall s",
                               "concurrency"], answered)


if __name__ == "__main__":
    asyncio.run(main())
