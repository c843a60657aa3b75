"""Keyless access to the API (adapters/http/auth.py), over a real key store: served always
with web.allow_anonymous, otherwise on loopback only until the first active key exists."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapters.http.auth import keyless_allowed
from core.store.access import ApiKeys
from core.store.database import open_database, sqlite_url

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
