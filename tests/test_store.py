from datetime import timedelta
from typing import Any

import pytest

from core.errors import JobNotFoundError
from core.models import Job, JobStatus, Stage
from core.store.jobs import JobStore


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


async def test_a_store_from_the_first_release_is_upgraded_in_place(any_engine: Any) -> None:
    """0.1.0 keyed knowledge-base chunks by id alone; the upgrade keeps the rows."""
    from sqlalchemy import inspect, text

    from core.store.database import kb_chunks, open_database

    url = any_engine.url.render_as_string(hide_password=False)
    async with any_engine.begin() as connection:
        await connection.run_sync(kb_chunks.drop)
        await connection.execute(text(
            "CREATE TABLE kb_chunks (id VARCHAR(64) PRIMARY KEY, tenant VARCHAR(255) NOT NULL,"
            " file_id VARCHAR(32) NOT NULL, ordinal INTEGER NOT NULL, text TEXT NOT NULL,"
            " location TEXT)"))
        await connection.execute(text("CREATE INDEX ix_kb_chunks_tenant ON kb_chunks (tenant)"))
        await connection.execute(text(
            "INSERT INTO kb_chunks VALUES ('c1', 't1', 'f1', 0, 'Cats sleep.', NULL)"))
    upgraded = await open_database(url)
    try:
        async with upgraded.begin() as connection:
            key = await connection.run_sync(
                lambda sync: inspect(sync).get_pk_constraint("kb_chunks")["constrained_columns"])
            assert sorted(key) == ["id", "tenant"]
            await connection.execute(kb_chunks.insert().values(
                id="c1", tenant="t2", file_id="f1", ordinal=0, text="Cats sleep.",
                location=None))
            rows = (await connection.execute(text("SELECT tenant FROM kb_chunks"))).all()
        assert sorted(r[0] for r in rows) == ["t1", "t2"]
    finally:
        await upgraded.dispose()


async def test_a_store_from_before_the_file_index_gains_it(any_engine: Any) -> None:
    """Search joins each chunk to its file by (tenant, file_id) (issue 23: 20k chunks took
    seconds while each file was looked up among all of the tenant's)."""
    from sqlalchemy import inspect, text

    from core.store.database import open_database

    url = any_engine.url.render_as_string(hide_password=False)
    async with any_engine.begin() as connection:
        await connection.execute(text("DROP INDEX ix_kb_files_file"))
    upgraded = await open_database(url)
    try:
        async with upgraded.connect() as connection:
            indexes = await connection.run_sync(
                lambda sync: {i["name"]: i["column_names"]
                              for i in inspect(sync).get_indexes("kb_files")})
            assert indexes["ix_kb_files_file"] == ["tenant", "file_id"]
            if upgraded.dialect.name == "sqlite":
                plan = " ".join(str(row[-1]) for row in await connection.execute(text(
                    "EXPLAIN QUERY PLAN SELECT kb_chunks.id, kb_files.path FROM kb_chunks "
                    "JOIN kb_files ON kb_files.tenant = kb_chunks.tenant AND "
                    "kb_files.file_id = kb_chunks.file_id WHERE kb_chunks.tenant = 't1'")))
                assert "ix_kb_files_file (tenant=? AND file_id=?)" in plan
    finally:
        await upgraded.dispose()
