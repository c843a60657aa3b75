"""The job service with the queue (SAQ on the Redis server) and a worker in this process:
cancellation reaches the job where it runs or takes it off the queue; a job that keeps
losing its worker stops with an error told to the person; a job whose research ended before
its worker died only finishes its delivery."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from adapters.slack.app import web_client
from adapters.slack.delivery import SlackDeliveries, SlackDelivery
from bot.wiring import build_jobs, build_research, local_sources
from core.config import KnowledgeBaseSettings, PipelineSettings, QueueSettings
from core.errors import InvalidQuestionError, JobNotFoundError
from core.jobs.delivery import DeliveryRegistry, RetryPolicy
from core.jobs.queue import JobQueue
from core.jobs.queue_worker import run_worker
from core.jobs.service import CANCELLED, JobService
from core.models import Depth, JobStatus, ResearchRequest
from core.research.record import ignore_progress
from core.retrieval.kb.knowledge_base import KnowledgeBase
from core.store.catalogue import KnowledgeCatalogue
from core.store.conversations import ConversationStore
from core.store.jobs import JobStore
from tests.support.chat_harness import SlowSource
from tests.support.cluster import wait_until
from tests.support.fake_slack import FakeSlack
from tests.support.services import REDIS_URL

pytestmark = pytest.mark.integration

QUESTION = "How many hours a day do cats sleep?"
RETRY = RetryPolicy(first_wait_s=0.01, max_wait_s=0.05, give_up_after_s=5.0)


@dataclass
class Deployment:
    front: JobService  # what a chat front end holds: submits, cancels, runs nothing
    worker: JobService  # what a worker holds: the research core too
    queue: JobQueue
    slack: FakeSlack
    engine: Any
    slow: SlowSource  # answers at once until a test holds it

    def delivery(self, status_ts: str = "1700000000.000001") -> SlackDelivery:
        return SlackDelivery(web_client("xoxb-test", self.slack.base_url),
                             ConversationStore(self.engine), "t1", "C1", "1700000000.000000",
                             status_ts, None)

    async def run_worker(self) -> tuple[asyncio.Event, asyncio.Task[None]]:
        stop = asyncio.Event()
        return stop, asyncio.create_task(run_worker(self.worker, self.queue, stop, "w1"))


@pytest.fixture
async def deployment(redis: Any, sqlite_engine: Any, chroma: Any, embedder: Any,
                     corpus: Path) -> AsyncIterator[Deployment]:
    knowledge_base = KnowledgeBase(KnowledgeCatalogue(sqlite_engine), chroma, embedder,
                                   KnowledgeBaseSettings())
    await knowledge_base.index([corpus], "t1")
    slow = SlowSource()
    sources = {**local_sources(knowledge_base, PipelineSettings()), "slow": slow}
    research = build_research(sources, embedder, PipelineSettings())
    slack = FakeSlack()
    await slack.start()
    registry = DeliveryRegistry()

    async def client_for(_tenant: str) -> Any:
        return web_client("xoxb-test", slack.base_url)

    registry.register("slack", SlackDeliveries(client_for, ConversationStore(sqlite_engine)))
    queue = JobQueue(REDIS_URL, QueueSettings(heartbeat_seconds=10,
                                              sweep_seconds=1, max_attempts=2,
                                              shutdown_grace_seconds=0, concurrency=1,
                                              deep_concurrency=1))
    await queue.connect()
    front = build_jobs(None, sqlite_engine, RETRY, progress_interval_s=0.0, queue=queue,
                       deliveries_for=registry)
    worker = build_jobs(research, sqlite_engine, RETRY, progress_interval_s=0.0, queue=queue,
                        deliveries_for=registry)
    yield Deployment(front, worker, queue, slack, sqlite_engine, slow)
    await queue.close()
    await slack.stop()


def _shown(slack: FakeSlack, text: str) -> list[dict[str, Any]]:
    return [a for a in slack.named("chat.update") if text in str(a.get("blocks", ""))]


async def test_a_cancel_reaches_the_worker_running_the_job(deployment: Deployment) -> None:
    deployment.slow.hold()  # the search goes on until the cancel ends it
    stop, running = await deployment.run_worker()
    job_id = await deployment.front.submit(ResearchRequest(question=QUESTION, tenant="t1"),
                                           deployment.delivery())
    async for event in deployment.front.events(job_id):
        if event.kind == "started" and event.stage == "search":
            break
    assert await deployment.front.cancel(job_id)
    job = await deployment.front.wait(job_id)
    assert job.status == JobStatus.CANCELLED
    await deployment.slack.wait_for(lambda: bool(_shown(deployment.slack, "cancelled")))
    kinds = [e.kind for e in await deployment.front.stored_events(job_id)]
    assert "cancel_requested" in kinds and kinds.count("cancelled") == 1
    assert "completed" not in kinds and not _shown(deployment.slack, "12 and 16 hours")
    stop.set()
    await running


async def test_a_cancel_before_any_worker_took_the_job_takes_it_off_the_queue(
    deployment: Deployment,
) -> None:
    job_id = await deployment.front.submit(ResearchRequest(question=QUESTION, tenant="t1"),
                                           deployment.delivery())
    assert (await deployment.queue.stats())["research"].queued == 1
    assert await deployment.front.cancel(job_id)
    assert (await deployment.front.result(job_id)).status == JobStatus.CANCELLED
    assert _shown(deployment.slack, CANCELLED.split(" before")[0])
    assert (await deployment.queue.stats())["research"].queued == 0
    later = await deployment.front.submit(ResearchRequest(question=QUESTION, tenant="t1"))
    stop, running = await deployment.run_worker()  # it takes the question asked later
    async with asyncio.timeout(60):
        assert (await deployment.front.wait(later)).status == JobStatus.COMPLETED
    stop.set()
    await running
    kinds = [e.kind for e in await deployment.front.stored_events(job_id)]
    assert kinds == ["queued", "cancel_requested", "cancelled"]


async def test_a_job_that_keeps_losing_its_worker_stops_and_tells_the_person(
    deployment: Deployment,
) -> None:
    job_id = await deployment.front.submit(ResearchRequest(question=QUESTION, tenant="t1"),
                                           deployment.delivery())
    # Attempt 3 of a job allowed 2: its workers died twice (see test_queue_workers.py for a
    # real kill); it researches nothing more.
    await deployment.worker.run_queued(job_id, attempt=3, max_attempts=2)
    job = await deployment.front.result(job_id)
    assert job.status == JobStatus.FAILED and job.error == "stopped after 2 attempts"
    told = _shown(deployment.slack, "stopped 2 times")
    assert len(told) == 1
    assert getattr(await deployment.front.delivery(job_id), "status", None) == "delivered"


async def test_a_job_researched_before_its_worker_died_only_finishes_its_delivery(
    deployment: Deployment,
) -> None:
    request = ResearchRequest(question=QUESTION, tenant="t1")
    job_id = await deployment.front.submit(request, deployment.delivery())
    # An earlier attempt researched the job and stored its answer, then its worker died.
    outcome = await deployment.worker.research.run(request, ignore_progress)
    await JobStore(deployment.engine).complete(
        job_id, outcome.result.model_copy(update={"job_id": job_id}), outcome.metrics,
        outcome.trace)
    started = len(await deployment.front.stored_events(job_id))
    await deployment.worker.run_queued(job_id, attempt=2, max_attempts=2)
    assert len(_shown(deployment.slack, "12 and 16 hours")) == 1
    later = [e.kind for e in await deployment.front.stored_events(job_id)][started:]
    assert later == ["completed", "delivered"]  # no stage ran again; the end is told once
    async with asyncio.timeout(10):  # a follower sees the job end
        assert (await deployment.front.wait(job_id)).status == JobStatus.COMPLETED


async def test_a_post_made_just_before_its_worker_died_is_found_not_repeated(
    deployment: Deployment,
) -> None:
    """Slack takes the sources message, but the worker dies before it can store that: the
    next attempt finds the message by its metadata (job, step) instead of posting again."""
    slack = deployment.slack
    slack.stall = lambda method, args: "Sources (" in str(args.get("blocks", ""))
    request = ResearchRequest(question=QUESTION, tenant="t1")
    job_id = await deployment.front.submit(request, deployment.delivery())
    first = asyncio.create_task(deployment.worker.run_queued(job_id, 1, 2))
    await slack.wait_for(lambda: any("Sources (" in str(a.get("blocks", ""))
                                     for a in slack.named("chat.postMessage")))
    first.cancel()  # the worker is gone; its job is still in progress
    await asyncio.gather(first, return_exceptions=True)
    slack.stall = lambda method, args: False
    await deployment.worker.run_queued(job_id, 2, 2)
    sources = [a for a in slack.named("chat.postMessage") if "Sources (" in str(a.get("blocks"))]
    assert len(sources) == 1
    assert slack.named("conversations.replies")  # looked before posting
    assert getattr(await deployment.front.delivery(job_id), "status", None) == "delivered"


async def test_deep_questions_wait_in_their_own_queue_and_never_hold_up_quick_ones(
    deployment: Deployment,
) -> None:
    """One slot for deep jobs and one for the rest: two deep questions queue behind each
    other while a quick one asked after them is answered at once."""
    queue = deployment.queue
    deep = [await deployment.front.submit(ResearchRequest(
        question=QUESTION, tenant="t1", depth=Depth.DEEP, bypass_cache=True))
        for _ in range(2)]
    quick = await deployment.front.submit(ResearchRequest(
        question=QUESTION, tenant="t1", depth=Depth.QUICK, bypass_cache=True))
    assert (await queue.stats())["research-deep"].queued == 2
    assert (await queue.stats())["research"].queued == 1
    deployment.slow.hold()  # every job stays in its search until the test has looked
    stop, running = await deployment.run_worker()

    async def quick_one_started_beside_the_first_deep_one() -> bool:
        first, _, asked_last = [(await deployment.front.result(job_id)).status
                                     for job_id in (*deep, quick)]
        return first == JobStatus.IN_PROGRESS and asked_last != JobStatus.PENDING

    await wait_until(quick_one_started_beside_the_first_deep_one, 60, every_s=0.05)
    assert (await deployment.front.result(deep[1])).status == JobStatus.PENDING
    deployment.slow.release()
    done = [await deployment.front.wait(job_id) for job_id in (*deep, quick)]
    stop.set()
    await running
    assert [job.status for job in done] == [JobStatus.COMPLETED] * 3
    first, second, asked_last = done
    assert first.completed_at and second.started_at and asked_last.started_at
    assert second.started_at >= first.completed_at  # deep jobs take turns in their slot
    assert asked_last.started_at < second.started_at  # the quick one did not wait for them


async def test_improve_is_queued_and_a_worker_revises_the_answer(redis: Any, lab: Any) -> None:
    """`improve` from a process that only queues (a chat front end, the API server): the
    request carries the earlier answer, so a worker with a model revises it like any job."""
    queue = JobQueue(REDIS_URL, QueueSettings(sweep_seconds=1, concurrency=1))
    await queue.connect()
    front = build_jobs(None, lab.engine, RETRY, progress_interval_s=0.0, queue=queue)
    worker = build_jobs(lab.research(), lab.engine, RETRY, progress_interval_s=0.0,
                        queue=queue)
    stop = asyncio.Event()
    running = asyncio.create_task(run_worker(worker, queue, stop, "w1"))
    try:
        first = await front.submit(ResearchRequest(question=QUESTION, tenant="t1",
                                                   depth=Depth.QUICK))
        async with asyncio.timeout(60):
            assert (await front.wait(first)).status == JobStatus.COMPLETED
        lab.fake.script["improve"] = lambda chat: {"needs_search": False, "queries": []}
        improved = await front.improve("Say it in one sentence", "t1")
        assert improved != first
        async with asyncio.timeout(60):
            job = await front.wait(improved)
        assert job.status == JobStatus.COMPLETED and job.result is not None
        assert job.request.improvement is not None
        assert job.request.improvement.job_id == first
        assert job.trace.improves == first and job.trace.feedback == "Say it in one sentence"
        assert "Say it in one sentence" in next(
            c for c in lab.fake.chats if c.task == "synthesize" and "feedback" in c.prompt
        ).prompt
    finally:
        stop.set()
        await running
        await queue.close()


async def test_improve_reads_only_the_tenants_own_answers(lab: Any) -> None:
    jobs = build_jobs(lab.research(), lab.engine, RETRY, progress_interval_s=0.0)
    first = await jobs.submit(ResearchRequest(question=QUESTION, tenant="t1",
                                              depth=Depth.QUICK))
    assert (await jobs.wait(first)).status == JobStatus.COMPLETED
    with pytest.raises(JobNotFoundError):
        await jobs.improve("Shorter", "t2", first)
    with pytest.raises(InvalidQuestionError, match="no finished answer"):
        await jobs.improve("Shorter", "t2")  # t2 has no answer of its own
    assert [job.id for job in await jobs.recent()] == [first]
