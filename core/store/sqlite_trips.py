"""SQLite statements in one trip to aiosqlite's thread each.

aiosqlite runs a SQLite connection on a thread of its own, and SQLAlchemy's adapter makes a
trip there for every step of a statement: open a cursor, execute, fetch the rows, close the
cursor, and one more to roll back a read that opened no transaction. Each trip hands the GIL
to that thread and back and wakes the event loop. A cache hit through `serve` made about 80
such trips; under 20 concurrent clients the event loop's thread spent most of its time on
them (bench/api.py, section 4). `OneTripConnection` is an aiosqlite connection whose cursors
execute, fetch every row and close in one trip, and whose commit and rollback make none when
no transaction is open. (SQLite's rows are read from a local file, so fetching them all at
once is what the adapter did anyway: it keeps no server-side cursor for SQLite.)

It leans on two names aiosqlite keeps for itself, `_execute` and `_conn`, at the version the
project pins; tests/core/store/test_sqlite_trips.py checks them."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

import aiosqlite

Row = tuple[Any, ...]


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
        self._take(await self._connection._execute(_execute, self._connection.sqlite,
                                                   sql, parameters))
        return self

    async def executemany(self, sql: str,
                          parameters: Iterable[Sequence[Any]]) -> OneTripCursor:
        self._take(await self._connection._execute(_executemany, self._connection.sqlite,
                                                   sql, list(parameters)))
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

    def _take(self, done: tuple[Any, int, int | None, list[Row]]) -> None:
        self.description, self.rowcount, self.lastrowid, self._rows = done


class OneTripConnection(aiosqlite.Connection):
    @property
    def sqlite(self) -> sqlite3.Connection:
        """The sqlite3 connection that aiosqlite's thread uses."""
        return self._conn

    def cursor(self) -> OneTripCursor:  # type: ignore[override]
        """A cursor, made here (SQLAlchemy's adapter enters it with `async with`)."""
        return OneTripCursor(self)

    async def commit(self) -> None:
        if self._conn.in_transaction:
            await super().commit()

    async def rollback(self) -> None:
        if self._conn.in_transaction:
            await super().rollback()


def connect(database: str, **kwargs: Any) -> OneTripConnection:
    """What aiosqlite.connect does, with a OneTripConnection (SQLAlchemy's dialect passes the
    file's path and sqlite3's options)."""
    connection = OneTripConnection(lambda: sqlite3.connect(database, **kwargs),
                                   iter_chunk_size=64)
    connection._thread.daemon = True  # as SQLAlchemy's dialect sets for its own
    return connection


def _execute(connection: sqlite3.Connection, sql: str,
             parameters: Sequence[Any]) -> tuple[Any, int, int | None, list[Row]]:
    cursor = connection.cursor()
    try:
        cursor.execute(sql, parameters)
        rows = cursor.fetchall() if cursor.description else []
        return cursor.description, cursor.rowcount, cursor.lastrowid, rows
    finally:
        cursor.close()


def _executemany(connection: sqlite3.Connection, sql: str,
                 parameters: list[Sequence[Any]]) -> tuple[Any, int, int | None, list[Row]]:
    cursor = connection.cursor()
    try:
        cursor.executemany(sql, parameters)
        return cursor.description, cursor.rowcount, cursor.lastrowid, []
    finally:
        cursor.close()
