from typing import Any

import pytest

from core.models import (
    Confidence,
    ConversationTurn,
    Job,
    JobStatus,
    ResearchAnswer,
    ResearchRequest,
    ResearchResult,
    Trace,
)
from core.research.intake import standalone_question
from core.store.conversations import MAX_TURNS, ConversationStore
from core.store.jobs import JobStore

pytestmark = pytest.mark.integration


async def _answered(store: JobStore, question: str, tenant: str = "T1") -> str:
    request = ResearchRequest(question=question, tenant=tenant, platform="slack")
    job = await store.create(Job(tenant=tenant, request=request))
    result = ResearchResult(job_id=job.id, status=JobStatus.COMPLETED, question=question,
                            answer=ResearchAnswer(summary=f"About {question}",
                                                  confidence=Confidence.LOW))
    await store.complete(job.id, result, {}, Trace())
    return job.id


async def test_a_thread_remembers_its_answers_in_order(any_engine: Any) -> None:
    store, conversations = JobStore(any_engine), ConversationStore(any_engine)
    for n in range(MAX_TURNS + 2):
        job = await _answered(store, f"question {n}")
        await conversations.remember("slack", "T1", "C1:100", f"C1:{200 + n}", job)
    failed = await store.create(Job(tenant="T1", request=ResearchRequest(question="q")))
    await store.fail(failed.id, "boom")
    await conversations.remember("slack", "T1", "C1:100", "C1:999", failed.id)

    turns = await conversations.history("slack", "T1", "C1:100")
    assert [t.question for t in turns] == [f"question {n}" for n in range(2, MAX_TURNS + 2)]
    assert turns[-1].answer == f"About question {MAX_TURNS + 1}"
    # Other threads, tenants and platforms are not this thread.
    assert await conversations.history("slack", "T1", "C1:101") == []
    assert await conversations.history("slack", "T2", "C1:100") == []
    assert await conversations.history("discord", "T1", "C1:100") == []


async def test_an_answer_message_leads_back_to_its_request(any_engine: Any) -> None:
    store, conversations = JobStore(any_engine), ConversationStore(any_engine)
    job = await _answered(store, "Why is the sky blue?")
    await conversations.remember("slack", "T1", "C1:100", "C1:200", job)
    found = await conversations.answered("slack", "T1", "C1:200")
    assert found is not None
    request, thread = found
    assert request.question == "Why is the sky blue?" and thread == "C1:100"
    assert await conversations.answered("slack", "T1", "C1:100") is None
    assert await conversations.answered("slack", "T2", "C1:200") is None


def test_a_follow_up_that_leans_on_the_thread_carries_its_question() -> None:
    turn = [ConversationTurn(question="How many hours a day do cats sleep?")]
    assert standalone_question("And kittens?", turn) == (
        "And kittens? (How many hours a day do cats sleep?)")
    assert standalone_question("What do they eat?", turn).endswith("(How many hours a day "
                                                                     "do cats sleep?)")
    assert standalone_question("Which city did Mount Vesuvius bury in 79?", turn) == (
        "Which city did Mount Vesuvius bury in 79?")
    assert standalone_question("And kittens?", []) == "And kittens?"
