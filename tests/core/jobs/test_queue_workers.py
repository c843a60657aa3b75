"""Chat front ends and research workers as separate processes on PostgreSQL, Redis and the SAQ
queue, against the fake Slack and Discord: every question answered exactly once although a
worker is killed with SIGKILL in the middle; a worker started after the questions answers
them; a worker told to stop hands its running jobs back."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import create_async_engine

from core.store.database import job_deliveries, job_events, jobs
from tests.support.cluster import Cluster, chroma_server, cluster, free_port, wait_until
from tests.support.fake_discord import GUILD_ID, FakeDiscord
from tests.support.fake_slack import FakeSlack
from tests.support.fake_web import FakeWeb, slow_wikipedia, wikipedia_only
from tests.support.services import POSTGRES_URL
from tests.support.slack_harness import SECRET, SlackHarness, mention

pytestmark = [pytest.mark.system, pytest.mark.postgres]

QUESTIONS = ["How many hours a day do cats sleep?", "Why does sourdough bread taste sour?",
             "When did Mount Vesuvius bury Pompeii?", "How much caffeine is in black tea?",
             "What do cats need to eat?"]


async def _rows(table: Any) -> list[dict[str, Any]]:
    engine = create_async_engine(POSTGRES_URL)
    try:
        async with engine.connect() as connection:
            return [dict(row._mapping) for row in await connection.execute(select(table))]
    finally:
        await engine.dispose()


@pytest.fixture
async def slow_web() -> Any:
    """Every job is still running when a worker is killed or stopped."""
    async with slow_wikipedia(1.0) as web:
        yield web


async def _slack_front(made: Cluster, slack: FakeSlack) -> SlackHarness:
    port = free_port()
    front = await made.start("slack", "slack", RESEARCHBOT_SLACK__HOST="127.0.0.1",
                             RESEARCHBOT_SLACK__PORT=str(port))
    await front.wait_for_line("Slack events at")
    return SlackHarness(f"http://127.0.0.1:{port}", slack)


def _slack_settings(slack: FakeSlack) -> dict[str, str]:
    return {"RESEARCHBOT_SLACK__BOT_TOKEN": "xoxb-test",
            "RESEARCHBOT_SLACK__SIGNING_SECRET": SECRET,
            "RESEARCHBOT_ENDPOINTS__SLACK_API": slack.base_url}


async def _ask_slack(harness: SlackHarness, count: int, first: int = 0) -> list[str]:
    """`count` mentions from different people; the question messages' ts (their threads)."""
    threads = [f"1800000000.{n:06d}" for n in range(first, first + count)]
    statuses = await asyncio.gather(*(
        harness.post(mention(QUESTIONS[n % len(QUESTIONS)], event_id=f"Ev{n}",
                             ts=threads[n - first], user=f"U{n}"))
        for n in range(first, first + count)))
    assert statuses == [200] * count
    return threads


def _slack_answered(slack: FakeSlack, threads: list[str]) -> set[str]:
    """Threads whose sources were posted (the last message of an answer)."""
    return {args.get("thread_ts", "") for args in slack.named("chat.postMessage")
            if "Sources (" in str(args.get("blocks", ""))} & set(threads)


def _assert_slack_once(slack: FakeSlack, threads: list[str]) -> None:
    """Each question: one status message edited into its answer, one sources message,
    nothing posted twice."""
    posts = [a for a in slack.named("chat.postMessage") if a.get("thread_ts") in threads]
    per_thread = Counter(a["thread_ts"] for a in posts)
    assert per_thread == dict.fromkeys(threads, 2), per_thread  # status + sources
    statuses = {a["thread_ts"] for a in posts if str(a.get("text", "")).startswith(":mag:")}
    assert statuses == set(threads)
    shown = [a for a in slack.named("chat.update") if a.get("blocks")]  # progress is text
    assert len({a["ts"] for a in shown}) == len(threads)


async def _assert_jobs_done(count: int) -> list[dict[str, Any]]:
    rows = await _rows(jobs)
    assert len(rows) == count
    assert Counter(row["status"] for row in rows) == {"completed": count}
    deliveries = await _rows(job_deliveries)
    assert Counter(row["status"] for row in deliveries) == {"delivered": count}
    return rows


async def test_slack_and_two_workers_answer_each_question_once_when_one_is_killed(
    tmp_path: Path, slow_web: FakeWeb,
) -> None:
    slack = FakeSlack()
    await slack.start()
    try:
        async with cluster(tmp_path, "T1", **_slack_settings(slack),
                           **wikipedia_only(slow_web)) as made:
            harness = await _slack_front(made, slack)
            doomed = await made.worker("worker-1")
            await made.worker("worker-2")
            threads = await _ask_slack(harness, 50)
            await slack.wait_for(lambda: len(_slack_answered(slack, threads)) >= 8, 120)
            made.kill(doomed)
            await slack.wait_for(lambda: len(_slack_answered(slack, threads)) == 50, 240)
            await wait_until(lambda: _all_delivered(50), 30)
            _assert_slack_once(slack, threads)
            await _assert_jobs_done(50)
            resumed = [e for e in await _rows(job_events) if e["kind"] == "resumed"]
            assert resumed, "the killed worker held no job: nothing was taken up again"
    finally:
        await slack.stop()


async def _all_delivered(count: int) -> bool:
    rows = await _rows(job_deliveries)
    return len(rows) == count and all(row["status"] == "delivered" for row in rows)


async def test_discord_and_two_workers_answer_each_question_once_when_one_is_killed(
    tmp_path: Path, slow_web: FakeWeb,
) -> None:
    fake = FakeDiscord()
    await fake.start()
    try:
        async with cluster(tmp_path, GUILD_ID, RESEARCHBOT_DISCORD__TOKEN="fake-token",
                           RESEARCHBOT_ENDPOINTS__DISCORD_API=fake.api_base,
                           RESEARCHBOT_ENDPOINTS__DISCORD_GATEWAY=fake.gateway_url,
                           **wikipedia_only(slow_web)) as made:
            await made.start("discord", "discord")
            await fake.wait_for(lambda: bool(fake.identified), 120)
            doomed = await made.worker("worker-1")
            await made.worker("worker-2")
            tokens = [await fake.interaction(QUESTIONS[n % len(QUESTIONS)],
                                             user_id=f"7000000000000{n:05d}")
                      for n in range(50)]

            def answered() -> int:
                return len({c.path.split("/")[4] for c in fake.named("PUT", "/reactions/")})

            await fake.wait_for(lambda: answered() >= 8, 120)
            made.kill(doomed)
            await fake.wait_for(lambda: answered() == 50, 240)
            await wait_until(lambda: _all_delivered(50), 30)
            await _assert_jobs_done(50)
            # Each answer is the interaction's own response; one thread and one sources
            # message each.
            edited = {c.path.split("/")[3] for c in fake.named("PATCH", "/messages/@original")
                      if c.body["embeds"][0].get("title") in QUESTIONS}
            assert edited == set(tokens)
            # A worker killed between Discord accepting a thread and the step being stored
            # asks again on the next attempt; Discord answers 160004 and the thread is
            # reused, so a message may be asked twice but never gets a second thread.
            threads = Counter(c.path.split("/")[4] for c in fake.named("POST", "/threads"))
            assert len(threads) == 50
            assert max(threads.values()) <= 2
            sources = [c for c in fake.named("POST", "/messages")
                       if "Sources (" in json.dumps(c.body)]
            # likewise a sources post asked again carries its nonce: one message a thread
            by_thread: dict[str, list[Any]] = {}
            for call in sources:
                by_thread.setdefault(call.path.split("/")[2], []).append(call)
            assert {thread: len(fake.posted_ids(calls)) for thread, calls in by_thread.items()} \
                == dict.fromkeys(threads, 1)
    finally:
        await fake.stop()


async def test_a_late_worker_answers_queued_questions_and_a_stopped_one_hands_jobs_back(
    tmp_path: Path, slow_web: FakeWeb,
) -> None:
    slow_web.latency.clear()
    slow_web.hold("/w/api.php")  # the first worker's jobs stay in their search
    slack = FakeSlack()
    await slack.start()
    try:
        async with cluster(tmp_path, "T1", **_slack_settings(slack), **wikipedia_only(slow_web),
                           RESEARCHBOT_ADVANCED__QUEUE__SHUTDOWN_GRACE_SECONDS="1") as made:
            harness = await _slack_front(made, slack)
            threads = await _ask_slack(harness, 3)
            await wait_until(lambda: _count_jobs("pending", 3), 30)
            assert not _slack_answered(slack, threads)  # no worker yet: queued, not lost

            first = await made.worker("worker-1")
            await wait_until(lambda: _count_jobs("in_progress", 3), 60)
            first.handle.terminate()  # SIGTERM: 1 s of grace, then the jobs go back
            assert await asyncio.wait_for(first.handle.wait(), 60) == 0
            assert await _count_jobs("pending", 3)
            handed = [e for e in await _rows(job_events) if e["kind"] == "requeued"]
            assert len(handed) == 3

            slow_web.release("/w/api.php")
            await made.worker("worker-2")
            await slack.wait_for(lambda: len(_slack_answered(slack, threads)) == 3, 120)
            await wait_until(lambda: _all_delivered(3), 30)
            _assert_slack_once(slack, threads)
            await _assert_jobs_done(3)
    finally:
        await slack.stop()


async def _count_jobs(status: str, count: int) -> bool:
    return sum(row["status"] == status for row in await _rows(jobs)) == count


async def test_workers_on_a_chroma_server_see_documents_indexed_while_they_answer(
    tmp_path: Path,
) -> None:
    """Past one machine: the catalogue in PostgreSQL, the vectors in a Chroma server; an
    index run beside two busy workers adds a document that the next question finds."""
    slack = FakeSlack()
    await slack.start()
    try:
        async with chroma_server(tmp_path) as chroma_url, \
                cluster(tmp_path, "T1", **_slack_settings(slack),
                        RESEARCHBOT_KNOWLEDGE_BASE__CHROMA_URL=chroma_url) as made:
            harness = await _slack_front(made, slack)
            await made.worker("worker-1")
            await made.worker("worker-2")
            threads = await _ask_slack(harness, 10)
            new = tmp_path / "new"
            new.mkdir()
            (new / "axolotl.md").write_text(
                "# Axolotls\n\nAxolotls regrow lost limbs within about forty days, bones "
                "and nerves included.\n", encoding="utf-8")
            indexer = await made.start("index-new", "index", str(new), "--tenant", "T1")
            assert await indexer.handle.wait() == 0, indexer.text()
            await slack.wait_for(lambda: len(_slack_answered(slack, threads)) == 10, 120)
            asked = harness.post(mention("How long do axolotls take to regrow a limb?",
                                         event_id="EvNew", ts="1800000001.000001"))
            assert await asked == 200
            await slack.wait_for(lambda: bool(_slack_answered(slack, ["1800000001.000001"])),
                                 120)
            answer = [a for a in slack.named("chat.update") if a.get("blocks")][-1]
            assert "forty days" in json.dumps(answer["blocks"])
            await wait_until(lambda: _all_delivered(11), 30)
            await _assert_jobs_done(11)
    finally:
        await slack.stop()
