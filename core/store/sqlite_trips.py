"""SQLite statements in one trip to aiosqlite's thread each, reads in none, and a write
transaction in one, or none when no one else writes.

aiosqlite runs a SQLite connection on a thread of its own, and SQLAlchemy's adapter makes a
trip there for every step of a statement: open a cursor, execute, fetch the rows, close the
cursor, and one more to roll back a read that opened no transaction. Each trip hands the GIL
to that thread and back and wakes the event loop. A cache hit through `serve` made about 80
such trips; under 20 concurrent clients the event loop's thread spent most of its time on
them (bench/api.py, section 4). `OneTripConnection` is an aiosqlite connection whose cursors
execute, fetch every row and close in one trip, and whose commit and rollback make none when
no transaction is open. (SQLite's rows are read from a local file, so fetching them all at
once is what the adapter did anyway: it keeps no server-side cursor for SQLite.)

More cuts, for a file in WAL mode (what core.store.database sets):

- A read outside a transaction (a SELECT) runs on the calling thread, the event loop's: a WAL
  reader never waits for a writer, and the statement takes tens of microseconds, less than
  the trip would. (Its rows past the first few hundred are fetched on aiosqlite's thread.)
- The engine's connections write one at a time: a connection takes the engine's `writers`
  lock on its thread before its first write and gives it back when its transaction ends. A
  second writer waits on the lock and wakes as soon as it is free, instead of sleeping in
  SQLite's busy handler (1, 2, 5, 10 ... ms between tries). Other processes still meet in
  the busy handler.
- `one_trip` (a transaction whose statements' results are not read: inserts) keeps the
  statements and sends them with the commit, in one trip: the write lock is held only while
  SQLite writes, not across trips and the event loop's queue between them.
- And when no one holds the write lock, that trip is not made: the kept statements and the
  commit run on the calling thread, SQLite's busy handler off for them, so the caller never
  waits (a cache hit's job and events: ~0.13 ms, no fsync in WAL with synchronous=NORMAL).
  The hand-over to aiosqlite's thread was the line the event loop's thread was seen at most
  often under 20 concurrent cache hits through `serve` (bench/api.py 4; 19% of its samples).
  Another connection of this engine writing, or another process: the trip is made, and the
  transaction waits its turn there. Such a commit does not checkpoint the WAL (SQLite's
  automatic checkpoint, which syncs the file, held the event loop 5-27 ms once in a hundred
  hits): every CHECKPOINT_EVERY of them, one is made on aiosqlite's thread, no one writing
  meanwhile, so that the next writer starts the WAL again from its beginning.

It leans on two names aiosqlite keeps for itself, `_execute` and `_conn`, at the version the
project pins; tests/core/store/test_sqlite_trips.py checks them."""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
from collections.abc import AsyncIterator, Iterable, Sequence
from typing import Any

import aiosqlite
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

log = logging.getLogger(__name__)

Row = tuple[Any, ...]
Done = tuple[Any, int, int | None, list[Row]]
# A statement kept for the commit: its SQL, and its parameters (a list of them: executemany)
Kept = tuple[str, Any, bool]

# Rows a read fetches on the calling thread before it hands the rest to aiosqlite's thread
READ_HERE_ROWS = 256
# How long a writer waits for another connection of this engine to finish (as busy_timeout)
WRITERS_WAIT_S = 10.0
# Commits on the calling thread between checkpoints of the WAL: a cache hit's adds ~10 pages
# to it, so the WAL stays near the 1000 pages at which SQLite checkpoints on its own.
CHECKPOINT_EVERY = 100


class Writers:
    """What an engine's connections share: the lock they write under, one at a time, and
    the commits made on the calling thread since the WAL was last checkpointed."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.commits_here = 0


class OneTripCursor:
    """The part of aiosqlite's Cursor that SQLAlchemy's adapter uses, with every row fetched
    in the trip that executes the statement."""

    arraysize = 1

    def __init__(self, connection: OneTripConnection) -> None:
        self._connection = connection
        self._rows: list[Row] = []
        self.description: Any = None
        self.rowcount = -1
        self.lastrowid: int | None = None

    async def __aenter__(self) -> OneTripCursor:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    async def execute(self, sql: str, parameters: Sequence[Any] = ()) -> OneTripCursor:
        self._take(await self._connection.statement(sql, parameters, False))
        return self

    async def executemany(self, sql: str,
                          parameters: Iterable[Sequence[Any]]) -> OneTripCursor:
        self._take(await self._connection.statement(sql, list(parameters), True))
        return self

    async def fetchall(self) -> list[Row]:
        rows, self._rows = self._rows, []
        return rows

    async def fetchone(self) -> Row | None:
        return self._rows.pop(0) if self._rows else None

    async def fetchmany(self, size: int | None = None) -> list[Row]:
        size = size or self.arraysize
        rows, self._rows = self._rows[:size], self._rows[size:]
        return rows

    async def close(self) -> None:
        self._rows = []

    async def setinputsizes(self, *_: Any) -> None:
        return None

    def _take(self, done: Done) -> None:
        self.description, self.rowcount, self.lastrowid, self._rows = done


class OneTripConnection(aiosqlite.Connection):
    """An aiosqlite connection of an engine whose connections share `writers`."""

    def __init__(self, connector: Any, writers: Writers) -> None:
        super().__init__(connector, iter_chunk_size=64)
        self._writers = writers
        self._writing = False  # holds `writers` (changed on its thread only, or once closed)
        self.reads_here = False  # reads on the calling thread: set once the file is in WAL
        self._kept: list[Kept] | None = None  # a one-trip transaction's statements
        # busy_timeout and wal_autocheckpoint as the connection was opened with
        self._pragmas: tuple[int, int] | None = None

    @property
    def sqlite(self) -> sqlite3.Connection:
        """The sqlite3 connection that aiosqlite's thread uses."""
        return self._conn

    def cursor(self) -> OneTripCursor:  # type: ignore[override]
        """A cursor, made here (SQLAlchemy's adapter enters it with `async with`)."""
        return OneTripCursor(self)

    def keep_writes(self) -> None:
        """From now until the transaction ends, keep write statements for the commit."""
        self._kept = []

    async def statement(self, sql: str, parameters: Any, many: bool) -> Done:
        """Run one statement (`many`: once per set of parameters): here, on aiosqlite's
        thread, or kept for the commit."""
        read = _is_read(sql)
        if self._kept is not None:
            if not read:
                self._kept.append((sql, parameters, many))
                return None, -1, None, []
            if self._kept:  # a read after kept writes sees them
                kept, self._kept = self._kept, []
                await self._execute(self._run_kept, kept, False)
        if read and self.reads_here and not self._conn.in_transaction:
            return await self._read_here(sql, parameters)
        if read or _is_pragma(sql):  # a PRAGMA takes no write lock of its own
            return await self._execute(_execute, self._conn, sql, parameters)
        return await self._execute(self._write, sql, parameters, many)

    async def _read_here(self, sql: str, parameters: Any) -> Done:
        """A read on the calling thread; past its first READ_HERE_ROWS rows the rest are
        fetched on aiosqlite's thread, so a long read (every passage of a knowledge base)
        does not hold the event loop."""
        cursor = self._conn.cursor()
        try:
            cursor.execute(sql, parameters)
            rows = cursor.fetchmany(READ_HERE_ROWS) if cursor.description else []
        except BaseException:
            cursor.close()
            raise
        if len(rows) < READ_HERE_ROWS:
            cursor.close()
        else:
            rows += await self._execute(_rest, cursor)
        return cursor.description, cursor.rowcount, cursor.lastrowid, rows

    async def commit(self) -> None:
        kept, self._kept = self._kept, None
        if kept:
            if self.reads_here and self._write_here(kept):
                if self._writers.commits_here >= CHECKPOINT_EVERY:
                    self._writers.commits_here = 0
                    await self._execute(self._checkpoint)
                return
            await self._execute(self._run_kept, kept, True)
        elif self._conn.in_transaction:
            await self._execute(self._end, self._conn.commit)

    async def rollback(self) -> None:
        self._kept = None
        if self._conn.in_transaction:
            await self._execute(self._end, self._conn.rollback)

    async def close(self) -> None:
        self._kept = None
        try:
            await super().close()
        finally:
            if self._writing:  # closed in a transaction: its thread has stopped
                self._writing = False
                self._writers.lock.release()

    def _write_here(self, kept: list[Kept]) -> bool:
        """A one-trip transaction's statements and its commit on the calling thread, if no
        one holds the write lock: this engine's `writers` lock is free, and SQLite's is
        asked for with the busy handler off, so the caller never waits. False: nothing was
        written (the lock was held), and the transaction is for aiosqlite's thread."""
        if self._writing or self._conn.in_transaction:
            return False
        if not self._writers.lock.acquire(blocking=False):
            return False
        connection = self._conn
        try:
            if self._pragmas is None:
                self._pragmas = (_pragma(connection, "busy_timeout"),
                                 _pragma(connection, "wal_autocheckpoint"))
            connection.execute("PRAGMA busy_timeout=0")
            connection.execute("PRAGMA wal_autocheckpoint=0")
            try:
                self._run_statements(kept)
            except sqlite3.OperationalError as error:
                if error.sqlite_errorcode & 0xFF == sqlite3.SQLITE_BUSY:
                    return False  # another process writes: rolled back, for the thread
                raise
            finally:
                waits, pages = self._pragmas
                connection.execute(f"PRAGMA busy_timeout={waits}")
                connection.execute(f"PRAGMA wal_autocheckpoint={pages}")
            self._writers.commits_here += 1
        finally:
            self._writers.lock.release()
        return True

    # ---- on aiosqlite's thread ----

    def _write(self, sql: str, parameters: Any, many: bool) -> Done:
        self._lock()
        try:
            return (_executemany if many else _execute)(self._conn, sql, parameters)
        finally:
            self._unlock_unless_in_transaction()

    def _run_kept(self, kept: list[Kept], commit: bool) -> None:
        """The kept statements, then the commit (`commit`), or rolled back on an error."""
        self._lock()
        try:
            self._run_statements(kept, commit)
        finally:
            self._unlock_unless_in_transaction()

    def _run_statements(self, kept: list[Kept], commit: bool = True) -> None:
        """(On whichever thread holds the write lock.)"""
        try:
            for sql, parameters, many in kept:
                (_executemany if many else _execute)(self._conn, sql, parameters)
            if commit:
                self._conn.commit()
        except BaseException:
            if self._conn.in_transaction:
                self._conn.rollback()
            raise

    def _checkpoint(self) -> None:
        """The WAL copied into the database file, with the writers' turn taken so that it
        is copied whole and the next writer starts it again. A failure is SQLite's own
        checkpoint's: the commits stand, and a later checkpoint copies what this did not."""
        self._lock()
        try:
            self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        except sqlite3.Error as error:
            log.warning("SQLite could not checkpoint its WAL: %s", error)
        finally:
            self._unlock_unless_in_transaction()

    def _end(self, finish: Any) -> None:
        try:
            finish()
        finally:
            self._unlock_unless_in_transaction()

    def _lock(self) -> None:
        if self._writing:
            return
        if not self._writers.lock.acquire(timeout=WRITERS_WAIT_S):
            raise sqlite3.OperationalError("database is locked (by another connection of "
                                           "this process)")
        self._writing = True

    def _unlock_unless_in_transaction(self) -> None:
        if self._writing and not self._conn.in_transaction:
            self._writing = False
            self._writers.lock.release()


def connect(database: str, *, writers: Writers, **kwargs: Any) -> OneTripConnection:
    """What aiosqlite.connect does, with a OneTripConnection (SQLAlchemy's dialect passes the
    file's path and sqlite3's options; the engine's `writers` are bound in)."""
    kwargs["check_same_thread"] = False  # reads run on the calling thread
    connection = OneTripConnection(lambda: sqlite3.connect(database, **kwargs), writers)
    connection._thread.daemon = True  # as SQLAlchemy's dialect sets for its own
    return connection


@contextlib.asynccontextmanager
async def one_trip(engine: AsyncEngine) -> AsyncIterator[AsyncConnection]:
    """A write transaction (`engine.begin()`) whose statements' results are not read
    (inserts: no row counts, no rows): on SQLite its writes go to the database with the
    commit, in one trip, and an error (a clashing key) is raised as the block ends. Reads in
    it see its writes. On any other database, `engine.begin()` as it is."""
    async with engine.begin() as connection:
        if engine.dialect.name == "sqlite":
            raw = await connection.get_raw_connection()
            driver = raw.driver_connection
            if isinstance(driver, OneTripConnection):
                driver.keep_writes()
        yield connection


def _pragma(connection: sqlite3.Connection, name: str) -> int:
    return int(connection.execute(f"PRAGMA {name}").fetchone()[0])


def _is_read(sql: str) -> bool:
    return sql.lstrip()[:6].upper() == "SELECT"


def _is_pragma(sql: str) -> bool:
    return sql.lstrip()[:6].upper() == "PRAGMA"


def _execute(connection: sqlite3.Connection, sql: str, parameters: Sequence[Any]) -> Done:
    cursor = connection.cursor()
    try:
        cursor.execute(sql, parameters)
        rows = cursor.fetchall() if cursor.description else []
        return cursor.description, cursor.rowcount, cursor.lastrowid, rows
    finally:
        cursor.close()


def _rest(cursor: sqlite3.Cursor) -> list[Row]:
    try:
        return cursor.fetchall()
    finally:
        cursor.close()


def _executemany(connection: sqlite3.Connection, sql: str,
                 parameters: list[Sequence[Any]]) -> Done:
    cursor = connection.cursor()
    try:
        cursor.executemany(sql, parameters)
        return cursor.description, cursor.rowcount, cursor.lastrowid, []
    finally:
        cursor.close()
