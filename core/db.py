"""The relational database: one SQLAlchemy async engine for jobs and the knowledge-base catalogue.

SQLite (a file in the data dir) by default; PostgreSQL through asyncpg by URL.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    JSON,
    Column,
    DateTime,
    Float,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    event,
    inspect,
    text,
)
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from core.errors import ConfigurationError

metadata = MetaData()

jobs = Table(
    "jobs",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("tenant", String(255), nullable=False),
    Column("user", String(255), nullable=False, default=""),
    Column("platform", String(32), nullable=False, default=""),
    Column("worker", String(255), nullable=False, default=""),
    Column("request", JSON, nullable=False),
    Column("status", String(16), nullable=False),
    Column("stage", String(16)),
    Column("progress", Float, nullable=False, default=0.0),
    Column("state", JSON, nullable=False),
    Column("result", JSON),
    Column("error", Text),
    Column("metrics", JSON, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("started_at", DateTime(timezone=True)),
    Column("completed_at", DateTime(timezone=True)),
    Index("ix_jobs_tenant_created", "tenant", "created_at"),
    Index("ix_jobs_status", "status"),
)

kb_files = Table(
    "kb_files",
    metadata,
    Column("tenant", String(255), primary_key=True),
    Column("path", String(4096), primary_key=True),
    Column("file_id", String(32), nullable=False),
    Column("sha256", String(64), nullable=False),
    Column("title", Text, nullable=False),
    Column("author", Text),
    Column("published", String(64)),
    Column("chunks", Integer, nullable=False),
    Column("words", Integer, nullable=False),
    Column("indexed_at", DateTime(timezone=True), nullable=False),
)

kb_chunks = Table(
    "kb_chunks",
    metadata,
    # Chunk ids derive from the file's path and content: two tenants indexing the same
    # files get the same ids, so the tenant is part of the key.
    Column("tenant", String(255), primary_key=True),
    Column("id", String(64), primary_key=True),
    Column("file_id", String(32), nullable=False),
    Column("ordinal", Integer, nullable=False),
    Column("text", Text, nullable=False),
    Column("location", Text),
    Index("ix_kb_chunks_file", "tenant", "file_id"),
)

# Chat messages that carry an answer: which job each answered and which thread it sits in, so
# that a follow-up in the thread gets the thread's context and a retry finds its question.
answer_messages = Table(
    "answer_messages",
    metadata,
    Column("platform", String(32), primary_key=True),
    Column("tenant", String(255), primary_key=True),
    Column("message", String(255), primary_key=True),
    Column("thread", String(255), nullable=False),
    Column("job_id", String(32), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Index("ix_answer_messages_thread", "platform", "tenant", "thread", "created_at"),
)

kb_generations = Table(
    "kb_generations",
    metadata,
    Column("tenant", String(255), primary_key=True),
    Column("generation", Integer, nullable=False),
)


def sqlite_url(path: str) -> str:
    return f"sqlite+aiosqlite:///{path}"


async def open_database(url: str) -> AsyncEngine:
    """Create the engine and the tables that are missing."""
    try:
        engine = create_async_engine(url, pool_pre_ping=not url.startswith("sqlite"))
    except Exception as error:  # SQLAlchemy raises several types for a bad URL
        raise ConfigurationError(f"store.url: cannot use {url!r}: {error}") from error
    if engine.dialect.name == "sqlite":
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
    async with engine.begin() as connection:
        await connection.run_sync(_upgrade)
        await connection.run_sync(metadata.create_all)
    return engine


def _upgrade(connection: Connection) -> None:
    """Bring a store made by an earlier release up to date, keeping its rows."""
    inspector = inspect(connection)
    if "kb_chunks" not in inspector.get_table_names():
        return
    if inspector.get_pk_constraint("kb_chunks")["constrained_columns"] != ["id"]:
        return
    # 0.1.0 keyed chunks by id alone; ids repeat across tenants that index the same files.
    if connection.dialect.name == "postgresql":
        name = inspector.get_pk_constraint("kb_chunks")["name"]
        connection.execute(text(f'ALTER TABLE kb_chunks DROP CONSTRAINT "{name}"'))
        connection.execute(text("ALTER TABLE kb_chunks ADD PRIMARY KEY (tenant, id)"))
        return
    for index in inspector.get_indexes("kb_chunks"):
        connection.execute(text(f'DROP INDEX IF EXISTS "{index["name"]}"'))
    connection.execute(text("ALTER TABLE kb_chunks RENAME TO kb_chunks_before_upgrade"))
    kb_chunks.create(connection)
    columns = ", ".join(c.name for c in kb_chunks.columns)
    connection.execute(text(f"INSERT INTO kb_chunks ({columns}) SELECT {columns} "
                            "FROM kb_chunks_before_upgrade"))
    connection.execute(text("DROP TABLE kb_chunks_before_upgrade"))


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()
