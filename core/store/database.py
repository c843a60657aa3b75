"""The relational database: one SQLAlchemy async engine for jobs and the knowledge-base catalogue.

SQLite (a file in the data dir) by default; PostgreSQL through asyncpg by URL.
"""

from __future__ import annotations

import functools
import json
import zlib
from pathlib import Path
from typing import Any

from sqlalchemy import (
    JSON,
    Column,
    DateTime,
    Float,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    event,
    inspect,
    text,
)
from sqlalchemy.engine import URL, Connection
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.schema import CreateIndex

from core.errors import ConfigurationError, StoreUnavailableError
from core.redact import redact, safe_url
from core.store import sqlite_trips
from core.store.outage import AWAY
from core.text import without_lone_surrogates

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
    # why it failed, as its front end tells it (core.models.FailureKind); added in 0.2
    Column("failure", String(16)),
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
    # added in 0.3: a PDF's pages (slides, sheets), and who added it (an API key's name,
    # a chat user); empty in older stores until the file is indexed again
    Column("pages", Integer),
    Column("added_by", String(255)),
    # Search joins every chunk to its file by (tenant, file_id): without this each chunk's
    # file was looked up among all of the tenant's files.
    Index("ix_kb_files_file", "tenant", "file_id"),
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

# Every job's progress, in order: one row an event (a stage started or finished, the job
# queued, completed, failed or cancelled, its answer delivered), replayable from any point.
job_events = Table(
    "job_events",
    metadata,
    Column("job_id", String(32), primary_key=True),
    Column("seq", Integer, primary_key=True, autoincrement=False),
    Column("at", DateTime(timezone=True), nullable=False),
    Column("kind", String(24), nullable=False),
    Column("stage", String(16)),
    Column("progress", Float, nullable=False),
    Column("message", Text, nullable=False),
    Column("counts", JSON, nullable=False),
    Column("detail", JSON),  # a stage event's ProgressDetail; NULL in older rows
)

# Where a job's answer goes (a chat platform's channel, thread, status message, interaction)
# and which delivery steps are done, so that a retry repeats none of them.
job_deliveries = Table(
    "job_deliveries",
    metadata,
    Column("job_id", String(32), primary_key=True),
    Column("platform", String(32), nullable=False),
    Column("target", JSON, nullable=False),
    Column("done", JSON, nullable=False),
    Column("status", String(16), nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("error", Text),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)

kb_generations = Table(
    "kb_generations",
    metadata,
    Column("tenant", String(255), primary_key=True),
    Column("generation", Integer, nullable=False),
)

# Files whose catalogue rows are gone while their vectors may not be: written in the
# transaction that forgets a file's rows, deleted with the transaction that writes them back
# or once the vectors are gone. A row left by a killed index run names vectors to delete.
# (A new table: open_database's create_all adds it to an existing store.)
kb_pending = Table(
    "kb_pending",
    metadata,
    Column("tenant", String(255), primary_key=True),
    Column("file_id", String(32), primary_key=True),
    Column("worker", String(255), nullable=False),
    Column("since", DateTime(timezone=True), nullable=False),
)

# Web pages and sites indexed from a URL (researchbot index URL): what a refresh reads again,
# and when it last did (a refresh claims a site by moving `refreshed_at`, so one process reads
# it a period, however many run).
kb_sites = Table(
    "kb_sites",
    metadata,
    Column("tenant", String(255), primary_key=True),
    Column("url", String(4096), primary_key=True),
    Column("max_pages", Integer, nullable=False),
    Column("depth", Integer, nullable=False),
    Column("added_at", DateTime(timezone=True), nullable=False),
    Column("refreshed_at", DateTime(timezone=True), nullable=False),
)

# Pages of an indexed site that a person removed (DELETE /v1/documents, documents remove): a
# refresh or a crawl of the site does not add them again; indexing the page's own URL does.
kb_removed_pages = Table(
    "kb_removed_pages",
    metadata,
    Column("tenant", String(255), primary_key=True),
    Column("url", String(4096), primary_key=True),
    Column("removed_at", DateTime(timezone=True), nullable=False),
)

# API keys (researchbot keys create): one row a key, the key itself never stored, only its
# SHA-256 (keys are 256 random bits: a slow hash adds nothing against guessing).
api_keys = Table(
    "api_keys",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("tenant", String(255), nullable=False),
    Column("name", String(255), nullable=False),
    Column("sha256", String(64), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("revoked_at", DateTime(timezone=True)),
)

# What readers thought of an answer: 👍/👎 from the API, the answer page or a chat reaction.
# One row per rater and job: rating again replaces the earlier rating.
job_feedback = Table(
    "job_feedback",
    metadata,
    Column("job_id", String(32), primary_key=True),
    Column("rater", String(300), primary_key=True),
    Column("tenant", String(255), nullable=False),
    Column("channel", String(32), nullable=False),
    Column("rating", String(8), nullable=False),
    Column("comment", Text, nullable=False),
    Column("at", DateTime(timezone=True), nullable=False),
)

# The answer cache's exact half (core.answer.cache): a finished answer under its tenant and the
# hash of its normalised question and scope, until it expires (seconds since the epoch, the
# cache's clock). In the job database so that an exact repeat is answered without loading the
# embedder or the vector store, which keep the semantic half.
cached_answers = Table(
    "cached_answers",
    metadata,
    Column("tenant", String(255), primary_key=True),
    Column("key", String(64), primary_key=True),
    Column("question", Text, nullable=False),
    Column("result", Text, nullable=False),
    Column("created_at", Float, nullable=False),
    Column("expires_at", Float, nullable=False),
    Index("ix_cached_answers_expiry", "tenant", "expires_at"),
)

# Files sent to the API or a chat to be added to the knowledge base, kept here from the
# request that sent them until the documents job that reads them has ended (with workers, in
# another process, perhaps on another machine).
kb_uploads = Table(
    "kb_uploads",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("tenant", String(255), nullable=False),
    Column("filename", String(255), nullable=False),
    Column("data", LargeBinary, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
)

# Secrets this installation makes for itself once and every process shares: the key that
# signs answer-page links.
instance_keys = Table(
    "instance_keys",
    metadata,
    Column("name", String(64), primary_key=True),
    Column("value", String(128), nullable=False),
)


def upsert_into(table: Table, connection: AsyncConnection) -> Any:
    """An INSERT into `table` in the connection's dialect, which has ON CONFLICT (each
    dialect's module is loaded when a database of its kind is used)."""
    if connection.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as postgresql_insert

        return postgresql_insert(table)
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    return sqlite_insert(table)


def sqlite_url(path: str) -> str:
    return f"sqlite+aiosqlite:///{path}"


CONNECT_TIMEOUT_S = 10.0
SQLITE_CONNECTIONS = 12


async def open_database(url: str) -> AsyncEngine:
    """Create the engine and the tables that are missing. A database that cannot be used (no
    folder, no server, no such database, refused login) is a ConfigurationError naming
    store.url and what to do, with the URL's password redacted."""
    try:
        engine = create_async_engine(url, json_deserializer=read_json,
                                     **_engine_options(url))
    except Exception as error:  # SQLAlchemy raises several types for a bad URL
        raise ConfigurationError(f"store.url: cannot use {safe_url(url)}: "
                                 f"{redact(str(error))}") from None
    if engine.dialect.name == "sqlite":
        _require_folder(engine.url)
        event.listen(engine.sync_engine, "do_connect", _one_trip_statements(sqlite_trips.Writers()))
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
    try:
        async with engine.begin() as connection:
            if not await connection.run_sync(_schema_is_current):
                await connection.run_sync(_lock_schema)
                await connection.run_sync(_upgrade)
                await connection.run_sync(metadata.create_all)
                await connection.run_sync(_add_missing_indexes)
                await connection.run_sync(_mark_schema_current)
    except (OSError, DBAPIError) as error:  # OSError: refused, unknown host, timed out
        await engine.dispose()
        raise ConfigurationError(_unusable(engine.url, error)) from None
    # Once started, a server that cannot be reached is an outage, not a setting to fix.
    event.listen(engine.sync_engine, "do_connect", _connect_or_unavailable)
    return engine


def read_json(text: str) -> Any:
    """A JSON value as read from the database, with any lone surrogate in its strings replaced
    by U+FFFD: JSON can spell one (`"\\ud800"`) and both databases store it, but no
    response, page or tokenizer can encode it, and one such row must not break every read
    that lists it. (Only an escape can hold one: stored text is UTF-8.)"""
    value = json.loads(text)
    if "\\ud" in text or "\\uD" in text:
        value = _without_lone_surrogates(value)
    return value


def _without_lone_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return without_lone_surrogates(value)
    if isinstance(value, list):
        return [_without_lone_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {without_lone_surrogates(key): _without_lone_surrogates(item)
                for key, item in value.items()}
    return value


def _connect_or_unavailable(dialect: Any, _record: Any, cargs: Any, cparams: Any) -> Any:
    """Connect as the driver would; a server that refuses or does not answer (a restart) is
    a StoreUnavailableError. asyncpg's own OSError could not be told from any other
    network's (a model server's, a source's) once it has left the store."""
    try:
        return dialect.connect(*cargs, **cparams)
    except (OSError, TimeoutError) as error:
        raise StoreUnavailableError(AWAY) from error


def _engine_options(url: str) -> dict[str, Any]:
    if url.startswith("sqlite"):
        if ":memory:" in url or "mode=memory" in url:
            return {"pool_size": 1, "max_overflow": 0}  # each connection its own database
        # Several connections: reads run on the event loop's thread and hold one for an
        # instant, and writers take turns on the engine's lock (core.store.sqlite_trips)
        # instead of meeting in SQLite's busy handler, which sleeps 1 to 100 ms between
        # looks. A writer waiting its turn holds its connection: with 4, twenty concurrent
        # cache hits left reads waiting for one (bench/api.py, docs/benchmarks/startup.md).
        return {"pool_size": SQLITE_CONNECTIONS, "max_overflow": 0}
    # asyncpg waits 60 s for a server that drops packets; start-up should say so sooner
    options: dict[str, Any] = {"pool_pre_ping": True}
    if url.startswith("postgresql+asyncpg"):
        options["connect_args"] = {"timeout": CONNECT_TIMEOUT_S}
    return options


def _require_folder(url: URL) -> None:
    database = url.database or ""
    if not database or database == ":memory:" or database.startswith("file:"):
        return
    folder = Path(database).expanduser().parent
    if not folder.is_dir():
        raise ConfigurationError(f"store.url: the folder {folder} of the SQLite file does not "
                                 f"exist: create it (mkdir -p {folder}) or fix store.url")


def _unusable(url: URL, error: Exception) -> str:
    """Why the database cannot be used and what to do, in one line."""
    reason = _reason(error)
    if url.get_backend_name() == "sqlite":
        return f"store.url: cannot open the SQLite file {url.database} ({reason}): check the " \
               "file and its folder's permissions, or fix store.url"
    server = f"{url.host or 'localhost'}:{url.port or 5432}"
    code = getattr(getattr(error, "orig", None), "sqlstate", None)
    if code == "3D000":  # invalid_catalog_name
        return (f"store.url: database {url.database!r} does not exist on the PostgreSQL server "
                f"at {server}: create it (createdb -h {url.host or 'localhost'} -p "
                f"{url.port or 5432} -U {url.username or 'postgres'} {url.database}) or fix "
                "store.url")
    if code in ("28000", "28P01"):  # invalid authorization / password
        return f"store.url: the PostgreSQL server at {server} refused the login ({reason}): " \
               "fix the user or password in store.url"
    if isinstance(error, OSError):
        return f"store.url: cannot connect to the PostgreSQL server at {server} ({reason}): " \
               "start it or fix store.url"
    return f"store.url: cannot use {safe_url(url.render_as_string())} ({reason}): fix store.url"


def _reason(error: Exception) -> str:
    """The driver's own words, one line, no password."""
    text = str(getattr(error, "orig", None) or error).strip()
    if not text:
        text = "timed out" if isinstance(error, TimeoutError) else type(error).__name__
    return redact(text.splitlines()[0])


@functools.cache
def _schema_version() -> int:
    """A number that changes with any table, column or index (a 31-bit digest of them)."""
    tables = metadata.tables.values()
    shape = sorted(f"{table.name}.{column.name}:{column.type}" for table in tables
                   for column in table.columns)
    shape += sorted(f"{table.name}.{index.name}" for table in tables for index in table.indexes)
    return zlib.crc32("\n".join(shape).encode()) & 0x7FFFFFFF


def _schema_is_current(connection: Connection) -> bool:
    """A SQLite file records the schema version it was brought up to (PRAGMA user_version), so
    each CLI command opening it does not inspect every table again (~50 statements). A
    PostgreSQL store, shared by processes of several releases, is always checked."""
    if connection.dialect.name != "sqlite":
        return False
    return bool(connection.exec_driver_sql("PRAGMA user_version").scalar() == _schema_version())


def _mark_schema_current(connection: Connection) -> None:
    if connection.dialect.name == "sqlite":
        connection.exec_driver_sql(f"PRAGMA user_version = {_schema_version()}")


# Any fixed number: the key of PostgreSQL's advisory lock on this store's schema.
_SCHEMA_LOCK = 0x72626F74


def _lock_schema(connection: Connection) -> None:
    """One process at a time brings the schema up to date, until its transaction ends.

    Processes often start together (`serve` with its workers, several CLI runs). Looking up
    what is missing and then creating it is not atomic: on PostgreSQL two CREATE INDEX (or
    CREATE TABLE) of one name collide on the system catalogue's unique key, IF NOT EXISTS
    or not, and on SQLite the second CREATE TABLE finds the first's table. The lock makes
    the second process wait, then find everything made."""
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _SCHEMA_LOCK})
    elif connection.dialect.name == "sqlite":
        # The driver opens no transaction for DDL; this one takes the write lock at once.
        connection.exec_driver_sql("BEGIN IMMEDIATE")


def _upgrade(connection: Connection) -> None:
    """Bring a store made by an earlier release up to date, keeping its rows."""
    inspector = inspect(connection)
    tables = inspector.get_table_names()
    _add_missing_columns(connection, inspector, tables)
    if "kb_chunks" not in tables:
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


def _add_missing_columns(connection: Connection, inspector: Any, tables: list[str]) -> None:
    """Columns added to a table after a store was made (each nullable: older rows have
    none), e.g. jobs.failure in 0.2, kb_files.pages and added_by in 0.3."""
    # PostgreSQL stores are shared: another process of an older release may add it first
    maybe = " IF NOT EXISTS" if connection.dialect.name == "postgresql" else ""
    for table in metadata.sorted_tables:
        if table.name not in tables:
            continue  # create_all makes it whole
        present = {column["name"] for column in inspector.get_columns(table.name)}
        for column in table.columns:
            if column.name not in present and column.nullable:
                kind = column.type.compile(dialect=connection.dialect)
                connection.execute(text(f'ALTER TABLE {table.name} ADD COLUMN{maybe} '
                                        f'"{column.name}" {kind}'))


def _add_missing_indexes(connection: Connection) -> None:
    """Indexes added to a table after a store was made: create_all makes only missing
    tables (with their indexes), never an existing table's new index."""
    inspector = inspect(connection)
    for table in metadata.sorted_tables:
        present = {index["name"] for index in inspector.get_indexes(table.name)}
        for index in table.indexes:
            if index.name not in present:  # IF NOT EXISTS too: a release without the lock
                connection.execute(CreateIndex(index, if_not_exists=True))


def _one_trip_statements(writers: sqlite_trips.Writers) -> Any:
    """A do_connect listener: SQLite connections whose statements make one trip to
    aiosqlite's thread each, and which write one at a time, on `writers`
    (core.store.sqlite_trips)."""
    creator = functools.partial(sqlite_trips.connect, writers=writers)

    def one_trip_statements(_dialect: Any, _record: Any, _cargs: Any, cparams: Any) -> None:
        cparams["async_creator_fn"] = creator

    return one_trip_statements


def _sqlite_pragmas(dbapi_connection: Any, record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    wal = (cursor.fetchone() or ("",))[0] == "wal"
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()
    driver = record.driver_connection
    if wal and isinstance(driver, sqlite_trips.OneTripConnection):
        driver.reads_here = True  # a WAL reader never waits for a writer
