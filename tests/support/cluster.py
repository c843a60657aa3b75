"""A researchbot deployment as separate processes: chat front ends and workers started with
`python -m bot`, sharing the PostgreSQL server, a Redis queue and one data folder (the
embedded Chroma, shared through its file lock), as README's multi-process set-up describes.
For the queue tests and the worker benchmark."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support import researchbot
from tests.support.corpus import index_corpus
from tests.support.researchbot import Process
from tests.support.services import POSTGRES_URL, REDIS_URL, skip_or_fail


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Cluster:
    folder: Path
    env: dict[str, str]
    processes: list[Process] = field(default_factory=list)

    async def start(self, name: str, *args: str, **extra_env: str) -> Process:
        """`researchbot ARGS`, logging to NAME.log in the folder; stopped by `stop_all`."""
        process = await researchbot.start(*args, log=self.folder / f"{name}.log",
                                          env={**self.env, **extra_env})
        self.processes.append(process)
        return process

    async def worker(self, name: str, **extra_env: str) -> Process:
        process = await self.start(name, "worker", **extra_env)
        await process.wait_for_line("taking jobs from")
        return process

    def kill(self, process: Process) -> None:
        process.handle.send_signal(signal.SIGKILL)

    async def stop_all(self) -> None:
        await asyncio.gather(*(process.stop() for process in self.processes))


@contextlib.asynccontextmanager
async def chroma_server(folder: Path) -> AsyncIterator[str]:
    """`chroma run` on a free port: the vector store several machines would share."""
    import aiohttp

    port = free_port()
    log = folder / "chroma.log"
    process = await asyncio.create_subprocess_exec(
        str(Path(sys.executable).parent / "chroma"), "run", "--path", str(folder / "chroma"),
        "--host", "127.0.0.1", "--port", str(port), stdout=log.open("wb"),
        stderr=subprocess.STDOUT, env={**os.environ, "ANONYMIZED_TELEMETRY": "False"})
    url = f"http://127.0.0.1:{port}"
    try:
        async with asyncio.timeout(60), aiohttp.ClientSession() as session:
            while True:
                with contextlib.suppress(aiohttp.ClientError):
                    async with session.get(f"{url}/api/v2/heartbeat") as response:
                        if response.status == 200:
                            break
                await asyncio.sleep(0.2)  # a server starting up
        yield url
    finally:
        process.terminate()
        await process.wait()


async def reset_servers() -> None:
    """An empty job database and queue: the tests count every job and queue item."""
    from redis.asyncio import Redis
    from sqlalchemy.ext.asyncio import create_async_engine

    from core.store.database import metadata

    engine = create_async_engine(POSTGRES_URL)
    redis = Redis.from_url(REDIS_URL)
    try:
        async with engine.begin() as connection:
            await connection.run_sync(metadata.drop_all)
        await redis.flushdb()
    except Exception as error:  # any failure here means "no usable server"
        skip_or_fail(f"PostgreSQL or Redis not reachable ({POSTGRES_URL}, {REDIS_URL}): {error}")
    finally:
        await engine.dispose()
        await redis.aclose()


@contextlib.asynccontextmanager
async def cluster(folder: Path, tenant: str, *, fresh: bool = False,
                  **settings: str) -> AsyncIterator[Cluster]:
    """The corpus indexed for `tenant` into PostgreSQL and the shared data folder; processes
    started in it are stopped (SIGTERM, then SIGKILL) on the way out. `settings`: more
    RESEARCHBOT_* variables; `fresh`: they name a database and a queue of the test's own,
    empty already (the shared ones are emptied first)."""
    if not fresh:
        await reset_servers()
    env = {key: value for key, value in os.environ.items()
           if not key.startswith("RESEARCHBOT_") or key == "RESEARCHBOT_REQUIRE_SERVICES"}
    env.update({
        "RESEARCHBOT_DATA_DIR": str(folder / "data"),
        "RESEARCHBOT_STORE__URL": POSTGRES_URL,
        "RESEARCHBOT_REDIS__URL": REDIS_URL,
        # 2 s gave false take-ups on a busy machine
        "RESEARCHBOT_ADVANCED__QUEUE__HEARTBEAT_SECONDS": "10",
        "RESEARCHBOT_ADVANCED__QUEUE__SWEEP_SECONDS": "1",
        "RESEARCHBOT_ADVANCED__QUEUE__SHUTDOWN_GRACE_SECONDS": "20",
        "RESEARCHBOT_PIPELINE__LOCAL_ONLY": "true",
        "RESEARCHBOT_CACHE__ENABLED": "false",
        "RESEARCHBOT_ADVANCED__CHAT__USER_QUESTIONS_PER_MINUTE": "1000",
        "RESEARCHBOT_ADVANCED__CHAT__TENANT_QUESTIONS_PER_MINUTE": "1000",
        "RESEARCHBOT_ADVANCED__CHAT__DELIVERY_FIRST_WAIT_SECONDS": "0.2",
        **settings,
    })
    await asyncio.to_thread(index_corpus, folder / "data", tenant, env)
    made = Cluster(folder, env)
    try:
        yield made
    finally:
        await made.stop_all()


async def wait_until(predicate: Any, within_s: float, every_s: float = 0.1) -> None:
    """Poll `predicate` (a look at another process's database: no event reaches us)."""
    async with asyncio.timeout(within_s):
        while not await predicate():  # noqa: ASYNC110
            await asyncio.sleep(every_s)
