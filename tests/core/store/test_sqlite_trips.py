"""SQLite statements make one trip each to aiosqlite's thread (core.store.sqlite_trips), reads
none, and a one-trip transaction one in all: reads, writes, many-row inserts, commits and
rollbacks behave as through aiosqlite itself, a read that opened no transaction costs no trip
to roll back, the engine's connections write one at a time without meeting in SQLite's
busy handler, and a one-trip transaction makes no trip when no one else writes."""

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiosqlite
import pytest
from sqlalchemy import delete, event, func, select, update
from sqlalchemy.exc import IntegrityError

from core.models import utcnow
from core.store.database import api_keys, open_database, sqlite_url
from core.store.sqlite_trips import (
    CHECKPOINT_EVERY,
    READ_HERE_ROWS,
    OneTripConnection,
    one_trip,
)

pytestmark = pytest.mark.unit


def _row(key_id: str) -> dict[str, Any]:
    return {"id": key_id, "tenant": "t1", "name": "", "sha256": key_id * 4,
            "created_at": utcnow(), "revoked_at": None}


@pytest.fixture
async def engine(tmp_path: Path) -> AsyncIterator[Any]:
    engine = await open_database(sqlite_url(str(tmp_path / "trips.sqlite3")))
    yield engine
    await engine.dispose()


@pytest.fixture
def trips(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each function aiosqlite's thread is handed, by name, from now on."""
    handed: list[str] = []
    original = aiosqlite.Connection._execute

    async def counted(self: aiosqlite.Connection, fn: Any, *args: Any, **kwargs: Any) -> Any:
        handed.append(getattr(fn, "__name__", repr(fn)))
        return await original(self, fn, *args, **kwargs)

    monkeypatch.setattr(aiosqlite.Connection, "_execute", counted)
    return handed


async def test_each_write_is_one_trip_and_a_read_none(engine: Any, trips: list[str]) -> None:
    async with engine.connect() as connection:
        assert isinstance(connection.sync_connection.connection.driver_connection,
                          OneTripConnection)
        assert (await connection.execute(select(func.count()).select_from(api_keys))
                ).scalar() == 0
    assert trips == []  # read on this thread (WAL); no cursor opened or closed, no rollback
    async with engine.begin() as connection:
        await connection.execute(api_keys.insert(), [_row("a1"), _row("b2"), _row("c3")])
        changed = await connection.execute(
            update(api_keys).where(api_keys.c.id.in_(["a1", "b2"])).values(name="x"))
        assert changed.rowcount == 2
        # in a transaction a read goes to the thread: it must see the transaction's writes
        named = await connection.execute(select(func.count()).where(api_keys.c.name == "x"))
        assert named.scalar() == 2
    assert trips == ["_write", "_write", "_execute", "_end"]


async def test_a_one_trip_transaction_writes_with_its_commit(engine: Any,
                                                              trips: list[str]) -> None:
    async with one_trip(engine) as connection:
        await connection.execute(api_keys.insert(), [_row("a1"), _row("b2")])
        await connection.execute(api_keys.insert(), _row("c3"))
    assert trips == []  # both inserts and the commit, here: no one else was writing
    async with one_trip(engine) as connection:  # a read after kept writes sees them
        await connection.execute(api_keys.insert(), _row("d4"))
        count = await connection.execute(select(func.count()).select_from(api_keys))
        assert count.scalar() == 4
    assert trips == ["_run_kept", "_execute", "_end"]
    with pytest.raises(IntegrityError):  # a clashing key fails the whole transaction
        async with one_trip(engine) as connection:
            await connection.execute(api_keys.insert(), _row("e5"))
            await connection.execute(api_keys.insert(), _row("a1"))
    with pytest.raises(RuntimeError):  # an error in the block writes nothing
        async with one_trip(engine) as connection:
            await connection.execute(api_keys.insert(), _row("f6"))
            raise RuntimeError("the transaction fails before its commit")
    async with engine.connect() as connection:
        ids = (await connection.execute(select(api_keys.c.id).order_by(api_keys.c.id))
               ).scalars().all()
    assert ids == ["a1", "b2", "c3", "d4"]


async def test_a_one_trip_transaction_waits_on_the_thread_while_another_writes(
        engine: Any, trips: list[str], tmp_path: Path) -> None:
    """Another process holding SQLite's write lock (here a connection of its own), or
    another connection of the engine in a transaction: the one-trip transaction neither
    waits on the event loop's thread nor fails, but goes to aiosqlite's thread and writes
    when the other ends."""
    other = sqlite3.connect(tmp_path / "trips.sqlite3", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    writing = asyncio.ensure_future(_one_trip_insert(engine, "p1"))
    await asyncio.sleep(0.3)
    assert not writing.done() and trips == ["_run_kept"]
    other.execute("COMMIT")
    other.close()
    await asyncio.wait_for(writing, 10)
    trips.clear()
    async with engine.begin() as holding:
        await holding.execute(api_keys.insert(), _row("e1"))  # holds the engine's lock
        writing = asyncio.ensure_future(_one_trip_insert(engine, "e2"))
        await asyncio.sleep(0.1)
        assert not writing.done()
    await asyncio.wait_for(writing, 10)
    writes = ["_write", "_run_kept", "_end"]  # (besides opening a second connection)
    assert [name for name in trips if name in writes] == writes
    made = len(trips)
    await _one_trip_insert(engine, "f1")  # no one writing: here again, with its busy wait
    assert len(trips) == made
    async with engine.connect() as connection:
        ids = (await connection.execute(select(api_keys.c.id).order_by(api_keys.c.id))
               ).scalars().all()
        waits = (await connection.exec_driver_sql("PRAGMA busy_timeout")).scalar()
    assert ids == ["e1", "e2", "f1", "p1"] and waits == 10000


async def test_commits_here_checkpoint_the_wal_on_the_thread(engine: Any, trips: list[str],
                                                             tmp_path: Path) -> None:
    """A commit on the calling thread never checkpoints (SQLite's automatic checkpoint syncs
    the file): every CHECKPOINT_EVERY of them one is made on aiosqlite's thread, so the WAL
    starts again from its beginning instead of growing; the connection's own settings are
    as they were."""
    for n in range(CHECKPOINT_EVERY * 3 + 1):
        await _one_trip_insert(engine, f"k{n:04}")
    assert trips.count("_checkpoint") == 3 and len(trips) == 3
    async with engine.connect() as connection:
        settings = [(await connection.exec_driver_sql(f"PRAGMA {name}")).scalar()
                    for name in ("busy_timeout", "wal_autocheckpoint")]
    assert settings == [10000, 1000]
    other = sqlite3.connect(tmp_path / "trips.sqlite3")
    _, in_wal, copied = other.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    other.close()
    assert copied == in_wal < 50  # the commits since the last checkpoint only


async def _one_trip_insert(engine: Any, key_id: str) -> None:
    async with one_trip(engine) as connection:
        await connection.execute(api_keys.insert(), _row(key_id))


async def test_concurrent_writers_take_turns_and_lose_nothing(engine: Any) -> None:
    """Twenty writers at once on the engine's connections, one-trip transactions and
    transactions of several trips mixed, with SQLite's busy handler off: a writer that met
    another in SQLite would fail at once ("database is locked")."""
    await engine.dispose()  # connections from now on wait no time in the busy handler

    def no_busy_wait(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA busy_timeout=0")
        cursor.close()

    event.listen(engine.sync_engine, "connect", no_busy_wait)

    async def writer(n: int) -> None:
        for round_ in range(5):
            key = f"k{n}-{round_}"
            if n % 2:
                async with one_trip(engine) as connection:
                    await connection.execute(api_keys.insert(), _row(key))
            else:
                async with engine.begin() as connection:
                    await connection.execute(api_keys.insert(), _row(key))
                    await asyncio.sleep(0)  # the lock is held across trips here
                    await connection.execute(
                        update(api_keys).where(api_keys.c.id == key).values(name="two"))
            async with engine.connect() as connection:  # reads meanwhile, never blocked
                await connection.execute(select(func.count()).select_from(api_keys))

    await asyncio.gather(*(writer(n) for n in range(20)))
    async with engine.connect() as connection:
        rows = (await connection.execute(select(api_keys.c.id, api_keys.c.name))).all()
    assert len(rows) == 100
    assert sum(row.name == "two" for row in rows) == 50


async def test_a_long_read_fetches_the_rest_of_its_rows_on_the_thread(
        engine: Any, trips: list[str]) -> None:
    many = READ_HERE_ROWS * 2 + 5
    async with one_trip(engine) as connection:
        await connection.execute(api_keys.insert(), [_row(f"{n:04}") for n in range(many)])
    trips.clear()
    async with engine.connect() as connection:
        ids = (await connection.execute(select(api_keys.c.id).order_by(api_keys.c.id))
               ).scalars().all()
        short = (await connection.execute(
            select(api_keys.c.id).order_by(api_keys.c.id).limit(READ_HERE_ROWS - 1))).all()
    assert ids == [f"{n:04}" for n in range(many)] and len(short) == READ_HERE_ROWS - 1
    assert trips == ["_rest"]  # the long read's rest; the short read made none


async def test_a_read_does_not_wait_for_a_writer(engine: Any) -> None:
    async with engine.begin() as writing:
        await writing.execute(api_keys.insert(), _row("w1"))  # holds the write lock
        async with engine.connect() as reading:
            count = await asyncio.wait_for(
                reading.execute(select(func.count()).select_from(api_keys)), 1)
            assert count.scalar() == 0  # not committed yet
    async with engine.connect() as reading:
        assert (await reading.execute(select(func.count()).select_from(api_keys))
                ).scalar() == 1


async def test_writes_commit_or_roll_back_as_they_did(engine: Any) -> None:
    async with engine.begin() as connection:
        await connection.execute(api_keys.insert(), _row("kept"))
    async with engine.connect() as connection:  # not committed: rolled back on the way out
        await connection.execute(api_keys.insert(), _row("dropped"))
        await connection.execute(delete(api_keys).where(api_keys.c.id == "kept"))
    with pytest.raises(RuntimeError):
        async with engine.begin() as connection:
            await connection.execute(api_keys.insert(), _row("failed"))
            raise RuntimeError("the transaction fails after its write")
    async with engine.connect() as connection:
        ids = (await connection.execute(select(api_keys.c.id))).scalars().all()
        one = (await connection.execute(select(api_keys.c.id))).first()
    assert ids == ["kept"] and one is not None and one.id == "kept"
