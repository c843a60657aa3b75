"""What readers thought of an answer: a rating (up or down) and an optional comment, from the
API, the answer page or a chat reaction, kept with the job. A rater who rates again replaces
their earlier rating."""

from __future__ import annotations

import enum
from datetime import UTC, datetime

from pydantic import BaseModel, Field
from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncEngine

from core.models import utcnow
from core.redact import REDACTOR
from core.store.database import job_feedback

MAX_COMMENT_CHARS = 2000


class Rating(enum.StrEnum):
    UP = "up"
    DOWN = "down"


class Feedback(BaseModel):
    job_id: str
    rater: str  # who: "api:<key id>", "web:<browser>", "slack:<user>", "discord:<user>"
    tenant: str
    channel: str  # api, web, slack or discord
    rating: Rating
    comment: str = Field(default="", max_length=MAX_COMMENT_CHARS)
    at: datetime = Field(default_factory=utcnow)


class FeedbackStore:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def add(self, feedback: Feedback) -> None:
        row = feedback.model_dump()
        row["rating"] = feedback.rating.value
        row["comment"] = REDACTOR(feedback.comment)
        async with self._engine.begin() as connection:
            await connection.execute(delete(job_feedback).where(
                job_feedback.c.job_id == feedback.job_id,
                job_feedback.c.rater == feedback.rater))
            await connection.execute(job_feedback.insert().values(**row))

    async def remove(self, job_id: str, rater: str, rating: Rating) -> bool:
        """Take back a rating (a chat reaction removed); False when it was not the rater's."""
        async with self._engine.begin() as connection:
            result = await connection.execute(delete(job_feedback).where(
                job_feedback.c.job_id == job_id, job_feedback.c.rater == rater,
                job_feedback.c.rating == rating.value))
        return bool(result.rowcount)

    async def for_job(self, job_id: str) -> list[Feedback]:
        query = select(job_feedback).where(job_feedback.c.job_id == job_id) \
            .order_by(job_feedback.c.at)
        async with self._engine.connect() as connection:
            rows = (await connection.execute(query)).all()
        found = []
        for row in rows:
            data = dict(row._mapping)
            if data["at"].tzinfo is None:  # SQLite returns naive datetimes
                data["at"] = data["at"].replace(tzinfo=UTC)
            found.append(Feedback.model_validate(data))
        return found
