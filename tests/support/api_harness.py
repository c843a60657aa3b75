"""The API server as `researchbot serve` runs it (bot.serve.open_api under uvicorn), on a free
loopback port in the test's own event loop, over a copy of the indexed test corpus."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from bot.config import Settings
from bot.serve import open_api
from core.models import Clock
from core.store.access import ApiKeys
from core.store.database import sqlite_url

TENANT = "T1"  # indexed in the template store (tests/conftest.py CHAT_TENANTS)
OTHER_TENANT = "T2"


def api_settings(data_dir: Path, **sections: Any) -> Settings:
    """Settings over the copied store in `data_dir`, local sources only, tenant T1."""
    values: dict[str, Any] = {
        "data_dir": data_dir, "tenant": TENANT,
        "store": {"url": sqlite_url(str(data_dir / "test.sqlite3"))},
        "pipeline": {"local_only": True},
    }
    for section, fields in sections.items():
        values[section] = {**values.get(section, {}), **fields}
    return Settings.model_validate(values)


@dataclass
class RunningApi:
    url: str
    app: Any
    settings: Settings

    def client(self, key: str | None = None, address: str | None = None,
               **options: Any) -> httpx.AsyncClient:
        """A client sending `key`, and appearing to come from `address`: uvicorn trusts
        X-Forwarded-For from 127.0.0.1 by default (a reverse proxy on this machine), so the
        app sees that address as the client's."""
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        if address is not None:
            headers["X-Forwarded-For"] = address
        return httpx.AsyncClient(base_url=self.url, headers=headers, timeout=60.0, **options)


@contextlib.asynccontextmanager
async def running_api(settings: Settings, host: str = "127.0.0.1",
                      clock: Clock = time.monotonic) -> AsyncIterator[RunningApi]:
    """`clock`: open_api's (a FakeClock lets a test move past the readiness probe's rest)."""
    async with open_api(settings, host, clock=clock) as app:
        config = uvicorn.Config(app, host=host, port=0, log_config=None, access_log=False,
                                lifespan="on")
        server = uvicorn.Server(config)
        task = asyncio.create_task(server.serve())
        try:
            while not server.started:
                if task.done():
                    task.result()
                    raise RuntimeError("the API server stopped before it started")
                await asyncio.sleep(0.02)
            port = server.servers[0].sockets[0].getsockname()[1]
            yield RunningApi(f"http://{host}:{port}", app, settings)
        finally:
            server.should_exit = True
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait_for(task, 15)


@contextlib.asynccontextmanager
async def server_keys(api: RunningApi) -> AsyncIterator[ApiKeys]:
    """The server's own key store: a key made or revoked through it takes effect at once (a
    key made by another process is seen within KEYS_RECHECK_S, tests/adapters/http/
    test_http_auth.py)."""
    yield api.app.state.services.keys


async def read_events(response: httpx.Response) -> AsyncIterator[dict[str, str]]:
    """Server-Sent Events, parsed as the specification says (fields, blank-line ends)."""
    event: dict[str, str] = {}
    async for line in response.aiter_lines():
        if not line:
            if "data" in event or "event" in event:
                yield event
            event = {}
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        event[name] = event[name] + "\n" + value if name == "data" and name in event else value


class OpenApiSpec:
    """The server's OpenAPI document, checked valid once; each response a test receives is
    then checked against the schema the document gives for its route and status."""

    def __init__(self, document: dict[str, Any]) -> None:
        from openapi_spec_validator import validate

        validate(document)
        self.document = document

    def check(self, method: str, template: str, response: httpx.Response) -> None:
        from urllib.parse import quote

        from jsonschema import Draft202012Validator

        operation = self.document["paths"][template][method.lower()]
        status = str(response.status_code)
        assert status in operation["responses"], \
            f"{method} {template} answered {status}; the document lists " \
            f"{sorted(operation['responses'])}"
        content = operation["responses"][status].get("content", {})
        media = response.headers.get("content-type", "").split(";")[0]
        assert media in content, f"{method} {template} {status}: {media} not documented"
        if media != "application/json":
            return
        pointer = "/".join(quote(part.replace("~", "~0").replace("/", "~1"), safe="")
                           for part in ("paths", template, method.lower(), "responses", status,
                                        "content", media, "schema"))
        # The document itself is the schema's root, so its #/components/... refs resolve; an
        # OpenAPI document's own keys are unknown keywords to JSON Schema and ignored.
        Draft202012Validator({**self.document, "$ref": f"#/{pointer}"}).validate(
            response.json())
