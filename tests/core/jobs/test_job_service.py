"""The job service over the real pipeline, on SQLite and PostgreSQL: a job is stored at once,
its events are numbered, stored and replayable from any point, followers see them live,
cancellation stops it, and its delivery repeats no step that succeeded."""

import gc
import weakref
from pathlib import Path
from typing import Any

import pytest

from bot.wiring import build_jobs, build_research, local_sources
from core.answer.cache import SemanticAnswerCache
from core.config import CacheSettings, KnowledgeBaseSettings, PipelineSettings
from core.errors import InvalidQuestionError, JobFailedError
from core.jobs.delivery import RetryPolicy, Steps
from core.jobs.service import JobService
from core.models import (
    ConversationTurn,
    FailureKind,
    Job,
    JobStatus,
    ProgressEvent,
    ResearchRequest,
    ResearchResult,
)
from core.retrieval.kb.knowledge_base import KnowledgeBase
from core.store.answers import CachedAnswerStore
from core.store.catalogue import KnowledgeCatalogue
from core.store.events import JobEvents
from tests.support.chat_harness import SlowSource

pytestmark = pytest.mark.integration

QUESTION = "How many hours a day do cats sleep?"


async def _service(engine: Any, chroma: Any, embedder: Any, corpus: Path,
                   slow: SlowSource | None = None, synthesizer: Any = None,
                   cached: bool = False) -> JobService:
    knowledge_base = KnowledgeBase(KnowledgeCatalogue(engine), chroma, embedder,
                                   KnowledgeBaseSettings())
    await knowledge_base.index([corpus], "t1")
    sources = local_sources(knowledge_base, PipelineSettings())
    if slow is not None:
        sources["slow"] = slow
    cache = SemanticAnswerCache(CachedAnswerStore(engine), chroma, embedder,
                                CacheSettings()) if cached else None
    research = build_research(sources, embedder, PipelineSettings(), synthesizer=synthesizer,
                              cache=cache)
    retry = RetryPolicy(first_wait_s=0.01, max_wait_s=0.05, give_up_after_s=5.0)
    return build_jobs(research, engine, retry, progress_interval_s=0.0)


async def test_events_are_stored_in_order_and_replay_from_any_point(
    any_engine: Any, chroma: Any, embedder: Any, corpus: Path,
) -> None:
    service = await _service(any_engine, chroma, embedder, corpus)
    job_id = await service.submit(ResearchRequest(question=QUESTION, tenant="t1"))
    live = [event async for event in service.events(job_id)]
    job = await service.wait(job_id)
    assert job.status == JobStatus.COMPLETED and job.result is not None
    assert [e.seq for e in live] == list(range(1, len(live) + 1))
    assert live[0].kind == "queued" and live[-1].kind == "completed"
    assert [e.kind for e in live[1:-1]] == ["started", "finished"] * ((len(live) - 2) // 2)
    assert "12 and 16 hours" in (await service.answer(job_id)).answer.summary
    # Replayed later, from the start or from any event: the same events, no gaps, no repeats.
    assert [event async for event in service.events(job_id)] == live
    middle = live[len(live) // 2].seq
    assert [event async for event in service.events(job_id, after=middle)] == live[middle:]
    await service.close()


async def test_a_cancelled_job_stops_and_says_so(
    any_engine: Any, chroma: Any, embedder: Any, corpus: Path,
) -> None:
    service = await _service(any_engine, chroma, embedder, corpus,
                             slow=SlowSource(held=True))
    job_id = await service.submit(ResearchRequest(question=QUESTION, tenant="t1"))
    async for event in service.events(job_id):
        if event.stage is not None and event.stage.value == "search":
            break  # the search is under way (and held until the job ends)
    assert await service.cancel(job_id)
    job = await service.result(job_id)
    assert job.status == JobStatus.CANCELLED and job.result is None
    events = [event async for event in service.events(job_id)]
    assert events[-1].kind == "cancelled"
    assert not await service.cancel(job_id)  # it has ended already
    await service.close()


async def test_a_question_that_cannot_be_researched_stores_no_job(
    sqlite_engine: Any, chroma: Any, embedder: Any, corpus: Path,
) -> None:
    """Whatever the front end: text the tokenizer or a database refuses (a lone surrogate,
    NUL) is refused before a job exists, in the question, its context and the conversation."""
    service = await _service(sqlite_engine, chroma, embedder, corpus)
    earlier = ConversationTurn(question="Do cats sleep?", answer="Yes.")
    for request, message in (
            (ResearchRequest(question="   ", tenant="t1"), "empty"),
            (ResearchRequest(question="\ud800 cats", tenant="t1"), "not text"),
            (ResearchRequest(question=QUESTION, tenant="t1", history=[
                earlier.model_copy(update={"question": "and \udfff dogs?"})]), "not text"),
            (ResearchRequest(question=QUESTION, tenant="t1", history=[
                earlier.model_copy(update={"answer": "Yes\x00"})]), "earlier answer"),
            (ResearchRequest(question=QUESTION, tenant="t1", history=[
                earlier.model_copy(update={"answer": "Yes \ud83d"})]), "earlier answer"),
            (ResearchRequest(question=QUESTION, tenant="t1", context="cats \x07 only"),
             "context contains control characters"),
            (ResearchRequest(question=QUESTION, tenant="t1", context="x" * 2001),
             "context is 2,001 characters long"),
            (ResearchRequest(question=QUESTION, tenant="t1", context="\ud800 cats"),
             "context contains characters that are not text")):
        with pytest.raises(InvalidQuestionError, match=message):
            await service.submit(request)
    with pytest.raises(InvalidQuestionError, match="not text"):
        await service.improve("shorter \ud800", "t1")
    assert await service.store.recent() == []


class FlakyPlatform:
    """A chat platform whose progress updates always fail and whose second message fails
    twice with a connection error before it goes through."""

    platform = "test"

    def __init__(self) -> None:
        self.posted: list[str] = []
        self.failures_left = 2
        self.progress_tried = 0

    def target(self) -> dict[str, Any]:
        return {"channel": "c1"}

    async def progress(self, event: ProgressEvent) -> None:
        self.progress_tried += 1
        raise ConnectionResetError("progress refused")

    async def answer(self, result: ResearchResult, steps: Steps) -> None:
        await steps.once("answer", lambda: self._post("answer"))
        await steps.once("sources", lambda: self._post("sources", flaky=True))
        await steps.once("reaction", lambda: self._post("reaction"))

    async def failure(self, message: str, steps: Steps) -> None:
        await steps.once("error", lambda: self._post(f"error: {message}"))

    async def _post(self, what: str, flaky: bool = False) -> str:
        if flaky and self.failures_left:
            self.failures_left -= 1
            raise ConnectionResetError("reset by peer")
        self.posted.append(what)
        return what


async def test_delivery_retries_from_the_step_that_failed_and_progress_never_fails_a_job(
    sqlite_engine: Any, chroma: Any, embedder: Any, corpus: Path,
) -> None:
    service = await _service(sqlite_engine, chroma, embedder, corpus)
    platform = FlakyPlatform()
    job_id = await service.submit(ResearchRequest(question=QUESTION, tenant="t1"), platform)
    job = await service.wait(job_id)
    assert job.status == JobStatus.COMPLETED
    assert platform.progress_tried >= 1
    assert platform.posted == ["answer", "sources", "reaction"]  # each exactly once
    delivery = await service.delivery(job_id)
    assert delivery is not None
    assert (delivery.status, delivery.attempts) == ("delivered", 3)
    assert set(delivery.done) == {"answer", "sources", "reaction"}
    kinds = [event.kind async for event in service.events(job_id)]
    assert kinds[-1] == "completed"  # followers stop at the job's end ...
    stored = await JobEvents(sqlite_engine).after(job_id, 0)
    assert stored[-1].kind == "delivered"  # ... and the delivery is recorded after it
    await service.close()


async def test_a_failed_job_tells_the_person_without_details(
    sqlite_engine: Any, chroma: Any, embedder: Any, corpus: Path,
) -> None:
    from tests.support.chat_harness import BrokenSynthesizer

    # A model server that goes away mid-research.
    service = await _service(sqlite_engine, chroma, embedder, corpus,
                             synthesizer=BrokenSynthesizer())
    platform = FlakyPlatform()
    job_id = await service.submit(ResearchRequest(question=QUESTION, tenant="t1"), platform)
    job = await service.wait(job_id)
    assert job.status == JobStatus.FAILED and "ConnectionResetError" in str(job.error)
    (shown,) = platform.posted
    assert shown.startswith("error: Sorry, the research failed") and "10.0.0.7" not in shown
    await service.close()


async def test_two_processes_appending_to_one_job_never_reuse_a_number(
    any_engine: Any,
) -> None:
    # Each JobEvents numbers a job's events itself once it has read the last number; when
    # another process (another JobEvents) took that number, it reads again.
    here, there = JobEvents(any_engine), JobEvents(any_engine)
    await here.append("job1", "queued")
    await here.append("job1", "started")
    await there.append("job1", "finished")
    await here.append("job1", "completed")
    stored = await here.after("job1")
    assert [(e.seq, e.kind) for e in stored] == [
        (1, "queued"), (2, "started"), (3, "finished"), (4, "completed")]


class WriterError(RuntimeError):
    """A failure of our own type: built-in exceptions take no weak references."""


class _FailingSynthesizer:
    """Fails every answer with a fresh exception, and keeps only weak references to them."""

    name = "failing"

    def __init__(self) -> None:
        self.raised: list[weakref.ref[BaseException]] = []

    async def synthesize(self, *args: Any) -> Any:
        error = WriterError("the writer fell over " + "x" * 10_000)
        self.raised.append(weakref.ref(error))
        raise error


async def test_a_failed_job_keeps_its_reason_not_its_exception(
    sqlite_engine: Any, chroma: Any, embedder: Any, corpus: Path,
) -> None:
    """A failed job's reason is stored and told; nothing holds its exception (with its
    traceback and frames) afterwards, whether or not anyone asks for the answer."""
    synthesizer = _FailingSynthesizer()
    service = await _service(sqlite_engine, chroma, embedder, corpus, synthesizer=synthesizer)
    job_ids = [await service.submit(ResearchRequest(question=QUESTION, tenant="t1",
                                                    bypass_cache=True)) for _ in range(3)]
    for job_id in job_ids:
        assert (await service.wait(job_id)).status == JobStatus.FAILED
    with pytest.raises(JobFailedError, match="WriterError: the writer fell over"):
        await service.answer(job_ids[0])
    gc.collect()
    assert len(synthesizer.raised) == 3
    assert all(ref() is None for ref in synthesizer.raised)
    assert (await service.result(job_ids[1])).failure == FailureKind.ERROR


async def test_improve_without_a_model_is_refused_before_a_job_is_stored(
    sqlite_engine: Any, chroma: Any, embedder: Any, corpus: Path,
) -> None:
    service = await _service(sqlite_engine, chroma, embedder, corpus)
    answered = await service.submit(ResearchRequest(question=QUESTION, tenant="t1"))
    await service.wait(answered)
    with pytest.raises(InvalidQuestionError, match="needs a language model"):
        await service.improve("Shorter, please", "t1")
    assert [job.id for job in await service.recent("t1")] == [answered]


async def test_opening_the_research_core_fails_jobs_whose_process_is_gone(
    clean_env: Path,
) -> None:
    """A CLI process that stopped mid-job (no queue to hand it on): the next CLI start says
    so. A stopped `serve`'s jobs are left for `serve` to resume when it starts again."""
    import socket

    from bot.config import load_settings
    from bot.wiring import open_job_reader, open_research

    settings = load_settings(None)
    dead = f"{socket.gethostname()}:999999999"
    async with open_job_reader(settings) as reader:
        gone = await reader.store.create(Job(request=ResearchRequest(question=QUESTION),
                                             platform="cli", worker=dead))
        served = await reader.store.create(Job(request=ResearchRequest(question=QUESTION),
                                               platform="api", worker=dead))
        for job_id in (gone.id, served.id):
            await reader.store.start(job_id)
    async with open_research(settings, in_process=True) as research:
        job = await research.jobs.result(gone.id)
        left = await research.jobs.result(served.id)
    assert job.status == JobStatus.FAILED and job.failure == FailureKind.INTERRUPTED
    assert left.status == JobStatus.IN_PROGRESS


async def test_an_ended_job_leaves_no_state_in_the_service(
    sqlite_engine: Any, chroma: Any, embedder: Any, corpus: Path,
) -> None:
    """`serve` and workers run for months: once a job has ended and its followers have gone
    (read to the end, or left half-way), the job service holds nothing of it."""
    service = await _service(sqlite_engine, chroma, embedder, corpus)
    followed = await service.submit(ResearchRequest(question=QUESTION, tenant="t1"))
    assert [event async for event in service.events(followed)][-1].kind == "completed"
    left = await service.submit(ResearchRequest(question=QUESTION, tenant="t1"))
    events = service.events(left)
    assert (await anext(events)).kind == "queued"
    await events.aclose()  # a reader who closed the page
    await service.wait(left)
    assert [event async for event in service.events(left)][-1].kind == "completed"
    held = service._events  # the per-job wake-ups, locks and numbers
    assert (held._appended, held._locks, held._next, service._tasks) == ({}, {}, {}, {})
    await service.close()


async def test_an_exact_repeat_is_stored_answered_before_submit_returns(
    any_engine: Any, chroma: Any, embedder: Any, corpus: Path,
) -> None:
    """A question answered before, asked again word for word: its job is stored ended, with
    every event a run stores, by the time `submit` returns (no task runs it), and reads as
    any job does. Held back by a tenant's queue, it waits its turn; asked to bypass the
    cache, the same question is researched again."""
    service = await _service(any_engine, chroma, embedder, corpus, cached=True)
    first_id = await service.submit(ResearchRequest(question=QUESTION, tenant="t1"))
    await service.wait(first_id)  # its task too
    first = await service.answer(first_id)
    again = await service.submit(ResearchRequest(question=QUESTION, tenant="t1", user="u2"))
    assert service._tasks == {}
    job = await service.store.get(again)
    assert job.status == JobStatus.COMPLETED and job.user == "u2" and job.progress == 1.0
    assert job.result is not None and job.result.cached and job.result.job_id == again
    assert job.result.answer.summary == first.answer.summary
    assert job.metrics["cached"] is True and set(job.metrics["stage_ms"]) == \
        {"intake", "cache", "deliver"}
    events = await service.stored_events(again)
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert [(e.kind, e.stage) for e in events] == [
        ("queued", None), ("started", "intake"), ("finished", "intake"), ("started", "cache"),
        ("finished", "cache"), ("started", "deliver"), ("finished", "deliver"),
        ("completed", None)]
    assert events[-1].message == f"Confidence: {first.answer.confidence.value}"
    assert [event async for event in service.events(again)] == events
    assert (await service.answer(again)).cached
    held = await service.submit(ResearchRequest(question=QUESTION, tenant="t1"),
                                start_after_s=0.3)  # a tenant's queue holds it back: it waits
    assert (await service.store.get(held)).status == JobStatus.PENDING
    assert (await service.answer(held)).cached
    researched = await service.submit(
        ResearchRequest(question=QUESTION, tenant="t1", bypass_cache=True))
    assert (await service.store.get(researched)).status in (JobStatus.PENDING,
                                                           JobStatus.IN_PROGRESS)
    assert not (await service.answer(researched)).cached
    await service.close()
