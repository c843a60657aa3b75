"""A PostgreSQL, a Redis and a Chroma server of a test's own, on free loopback ports, that
the test may stop and start again (the shared servers other tests use must never be
restarted). For the outage tests and bench/outages.py."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.support.cluster import free_port

PG_BIN = Path("/usr/lib/postgresql/15/bin")


def _as_postgres(*args: str) -> list[str]:
    """initdb refuses to run as root: run PostgreSQL's tools as the `postgres` user then."""
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *args]
    return list(args)


@dataclass
class PrivatePostgres:
    folder: Path
    port: int

    @property
    def url(self) -> str:
        return f"postgresql+asyncpg://postgres@127.0.0.1:{self.port}/postgres"

    async def _ctl(self, *args: str) -> None:
        process = await asyncio.create_subprocess_exec(
            *_as_postgres(str(PG_BIN / "pg_ctl"), "-D", str(self.folder / "db"), *args),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        assert await process.wait() == 0, f"pg_ctl {args[0]} failed"

    async def start(self) -> None:
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 " \
                  "-c max_connections=200 -c fsync=off"
        await self._ctl("-o", options, "-l", str(self.folder / "postgres.log"), "-w", "start")

    async def stop(self) -> None:
        """Stop at once, dropping every connection (as a crash or a restart would)."""
        await self._ctl("-m", "immediate", "-w", "stop")


@contextlib.contextmanager
def _shared_temp_dir() -> Iterator[Path]:
    """A folder the `postgres` user can write (a test's tmp_path is root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="researchbot-pg-"))
    try:
        if os.geteuid() == 0:
            shutil.chown(folder, "postgres", "postgres")
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.asynccontextmanager
async def private_postgres() -> AsyncIterator[PrivatePostgres]:
    if not (PG_BIN / "initdb").exists():
        import pytest

        pytest.skip(f"no PostgreSQL binaries in {PG_BIN}")
    with _shared_temp_dir() as folder:
        init = await asyncio.create_subprocess_exec(
            *_as_postgres(str(PG_BIN / "initdb"), "-D", str(folder / "db"), "-A", "trust",
                          "-U", "postgres", "--no-sync"),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        assert await init.wait() == 0, "initdb failed"
        server = PrivatePostgres(folder, free_port())
        await server.start()
        try:
            yield server
        finally:
            with contextlib.suppress(AssertionError):
                await server.stop()


@dataclass
class PrivateRedis:
    port: int
    process: asyncio.subprocess.Process | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    async def start(self) -> None:
        self.process = await asyncio.create_subprocess_exec(
            "redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
            "--appendonly", "no", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        from redis.asyncio import Redis
        from redis.exceptions import RedisError

        client = Redis.from_url(self.url)
        try:
            async with asyncio.timeout(10):
                while True:
                    with contextlib.suppress(RedisError, OSError):
                        if await client.ping():
                            return
                    await asyncio.sleep(0.05)
        finally:
            await client.aclose()

    async def stop(self) -> None:
        if self.process is not None and self.process.returncode is None:
            self.process.kill()
            await self.process.wait()


@contextlib.asynccontextmanager
async def private_redis() -> AsyncIterator[PrivateRedis]:
    server = PrivateRedis(free_port())
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@dataclass
class PrivateChroma:
    folder: Path
    port: int
    process: asyncio.subprocess.Process | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        """`chroma run` on its port and folder (again, after a stop: the same data)."""
        import httpx

        self.process = await asyncio.create_subprocess_exec(
            str(Path(sys.executable).parent / "chroma"), "run", "--path",
            str(self.folder / "chroma"), "--host", "127.0.0.1", "--port", str(self.port),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={**os.environ, "ANONYMIZED_TELEMETRY": "False"})
        async with asyncio.timeout(60), httpx.AsyncClient() as client:
            while True:
                with contextlib.suppress(httpx.TransportError):
                    if (await client.get(f"{self.url}/api/v2/heartbeat")).status_code == 200:
                        return
                await asyncio.sleep(0.2)

    async def stop(self) -> None:
        if self.process is not None and self.process.returncode is None:
            self.process.send_signal(signal.SIGKILL)
            await self.process.wait()


@contextlib.asynccontextmanager
async def private_chroma(folder: Path) -> AsyncIterator[PrivateChroma]:
    server = PrivateChroma(folder, free_port())
    await server.start()
    try:
        yield server
    finally:
        await server.stop()
