"""Chat platforms re-deliver events they think were lost: remember recent event ids for a
while so that one question gets one answer. In process by default, Redis across processes."""

from __future__ import annotations

import time
from typing import Any, Protocol


class EventLog(Protocol):
    async def first_time(self, event_id: str) -> bool:
        """True the first time an id is seen within the log's time to live."""
        ...


class LocalEventLog:
    def __init__(self, ttl_s: float = 3600.0) -> None:
        self._ttl_s = ttl_s
        self._seen: dict[str, float] = {}

    async def first_time(self, event_id: str) -> bool:
        now = time.monotonic()
        # Insertion order is arrival order: expired ids are at the front.
        while self._seen and now - next(iter(self._seen.values())) >= self._ttl_s:
            del self._seen[next(iter(self._seen))]
        if event_id in self._seen:
            return False
        self._seen[event_id] = now
        return True


class RedisEventLog:
    def __init__(self, redis: Any, ttl_s: float = 3600.0,
                 prefix: str = "researchbot:event") -> None:
        self._redis = redis
        self._ttl_ms = int(ttl_s * 1000)
        self._prefix = prefix

    async def first_time(self, event_id: str) -> bool:
        return bool(await self._redis.set(f"{self._prefix}:{event_id}", b"1", nx=True,
                                          px=self._ttl_ms))
