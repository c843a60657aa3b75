from datetime import timedelta
from typing import Any

import pytest

from core.errors import JobNotFoundError
from core.models import (
    Confidence,
    FailureKind,
    Job,
    JobStatus,
    ResearchAnswer,
    ResearchRequest,
    ResearchResult,
    Round,
    Stage,
    Trace,
)
from core.store.jobs import JobStore

pytestmark = pytest.mark.integration

WHY = ResearchRequest(question="Why?", tenant="t1")


def _result(job_id: str) -> ResearchResult:
    return ResearchResult(job_id=job_id, status=JobStatus.COMPLETED, question="Why?",
                          answer=ResearchAnswer(summary="Because.", confidence=Confidence.LOW))


async def test_job_lifecycle(any_engine: Any) -> None:
    """A job's request, trace and result come back typed, as they were stored."""
    store = JobStore(any_engine)
    job = await store.create(Job(tenant="t1", user="u1", platform="cli", request=WHY,
                                 worker="host:1"))
    await store.start(job.id)
    await store.advance(job.id, Stage.SEARCH, 0.5)
    running = await store.get(job.id)
    assert running.status == JobStatus.IN_PROGRESS and running.stage == Stage.SEARCH
    assert running.progress == 0.5 and running.request == WHY
    assert running.started_at is not None and running.started_at.tzinfo is not None
    trace = Trace(plan=["why"], iterations=[Round(queries=["why"], useful=1)])
    await store.complete(job.id, _result(job.id), {"tokens": 0}, trace)
    done = await store.get(job.id)
    assert done.status == JobStatus.COMPLETED and done.progress == 1.0
    assert done.result == _result(job.id) and done.trace == trace
    assert done.completed_at is not None and done.failure is None
    assert [j.id for j in await store.recent("t1")] == [job.id]
    assert await store.recent("other") == []


async def test_a_failed_job_keeps_why(any_engine: Any) -> None:
    store = JobStore(any_engine)
    refused = await store.create(Job(request=WHY))
    await store.fail(refused.id, "llm.fast_model: the key was refused",
                     FailureKind.CONFIGURATION, {"stage_ms": {"plan": 3}})
    failed = await store.get(refused.id)
    assert failed.status == JobStatus.FAILED and failed.failure == FailureKind.CONFIGURATION
    assert failed.metrics == {"stage_ms": {"plan": 3}} and failed.result is None
    cancelled = await store.create(Job(request=WHY))
    await store.fail(cancelled.id, "cancelled", FailureKind.CANCELLED)
    assert (await store.get(cancelled.id)).status == JobStatus.CANCELLED


async def test_unknown_job(any_engine: Any) -> None:
    with pytest.raises(JobNotFoundError):
        await JobStore(any_engine).get("missing")


async def test_abandoned_jobs_are_failed_at_start_up(any_engine: Any) -> None:
    store = JobStore(any_engine)
    dead = await store.create(Job(request=WHY, worker="here:dead"))
    await store.start(dead.id)
    alive = await store.create(Job(request=WHY, worker="here:alive"))
    await store.start(alive.id)
    finished = await store.create(Job(request=WHY, worker="here:dead"))
    await store.complete(finished.id, _result(finished.id), {}, Trace())

    count = await store.fail_abandoned(lambda w: w != "here:dead", timedelta(hours=1))
    assert count == 1
    failed = await store.get(dead.id)
    assert failed.status == JobStatus.FAILED and "interrupted" in (failed.error or "")
    assert failed.failure == FailureKind.INTERRUPTED
    assert (await store.get(alive.id)).status == JobStatus.IN_PROGRESS
    assert (await store.get(finished.id)).status == JobStatus.COMPLETED
    # Past the age limit even a job whose worker looks alive is failed.
    assert await store.fail_abandoned(lambda w: True, timedelta(0)) == 1
    assert (await store.get(alive.id)).status == JobStatus.FAILED


async def _made_by_an_earlier_release(connection: Any) -> None:
    """Earlier releases recorded no schema version in a SQLite file (PRAGMA user_version)."""
    from sqlalchemy import text

    if connection.dialect.name == "sqlite":
        await connection.execute(text("PRAGMA user_version = 0"))


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
        await _made_by_an_earlier_release(connection)
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


async def test_a_jobs_table_without_the_failure_column_gets_it(any_engine: Any) -> None:
    """Stores made before jobs recorded how they failed are upgraded in place."""
    from sqlalchemy import text

    from core.store.database import open_database

    store = JobStore(any_engine)
    old = await store.create(Job(request=WHY))
    async with any_engine.begin() as connection:
        await connection.execute(text("ALTER TABLE jobs DROP COLUMN failure"))
        await _made_by_an_earlier_release(connection)
    upgraded = await open_database(any_engine.url.render_as_string(hide_password=False))
    try:
        again = JobStore(upgraded)
        assert (await again.get(old.id)).failure is None
        await again.fail(old.id, "boom")
        assert (await again.get(old.id)).failure == FailureKind.ERROR
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
        await _made_by_an_earlier_release(connection)
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


async def test_processes_starting_together_make_the_schema_once(any_engine: Any,
                                                                 tmp_path: Any) -> None:
    """`serve` and its workers, or several CLI runs, open one store at the same moment:
    a new store, and one from before an index was added."""
    import asyncio

    from sqlalchemy import inspect, text

    from core.store.database import metadata, open_database, sqlite_url

    if any_engine.dialect.name == "sqlite":
        url = sqlite_url(str(tmp_path / "new.sqlite3"))
    else:
        url = any_engine.url.render_as_string(hide_password=False)
        async with any_engine.begin() as connection:
            await connection.run_sync(metadata.drop_all)

    async def start_together() -> list[Any]:
        opened = await asyncio.gather(*(open_database(url) for _ in range(6)),
                                      return_exceptions=True)
        for engine in opened:
            if not isinstance(engine, BaseException):
                await engine.dispose()
        return [repr(error) for error in opened if isinstance(error, BaseException)]

    assert await start_together() == []
    engine = await open_database(url)
    try:
        async with engine.begin() as connection:
            for index in ("ix_kb_files_file", "ix_kb_chunks_file", "ix_jobs_status"):
                await connection.execute(text(f"DROP INDEX {index}"))
            await _made_by_an_earlier_release(connection)
        assert await start_together() == []
        async with engine.connect() as connection:
            indexes = await connection.run_sync(
                lambda sync: {i["name"] for table in ("kb_files", "kb_chunks", "jobs")
                              for i in inspect(sync).get_indexes(table)})
        assert {"ix_kb_files_file", "ix_kb_chunks_file", "ix_jobs_status"} <= indexes
    finally:
        await engine.dispose()
