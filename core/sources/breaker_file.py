"""Circuit breakers shared by every process of one data dir, through a SQLite file there: a
source that one CLI question found unreachable stays paused for the next question, until its
reset time is over, instead of each process paying the connect timeout again.

A row a source holds what the Redis breaker's hash holds (core.sources.shared_limits): failures
in a row, open until, the kind (and HTTP status) of the failure that opened it, until when a
half-open trial is under way, and when a failure was last counted (a count nobody has added to
for `CircuitBreaker.forget_after_s` is forgotten). Each change is one IMMEDIATE transaction,
so two processes never both take the trial. Times are wall-clock seconds (`clock`), as every
process must read the same clock. SQLite runs in a thread: a lock held by another process
never stalls the event loop.

When the file cannot be used (a read-only or full disk, a lock held longer than
`op_timeout_s`), every source falls back to this process's breaker (logged once) and the file
is tried again after a rest (`rest_s` on `rest_clock`, this process's own seconds): the file
never fails a question.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from core.errors import SourceError
from core.models import Clock
from core.sources.failure_kinds import failure_kind, paused_error
from core.sources.guards import SourceGuard

T = TypeVar("T")
log = logging.getLogger(__name__)

FILE_OP_S = 1.0  # how long a change waits for another process's lock; longer is a failure
FILE_REST_S = 30.0  # after a failure, the file is left alone this long

_SCHEMA = """CREATE TABLE IF NOT EXISTS breakers (
    source TEXT PRIMARY KEY, failures INTEGER NOT NULL, open_until REAL, trial_until REAL,
    kind TEXT NOT NULL, status INTEGER, counted_at REAL NOT NULL)"""


class BreakerFile:
    """The breakers' SQLite file, one BreakerFileGuard a source. Opened on first use, closed
    by the caller (bot/wiring.py)."""

    def __init__(self, path: Path, *, clock: Clock = time.time,
                 rest_clock: Clock = time.monotonic, op_timeout_s: float = FILE_OP_S,
                 rest_s: float = FILE_REST_S) -> None:
        self.path = path
        self.clock = clock
        self._rest_clock = rest_clock
        self._op_timeout_s = op_timeout_s
        self._rest_s = rest_s
        self._resting_until = 0.0
        self._down = False
        self._connection: sqlite3.Connection | None = None
        self._lock = threading.Lock()  # one connection, used from the executor's threads

    def guard(self, name: str, local: SourceGuard, trial_s: float) -> BreakerFileGuard:
        return BreakerFileGuard(self, name, local, trial_s)

    async def either(self, shared: Callable[[sqlite3.Connection], T],
                     local: Callable[[], Awaitable[T]]) -> T:
        """`shared(connection)` in a transaction, or `await local()` while the file cannot
        be used (tried again after a rest)."""
        if self._rest_clock() < self._resting_until:
            return await local()
        try:
            result = await asyncio.to_thread(self._run, shared)
        except (sqlite3.Error, OSError) as error:
            self._rest(error)
            return await local()
        if self._down:
            self._down = False
            log.info("%s: usable again; source circuit breakers are shared again", self.path)
        return result

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    def _run(self, change: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock, self._transaction() as connection:
            return change(connection)

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        connection = self._open()
        connection.execute("BEGIN IMMEDIATE")
        try:
            yield connection
        except BaseException:
            connection.rollback()
            raise
        connection.commit()

    def _open(self) -> sqlite3.Connection:
        if self._connection is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(self.path, timeout=self._op_timeout_s,
                                         isolation_level=None, check_same_thread=False)
            connection.row_factory = sqlite3.Row
            try:
                # Every source call reads or writes a row: write-ahead logging without a sync
                # at each commit keeps that off the disk's flush (a breaker's state is advice;
                # losing its last change to a power cut costs one connect timeout).
                connection.execute("PRAGMA journal_mode=WAL")
                connection.execute("PRAGMA synchronous=NORMAL")
                connection.execute(_SCHEMA)
            except sqlite3.Error:
                connection.close()
                raise
            self._connection = connection
        return self._connection

    def _rest(self, error: Exception) -> None:
        self._resting_until = self._rest_clock() + self._rest_s
        if not self._down:
            self._down = True
            log.warning("%s cannot be used (%s); source circuit breakers are kept in this "
                        "process until it can", self.path, error)


class BreakerFileGuard:
    """One source's breaker in the data dir's file; its rate limit, and its breaker while the
    file cannot be used, are `local`'s."""

    def __init__(self, file: BreakerFile, name: str, local: SourceGuard,
                 trial_s: float) -> None:
        self._file = file
        self._name = name
        self._local = local
        self._trial_s = trial_s
        self.breaker = local.breaker

    async def acquire(self) -> None:
        await self._local.acquire()

    async def allow(self) -> bool:
        return await self._file.either(self._allow, self._local.allow)

    def _allow(self, db: sqlite3.Connection) -> bool:
        now = self._file.clock()
        row = self._row(db, now)
        if row is None or row["open_until"] is None:
            return True
        if now < row["open_until"]:
            return False
        if row["trial_until"] is not None and now < row["trial_until"]:
            return False  # another process's trial is under way
        db.execute("UPDATE breakers SET trial_until = ? WHERE source = ?",
                   (now + self._trial_s, self._name))
        return True

    async def succeeded(self) -> None:
        await self._file.either(self._forget, self._local.succeeded)

    def _forget(self, db: sqlite3.Connection) -> None:
        db.execute("DELETE FROM breakers WHERE source = ?", (self._name,))

    async def failed(self, error: SourceError) -> None:
        await self._file.either(lambda db: self._count(db, error, trip=False),
                                lambda: self._local.failed(error))

    async def trip(self, error: SourceError) -> None:
        await self._file.either(lambda db: self._count(db, error, trip=True),
                                lambda: self._local.trip(error))

    def _count(self, db: sqlite3.Connection, error: SourceError, trip: bool) -> None:
        """A failure while open (the half-open trial's) opens it again, as
        CircuitBreaker.failed does."""
        now = self._file.clock()
        row = self._row(db, now)
        failures = 1 + (row["failures"] if row else 0)
        open_until = row["open_until"] if row else None
        if trip or open_until is not None or failures >= self.breaker.threshold:
            open_until = now + self.breaker.reset_s
        db.execute("INSERT OR REPLACE INTO breakers VALUES (?, ?, ?, NULL, ?, ?, ?)",
                   (self._name, failures, open_until, failure_kind(error), error.status, now))

    async def release(self) -> None:
        await self._file.either(self._release, self._local.release)

    def _release(self, db: sqlite3.Connection) -> None:
        db.execute("UPDATE breakers SET trial_until = NULL WHERE source = ?", (self._name,))

    async def paused_error(self) -> SourceError:
        return await self._file.either(self._paused_error, self._local.paused_error)

    def _paused_error(self, db: sqlite3.Connection) -> SourceError:
        row = self._row(db, self._file.clock())
        return paused_error(self._name, row["kind"] if row else "",
                            row["status"] if row else None)

    def _row(self, db: sqlite3.Connection, now: float) -> sqlite3.Row | None:
        """The source's row, unless its count is old enough to be forgotten."""
        row: sqlite3.Row | None = db.execute("SELECT * FROM breakers WHERE source = ?",
                                             (self._name,)).fetchone()
        if row is None or now - row["counted_at"] >= self.breaker.forget_after_s:
            return None
        return row
