"""Who may see a job: API keys, one tenant each, and signed links to one job's answer page.

A key reads `rb_<id>_<secret>`: the id finds its row, and the SHA-256 of the whole key is
compared in constant time. Only the hash is stored, so a copy of the database gives no key.
A page link carries `share_token(job_id)`, an HMAC of the job id under a key the installation
makes once and keeps in its database, so every process (API server, chat bots, workers)
signs and checks the same links without another setting.

Both are checked as ASCII of their fixed alphabet and length first: anything else (another
character, another length) is refused at once, without a database query, and never reaches a
comparison that cannot take it (`hmac.compare_digest` raises on non-ASCII text)."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from core.models import utcnow
from core.store.database import api_keys, instance_keys

KEY_PREFIX = "rb_"
_SHARE_KEY = "share-links"
# What `create` makes: 12 hex digits of id, then `token_urlsafe(32)`: 43 of base64url.
_KEY_SHAPE = re.compile(r"rb_([0-9a-f]{12})_[A-Za-z0-9_-]{43}")
_TOKEN_SHAPE = re.compile(r"[0-9a-f]{32}")


# How long `any_active` trusts its last look: a key made or revoked by another process
# (researchbot keys create, another server) is seen within this many seconds; one made or
# revoked through the same ApiKeys at once.
KEYS_RECHECK_S = 1.0

# Built once (read on every keyless request)
_ANY_ACTIVE = select(api_keys.c.id).where(api_keys.c.revoked_at.is_(None)).limit(1)


@dataclass(frozen=True)
class ApiKey:
    """A stored key, without the key itself."""

    id: str
    tenant: str
    name: str
    created_at: datetime
    revoked_at: datetime | None

    @property
    def active(self) -> bool:
        return self.revoked_at is None


class ApiKeys:
    def __init__(self, engine: AsyncEngine, *, recheck_s: float = KEYS_RECHECK_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._engine = engine
        self._recheck_s = recheck_s
        self._clock = clock
        self._any: tuple[bool, float] | None = None  # the last answer, and when it was asked
        self._changes = 0  # keys made or revoked here: an older look is not kept

    async def create(self, tenant: str, name: str = "") -> tuple[ApiKey, str]:
        """A new key for `tenant`: its row, and the key, which is shown once and never again."""
        key_id = secrets.token_hex(6)
        key = f"{KEY_PREFIX}{key_id}_{secrets.token_urlsafe(32)}"
        row = {"id": key_id, "tenant": tenant, "name": name, "sha256": _digest(key),
               "created_at": utcnow(), "revoked_at": None}
        async with self._engine.begin() as connection:
            await connection.execute(api_keys.insert().values(**row))
        self._changed()
        return _key(row), key

    async def list(self, tenant: str | None = None) -> list[ApiKey]:
        query = select(api_keys).order_by(api_keys.c.created_at)
        if tenant is not None:
            query = query.where(api_keys.c.tenant == tenant)
        async with self._engine.connect() as connection:
            rows = (await connection.execute(query)).all()
        return [_key(row._mapping) for row in rows]

    async def revoke(self, key_id: str) -> bool:
        """False when no active key has that id (accepts the whole key too)."""
        key_id = key_id_of(key_id)
        async with self._engine.begin() as connection:
            result = await connection.execute(
                update(api_keys).where(api_keys.c.id == key_id, api_keys.c.revoked_at.is_(None))
                .values(revoked_at=utcnow()))
        self._changed()
        return bool(result.rowcount)

    async def verify(self, key: str) -> ApiKey | None:
        """The active key `key` is, or None (unknown, mistyped or revoked)."""
        shape = _KEY_SHAPE.fullmatch(key)
        if shape is None:
            return None
        key_id = shape.group(1)
        async with self._engine.connect() as connection:
            row = (await connection.execute(
                select(api_keys).where(api_keys.c.id == key_id))).first()
        if row is None or not hmac.compare_digest(row.sha256, _digest(key)):
            return None
        found = _key(row._mapping)
        return found if found.active else None

    async def any_active(self) -> bool:
        """Whether an active key exists, as the database said at most `recheck_s` ago (asked
        on every keyless request, so keyless access ends within that time of a key being
        made in another process; at once when made through this object)."""
        asked, changes = self._clock(), self._changes
        if self._any is not None and asked - self._any[1] < self._recheck_s:
            return self._any[0]
        async with self._engine.connect() as connection:
            row = (await connection.execute(_ANY_ACTIVE)).first()
        if changes == self._changes:  # no key made or revoked here meanwhile
            self._any = (row is not None, asked)
        return row is not None

    def _changed(self) -> None:
        self._changes += 1
        self._any = None


class ShareLinks:
    """Signs and checks answer-page tokens; `load` reads (or makes) the signing key once."""

    def __init__(self, key: bytes) -> None:
        self._key = key

    @classmethod
    async def load(cls, engine: AsyncEngine) -> ShareLinks:
        async with engine.connect() as connection:
            row = (await connection.execute(
                select(instance_keys.c.value).where(instance_keys.c.name == _SHARE_KEY))).first()
        if row is None:
            try:
                async with engine.begin() as connection:
                    await connection.execute(instance_keys.insert().values(
                        name=_SHARE_KEY, value=secrets.token_hex(32)))
            except IntegrityError:  # another process made it first: use theirs
                pass
            return await cls.load(engine)
        return cls(bytes.fromhex(row.value))

    def token(self, job_id: str) -> str:
        """128 bits: unguessable, short enough for a link."""
        return hmac.new(self._key, job_id.encode(), hashlib.sha256).hexdigest()[:32]

    def check(self, job_id: str, token: str) -> bool:
        if _TOKEN_SHAPE.fullmatch(token) is None:
            return False
        return hmac.compare_digest(self.token(job_id).encode(), token.encode())

    def reader(self, address: str) -> str:
        """A reader id (16 hex digits) for a browser known only by its address: keyed, so the
        ratings stored under it do not give the address away."""
        return hmac.new(self._key, b"reader:" + address.encode(), hashlib.sha256
                        ).hexdigest()[:16]

    def page(self, base_url: str, job_id: str) -> str:
        """The answer page's address under `base_url` (web.public_url)."""
        return f"{base_url.rstrip('/')}/jobs/{job_id}?token={self.token(job_id)}"


def _utc(value: datetime) -> datetime:
    """SQLite returns naive datetimes; everything written is UTC."""
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _utc_or_none(value: datetime | None) -> datetime | None:
    return None if value is None else _utc(value)


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def key_id_of(key_or_id: str) -> str:
    """The id of a key, given the key or the id."""
    return _id_of(key_or_id) or key_or_id


def _id_of(key: str) -> str | None:
    if not key.startswith(KEY_PREFIX):
        return None
    key_id, sep, _ = key[len(KEY_PREFIX):].partition("_")
    return key_id if sep and key_id else None


def _key(row: Mapping[Any, Any]) -> ApiKey:
    return ApiKey(id=row["id"], tenant=row["tenant"], name=row["name"],
                  created_at=_utc(row["created_at"]), revoked_at=_utc_or_none(row["revoked_at"]))
