"""The breaker file across processes: the next CLI question makes no connection to a source the
last one found failing (system tier)."""


import asyncio
import json
import os
from pathlib import Path

import pytest

from tests.core.sources.test_breaker_file import EXAMPLE_DOCS
from tests.support import researchbot

pytestmark = pytest.mark.system


class CountingServer:
    """An HTTP server on 127.0.0.1 that counts the connections made to it and answers every
    request 503 Service Unavailable."""

    def __init__(self) -> None:
        self.connections = 0
        self._server: asyncio.Server | None = None

    async def start(self) -> str:
        self._server = await asyncio.start_server(self._answer, "127.0.0.1", 0)
        return f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _answer(self, reader: asyncio.StreamReader,
                      writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            await reader.readuntil(b"\r\n\r\n")
            writer.write(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
                         b"Connection: close\r\n\r\n")
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


async def _researchbot(*args: str, env: dict[str, str]) -> str:
    """What the command printed (its process beside the server on this event loop)."""
    done = await researchbot.run_async(*args, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


async def test_the_next_cli_question_makes_no_connection_to_a_failing_source(
    clean_env: Path,
) -> None:
    server = CountingServer()
    base = await server.start()
    env = {**os.environ, "RESEARCHBOT_PIPELINE__LOCAL_ONLY": "false",
           "RESEARCHBOT_ENDPOINTS__WIKIPEDIA_API": f"{base}/w/api.php",
           "RESEARCHBOT_ENDPOINTS__ARXIV_API": f"{base}/arxiv/query",
           "RESEARCHBOT_ENDPOINTS__PUBMED_API": f"{base}/eutils",
           "RESEARCHBOT_ADVANCED__SOURCES__ATTEMPTS": "1",
           "RESEARCHBOT_ADVANCED__SOURCES__BREAKER_FAILURES": "1",
           "RESEARCHBOT_ADVANCED__SOURCES__FETCH_PAGES": "0"}
    try:
        await _researchbot("index", str(EXAMPLE_DOCS), env=env)
        question = ("ask", "How does researchbot check citations?", "--no-cache", "--json")
        first = json.loads(await _researchbot(*question, env=env))
        called = server.connections
        second = json.loads(await _researchbot(*question, env=env))
    finally:
        await server.stop()
    assert called >= 1
    assert server.connections == called  # the second process remembered the failure
    told = first["answer"]["limitations"]
    assert any("returned an error" in note for note in told)
    assert second["answer"]["limitations"] == told  # and tells the person the same
