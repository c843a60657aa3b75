"""Chat platforms re-deliver events they think were lost: remember recent event ids for a
while so that one question gets one answer. In process by default, Redis across processes
(and in process while Redis cannot be reached: a re-delivery then may be answered twice, which
beats answering nothing). Redis times the ids itself (PX); the in-process log reads `clock`."""

from __future__ import annotations

import logging
import time
from typing import Any, Protocol

from redis.exceptions import RedisError

from core.models import Clock

log = logging.getLogger(__name__)


class EventLog(Protocol):
    async def first_time(self, event_id: str) -> bool:
        """True the first time an id is seen within the log's time to live."""
        ...


class LocalEventLog:
    def __init__(self, ttl_s: float = 3600.0, *, clock: Clock = time.monotonic) -> None:
        self._ttl_s = ttl_s
        self._clock = clock
        self._seen: dict[str, float] = {}

    async def first_time(self, event_id: str) -> bool:
        now = self._clock()
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
        self._in_process = LocalEventLog(ttl_s)
        self._unreachable = False

    async def first_time(self, event_id: str) -> bool:
        try:
            first = bool(await self._redis.set(f"{self._prefix}:{event_id}", b"1", nx=True,
                                               px=self._ttl_ms))
        except (RedisError, OSError) as error:
            if not self._unreachable:  # said once, not for every event of an outage
                log.warning("redis.url: Redis cannot be used (%s); events are checked "
                            "against this process's events only until it answers", error)
            self._unreachable = True
            return await self._in_process.first_time(event_id)
        if self._unreachable:
            log.info("redis.url: Redis answers again; events are checked across processes")
            self._unreachable = False
        return first
