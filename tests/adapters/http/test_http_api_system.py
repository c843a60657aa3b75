"""The HTTP API's commands as processes: `researchbot keys`, `serve` on a taken port or an open
address, and readiness when the queue's Redis (a server of the test's own) goes away
(system tier)."""


from __future__ import annotations

import asyncio
import os
from functools import partial
from pathlib import Path

import pytest

from core.store.access import ApiKeys
from core.store.database import open_database
from tests.adapters.http.test_http_api import (
    _spec,
    store,  # noqa: F401 (a fixture, by parameter name)
)
from tests.support import researchbot
from tests.support.api_harness import (
    TENANT,
    api_settings,
    running_api,
)

pytestmark = pytest.mark.system


async def test_keys_commands_print_the_key_alone_and_revoke_it(store: Path,
                                                               clean_env: Path) -> None:
    cli = partial(researchbot.run_async, env={
        **os.environ, "RESEARCHBOT_DATA_DIR": str(store),
        "RESEARCHBOT_STORE__URL": api_settings(store).store_url})

    created = await cli("keys", "create", "--tenant", TENANT, "--name", "ci")
    assert created.returncode == 0, created.stderr
    key = created.stdout.strip().splitlines()[-1]
    assert key.startswith("rb_") and " " not in key and len(key) > 40
    listed = await cli("keys", "list")
    assert listed.returncode == 0 and TENANT in listed.stdout and "active" in listed.stdout
    # nor its secret
    assert key not in listed.stdout and key.split("_", 2)[2] not in listed.stdout
    async with running_api(api_settings(store)) as api:
        async with api.client(key) as client:
            assert (await client.get("/v1/jobs")).status_code == 200
        revoked = await cli("keys", "revoke", key)
        assert revoked.returncode == 0, revoked.stderr
        assert key not in revoked.stdout
        async with api.client(key) as client:
            assert (await client.get("/v1/jobs")).status_code == 401
    again = await cli("keys", "revoke", key)
    assert again.returncode == 1 and "no active key" in again.stderr
    engine = await open_database(api_settings(store).store_url)
    rows = await ApiKeys(engine).list()
    await engine.dispose()
    assert len(rows) == 1 and not rows[0].active and rows[0].name == "ci"


async def test_readiness_reports_a_queue_that_went_away(store: Path) -> None:
    """With a queue the server only stores and queues; when its Redis stops, the server is
    not ready (503), naming what failed."""
    import shutil

    from tests.support.cluster import free_port
    from tests.support.services import skip_or_fail

    if shutil.which("redis-server") is None:
        skip_or_fail("no redis-server program to start a Redis of this test's own")
    port = free_port()
    redis = await asyncio.create_subprocess_exec(
        "redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
        "--appendonly", "no", stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.close()
                break
            except OSError:
                await asyncio.sleep(0.05)
        settings = api_settings(store, redis={"url": f"redis://127.0.0.1:{port}/0"})
        async with running_api(settings) as api, api.client() as client:
            ready = await client.get("/readyz")
            assert ready.status_code == 200
            assert ready.json()["checks"] == {"database": "ok", "queue": "ok",
                                              "vector_store": "not used", "disk": "ok"}
            redis.terminate()
            await redis.wait()
            broken = await client.get("/readyz")
            (await _spec(api)).check("GET", "/readyz", broken)
            assert broken.status_code == 503
            assert broken.json()["status"] == "not_ready"
            assert broken.json()["checks"]["database"] == "ok"
            assert broken.json()["checks"]["queue"] != "ok"
            assert (await client.get("/healthz")).status_code == 200  # the process is up
    finally:
        if redis.returncode is None:
            redis.kill()
            await redis.wait()


async def test_serve_refuses_a_taken_port_and_an_open_address_in_one_line(
        store: Path, clean_env: Path) -> None:
    env = {**os.environ, "RESEARCHBOT_DATA_DIR": str(store),
           "RESEARCHBOT_STORE__URL": api_settings(store).store_url}
    taken = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = taken.sockets[0].getsockname()[1]
    try:
        for args, expected in ((["--port", str(port)], "web.port: cannot listen on"),
                               (["--host", "0.0.0.0", "--port", "0"],
                                "no API key exists")):
            served = await researchbot.run_async("serve", *args, env=env, timeout=60)
            assert served.returncode == 1, served.stderr
            last = served.stderr.strip().splitlines()[-1]
            assert last.startswith("researchbot: error: configuration:") and expected in last
            assert "Traceback" not in served.stderr
    finally:
        taken.close()
        await taken.wait_closed()
