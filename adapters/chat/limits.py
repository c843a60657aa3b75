"""Per-user and per-tenant question limits: a sliding window with a short queue.

A question over the limit waits for the next free slot when that is near (`max_wait_s`), and
is refused with the wait otherwise. The embedded limiter counts in this process; the Redis one
counts across every process that shares the server, and in this process while that server
cannot be reached (the one Redis of a deployment also holds the queue: its outage must not
stop the questions the queue's own outage handling would refuse or accept). Each reads its
`clock`: this process's seconds, or for Redis the wall clock every process shares."""

from __future__ import annotations

import bisect
import logging
import time
import uuid
from typing import Any, Protocol

from redis.exceptions import RedisError

from core.errors import RateLimitedError
from core.models import Clock

log = logging.getLogger(__name__)


class QuestionLimiter(Protocol):
    async def admit(self, tenant: str, user: str) -> float:
        """Reserve a slot; the seconds to wait before starting (0: now). RateLimitedError
        when the wait would be longer than the queue allows."""
        ...


class LocalQuestionLimiter:
    def __init__(self, per_user: int, per_tenant: int, window_s: float = 60.0,
                 max_wait_s: float = 20.0, *, clock: Clock = time.monotonic) -> None:
        self._limits = {"user": per_user, "workspace": per_tenant}
        self._window_s = window_s
        self._max_wait_s = max_wait_s
        self._clock = clock
        self._starts: dict[tuple[str, str], list[float]] = {}

    async def admit(self, tenant: str, user: str) -> float:
        now = self._clock()
        keys = {"user": (tenant, user), "workspace": (tenant, "")}
        start, scope = now, "user"
        for name, key in keys.items():
            starts = self._starts.setdefault(key, [])
            del starts[:bisect.bisect_right(starts, now - self._window_s)]
            limit = self._limits[name]
            if len(starts) >= limit and starts[-limit] + self._window_s > start:
                start, scope = starts[-limit] + self._window_s, name
        wait = start - now
        if wait > self._max_wait_s:
            raise RateLimitedError(scope, self._limits[scope], self._window_s, wait)
        for key in keys.values():
            bisect.insort(self._starts[key], start)
        return wait


# KEYS: user window, tenant window. ARGV: now, window, user limit, tenant limit, max wait,
# member. Returns {admitted (1/0), wait or retry-after as a string, scope index}.
_ADMIT = """
local now, window, max_wait = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[5])
local limits = {tonumber(ARGV[3]), tonumber(ARGV[4])}
local start, scope = now, 1
for i, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  local limit = limits[i]
  if redis.call('ZCARD', key) >= limit then
    local edge = redis.call('ZRANGE', key, -limit, -limit, 'WITHSCORES')
    local free = tonumber(edge[2]) + window
    if free > start then start, scope = free, i end
  end
end
if start - now > max_wait then return {0, tostring(start - now), scope} end
for _, key in ipairs(KEYS) do
  redis.call('ZADD', key, start, ARGV[6])
  redis.call('PEXPIRE', key, math.ceil((start - now + window) * 1000))
end
return {1, tostring(start - now), scope}
"""


class RedisQuestionLimiter:
    """The same window kept in Redis sorted sets, updated atomically by one script."""

    def __init__(self, redis: Any, per_user: int, per_tenant: int, window_s: float = 60.0,
                 max_wait_s: float = 20.0, prefix: str = "researchbot:limit", *,
                 clock: Clock = time.time) -> None:
        self._redis = redis
        self._script = redis.register_script(_ADMIT)
        self._limits = (per_user, per_tenant)
        self._window_s = window_s
        self._max_wait_s = max_wait_s
        self._prefix = prefix
        self._clock = clock
        self._in_process = LocalQuestionLimiter(per_user, per_tenant, window_s, max_wait_s)
        self._unreachable = False

    async def admit(self, tenant: str, user: str) -> float:
        keys = [f"{self._prefix}:{tenant}:user:{user}", f"{self._prefix}:{tenant}:all"]
        try:
            admitted, wait, scope = await self._script(keys=keys, args=[
                self._clock(), self._window_s, *self._limits, self._max_wait_s,
                uuid.uuid4().hex])
        except (RedisError, OSError) as error:
            if not self._unreachable:
                log.warning("redis.url: Redis cannot be used (%s); question limits are kept "
                            "in this process until it answers", error)
            self._unreachable = True
            return await self._in_process.admit(tenant, user)
        if self._unreachable:
            log.info("redis.url: Redis answers again; question limits are shared again")
            self._unreachable = False
        if not int(admitted):
            index = int(scope) - 1
            raise RateLimitedError(("user", "workspace")[index], self._limits[index],
                                   self._window_s, float(wait))
        return float(wait)
