"""The PostgreSQL and Redis servers the tests use, one database of each per test process.

A single test process uses the database `test` and Redis database 15 (or the URLs in
RESEARCHBOT_TEST_POSTGRES_URL and RESEARCHBOT_TEST_REDIS_URL). Under pytest-xdist each worker
gw0, gw1, ... has a PostgreSQL database of its own (`test_gw0`, created on first use) and a
Redis database of its own (14, 13, ...), so workers never empty each other's tables or keys,
nor those of a test process run beside them. Two test runs on one machine would still share
them: each test process holds a lock on its pair of databases for its life, so the second
run's process waits for the first's (`hold_databases`) rather than emptying its tables."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

REQUIRE_SERVICES = os.environ.get("RESEARCHBOT_REQUIRE_SERVICES") == "1"
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
_WORKER_NUMBER = int(WORKER[2:]) + 1 if WORKER.startswith("gw") else 0
if _WORKER_NUMBER > 15:
    raise RuntimeError("Redis has 16 databases: run at most 15 test workers")

_POSTGRES_SERVER = "postgresql+asyncpg://postgres@127.0.0.1:5432"
POSTGRES_URL = os.environ.get(
    "RESEARCHBOT_TEST_POSTGRES_URL",
    f"{_POSTGRES_SERVER}/test" + (f"_{WORKER}" if _WORKER_NUMBER else ""))
REDIS_URL = os.environ.get("RESEARCHBOT_TEST_REDIS_URL",
                           f"redis://127.0.0.1:6379/{15 - _WORKER_NUMBER}")


def skip_or_fail(reason: str) -> None:
    """Skip where a server is missing on a laptop; fail in CI, which starts the servers."""
    if REQUIRE_SERVICES:
        pytest.fail(f"{reason} (RESEARCHBOT_REQUIRE_SERVICES=1)")
    pytest.skip(reason)


_held: list[Any] = []


def hold_databases() -> None:
    """Lock this process's PostgreSQL and Redis databases for the life of the process: a second
    test run on the machine waits here, saying so, instead of sharing them."""
    import fcntl
    import sys
    import tempfile
    from pathlib import Path

    name = f"researchbot-tests-{POSTGRES_URL.rsplit('/', 1)[1]}-{REDIS_URL.rsplit('/', 1)[1]}"
    lock = (Path(tempfile.gettempdir()) / f"{name}.lock").open("w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print(f"another test run is using {POSTGRES_URL} and {REDIS_URL}: waiting for it",
              file=sys.stderr, flush=True)
        fcntl.flock(lock, fcntl.LOCK_EX)
    _held.append(lock)


def create_worker_database() -> None:
    """Under pytest-xdist, CREATE DATABASE test_gwN unless it exists (at the session's start, so
    that tests that only hand POSTGRES_URL to a process find it). Where the server cannot be
    reached, nothing: the tests that need it skip, or fail under REQUIRE_SERVICES."""
    import asyncio

    if not _WORKER_NUMBER or "RESEARCHBOT_TEST_POSTGRES_URL" in os.environ:
        return
    try:
        asyncio.run(_create_worker_database())
    except Exception:  # the server is down or refuses: reported by the tests that use it
        return


async def _create_worker_database() -> None:
    from sqlalchemy import text
    from sqlalchemy.ext.asyncio import create_async_engine

    name = POSTGRES_URL.rsplit("/", 1)[1]
    server = create_async_engine(f"{_POSTGRES_SERVER}/postgres", isolation_level="AUTOCOMMIT")
    try:
        async with server.connect() as connection:
            found = await connection.scalar(
                text("SELECT 1 FROM pg_database WHERE datname = :name"), {"name": name})
            if not found:
                await connection.execute(text(f'CREATE DATABASE "{name}"'))
    finally:
        await server.dispose()


async def open_postgres_engine() -> Any:
    """An engine on this process's PostgreSQL database, its tables dropped and made anew."""
    from sqlalchemy.ext.asyncio import create_async_engine

    from core.store.database import metadata, open_database

    probe = create_async_engine(POSTGRES_URL)
    try:
        async with probe.begin() as connection:
            await connection.run_sync(metadata.drop_all)
    except Exception as error:  # any failure here means "no usable server"
        skip_or_fail(f"PostgreSQL not reachable at {POSTGRES_URL}: {error}")
    finally:
        await probe.dispose()
    return await open_database(POSTGRES_URL)


@asynccontextmanager
async def redis_server() -> AsyncIterator[Any]:
    """This process's Redis database, emptied before and after."""
    from redis.asyncio import Redis

    client = Redis.from_url(REDIS_URL)
    try:
        await client.flushdb()
    except Exception as error:  # any failure here means "no usable server"
        await client.aclose()
        skip_or_fail(f"Redis not reachable at {REDIS_URL}: {error}")
    try:
        yield client
    finally:
        await client.flushdb()
        await client.aclose()
