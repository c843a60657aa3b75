"""A `researchbot serve` process on a free loopback port, for the benchmarks that measure
through the API (documents.py, mcp_research.py): started with the given environment, ready
once /readyz answers 200, stopped on the way out."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import sys
from collections.abc import AsyncIterator

import httpx


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.asynccontextmanager
async def serving(env: dict[str, str], within_s: float = 60.0) -> AsyncIterator[str]:
    """The server's base URL while it runs."""
    port = free_port()
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "serve", "--port", str(port), env=env,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient() as client, asyncio.timeout(within_s):
            while True:
                with contextlib.suppress(httpx.TransportError):
                    if (await client.get(f"{url}/readyz")).status_code == 200:
                        break
                await asyncio.sleep(0.1)
        yield url
    finally:
        process.terminate()
        await process.wait()
