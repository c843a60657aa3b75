"""Keyless access to the API (adapters/http/auth.py), over a real key store: served always
with web.allow_anonymous, otherwise on loopback only until the first active key exists; an
address that failed to authenticate too often is refused for the rest of its window."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapters.http.auth import keyless_allowed
from adapters.http.failed_auth import FailedAuthentications
from core.store.access import ApiKeys
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
