"""Rate limits and circuit breakers shared by every process through Redis (`redis.url`):
N workers together stay within one API's rate, and an outage that one of them meets pauses
the source for all of them.

The rate limit is a moving window in Redis (the `limits` library: at most N calls in any
window of its length). The breaker is one hash a source (failures in a row, open until, the
kind of failure that opened it (core.sources.failure_kinds), until when a half-open trial is
under way), changed by small Lua scripts so that two processes never both take the trial.
Times are wall-clock seconds (`clock`), as every process must read the same clock.

When Redis cannot be reached or answers slowly, every source falls back to its in-process
limiter and to the breaker below (the data dir's, core.sources.breaker_file, or the process's
own; logged once) and Redis is tried again after a rest (`rest_s` on `rest_clock`, this
process's own seconds): a Redis hiccup never fails a question.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from limits import RateLimitItem, RateLimitItemPerSecond
from limits.aio.storage import RedisStorage
from limits.aio.strategies import MovingWindowRateLimiter
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from core.errors import SourceError
from core.models import Clock
from core.sources.failure_kinds import failure_kind, paused_error
from core.sources.guards import SourceGuard

if TYPE_CHECKING:
    from redis.asyncio import Redis

T = TypeVar("T")
log = logging.getLogger(__name__)

REDIS_OP_S = 1.0  # one Redis round trip; slower is a hiccup, and the process goes local
REDIS_REST_S = 30.0  # after a hiccup, Redis is left alone this long
MIN_POLL_S = 0.01  # waiting for the rate window: never poll Redis faster than this

# KEYS[1] the breaker; ARGV: now, how long a trial may take. 1: go ahead, 0: paused.
_ALLOW = """
local state = redis.call('HMGET', KEYS[1], 'open_until', 'trial_until')
local open_until = tonumber(state[1])
if not open_until then return 1 end
local now = tonumber(ARGV[1])
if now < open_until then return 0 end
local trial = tonumber(state[2])
if trial and now < trial then return 0 end
redis.call('HSET', KEYS[1], 'trial_until', now + tonumber(ARGV[2]))
return 1
"""

# KEYS[1] the breaker; ARGV: now, threshold, reset_s, kind, status, trip (1/0), ttl. A failure
# while open (the half-open trial's) opens it again, as CircuitBreaker.failed does.
_FAILED = """
local failures = redis.call('HINCRBY', KEYS[1], 'failures', 1)
local was_open = redis.call('HEXISTS', KEYS[1], 'open_until') == 1
redis.call('HSET', KEYS[1], 'kind', ARGV[4], 'status', ARGV[5])
redis.call('HDEL', KEYS[1], 'trial_until')
if ARGV[6] == '1' or was_open or failures >= tonumber(ARGV[2]) then
  redis.call('HSET', KEYS[1], 'open_until', tonumber(ARGV[1]) + tonumber(ARGV[3]))
end
redis.call('EXPIRE', KEYS[1], ARGV[7])
return failures
"""

class SharedLimits:
    """One Redis client's rate limits and breakers, one SharedGuard a source. The client
    is the caller's (opened and closed in bot/wiring.py)."""

    def __init__(self, redis: Redis, *, prefix: str = "researchbot:sources",
                 clock: Clock = time.time, rest_clock: Clock = time.monotonic,
                 op_timeout_s: float = REDIS_OP_S, rest_s: float = REDIS_REST_S) -> None:
        self.redis = redis
        self.prefix = prefix
        self.clock = clock
        self._rest_clock = rest_clock
        # The limiter talks through the caller's client's connections (its typing knows
        # only scalar options, hence the dict).
        pool: dict[str, Any] = {"connection_pool": redis.connection_pool}
        storage = RedisStorage("async+redis://", implementation="redispy",
                               key_prefix=f"{prefix}:rate", **pool)
        self.limiter = MovingWindowRateLimiter(storage)
        self.allow_script = redis.register_script(_ALLOW)
        self.failed_script = redis.register_script(_FAILED)
        self._op_timeout_s = op_timeout_s
        self._rest_s = rest_s
        self._resting_until = 0.0
        self._down = False

    def guard(self, name: str, rate_per_s: float, local: SourceGuard,
              trial_s: float) -> SharedGuard:
        return SharedGuard(self, name, rate_per_s, local, trial_s)

    async def either(self, shared: Callable[[], Awaitable[T]],
                     local: Callable[[], Awaitable[T]], *, bounded: bool = True) -> T:
        """`shared()`, or `local()` while Redis cannot be reached (tried again after a rest).
        A `bounded` shared() is a Redis round trip or two: slower is Redis failing."""
        if self._rest_clock() < self._resting_until:
            return await local()
        try:
            result = await (self.command(shared()) if bounded else shared())
        except RedisError as error:
            self._rest(error)
            return await local()
        if self._down:
            self._down = False
            log.info("redis.url: Redis answers again; source rate limits and circuit "
                     "breakers are shared again")
        return result

    async def command(self, awaitable: Awaitable[T]) -> T:
        """One Redis round trip; one slower than `op_timeout_s` is Redis failing."""
        try:
            async with asyncio.timeout(self._op_timeout_s):
                return await awaitable
        except TimeoutError:  # only ours: an outer timeout arrives here as a cancellation
            raise RedisTimeoutError(f"no answer within {self._op_timeout_s:g} s") from None

    def _rest(self, error: RedisError) -> None:
        self._resting_until = self._rest_clock() + self._rest_s
        if not self._down:
            self._down = True
            log.warning("redis.url: Redis cannot be used (%s); source rate limits are "
                        "kept in this process, and circuit breakers in the data dir (or this "
                        "process), until it answers again", error)


class SharedGuard:
    """One source's rate limit and breaker in Redis; `local`'s (this process's limit, the data
    dir's breaker) while Redis cannot be reached."""

    def __init__(self, shared: SharedLimits, name: str, rate_per_s: float, local: SourceGuard,
                 trial_s: float) -> None:
        self._shared = shared
        self._name = name
        self._local = local
        self.breaker = local.breaker
        self._item = rate_window(rate_per_s)
        self._key = f"{shared.prefix}:breaker:{name}"
        self._trial_s = trial_s
        # One caller a process polls Redis for a token; the others queue here, in order.
        self._turn = asyncio.Lock()

    async def acquire(self) -> None:
        async with self._turn:
            await self._shared.either(self._acquire, self._local.acquire, bounded=False)

    async def _acquire(self) -> None:
        limiter, command = self._shared.limiter, self._shared.command
        while not await command(limiter.hit(self._item, self._name)):
            window = await command(limiter.get_window_stats(self._item, self._name))
            # `limits` stamps entries with time.time(): the window frees up at reset_time.
            await asyncio.sleep(max(MIN_POLL_S, window.reset_time - time.time())
                                + random.uniform(0, MIN_POLL_S))

    async def allow(self) -> bool:
        return await self._shared.either(self._allow, self._local.allow)

    async def _allow(self) -> bool:
        return bool(await self._shared.allow_script(
            keys=[self._key], args=[self._shared.clock(), self._trial_s]))

    async def succeeded(self) -> None:
        await self._shared.either(self._forget, self._local.succeeded)

    async def _forget(self) -> None:
        await self._shared.redis.delete(self._key)

    async def failed(self, error: SourceError) -> None:
        await self._shared.either(lambda: self._record(error, trip=False),
                                  lambda: self._local.failed(error))

    async def trip(self, error: SourceError) -> None:
        await self._shared.either(lambda: self._record(error, trip=True),
                                  lambda: self._local.trip(error))

    async def _record(self, error: SourceError, trip: bool) -> None:
        breaker = self.breaker
        await self._shared.failed_script(keys=[self._key], args=[
            self._shared.clock(), breaker.threshold, breaker.reset_s,
            failure_kind(error), "" if error.status is None else error.status,
            int(trip), breaker.forget_after_s])

    async def release(self) -> None:
        await self._shared.either(self._release, self._local.release)

    async def _release(self) -> None:
        await self._shared.redis.execute_command("HDEL", self._key, "trial_until")

    async def paused_error(self) -> SourceError:
        return await self._shared.either(self._paused_error, self._local.paused_error)

    async def _paused_error(self) -> SourceError:
        kind, status = await self._shared.redis.execute_command("HMGET", self._key, "kind",
                                                                "status")
        return paused_error(self._name, _text(kind), int(status) if status else None)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value or "")


def rate_window(rate_per_s: float) -> RateLimitItem:
    """`rate_per_s` as whole calls in a window of whole seconds: 10/s is 10 in 1 s, 2.5/s
    5 in 2 s; a rate no window up to a minute fits is rounded down."""
    for seconds in range(1, 61):
        calls = rate_per_s * seconds
        if calls >= 1 and abs(calls - round(calls)) < 1e-6:
            return RateLimitItemPerSecond(round(calls), seconds)
    return RateLimitItemPerSecond(max(1, int(rate_per_s * 60)), 60)
