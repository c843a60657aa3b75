"""Research workers on the queue, as separate processes: throughput by worker count, and
nothing lost or repeated while workers are killed.

    .venv/bin/python bench/workers.py [--questions 120] [--kill-questions 1000]
                                      [--latency-ms 300] [--skip-throughput] [--skip-kills]

Needs the PostgreSQL server (database `test`, emptied) and the Redis server (database 15,
emptied), like the tests. A Slack front end (`researchbot slack`) takes signed mentions over
HTTP from this process at concurrency 50; workers (`researchbot worker`) research with a model
(the scripted OpenAI-compatible server, every call --latency-ms) and Wikipedia (a fake whose
every call takes --latency-ms), and deliver to the fake Slack Web API, which records when each
answer arrived.

1. Throughput with 1, 2 and 4 workers: questions a minute, p50/p99 from question to answer
   (the 👀 taken off), p99 of the front end's HTTP acknowledgement (Slack wants 3 s).
2. --kill-questions at concurrency 50 with three workers: one lives throughout (its resident
   memory read at 100, 500 and 1,000 answers), the other two take turns being killed with
   SIGKILL every 100 answers and replaced. Lost answers (never arrived) and repeated ones
   (a question with more than one answer or sources message) must both be 0.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import psutil

from bench.tables import table
from tests.support.cluster import Cluster, cluster, free_port
from tests.support.fake_openai import FakeOpenAI
from tests.support.fake_slack import FakeSlack
from tests.support.fake_web import Article, FakeWeb
from tests.support.scripted_analyst import script
from tests.support.slack_harness import SECRET, SlackHarness, mention

QUESTIONS = ["How many hours a day do cats sleep?", "Why does sourdough bread taste sour?",
             "When did Mount Vesuvius bury Pompeii?", "How much caffeine is in black tea?",
             "What do cats need to eat?", "Which is the largest planet?"]
CONCURRENCY = 50


class Run:
    """Questions posted to the front end at a fixed concurrency; the fake Slack says when
    each one was answered: the 👀 on the question comes off last, whatever the answer."""

    def __init__(self, harness: SlackHarness, slack: FakeSlack, first: int) -> None:
        self.harness = harness
        self.slack = slack
        self.first = first
        self.sent: dict[str, float] = {}
        self.acks: list[float] = []

    def thread(self, n: int) -> str:
        return f"1800000000.{self.first + n:06d}"

    def answered_at(self) -> dict[str, float]:
        found: dict[str, float] = {}
        for (method, args), at in zip(self.slack.calls, self.slack.received_at, strict=False):
            if method == "reactions.remove" and args.get("name") == "eyes":
                found.setdefault(str(args.get("timestamp")), at)
        return {thread: at for thread, at in found.items() if thread in self.sent}

    async def ask(self, count: int, on_answers: Any = None, within_s: float = 3600) -> float:
        gate = asyncio.Semaphore(CONCURRENCY)
        started = time.perf_counter()

        async def one(n: int) -> None:
            async with gate:
                thread = self.thread(n)
                self.sent[thread] = time.perf_counter()
                status = await self.harness.post(mention(
                    QUESTIONS[n % len(QUESTIONS)], event_id=f"Ev{self.first + n}", ts=thread,
                    user=f"U{self.first + n}"))
                self.acks.append(time.perf_counter() - self.sent[thread])
                assert status == 200, status
                async with asyncio.timeout(within_s):
                    while thread not in self.answered_at():
                        self.slack.changed.clear()
                        await self.slack.changed.wait()
                if on_answers is not None:
                    await on_answers(len(self.answered_at()))

        results = await asyncio.gather(*(one(n) for n in range(count)), return_exceptions=True)
        lost = [r for r in results if isinstance(r, BaseException)]
        if lost:
            print(f"{len(lost)} questions unanswered: {lost[0]!r}", file=sys.stderr)
        return time.perf_counter() - started


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))] if ordered else 0.0


def _settings(slack: FakeSlack, web: FakeWeb, model: FakeOpenAI, **more: str) -> dict[str, str]:
    return {"RESEARCHBOT_SLACK__BOT_TOKEN": "xoxb-test",
            "RESEARCHBOT_SLACK__SIGNING_SECRET": SECRET,
            "RESEARCHBOT_ENDPOINTS__SLACK_API": slack.base_url,
            "RESEARCHBOT_PIPELINE__LOCAL_ONLY": "false",
            "RESEARCHBOT_ENDPOINTS__WIKIPEDIA_API": f"{web.base}/w/api.php",
            "RESEARCHBOT_SOURCES__ARXIV": "false", "RESEARCHBOT_SOURCES__PUBMED": "false",
            "RESEARCHBOT_ADVANCED__SOURCES__CACHE_TTL_HOURS": "0",
            "RESEARCHBOT_ADVANCED__SOURCES__FETCH_PAGES": "0",
            "RESEARCHBOT_ADVANCED__SOURCES__RATE_PER_SECOND": "1000",
            "RESEARCHBOT_ADVANCED__SOURCES__CONCURRENCY": "64",
            "RESEARCHBOT_LLM__FAST_MODEL": "openai/fast",
            "RESEARCHBOT_LLM__STRONG_MODEL": "openai/strong",
            "RESEARCHBOT_LLM__API_BASE": model.base_url, "RESEARCHBOT_LLM__API_KEY": "test-key",
            "RESEARCHBOT_ADVANCED__LLM__CHECK_AT_START": "false",
            "RESEARCHBOT_ADVANCED__QUEUE__HEARTBEAT_SECONDS": "6",
            "RESEARCHBOT_ADVANCED__QUEUE__SWEEP_SECONDS": "2",
            **more}


async def _front(made: Cluster, slack: FakeSlack) -> SlackHarness:
    port = free_port()
    front = await made.start("slack", "slack", RESEARCHBOT_SLACK__HOST="127.0.0.1",
                             RESEARCHBOT_SLACK__PORT=str(port))
    await front.wait_for_line("Slack events at")
    return SlackHarness(f"http://127.0.0.1:{port}", slack)


async def throughput(workdir: Path, fakes: tuple[Any, ...], questions: int) -> list[list[Any]]:
    rows = []
    for count in (1, 2, 4):
        folder = workdir / f"throughput-{count}"
        folder.mkdir()
        slack = FakeSlack()
        await slack.start()
        async with cluster(folder, "T1", **_settings(slack, *fakes)) as made:
            harness = await _front(made, slack)
            for n in range(count):
                await made.worker(f"worker-{n}")
            run = Run(harness, slack, 0)
            wall = await run.ask(questions)
            answered = run.answered_at()
            latencies = [answered[t] - run.sent[t] for t in answered]
            rows.append([count, questions, len(answered), round(wall, 1),
                         round(len(answered) / wall * 60, 1),
                         round(_percentile(latencies, 0.5), 2),
                         round(_percentile(latencies, 0.99), 2),
                         round(_percentile(run.acks, 0.99) * 1000)])
        await slack.stop()
    return rows


async def kills(workdir: Path, fakes: tuple[Any, ...], questions: int
                ) -> tuple[list[Any], list[list[Any]]]:
    folder = workdir / "kills"
    folder.mkdir()
    slack = FakeSlack()
    await slack.start()
    memory: list[list[Any]] = []
    killed = 0
    async with cluster(folder, "T1", **_settings(slack, *fakes)) as made:
        harness = await _front(made, slack)
        steady = await made.worker("steady")
        turn = [await made.worker("a-0"), await made.worker("b-0")]
        rss = psutil.Process(steady.handle.pid)
        lock = asyncio.Lock()

        async def on_answers(answered: int) -> None:
            nonlocal killed
            async with lock:
                if answered in (100, 500, 1000) and answered not in [m[0] for m in memory]:
                    memory.append([answered, round(rss.memory_info().rss / 2**20)])
                if answered // 100 > killed and answered < questions:
                    killed += 1
                    victim = turn[killed % 2]
                    made.kill(victim)
                    turn[killed % 2] = await made.worker(f"{'ab'[killed % 2]}-{killed}")

        run = Run(harness, slack, 0)
        wall = await run.ask(questions, on_answers, within_s=900)
        await asyncio.sleep(5)  # late repeats, if any, would arrive now
        answered = run.answered_at()
        sources = Counter(str(args.get("thread_ts")) for args in slack.named("chat.postMessage")
                          if "Sources (" in str(args.get("blocks", "")))
        posts = Counter(str(args.get("thread_ts")) for args in slack.named("chat.postMessage"))
        repeated = sum(1 for t in run.sent if sources[t] > 1 or posts[t] > 2)
        row = [questions, killed, len(answered), questions - len(answered), repeated,
               round(wall, 1)]
    await slack.stop()
    return row, memory


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--questions", type=int, default=120)
    parser.add_argument("--kill-questions", type=int, default=1000)
    parser.add_argument("--latency-ms", type=float, default=300)
    parser.add_argument("--skip-throughput", action="store_true")
    parser.add_argument("--skip-kills", action="store_true")
    args = parser.parse_args()
    latency = args.latency_ms / 1000
    web = FakeWeb()
    web.articles.append(Article("Cat", "The cat is a small domesticated carnivorous mammal "
                                "that sleeps 12 to 16 hours a day.",
                                "https://en.wikipedia.org/wiki/Cat"))
    web.latency["/w/api.php"] = latency
    await web.start()
    model = script(FakeOpenAI(latency_s=latency))
    await model.start()
    try:
        with tempfile.TemporaryDirectory() as temp:
            workdir = Path(temp)
            if not args.skip_throughput:
                rows = await throughput(workdir, (web, model), args.questions)
                table(f"1. Throughput ({args.questions} questions at concurrency "
                      f"{CONCURRENCY}; every source and model call {args.latency_ms:g} ms)",
                      ["workers", "questions", "answered", "wall s", "questions/min",
                       "p50 s", "p99 s", "p99 ack ms"], rows)
            if not args.skip_kills:
                row, memory = await kills(workdir, (web, model), args.kill_questions)
                table(f"2. A worker killed every 100 answers ({args.kill_questions} "
                      f"questions at concurrency {CONCURRENCY})",
                      ["questions", "workers killed", "answered", "lost", "repeated",
                       "wall s"], [row])
                table("Resident memory of the worker that ran throughout",
                      ["answers so far", "RSS MB"], memory)
    finally:
        await model.stop()
        await web.stop()


if __name__ == "__main__":
    asyncio.run(main())
