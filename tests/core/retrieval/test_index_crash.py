"""kill -9 at any point of `researchbot index` (add, update, remove), then index again: the
catalogue and the vectors agree, on SQLite and on PostgreSQL.

The index process is the real command line, started by tests/support/kill_at_write_edge.py, which
kills it at a chosen edge of a vector write: each write batch has an edge before it and one
after. Storing a file is: forget its rows, delete its vectors (edges 1, 2), upsert new ones
(edges 3, 4), write its rows; removing a file is: forget its rows, delete its vectors (edges
1, 2)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from tests.support import PROJECT
from tests.support.corpus import CORPUS
from tests.support.services import POSTGRES_URL, skip_or_fail

pytestmark = pytest.mark.system

TENANT = "crash"


@pytest.fixture
def postgres_database() -> Iterator[str]:
    """A database of its own on the PostgreSQL server, dropped afterwards."""
    import asyncpg

    server = POSTGRES_URL.replace("postgresql+asyncpg://", "postgresql://")
    name = f"researchbot_crash_{uuid.uuid4().hex[:12]}"

    async def admin(statement: str) -> None:
        connection = await asyncpg.connect(server, timeout=5)
        try:
            await connection.execute(statement)
        finally:
            await connection.close()

    try:
        asyncio.run(admin(f'CREATE DATABASE "{name}"'))
    except Exception as error:  # any failure here means "no usable server"
        skip_or_fail(f"PostgreSQL not reachable at {POSTGRES_URL}: {error}")
    yield POSTGRES_URL.rsplit("/", 1)[0] + f"/{name}"
    asyncio.run(admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, clean_env: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{clean_env / 'researchbot.sqlite3'}"
    return str(request.getfixturevalue("postgres_database"))


KILLER = PROJECT / "tests" / "support" / "kill_at_write_edge.py"


def _index(docs: Path, store_url: str, kill_at_edge: int = 0) -> subprocess.CompletedProcess[str]:
    """`researchbot index`, killed at the edge numbered `kill_at_edge` (0: never)."""
    env = {**os.environ, "RESEARCHBOT_STORE__URL": store_url}
    command = [sys.executable, str(KILLER), str(kill_at_edge), "index", str(docs),
               "--tenant", TENANT]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)


def _killed(docs: Path, store_url: str, edge: int) -> None:
    done = _index(docs, store_url, edge)
    assert done.returncode == -signal.SIGKILL, (done.returncode, done.stderr)


def _completes(docs: Path, store_url: str) -> str:
    done = _index(docs, store_url)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
async def open_store(clean_env: Path, store_url: str, embedder: Any) -> AsyncIterator[Any]:
    """A way to look at what the index runs left: (catalogue ids, vector ids, knowledge base)."""
    from core.config import KnowledgeBaseSettings
    from core.retrieval.kb.knowledge_base import KnowledgeBase
    from core.retrieval.vectors import VectorCollection, open_chroma
    from core.store.catalogue import KnowledgeCatalogue
    from core.store.database import kb_chunks, kb_files, open_database

    engines: list[Any] = []
    stores: list[Any] = []

    async def look() -> tuple[set[str], set[str], Any]:
        engine = await open_database(store_url)
        engines.append(engine)
        store = open_chroma(clean_env / "chroma", None)
        stores.append(store)
        catalogue = KnowledgeCatalogue(engine)
        async with engine.connect() as connection:
            chunks = (await connection.execute(select(kb_chunks.c.id, kb_chunks.c.file_id)
                                               .where(kb_chunks.c.tenant == TENANT))).all()
            files = set((await connection.execute(select(kb_files.c.file_id)
                                                  .where(kb_files.c.tenant == TENANT))).scalars())
        assert {row.file_id for row in chunks} == files  # no chunk without its file, nor back
        assert not await catalogue.pending(TENANT)
        vectors = await VectorCollection(store, "kb", TENANT).ids()
        kb = KnowledgeBase(catalogue, store, embedder, KnowledgeBaseSettings())
        return {row.id for row in chunks}, set(vectors), kb

    yield look
    for store in stores:
        store.close()
    for engine in engines:
        await engine.dispose()


async def _consistent(look: Any) -> Any:
    catalogued, vectors, kb = await look()
    assert catalogued, "nothing catalogued"
    assert catalogued - vectors == set(), "catalogued chunks without a vector"
    assert vectors - catalogued == set(), "orphan vectors"
    return kb


def _docs(clean_env: Path) -> Path:
    """The shared corpus, written to a folder beside the test's environment."""
    docs = clean_env.parent / "docs"
    docs.mkdir()
    for name, text in CORPUS.items():
        (docs / name).write_text(text, encoding="utf-8")
    return docs


async def _top(kb: Any, question: str) -> str:
    return Path((await kb.search(question, TENANT, limit=3))[0].path).name


async def test_index_killed_anywhere_is_consistent_after_the_next_run(
    clean_env: Path, store_url: str, open_store: Any
) -> None:
    docs = _docs(clean_env)

    # add: killed after the second file's vectors are stored, before its rows are written
    _killed(docs, store_url, edge=8)
    assert "4 files" in _completes(docs, store_url)
    kb = await _consistent(open_store)
    assert await _top(kb, "How long do cats sleep?") == "cats.md"

    # update: killed after the first changed file's new vectors, before its rows
    (docs / "bread.html").write_text(CORPUS["bread.html"].replace("250 degrees", "260 degrees"))
    (docs / "cats.md").write_text(CORPUS["cats.md"] + "\nCats purr when they are content.\n")
    _killed(docs, store_url, edge=4)
    assert "4 files" in _completes(docs, store_url)
    kb = await _consistent(open_store)
    assert await _top(kb, "Do cats purr when content?") == "cats.md"
    assert "260 degrees" in (await kb.search("baking temperature of sourdough", TENANT))[0].content

    # remove: killed after the first removed file's rows are gone, before its vectors are
    (docs / "cats.md").unlink()
    (docs / "tea.txt").unlink()
    _killed(docs, store_url, edge=1)
    assert "2 files" in _completes(docs, store_url)
    kb = await _consistent(open_store)
    assert await _top(kb, "Which eruption buried Pompeii?") == "volcanoes.rst"
    found = {Path(hit.path).name for hit in await kb.search("cats and tea", TENANT, limit=8)}
    assert found.isdisjoint({"cats.md", "tea.txt"})


async def test_two_index_processes_over_the_same_new_files_both_finish_consistent(
    clean_env: Path, store_url: str, open_store: Any
) -> None:
    docs = _docs(clean_env)
    env = {**os.environ, "RESEARCHBOT_STORE__URL": store_url}
    command = [sys.executable, str(KILLER), "0", "index", str(docs), "--tenant", TENANT]
    runs = [await asyncio.create_subprocess_exec(*command, stdout=asyncio.subprocess.PIPE,
                                                 stderr=asyncio.subprocess.PIPE, env=env)
            for _ in range(2)]
    for run in runs:
        _, stderr = await asyncio.wait_for(run.communicate(), timeout=180)
        assert run.returncode == 0, stderr.decode()
    kb = await _consistent(open_store)
    assert await _top(kb, "How long do cats sleep?") == "cats.md"


async def test_a_store_from_before_gains_the_pending_table(tmp_path: Path) -> None:
    from sqlalchemy import inspect
    from sqlalchemy.ext.asyncio import create_async_engine

    from core.store.database import kb_pending, metadata, open_database, sqlite_url

    url = sqlite_url(str(tmp_path / "old.sqlite3"))
    old = create_async_engine(url)
    async with old.begin() as connection:
        await connection.run_sync(lambda sync: metadata.create_all(
            sync, tables=[t for t in metadata.sorted_tables if t is not kb_pending]))
    await old.dispose()
    engine = await open_database(url)
    async with engine.connect() as connection:
        tables = await connection.run_sync(lambda sync: inspect(sync).get_table_names())
    await engine.dispose()
    assert "kb_pending" in tables


def test_a_full_disk_is_one_line_naming_the_folder(tmp_path: Path) -> None:
    import errno

    from core.store.full_disk import full_disk_error

    full = full_disk_error("vector store", OSError(errno.ENOSPC, "No space left on device"),
                           tmp_path)
    assert full is not None and str(full).startswith(f"the disk is full: {tmp_path} has ")
    sqlite = full_disk_error("catalogue", Exception("(sqlite3.OperationalError) database or "
                                                    "disk is full\n(Background on this error"),
                             tmp_path)
    assert sqlite is not None and "\n" not in str(sqlite)
    assert full_disk_error("vector store", Exception("Error finding id"), tmp_path,
                           opaque=True) is None  # plenty of room here: something else
