"""Which database failures are an outage (503, worth asking again) and which are not, on the
real drivers: SQLite's full file, a constraint broken by a bug; and a write that outlasts an
outage."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError, OperationalError

from core.errors import StoreUnavailableError
from core.models import Job, ResearchRequest
from core.store.database import open_database
from core.store.jobs import JobStore
from core.store.outage import outlast, store_outage


async def test_a_full_sqlite_file_is_an_outage_and_a_broken_constraint_is_not(
    tmp_path: Path,
) -> None:
    engine = await open_database(f"sqlite+aiosqlite:///{tmp_path / 'jobs.sqlite3'}")
    store = JobStore(engine)
    job = Job(tenant="t1", request=ResearchRequest(question="How long do cats sleep?"))
    await store.create(job)
    with pytest.raises(IntegrityError) as duplicate:
        await store.create(job)
    assert store_outage(duplicate.value) is None  # a bug stays a bug (500)
    async with engine.connect() as connection:  # the file may grow no further: SQLITE_FULL
        pages = (await connection.execute(text("PRAGMA page_count"))).scalar()
        await connection.execute(text(f"PRAGMA max_page_count = {pages}"))
        with pytest.raises(OperationalError) as full:
            await connection.execute(text("CREATE TABLE filler (x TEXT)"))
            await connection.execute(text("INSERT INTO filler VALUES (:x)"), {"x": "x" * 10**6})
    outage = store_outage(full.value)
    assert isinstance(outage, StoreUnavailableError)
    assert "disk is full" in str(outage) and outage.retry_after_s >= 5
    await engine.dispose()


async def test_a_write_outlasts_an_outage_and_gives_up_after_its_grace() -> None:
    tries: list[int] = []

    async def write() -> str:
        tries.append(1)
        if len(tries) < 3:
            raise StoreUnavailableError("away")
        return "stored"

    assert await outlast(write, give_up_after_s=5, first_wait_s=0.01) == "stored"
    assert len(tries) == 3

    async def never() -> str:
        raise StoreUnavailableError("away")

    with pytest.raises(StoreUnavailableError):
        await outlast(never, give_up_after_s=0.05, first_wait_s=0.01)

    async def bug() -> str:
        raise KeyError("not an outage")

    with pytest.raises(KeyError):  # at once, not retried
        await outlast(bug, give_up_after_s=60)
