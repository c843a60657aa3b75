"""A running job's stage events reach the database while it runs (core.jobs.progress)."""

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from core.jobs.progress import StoredProgress
from core.models import Job, ProgressEvent, ResearchRequest, Stage
from core.store.events import JobEvents
from core.store.jobs import JobStore

pytestmark = pytest.mark.unit


def _event(job_id: str, stage: Stage) -> ProgressEvent:
    return ProgressEvent(job_id=job_id, stage=stage, kind="started", progress=0.5,
                         message=f"{stage.value} started")


async def test_an_event_offered_while_a_batch_is_written_is_written_too(
        sqlite_engine: Any, tmp_path: Path) -> None:
    """The search stage offered while the batch before it waits for the database (another
    writer holds it) is stored soon after, not only when the next stage comes: a slow
    search must show as running on the answer page."""
    store, events = JobStore(sqlite_engine), JobEvents(sqlite_engine)
    job = await store.create(Job(request=ResearchRequest(question="Why do otters float?")))
    events.new_job(job.id)
    progress = StoredProgress(store, events, job.id, interval_s=0.01)
    other = sqlite3.connect(tmp_path / "test.sqlite3", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process writing: the first batch waits
    progress.offer(_event(job.id, Stage.PLAN))
    await asyncio.sleep(0.3)  # the batch is taken and waits for SQLite's lock
    progress.offer(_event(job.id, Stage.SEARCH))
    other.execute("COMMIT")
    other.close()
    seen = []
    async with asyncio.timeout(10):  # before the fix: the search stage waited for close()
        async for stored in events.follow(job.id):
            seen.append(stored.stage)
            if len(seen) == 2:
                break
    assert seen == [Stage.PLAN, Stage.SEARCH]
    await progress.close()
