"""Test-wide set-up: no telemetry, no hub downloads, and no connection beyond loopback."""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

os.environ["ORT_DISABLE_TELEMETRY"] = "1"
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ["ANONYMIZED_TELEMETRY"] = "False"
os.environ["HF_HUB_OFFLINE"] = "1"

from contextlib import asynccontextmanager
from dataclasses import dataclass

import pytest

REQUIRE_SERVICES = os.environ.get("RESEARCHBOT_REQUIRE_SERVICES") == "1"
POSTGRES_URL = os.environ.get(
    "RESEARCHBOT_TEST_POSTGRES_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
)

REDIS_URL = os.environ.get("RESEARCHBOT_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


class NetworkGuardError(RuntimeError):
    """A test tried to reach a host that is not loopback."""


def _loopback(address: Any) -> bool:
    if isinstance(address, (str, bytes)):  # AF_UNIX path
        return True
    host = address[0]
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


_connect = socket.socket.connect
_connect_ex = socket.socket.connect_ex


def _guarded_connect(self: socket.socket, address: Any) -> Any:
    if not _loopback(address):
        raise NetworkGuardError(f"tests may not connect to {address!r}")
    return _connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> Any:
    if not _loopback(address):
        raise NetworkGuardError(f"tests may not connect to {address!r}")
    return _connect_ex(self, address)


socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]


def skip_or_fail(reason: str) -> None:
    """Skip where a server is missing on a laptop; fail in CI, which starts the servers."""
    if REQUIRE_SERVICES:
        pytest.fail(f"{reason} (RESEARCHBOT_REQUIRE_SERVICES=1)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def embedder() -> Any:
    from core.retrieval.embedding import OnnxMiniLMEmbedder

    return OnnxMiniLMEmbedder(threads=2)


async def _postgres_engine() -> Any:
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

    engine = await _postgres_engine()
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
        engine = await _postgres_engine()
    yield engine
    if request.param == "postgresql":
        async with engine.begin() as connection:
            await connection.run_sync(metadata.drop_all)
    await engine.dispose()


@asynccontextmanager
async def redis_server() -> AsyncIterator[Any]:
    """The Redis server's database 15, emptied before and after."""
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


@pytest.fixture
async def redis() -> AsyncIterator[Any]:
    async with redis_server() as client:
        yield client


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


CORPUS = {
    "cats.md": """# Cats

Cats are small carnivorous mammals that people have kept as pets for thousands of years.

## Sleep

Domestic cats sleep between 12 and 16 hours a day. Kittens and old cats sleep even longer.
Cats are most active at dawn and dusk, which makes them crepuscular animals.

## Diet

Cats are obligate carnivores: they need taurine, an amino acid found in meat.
""",
    "tea.txt": """Green tea and black tea come from the same plant, Camellia sinensis.
Black tea is fully oxidised while green tea is not oxidised, which gives black tea its darker
colour and stronger flavour. A cup of black tea has about 47 milligrams of caffeine, and a cup
of green tea has about 28 milligrams.
""",
    "volcanoes.rst": """Volcanoes
=========

A volcano is a rupture in the crust of a planet that lets hot lava, ash and gases escape.

Eruptions
---------

Mount Vesuvius erupted in the year 79 and buried the Roman city of Pompeii under ash.
Explosive eruptions happen when gas-rich magma fragments as it rises.
""",
    "bread.html": """<html><head><title>Baking sourdough bread</title></head><body>
<nav><a href="/">Home</a> | <a href="/shop">Shop our ovens</a> | Subscribe to the newsletter</nav>
<main><article><h1>Baking sourdough bread</h1>
<p>Sourdough bread rises because a starter of wild yeast and lactic acid bacteria ferments
the dough. The bacteria produce lactic and acetic acids that give the bread its sour taste.</p>
<h2>Baking</h2>
<p>Bake the loaf at 250 degrees Celsius in a covered pot for twenty minutes, then uncovered
for another twenty minutes until the crust is dark brown.</p>
</article></main>
<footer>Copyright Bakery Ltd. All rights reserved. Cookie settings.</footer>
</body></html>""",
}


def write_pdf(path: Path, pages: list[str], title: str = "Solar system facts") -> None:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_title(title)
    pdf.set_font("helvetica", size=12)
    for text in pages:
        pdf.add_page()
        pdf.multi_cell(0, 8, text)
    pdf.output(str(path))


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    return _write_corpus(folder)


def _write_corpus(folder: Path) -> Path:
    for name, text in CORPUS.items():
        (folder / name).write_text(text, encoding="utf-8")
    write_pdf(
        folder / "planets.pdf",
        [
            "The Sun is a star at the centre of the solar system.",
            "Jupiter is the largest planet in the solar system. It has a Great Red Spot, "
            "a storm larger than the Earth.",
        ],
    )
    return folder


def index_corpus(data_dir: Path, tenant: str | None = None) -> Path:
    """CORPUS written to a folder beside `data_dir` and indexed through the CLI, as a user
    would (in a process of its own: call it from a synchronous fixture)."""
    import subprocess
    import sys

    docs = data_dir.parent / "docs"
    docs.mkdir()
    for name, text in CORPUS.items():
        (docs / name).write_text(text, encoding="utf-8")
    command = [sys.executable, "-m", "bot", "index", str(docs)]
    done = subprocess.run(command + (["--tenant", tenant] if tenant else []),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return docs


@pytest.fixture
def kb_settings() -> Any:
    from core.config import KnowledgeBaseSettings

    return KnowledgeBaseSettings()


@pytest.fixture
def knowledge_base(sqlite_engine: Any, chroma: Any, embedder: Any, kb_settings: Any) -> Any:
    from core.retrieval.kb.knowledge_base import KnowledgeBase
    from core.store.catalogue import KnowledgeCatalogue

    return KnowledgeBase(KnowledgeCatalogue(sqlite_engine), chroma, embedder, kb_settings)


# Tenants whose knowledge base holds CORPUS in the chat front ends' tests: Slack workspaces
# and the fake Discord's server.
CHAT_TENANTS = ("T1", "T2", "300000000000000001")


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
    _write_corpus(docs)

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
    _copy_store(made, folder)
    return folder


def _copy_store(source: Path, target: Path) -> None:
    """Copy a closed store's files (SQLite database, Chroma folder), not its corpus."""
    import shutil

    for path in source.iterdir():
        if path.name == "corpus":
            continue
        if path.is_dir():
            shutil.copytree(path, target / path.name)
        else:
            shutil.copy2(path, target / path.name)


@dataclass
class Indexed:
    engine: Any
    chroma: Any
    knowledge_base: Any
    corpus: Path
    folder: Path  # where the database file (test.sqlite3) and the chroma folder are


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
    _copy_store(indexed_template, world)
    engine = await _sqlite_engine(world)
    chroma = open_chroma(world / "chroma", None)
    knowledge_base = KnowledgeBase(KnowledgeCatalogue(engine), chroma, embedder, kb_settings)
    yield Indexed(engine, chroma, knowledge_base, indexed_template / "corpus", world)
    chroma.close()
    await engine.dispose()


@pytest.fixture
def served_store(tmp_path: Path, indexed_template: Path, clean_env: Path) -> Path:
    """A data folder holding a copy of `indexed_template`'s store, for a server process
    (tests/api_harness.py api_settings points the settings at it)."""
    data = tmp_path / "store"
    data.mkdir()
    _copy_store(indexed_template, data)
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
    """The scripted model server (tests/scripted_analyst.py) over the indexed test corpus."""
    from tests.fake_openai import FakeOpenAI
    from tests.scripted_analyst import Lab, script

    await knowledge_base.index([corpus], "t1")
    fake = script(FakeOpenAI())
    await fake.start()
    yield Lab(fake, (sqlite_engine, chroma, embedder, knowledge_base))
    await fake.stop()


# The chat front ends over a copy of the indexed corpus; `indirect` parametrisation passes
# tests.chat_harness.Options. Imported when used: most tests need neither platform.

@pytest.fixture
async def server(request: pytest.FixtureRequest, indexed: Indexed, embedder: Any
                 ) -> AsyncIterator[Any]:
    """The Slack bolt app over HTTP, its Web API client pointed at a FakeSlack."""
    from tests.chat_harness import Options
    from tests.slack_harness import serve_slack

    async with serve_slack(getattr(request, "param", Options()), indexed,
                           embedder) as harness:
        yield harness


@pytest.fixture
async def bot(request: pytest.FixtureRequest, indexed: Indexed, embedder: Any
              ) -> AsyncIterator[Any]:
    """The discord.py client connected to a FakeDiscord."""
    from tests.chat_harness import Options
    from tests.discord_harness import serve_discord

    async with serve_discord(getattr(request, "param", Options()), indexed,
                             embedder) as harness:
        yield harness


@pytest.fixture
async def scripted_model() -> AsyncIterator[Any]:
    """The OpenAI-compatible model server on 127.0.0.1, answering as the scripted analyst
    (tests/scripted_analyst.py)."""
    from tests.fake_openai import FakeOpenAI
    from tests.scripted_analyst import script

    fake = script(FakeOpenAI())
    await fake.start()
    yield fake
    await fake.stop()
