"""Which chat message answered which job, so that threads can be continued and retried.

Front ends name messages and threads with their own opaque keys (e.g. "C123:1700000000.1");
the store only keeps them apart by platform and tenant."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Select, select
from sqlalchemy.ext.asyncio import AsyncEngine

from core.models import ConversationTurn, JobStatus, ResearchRequest, ResearchResult, utcnow
from core.store.database import answer_messages, jobs

MAX_TURNS = 5  # earlier turns add little to a follow-up and a lot to its prompt
MAX_SOURCES = 8  # an earlier answer's cited sources a follow-up may reuse


class ConversationStore:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def remember(
        self, platform: str, tenant: str, thread: str, message: str, job_id: str
    ) -> None:
        """Record that `message`, in `thread`, carries the answer of job `job_id`."""
        async with self._engine.begin() as connection:
            await connection.execute(answer_messages.delete().where(
                answer_messages.c.platform == platform, answer_messages.c.tenant == tenant,
                answer_messages.c.message == message))
            await connection.execute(answer_messages.insert().values(
                platform=platform, tenant=tenant, message=message, thread=thread,
                job_id=job_id, created_at=utcnow()))

    async def answered(self, platform: str, tenant: str, message: str
                       ) -> tuple[ResearchRequest, str] | None:
        """The request whose answer is `message`, and the thread it sits in (for a retry);
        None when `message` is not one of the bot's answers."""
        query = (select(jobs.c.request, answer_messages.c.thread)
                 .join(answer_messages, answer_messages.c.job_id == jobs.c.id)
                 .where(answer_messages.c.platform == platform,
                        answer_messages.c.tenant == tenant,
                        answer_messages.c.message == message))
        async with self._engine.connect() as connection:
            row = (await connection.execute(query)).first()
        return None if row is None else (ResearchRequest.model_validate(row.request), row.thread)

    async def job_answered_by(self, platform: str, tenant: str, message: str) -> str | None:
        """The id of the job whose answer is `message`; None when it is not one of ours."""
        query = select(answer_messages.c.job_id).where(
            answer_messages.c.platform == platform, answer_messages.c.tenant == tenant,
            answer_messages.c.message == message)
        async with self._engine.connect() as connection:
            return (await connection.execute(query)).scalar_one_or_none()

    async def latest_answer(self, platform: str, tenant: str, thread: str) -> str | None:
        """The job whose answer is the thread's latest (what "refine: ..." there revises);
        None when the bot has answered nothing in the thread."""
        query = _answered_in(select(answer_messages.c.job_id), platform, tenant,
                             thread).limit(1)
        async with self._engine.connect() as connection:
            return (await connection.execute(query)).scalar_one_or_none()

    async def history(self, platform: str, tenant: str, thread: str) -> list[ConversationTurn]:
        """The thread's answered questions, oldest first: an empty list when the bot has not
        answered in this thread (so a message there is not a follow-up)."""
        query = _answered_in(select(jobs.c.result), platform, tenant, thread).limit(MAX_TURNS)
        async with self._engine.connect() as connection:
            rows = (await connection.execute(query)).scalars().all()
        turns = []
        for row in reversed(rows):
            result = ResearchResult.model_validate(row)
            turns.append(ConversationTurn(
                question=result.question, answer=result.answer.summary,
                source_ids=[s.id for s in result.sources],
                sources=result.sources[:MAX_SOURCES]))
        return turns


def _answered_in(query: Select[Any], platform: str, tenant: str, thread: str) -> Select[Any]:
    """`query` over the thread's answered jobs, latest first."""
    return (query.select_from(answer_messages.join(jobs, answer_messages.c.job_id == jobs.c.id))
            .where(answer_messages.c.platform == platform, answer_messages.c.tenant == tenant,
                   answer_messages.c.thread == thread,
                   jobs.c.status == JobStatus.COMPLETED.value)
            .order_by(answer_messages.c.created_at.desc()))
