"""What every call to one remote search source goes through (SourcePolicy): concurrency and
rate limits, a per-call timeout fitted inside the search stage's deadline, retries with backoff
on 429/5xx (honouring Retry-After), a circuit breaker, and a response cache with a time to
live. Failures surface as SourceError: an outage is an outage, never "no results"; a call that
never got its turn before its deadline is SourceBusyError, not an outage.

Its parts have their own modules: the breaker (breaker), the rate limit and breaker a call
consults, this process's, the breaker shared through the data dir, or both shared through Redis
(guards, breaker_file, shared_limits), identical calls made once (single_flight), and the
capped, redirect-checked GET (api_requests)."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import aiohttp
from aiolimiter import AsyncLimiter
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    stop_any,
)
from tenacity.stop import stop_base

from core.errors import (
    SourceBusyError,
    SourceDroppedError,
    SourceError,
    SourceHttpError,
    SourceTimeoutError,
    SourceUnreachableError,
)
from core.metrics import PROVIDER_ERRORS, PROVIDER_LATENCY
from core.sources.api_requests import get_bytes, parse_json, post_bytes
from core.sources.breaker import CircuitBreaker
from core.sources.failure_kinds import metric_kind
from core.sources.guards import LocalGuard, SourceGuard
from core.sources.protocol import CALL_DEADLINE
from core.sources.single_flight import SingleFlight

if TYPE_CHECKING:
    from core.sources.breaker_file import BreakerFile
    from core.sources.shared_limits import SharedLimits

T = TypeVar("T")
MAX_RETRY_AFTER_S = 30.0
MIN_429_WAIT_S = 1.0
DEFAULT_MAX_RESPONSE_BYTES = 4 * 1024 * 1024

# Of the time left, what an attempt that may still be retried gets.
ATTEMPT_SHARE = 0.6
# Waiting for a turn stops this share of the time left (at most a second, and at most this
# share of the policy's timeout) before the deadline: a request sent with less time than
# that would only time out, and be mistaken for the source being down.
SEND_RESERVE = 0.1
MAX_SEND_RESERVE_S = 1.0


@dataclass
class _Call:
    """What one call under the policy got to: sent at least once, and its last failure."""

    sent: bool = False
    failure: SourceError | None = None


class SourcePolicy:
    """What every call to one source goes through."""

    def __init__(self, name: str, *, concurrency: int = 4, rate_per_s: float = 5.0,
                 timeout_s: float = 10.0, attempts: int = 3, backoff_s: float = 0.5,
                 breaker: CircuitBreaker | None = None, cache: Any = None,
                 cache_ttl_s: float = 3600.0,
                 max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
                 shared: SharedLimits | None = None,
                 breakers: BreakerFile | None = None) -> None:
        self.name = name
        self.max_response_bytes = max_response_bytes
        self._limit = asyncio.Semaphore(concurrency)
        burst = max(1, concurrency)
        # `rate_per_s` on average, in bursts of up to `concurrency` calls.
        self._rate = AsyncLimiter(burst, time_period=burst / rate_per_s)
        self._timeout_s = timeout_s
        self._attempts = attempts
        self._backoff_s = backoff_s
        self.breaker = breaker or CircuitBreaker()
        self._cache = cache
        self._cache_ttl_s = cache_ttl_s
        self._send_reserve_s = min(MAX_SEND_RESERVE_S, SEND_RESERVE * timeout_s)
        self._flights = SingleFlight()
        # A shared trial call is given up on (another process may try) after as long as all
        # of a call's attempts may take.
        trial_s = timeout_s * attempts
        guard: SourceGuard = LocalGuard(name, self._rate, self.breaker)
        if breakers is not None:
            guard = breakers.guard(name, guard, trial_s)
        if shared is not None:
            guard = shared.guard(name, rate_per_s, guard, trial_s=trial_s)
        self._guard = guard

    async def pace(self) -> None:
        """Wait for the rate limit: for each further request a call makes after its first."""
        await self._guard.acquire()

    async def get_text(self, session: aiohttp.ClientSession, url: str,
                       params: dict[str, Any] | None = None) -> str:
        """The body of a GET to this source's API, decoded; at most `max_response_bytes`
        are read."""
        body, charset = await get_bytes(session, self.name, url, params, None,
                                        self.max_response_bytes)
        return body.decode(charset or "utf-8", "replace")

    async def get_json(self, session: aiohttp.ClientSession, url: str,
                       params: dict[str, Any] | None = None) -> Any:
        """The JSON answer of a GET; its parse is bounded by the byte cap (and nesting by the
        interpreter's recursion limit, reported as malformed)."""
        body, _ = await get_bytes(session, self.name, url, params,
                                  {"Accept": "application/json"}, self.max_response_bytes)
        return parse_json(self.name, body)

    async def post_json(self, session: aiohttp.ClientSession, url: str, body: dict[str, Any],
                        headers: dict[str, str] | None = None) -> Any:
        """The JSON answer of a JSON POST, read and parsed as `get_json`'s."""
        answer, _ = await post_bytes(session, self.name, url, body,
                                     {"Accept": "application/json", **(headers or {})},
                                     self.max_response_bytes)
        return parse_json(self.name, answer)

    async def call(self, key: str, fetch: Callable[[], Awaitable[T]]) -> T:
        """`fetch()` under the policy; its result cached under (source, key). Identical calls
        under way at once share one (the first caller's deadline is the call's)."""
        cache_key = f"source:{self.name}:{key}"
        if self._cache is not None:
            cached = self._cache.get(cache_key)
            if cached is not None:
                return cached
        return await self._flights.run(cache_key, lambda: self._guarded(cache_key, fetch))

    async def _guarded(self, cache_key: str, fetch: Callable[[], Awaitable[T]]) -> T:
        if not await self._guard.allow():
            PROVIDER_ERRORS.labels(self.name, "paused").inc()
            raise await self._guard.paused_error()
        call = _Call()
        try:
            result = await self._attempt(fetch, call)
        except SourceError as error:
            PROVIDER_ERRORS.labels(self.name, metric_kind(error)).inc()
            raise
        except asyncio.CancelledError:
            # Cut off from outside (the search stage's own timeout, a cancelled job): to the
            # user the source did not answer in time. Counting it keeps a half-open trial
            # from holding the circuit paused for the life of the process. A call cut off
            # before it was sent tells nothing about the source: its trial is given back.
            if call.sent:
                PROVIDER_ERRORS.labels(self.name, "timeout").inc()
                await self._guard.failed(SourceTimeoutError(self.name,
                                                            "cut off before it answered"))
            else:
                await self._guard.release()
            raise
        if self._cache is not None:
            self._cache.set(cache_key, result, expire=self._cache_ttl_s)
        return result

    async def _attempt(self, fetch: Callable[[], Awaitable[T]], call: _Call) -> T:
        """`fetch()` retried (tenacity) on timeouts, 429, 5xx and dropped connections, with
        exponential backoff and jitter honouring Retry-After, each attempt sized to leave
        room for the next inside the caller's deadline (CALL_DEADLINE)."""
        deadline = CALL_DEADLINE.get()
        retrying = AsyncRetrying(
            stop=stop_any(stop_after_attempt(self._attempts), _NoTimeFor(deadline)),
            wait=self._wait, retry=retry_if_exception(_retryable), reraise=True)
        try:
            async for attempt in retrying:
                with attempt:
                    result = await self._once(fetch, deadline,
                                              attempt.retry_state.attempt_number, call)
        except SourceBusyError:
            if call.failure is None:
                await self._guard.release()  # never sent: nothing is known of the source
                raise
            # A retry found no turn: the attempt before it says what happened.
            await self._guard.failed(call.failure)
            raise call.failure from None
        except SourceUnreachableError as error:
            # No connection at all (no network, unknown name, refused, dropped packets):
            # retrying now only costs time; the source rests instead.
            await self._guard.trip(error)
            raise
        except SourceError as error:
            await self._guard.failed(error)
            raise
        await self._guard.succeeded()
        return result

    async def _once(self, fetch: Callable[[], Awaitable[T]], deadline: float | None,
                    attempt: int, call: _Call) -> T:
        """One attempt once it has its turn, its failure as a SourceError."""
        async with self._turn(deadline):
            call.sent = True
            started = time.monotonic()
            try:
                return await self._send(fetch, self._attempt_limit(deadline, attempt))
            except SourceError as error:
                call.failure = error
                raise
            finally:
                PROVIDER_LATENCY.labels(self.name).observe(time.monotonic() - started)

    @asynccontextmanager
    async def _turn(self, deadline: float | None) -> AsyncIterator[None]:
        """A concurrency slot and a rate-limit token, waited for until shortly before the
        deadline (SEND_RESERVE); a call that got neither in time is busy (SourceBusyError)."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        give_up = None if deadline is None else deadline - min(
            self._send_reserve_s, SEND_RESERVE * (deadline - started))
        try:
            async with asyncio.timeout_at(give_up):
                await self._limit.acquire()
                try:
                    await self._guard.acquire()
                except BaseException:
                    self._limit.release()
                    raise
        except TimeoutError:
            raise SourceBusyError(self.name, f"not sent: waited {loop.time() - started:.2g} s "
                                  "for its turn (rate limit, concurrency)") from None
        try:
            yield
        finally:
            self._limit.release()

    def _attempt_limit(self, deadline: float | None, attempt: int) -> float:
        """The attempt's time, measured once it has its turn: waiting used part of it."""
        limit_s = self._timeout_s
        if deadline is not None:
            left = deadline - asyncio.get_running_loop().time()
            limit_s = min(limit_s, left if attempt >= self._attempts else left * ATTEMPT_SHARE)
        return max(0.0, limit_s)

    async def _send(self, fetch: Callable[[], Awaitable[T]], limit_s: float) -> T:
        try:
            async with asyncio.timeout(limit_s):
                return await fetch()
        except (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError) as error:
            raise SourceUnreachableError(self.name,
                                         f"connection failed: {error}"[:300]) from None
        except TimeoutError:
            raise SourceTimeoutError(self.name, f"timed out after {limit_s:.3g} s") from None
        except SourceError:
            raise
        except (aiohttp.ClientError, OSError) as error:
            raise SourceDroppedError(self.name, f"connection failed: {error}"[:300]) from None

    def _wait(self, state: RetryCallState) -> float:
        failure = state.outcome.exception() if state.outcome is not None else None
        delay = self._backoff_s * 2 ** (state.attempt_number - 1) * random.uniform(0.8, 1.2)
        retry_after = getattr(failure, "retry_after", None)
        if retry_after is None and getattr(failure, "status", None) == 429:
            retry_after = MIN_429_WAIT_S  # rate-limited without a hint: back off properly
        return float(min(MAX_RETRY_AFTER_S, max(delay, retry_after or 0.0)))


def _retryable(error: BaseException) -> bool:
    if isinstance(error, SourceHttpError):
        return error.transient
    return isinstance(error, SourceTimeoutError | SourceDroppedError)


class _NoTimeFor(stop_base):
    """Stop when the wait before the next attempt would end past the deadline."""

    def __init__(self, deadline: float | None) -> None:
        self._deadline = deadline

    def __call__(self, state: RetryCallState) -> bool:
        if self._deadline is None:
            return False
        wait = state.upcoming_sleep or 0.0
        return asyncio.get_running_loop().time() + wait >= self._deadline
