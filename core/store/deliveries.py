"""Where each job's answer goes and which delivery steps are done (`job_deliveries`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from core.models import utcnow
from core.redact import REDACTOR, redact
from core.store.database import job_deliveries

DeliveryStatus = Literal["pending", "delivered", "failed"]


class DeliveryRecord(BaseModel):
    """A job's delivery as stored: where its answer goes (`target`, the platform's own
    address), the steps done with what each returned, how it stands."""

    job_id: str
    platform: str
    target: dict[str, Any] = Field(default_factory=dict)
    done: dict[str, Any] = Field(default_factory=dict)
    status: DeliveryStatus = "pending"
    attempts: int = 0
    error: str | None = None
    updated_at: datetime | None = None


class DeliveryStore:
    """The delivery row of each job: target, steps done, status, attempts, last error."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def open(self, job_id: str, platform: str, target: dict[str, Any]) -> None:
        async with self._engine.begin() as connection:
            await connection.execute(job_deliveries.insert().values(
                job_id=job_id, platform=platform,
                target=REDACTOR.data(target), done={}, status="pending",
                attempts=0, error=None, updated_at=utcnow()))

    async def get(self, job_id: str) -> DeliveryRecord | None:
        async with self._engine.connect() as connection:
            row = (await connection.execute(select(job_deliveries).where(
                job_deliveries.c.job_id == job_id))).first()
        return None if row is None else DeliveryRecord.model_validate(dict(row._mapping))

    async def update(self, job_id: str, **values: Any) -> None:
        if "error" in values and values["error"] is not None:
            values["error"] = redact(values["error"])
        async with self._engine.begin() as connection:
            await connection.execute(update(job_deliveries).where(
                job_deliveries.c.job_id == job_id).values(updated_at=utcnow(), **values))
