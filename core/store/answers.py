"""Cached answers by exact key: the answer cache's exact half (core.answer.cache decides what
is kept and for how long; this only reads and writes the rows)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import bindparam, delete, select
from sqlalchemy.ext.asyncio import AsyncEngine

from core.redact import REDACTOR
from core.store.database import cached_answers, upsert_into

# Built once: a statement's expression costs more to build than SQLite takes to run it, and
# this one runs on every question.
_FRESH = select(cached_answers).where(
    cached_answers.c.tenant == bindparam("tenant"), cached_answers.c.key == bindparam("key"),
    cached_answers.c.expires_at > bindparam("now"))


@dataclass(frozen=True)
class CachedAnswer:
    question: str
    result_json: str
    created_at: float
    expires_at: float


class CachedAnswerStore:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def get(self, tenant: str, key: str, now: float) -> CachedAnswer | None:
        """The answer kept under `key`, unless it expired by `now`."""
        async with self._engine.connect() as connection:
            row = (await connection.execute(
                _FRESH, {"tenant": tenant, "key": key, "now": now})).first()
        if row is None:
            return None
        return CachedAnswer(row.question, row.result, row.created_at, row.expires_at)

    async def put(self, tenant: str, key: str, answer: CachedAnswer) -> None:
        """Keep `answer` under `key` (replacing what was there) and drop the tenant's expired
        answers, so the table holds only what can still be served."""
        values = {"tenant": tenant, "key": key, "question": REDACTOR(answer.question),
                  "result": answer.result_json, "created_at": answer.created_at,
                  "expires_at": answer.expires_at}
        async with self._engine.begin() as connection:
            upsert = upsert_into(cached_answers, connection).values(**values)
            await connection.execute(upsert.on_conflict_do_update(
                index_elements=["tenant", "key"],
                set_={name: upsert.excluded[name] for name in values
                      if name not in ("tenant", "key")}))
            await connection.execute(delete(cached_answers).where(
                cached_answers.c.tenant == tenant,
                cached_answers.c.expires_at <= answer.created_at))
