"""Keyless access to the API (adapters/http/auth.py), over a real key store: served always
with web.allow_anonymous, otherwise on loopback only until the first active key exists (a key
made by another process is seen within KEYS_RECHECK_S, one made through the server's own
key store at once); an address that failed to authenticate too often is refused for the rest
of its window."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event
from sqlalchemy.util.concurrency import await_

from adapters.http.auth import keyless_allowed
from adapters.http.failed_auth import FailedAuthentications
from core.store.access import KEYS_RECHECK_S, ApiKeys
from core.store.database import open_database, sqlite_url
from tests.support.clock import FakeClock

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("loopback", "allow_anonymous", "keys", "served"), [
    (True, False, "none", True),
    (True, False, "active", False),
    (True, False, "revoked", True),
    (False, False, "none", False),
    (False, True, "active", True),
    (True, True, "active", True),
])
async def test_keyless_requests_are_served_only_while_the_door_is_open(
        tmp_path: Path, loopback: bool, allow_anonymous: bool, keys: str, served: bool) -> None:
    engine = await open_database(sqlite_url(str(tmp_path / "keys.sqlite3")))
    try:
        store = ApiKeys(engine)
        if keys != "none":
            row, _ = await store.create("T1")
            if keys == "revoked":
                assert await store.revoke(row.id)
        assert await keyless_allowed(store, loopback=loopback,
                                     allow_anonymous=allow_anonymous) is served
    finally:
        await engine.dispose()


async def test_a_key_made_by_another_process_ends_keyless_access_within_the_recheck_time(
        tmp_path: Path) -> None:
    url = sqlite_url(str(tmp_path / "keys.sqlite3"))
    server_engine, other_engine = await open_database(url), await open_database(url)
    clock = FakeClock(start=1000.0)
    try:
        server = ApiKeys(server_engine, clock=clock)  # the server's own, as bot/serve.py makes
        other = ApiKeys(other_engine)  # `researchbot keys create` in another process

        async def served() -> bool:
            return await keyless_allowed(server, loopback=True, allow_anonymous=False)

        assert await served()
        row, _ = await other.create("T1")
        clock.advance(KEYS_RECHECK_S - 0.01)
        assert await served()  # the server's last look is still fresh
        clock.advance(0.01)
        assert not await served()  # looked again: the door is closed
        assert await other.revoke(row.id)
        assert not await served()  # the last look said a key exists: still closed ...
        clock.advance(KEYS_RECHECK_S)
        assert await served()  # ... until the next look

        mine, _ = await server.create("T1")  # through the server's own: closed at once
        assert not await served()
        assert await server.revoke(mine.id)
        assert await served()
    finally:
        await server_engine.dispose()
        await other_engine.dispose()


async def test_a_look_that_started_before_a_key_was_made_here_is_not_kept(
        any_engine: Any) -> None:
    """A look at the keys that read "none" before a key was made through the same key store,
    and came back after, must not reopen the door the new key closed."""
    keys = ApiKeys(any_engine, clock=FakeClock(start=1000.0))
    made = asyncio.Event()

    def held_until_made(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if statement.startswith("SELECT api_keys.id") and not made.is_set():
            await_(made.wait())  # the look has read; it comes back once the key is made

    event.listen(any_engine.sync_engine, "after_cursor_execute", held_until_made)
    looking = asyncio.ensure_future(keys.any_active())
    await asyncio.sleep(0.05)
    await keys.create("T1")
    made.set()
    assert await looking is False  # it read before the key was there
    assert await keys.any_active()


async def test_an_address_that_failed_too_often_waits_until_its_oldest_failure_is_old() -> None:
    clock = FakeClock(start=1000.0)
    failures = FailedAuthentications(limit=3, window_s=60, clock=clock)
    for _ in range(2):
        await failures.failed("203.0.113.1")
        clock.advance(10)
    assert await failures.refused_for("203.0.113.1") is None
    await failures.failed("203.0.113.1")  # three within 20 s: refused until 60 s after the first
    assert await failures.refused_for("203.0.113.1") == 40
    assert await failures.refused_for("203.0.113.2") is None  # each address its own count
    await failures.failed("203.0.113.1")  # failing while refused adds nothing
    clock.advance(39.5)
    assert await failures.refused_for("203.0.113.1") == 1
    clock.advance(0.5)
    assert await failures.refused_for("203.0.113.1") is None  # two left in the window
    await failures.failed("203.0.113.1")
    assert await failures.refused_for("203.0.113.1") == 10
    clock.advance(80)  # every failure has left the window: the address is forgotten
    assert await failures.refused_for("203.0.113.1") is None
    await failures.failed("203.0.113.9")
    assert list(failures._failures) == ["203.0.113.9"]
