"""A `researchbot serve` process on a free loopback port, for the benchmarks that measure
through the API (documents.py, mcp_research.py): started with the given environment, ready
once /readyz answers 200, stopped on the way out."""

from __future__ import annotations

import contextlib
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support import researchbot
from tests.support.cluster import free_port


@contextlib.asynccontextmanager
async def serving(env: dict[str, str], within_s: float = 60.0) -> AsyncIterator[str]:
    """The server's base URL while it runs."""
    port = free_port()
    with tempfile.TemporaryDirectory() as logs:
        async with researchbot.running("serve", "--port", str(port), env=env,
                                       log=Path(logs) / "serve.log") as process:
            url = f"http://127.0.0.1:{port}"
            await process.wait_for_http(f"{url}/readyz", within_s)
            yield url
