"""Secrets never leave the process: recognisable values are planted in every setting that
holds one, real `researchbot` processes run against a local server that echoes every
credential it is sent back in its errors, and every output, log line, job row and file in the
data dir is searched for them."""

import json
import os
import subprocess
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from tests.support import researchbot
from tests.support.local_server import LocalServer
from tests.support.services import POSTGRES_URL, REDIS_URL, skip_or_fail

pytestmark = pytest.mark.system

# Shapes no pattern knows: only redaction of the configured values can hide these.
SECRETS = {
    "RESEARCHBOT_LLM__API_KEY": "PLANTED-llm-Qz81x",
    "RESEARCHBOT_EMBEDDING__API_KEY": "PLANTED-embedding-Wc3",
    "RESEARCHBOT_SOURCES__TAVILY_API_KEY": "PLANTED-tavily-Mn5r",
    "RESEARCHBOT_SOURCES__EXA_API_KEY": "PLANTED-exa-Jk4w",
    "RESEARCHBOT_SOURCES__PUBMED_API_KEY": "PLANTED-pubmed-Hh72",
    "RESEARCHBOT_SLACK__BOT_TOKEN": "PLANTED-slackbot-Ty6",
    "RESEARCHBOT_SLACK__APP_TOKEN": "PLANTED-slackapp-Lp0",
    "RESEARCHBOT_SLACK__SIGNING_SECRET": "PLANTED-signing-Vb4",
    "RESEARCHBOT_DISCORD__TOKEN": "PLANTED-discord-Xs9",
}
PG_PASSWORD = "PLANTED-pgpass-Rr1"  # trust authentication: any password is accepted
REDIS_PASSWORD = "PLANTED-redispass-Gg8"
PLANTED = [*SECRETS.values(), PG_PASSWORD, REDIS_PASSWORD]


class EchoServer(LocalServer):
    """Every API the bot can call, failing with the credentials it was sent in the error:
    the model provider and Tavily quote the Authorization header, PubMed redirects to
    itself until the client gives up (its error names the URL, key included), Slack refuses
    the token and repeats it."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []
        self.app.router.add_route("*", "/{path:.*}", self._any)

    async def _any(self, request: web.Request) -> web.StreamResponse:
        body = await request.text()
        echo = f"{request.method} {request.url} auth={request.headers.get('Authorization')} " \
               f"x-api-key={request.headers.get('x-api-key')} body={body[:2000]}"
        self.seen.append(echo)
        if request.path.startswith("/eutils/"):
            raise web.HTTPFound(str(request.url))
        if request.path.startswith("/slack/"):
            return web.json_response({"ok": False, "error": "invalid_auth", "detail": echo})
        return web.json_response({"error": {"message": f"upstream failed: {echo}",
                                            "type": "server_error"}}, status=500)


@pytest.fixture
async def echo() -> AsyncIterator[EchoServer]:
    server = EchoServer()
    await server.start()
    yield server
    await server.stop()


def _environment(echo: EchoServer, clean_env: Path, store_url: str | None) -> dict[str, str]:
    base = f"http://127.0.0.1:{echo.port}"
    env = {**os.environ, **SECRETS,
           "RESEARCHBOT_TENANT": f"leak-{uuid.uuid4().hex[:8]}",
           "RESEARCHBOT_PIPELINE__LOCAL_ONLY": "false",
           "RESEARCHBOT_LLM__FAST_MODEL": "openai/fast",
           "RESEARCHBOT_LLM__API_BASE": f"{base}/v1",
           "RESEARCHBOT_ADVANCED__LLM__ATTEMPTS": "1",
           "RESEARCHBOT_ADVANCED__SOURCES__ATTEMPTS": "1",
           "RESEARCHBOT_ENDPOINTS__WIKIPEDIA_API": f"{base}/w/api.php",
           "RESEARCHBOT_ENDPOINTS__ARXIV_API": f"{base}/arxiv/query",
           "RESEARCHBOT_ENDPOINTS__PUBMED_API": f"{base}/eutils",
           "RESEARCHBOT_ENDPOINTS__TAVILY_API": f"{base}/tavily",
           "RESEARCHBOT_ENDPOINTS__EXA_API": f"{base}/exa",
           "RESEARCHBOT_ENDPOINTS__SLACK_API": f"{base}/slack/api/",
           "RESEARCHBOT_REDIS__URL": REDIS_URL.replace("redis://",
                                                       f"redis://:{REDIS_PASSWORD}@"),
           "RESEARCHBOT_QUEUE__ENABLED": "false"}
    if store_url is not None:
        env["RESEARCHBOT_STORE__URL"] = store_url
    return env


async def _run(*args: str, env: dict[str, str], seconds: float = 120) -> tuple[str, str]:
    """stdout and stderr of one `researchbot` process; stopped after `seconds` if it is
    still running (a bot)."""
    try:
        done = await researchbot.run_async(*args, env=env, timeout=seconds)
    except subprocess.TimeoutExpired as stopped:
        return str(stopped.stdout), str(stopped.stderr)
    return done.stdout, done.stderr


def _leaks(where: str, text: str) -> list[str]:
    return [f"{where}: {secret}" for secret in PLANTED if secret in text]


def _files_leaks(data_dir: Path) -> list[str]:
    found = []
    for path in data_dir.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            found += [f"{path}: {s}" for s in PLANTED if s.encode() in data]
    return found


@pytest.mark.parametrize("store", ["sqlite", "postgresql"])
async def test_no_secret_leaves_the_process(store: str, echo: EchoServer, clean_env: Path,
                                            tmp_path: Path) -> None:
    store_url = None
    if store == "postgresql":
        from tests.support.services import open_postgres_engine

        engine = await open_postgres_engine()
        if engine is None:
            skip_or_fail("PostgreSQL is not reachable")
        await engine.dispose()
        store_url = POSTGRES_URL.replace("postgres@", f"postgres:{PG_PASSWORD}@")
    env = _environment(echo, clean_env, store_url)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "cats.md").write_text("# Cats\n\nCats sleep between 12 and 16 hours a day.\n")
    outputs: list[tuple[str, str]] = []

    async def run(*args: str, **options: str) -> str:
        out, err = await _run(*args, env={**env, **options})
        outputs.append((" ".join(args) + " stdout", out))
        outputs.append((" ".join(args) + " stderr", err))
        return out

    await run("index", str(docs))
    answer = json.loads(await run("ask", "How long do cats sleep?", "--json"))
    await run("ask", "What are the side effects of metformin in diabetes patients?")
    await run("ask", "Why do cats sleep so much?")  # an explanation: Exa is asked too
    await run("ask", "Which clinical trials tested metformin for cancer?", "--no-cache",
              RESEARCHBOT_DEBUG="1")
    await run("improve", "Make it shorter")
    await run("jobs")
    await run("show", answer["job_id"])
    await run("show", answer["job_id"], "--json")

    # The requests did carry the secrets: the test would see a leak if one got out.
    seen = "\n".join(echo.seen)
    for name in ("RESEARCHBOT_LLM__API_KEY", "RESEARCHBOT_SOURCES__TAVILY_API_KEY",
                 "RESEARCHBOT_SOURCES__PUBMED_API_KEY", "RESEARCHBOT_SOURCES__EXA_API_KEY"):
        assert SECRETS[name] in seen, (name, {e.split("?")[0][:60] for e in echo.seen})

    leaks = [leak for where, text in outputs for leak in _leaks(where, text)]
    leaks += _files_leaks(clean_env)
    leaks += await _job_rows_leaks(store_url, clean_env, env["RESEARCHBOT_TENANT"])
    assert leaks == []


async def test_a_bot_logs_no_secret(echo: EchoServer, clean_env: Path, tmp_path: Path) -> None:
    """Socket Mode against a Slack that refuses the app token and repeats it, with the
    Redis URL's password refused too: the bot says what is wrong without the values."""
    env = _environment(echo, clean_env, None)
    # it exits on the refused password (in ~3 s idle); the cap is for a loaded machine, where
    # the start-up's model check alone once took longer than a 20 s cap
    out, err = await _run("slack", env=env, seconds=120)
    assert "redis.url" in err  # the password is refused: no password is configured
    assert _leaks("stdout", out) + _leaks("stderr", err) == []

    del env["RESEARCHBOT_REDIS__URL"]
    async with researchbot.running("slack", env=env, log=tmp_path / "slack.log") as bot:
        await bot.wait_for_line("invalid_auth", within_s=90)
    err = bot.text()  # all it wrote, its shutdown too
    assert "invalid_auth" in err, err[-2000:]
    assert _leaks("stderr", err) == []


async def _job_rows_leaks(store_url: str | None, data_dir: Path, tenant: str) -> list[str]:
    from sqlalchemy import select
    from sqlalchemy.ext.asyncio import create_async_engine

    from core.store.database import jobs, sqlite_url

    url = store_url or sqlite_url(str(data_dir / "researchbot.sqlite3"))
    engine = create_async_engine(url)
    try:
        async with engine.connect() as connection:
            rows = (await connection.execute(select(jobs).where(jobs.c.tenant == tenant))).all()
    finally:
        await engine.dispose()
    assert rows, "no job was stored"
    return _leaks("job rows", json.dumps([dict(r._mapping) for r in rows], default=str))


def test_database_and_redis_urls_are_secrets_in_the_settings(clean_env: Path) -> None:
    from bot.config import Settings

    settings = Settings(store={"url": "postgresql+asyncpg://bot:pw-Store-91x@db.lan/research"},
                        redis={"url": "redis://:pw-Redis-44q@cache.lan:6379/0"})
    shown = f"{settings!r} {settings.model_dump()} {settings.model_dump_json()}"
    assert "pw-Store-91x" not in shown and "pw-Redis-44q" not in shown
    assert settings.store_url == "postgresql+asyncpg://bot:pw-Store-91x@db.lan/research"
    assert settings.redis.url is not None
    assert settings.redis.url.get_secret_value().endswith("@cache.lan:6379/0")
