"""SQLite statements make one trip each to aiosqlite's thread (core.store.sqlite_trips): reads,
writes, many-row inserts, commits and rollbacks behave as through aiosqlite itself, and a
read that opened no transaction costs no trip to roll back."""

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiosqlite
import pytest
from sqlalchemy import delete, func, select, update

from core.models import utcnow
from core.store.database import api_keys, open_database, sqlite_url
from core.store.sqlite_trips import OneTripConnection

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


async def test_each_statement_is_one_trip_and_a_read_rolls_back_for_free(
    engine: Any, trips: list[str],
) -> None:
    async with engine.connect() as connection:
        assert isinstance(connection.sync_connection.connection.driver_connection,
                          OneTripConnection)
        assert (await connection.execute(select(func.count()).select_from(api_keys))
                ).scalar() == 0
    assert trips == ["_execute"]  # no cursor opened or closed apart, no rollback
    trips.clear()
    async with engine.begin() as connection:
        await connection.execute(api_keys.insert(), [_row("a1"), _row("b2"), _row("c3")])
        changed = await connection.execute(
            update(api_keys).where(api_keys.c.id.in_(["a1", "b2"])).values(name="x"))
        assert changed.rowcount == 2
    assert trips == ["_executemany", "_execute", "commit"]


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
