"""Test-wide set-up: no telemetry, no hub downloads, no connection beyond loopback, each test
in one tier; and the fixtures tests share. What benchmarks share too lives in tests/support."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

os.environ["ORT_DISABLE_TELEMETRY"] = "1"
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ["ANONYMIZED_TELEMETRY"] = "False"
os.environ["HF_HUB_OFFLINE"] = "1"

import pytest

from tests.support.clock import FakeClock
from tests.support.corpus import CHAT_TENANTS, Indexed, copy_store, write_corpus
from tests.support.network_guard import install_network_guard
from tests.support.services import (
    create_worker_database,
    hold_databases,
    open_postgres_engine,
    redis_server,
)

install_network_guard()

TIERS = ("unit", "integration", "system")


def pytest_sessionstart(session: pytest.Session) -> None:
    if not hasattr(session.config, "workerinput") and session.config.getoption(
            "numprocesses", None):
        return  # pytest-xdist's controller: its workers run the tests and hold their databases
    hold_databases()
    create_worker_database()


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects: every test is checked
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Each test module names its one tier (`pytestmark = pytest.mark.unit`, ...), so that
    `-m` selects whole files and a test is never in two tiers."""
    wrong = []
    for item in items:
        tiers = [mark.name for mark in item.iter_markers() if mark.name in TIERS]
        module = item.getparent(pytest.Module)
        own = [mark.name for mark in (module.own_markers if module else [])
               if mark.name in TIERS]
        if len(tiers) != 1 or own != tiers:
            wrong.append(f"{item.nodeid}: {tiers or 'no tier'}")
    if wrong:
        raise pytest.UsageError(
            "each test module must set exactly one tier with pytestmark = pytest.mark.unit, "
            ".integration or .system (and no test its own):\n  " + "\n  ".join(wrong[:20]))


@pytest.fixture(scope="session")
def embedder() -> Any:
    from core.retrieval.embedding import OnnxMiniLMEmbedder

    return OnnxMiniLMEmbedder(threads=2)


async def _sqlite_engine(folder: Path) -> Any:
    from core.store.database import open_database, sqlite_url

    return await open_database(sqlite_url(str(folder / "test.sqlite3")))


@pytest.fixture
async def sqlite_engine(tmp_path: Path) -> AsyncIterator[Any]:
    engine = await _sqlite_engine(tmp_path)
    yield engine
    await engine.dispose()


@pytest.fixture
async def postgres_engine() -> AsyncIterator[Any]:
    """The shared PostgreSQL server's `test` database, emptied before and after."""
    from core.store.database import metadata

    engine = await open_postgres_engine()
    yield engine
    async with engine.begin() as connection:
        await connection.run_sync(metadata.drop_all)
    await engine.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
async def any_engine(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    """The same test on the embedded SQLite file and on the PostgreSQL server."""
    from core.store.database import metadata

    if request.param == "sqlite":
        engine = await _sqlite_engine(tmp_path)
    else:
        engine = await open_postgres_engine()
    yield engine
    if request.param == "postgresql":
        async with engine.begin() as connection:
            await connection.run_sync(metadata.drop_all)
    await engine.dispose()


@pytest.fixture
async def redis() -> AsyncIterator[Any]:
    async with redis_server() as client:
        yield client


@pytest.fixture
def clock() -> FakeClock:
    """A clock that moves only when the test moves it (tests/support/clock.py)."""
    return FakeClock()


@pytest.fixture
async def session() -> AsyncIterator[Any]:
    """A plain aiohttp session, the HTTP session a search source is given."""
    import aiohttp

    async with aiohttp.ClientSession() as client:
        yield client


@pytest.fixture
def chroma(tmp_path: Path) -> Any:
    from core.retrieval.vectors import open_chroma

    return open_chroma(tmp_path / "chroma", None)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    return write_corpus(folder)


@pytest.fixture
def kb_settings() -> Any:
    from core.config import KnowledgeBaseSettings

    return KnowledgeBaseSettings()


@pytest.fixture
def knowledge_base(sqlite_engine: Any, chroma: Any, embedder: Any, kb_settings: Any) -> Any:
    from core.retrieval.kb.knowledge_base import KnowledgeBase
    from core.store.catalogue import KnowledgeCatalogue

    return KnowledgeBase(KnowledgeCatalogue(sqlite_engine), chroma, embedder, kb_settings)


@pytest.fixture(scope="session")
def indexed_template(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Path:
    """CORPUS indexed once per test run for every chat tenant: a SQLite file, a Chroma
    folder and the corpus itself, which each chat test copies (see `indexed`)."""
    import asyncio

    from core.config import KnowledgeBaseSettings
    from core.retrieval.kb.knowledge_base import KnowledgeBase
    from core.retrieval.vectors import open_chroma
    from core.store.catalogue import KnowledgeCatalogue

    folder = tmp_path_factory.mktemp("indexed")
    docs = folder / "corpus"
    docs.mkdir()
    made = tmp_path_factory.mktemp("made")
    write_corpus(docs)

    async def build() -> None:
        engine = await _sqlite_engine(made)
        chroma = open_chroma(made / "chroma", None)
        knowledge_base = KnowledgeBase(KnowledgeCatalogue(engine), chroma, embedder,
                                       KnowledgeBaseSettings())
        for tenant in CHAT_TENANTS:
            await knowledge_base.index([docs], tenant)
        chroma.close()
        await engine.dispose()

    asyncio.run(build())
    copy_store(made, folder)
    return folder


@pytest.fixture
async def indexed(tmp_path: Path, indexed_template: Path, embedder: Any,
                  kb_settings: Any) -> AsyncIterator[Indexed]:
    """A copy of `indexed_template` for one test: its own database and vector store, the
    corpus already indexed for CHAT_TENANTS (indexing it again finds every file unchanged)."""
    from core.retrieval.kb.knowledge_base import KnowledgeBase
    from core.retrieval.vectors import open_chroma
    from core.store.catalogue import KnowledgeCatalogue

    world = tmp_path / "indexed"
    world.mkdir()
    copy_store(indexed_template, world)
    engine = await _sqlite_engine(world)
    chroma = open_chroma(world / "chroma", None)
    knowledge_base = KnowledgeBase(KnowledgeCatalogue(engine), chroma, embedder, kb_settings)
    yield Indexed(engine, chroma, knowledge_base, indexed_template / "corpus", world)
    chroma.close()
    await engine.dispose()


@pytest.fixture
def served_store(tmp_path: Path, indexed_template: Path, clean_env: Path) -> Path:
    """A data folder holding a copy of `indexed_template`'s store, for a server process
    (tests/support/api_harness.py api_settings points the settings at it)."""
    data = tmp_path / "store"
    data.mkdir()
    copy_store(indexed_template, data)
    return data


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """No RESEARCHBOT_* settings from the caller's shell; a fresh data dir; no config file.
    The bot processes these tests start are local-only (the network guard cannot reach into
    another process); tests of the web sources point them at local fakes instead."""
    for key in list(os.environ):
        if key.startswith("RESEARCHBOT_") and key != "RESEARCHBOT_REQUIRE_SERVICES":
            monkeypatch.delenv(key)
    monkeypatch.setenv("RESEARCHBOT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("RESEARCHBOT_PIPELINE__LOCAL_ONLY", "true")
    monkeypatch.chdir(tmp_path)
    yield tmp_path / "data"


@pytest.fixture
async def lab(sqlite_engine: Any, chroma: Any, embedder: Any, knowledge_base: Any,
              corpus: Path) -> AsyncIterator[Any]:
    """The scripted model server (tests/support/scripted_analyst.py) over the indexed test
    corpus."""
    from tests.support.fake_openai import FakeOpenAI
    from tests.support.scripted_analyst import Lab, script

    await knowledge_base.index([corpus], "t1")
    fake = script(FakeOpenAI())
    await fake.start()
    yield Lab(fake, (sqlite_engine, chroma, embedder, knowledge_base))
    await fake.stop()


# The chat front ends over a copy of the indexed corpus; `indirect` parametrisation passes
# tests.support.chat_harness.Options. Imported when used: most tests need neither platform.

@pytest.fixture
async def server(request: pytest.FixtureRequest, indexed: Indexed, embedder: Any
                 ) -> AsyncIterator[Any]:
    """The Slack bolt app over HTTP, its Web API client pointed at a FakeSlack."""
    from tests.support.chat_harness import Options
    from tests.support.slack_harness import serve_slack

    async with serve_slack(getattr(request, "param", Options()), indexed,
                           embedder) as harness:
        yield harness


@pytest.fixture
async def bot(request: pytest.FixtureRequest, indexed: Indexed, embedder: Any
              ) -> AsyncIterator[Any]:
    """The discord.py client connected to a FakeDiscord."""
    from tests.support.chat_harness import Options
    from tests.support.discord_harness import serve_discord

    async with serve_discord(getattr(request, "param", Options()), indexed,
                             embedder) as harness:
        yield harness


@pytest.fixture
async def scripted_model() -> AsyncIterator[Any]:
    """The OpenAI-compatible model server on 127.0.0.1, answering as the scripted analyst
    (tests/support/scripted_analyst.py)."""
    from tests.support.fake_openai import FakeOpenAI
    from tests.support.scripted_analyst import script

    fake = script(FakeOpenAI())
    await fake.start()
    yield fake
    await fake.stop()
