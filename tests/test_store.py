from datetime import timedelta
from typing import Any

import pytest

from core.errors import JobNotFoundError
from core.models import Job, JobStatus, Stage
from core.store import JobStore


async def test_job_lifecycle(any_engine: Any) -> None:
    store = JobStore(any_engine)
    job = await store.create(Job(tenant="t1", user="u1", platform="cli",
                                 request={"question": "Why?"}, worker="host:1"))
    await store.start(job.id)
    await store.advance(job.id, Stage.SEARCH, 0.5, {"plan": {"queries": ["why"]}})
    running = await store.get(job.id)
    assert running.status == JobStatus.IN_PROGRESS and running.stage == Stage.SEARCH
    assert running.progress == 0.5 and running.state["plan"]["queries"] == ["why"]
    assert running.started_at is not None and running.started_at.tzinfo is not None
    await store.complete(job.id, {"answer": "because"}, {"tokens": 0}, {"iterations": []})
    done = await store.get(job.id)
    assert done.status == JobStatus.COMPLETED and done.progress == 1.0
    assert done.result == {"answer": "because"} and done.completed_at is not None
    assert [j.id for j in await store.recent("t1")] == [job.id]
    assert await store.recent("other") == []


async def test_unknown_job(any_engine: Any) -> None:
    with pytest.raises(JobNotFoundError):
        await JobStore(any_engine).get("missing")


async def test_abandoned_jobs_are_failed_at_start_up(any_engine: Any) -> None:
    store = JobStore(any_engine)
    dead = await store.create(Job(request={}, worker="here:dead"))
    await store.start(dead.id)
    alive = await store.create(Job(request={}, worker="here:alive"))
    await store.start(alive.id)
    finished = await store.create(Job(request={}, worker="here:dead"))
    await store.complete(finished.id, {}, {}, {})

    count = await store.fail_abandoned(lambda w: w != "here:dead", timedelta(hours=1))
    assert count == 1
    failed = await store.get(dead.id)
    assert failed.status == JobStatus.FAILED and "interrupted" in (failed.error or "")
    assert (await store.get(alive.id)).status == JobStatus.IN_PROGRESS
    assert (await store.get(finished.id)).status == JobStatus.COMPLETED
    # Past the age limit even a job whose worker looks alive is failed.
    assert await store.fail_abandoned(lambda w: True, timedelta(0)) == 1
    assert (await store.get(alive.id)).status == JobStatus.FAILED
