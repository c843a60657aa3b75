"""Politeness and resilience around a remote search source: concurrency and rate limits, a
per-call timeout, retries with backoff on 429/5xx (honouring Retry-After), a circuit breaker,
and a response cache with a time to live. Failures surface as SourceError: an outage is an
outage, never "no results"; a call that never got its turn before its deadline is
SourceBusyError, not an outage. The rate limit and the breaker are this process's
(LocalGuard) or shared by every process through Redis (core.sources.shared); identical calls
under way at once are made once (SingleFlight).

Every answer is read as it streams and abandoned past the policy's `max_response_bytes`
(SourceResponseTooLargeError); redirects are followed one hop at a time, and only to the
configured API's own endpoint or to public addresses (core.web.net.guarded_get)."""

from __future__ import annotations

import asyncio
import contextvars
import json
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

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
    BlockedAddressError,
    RedirectError,
    ResponseTooLargeError,
    SourceError,
    SourceResponseTooLargeError,
    SourceTimeoutError,
    SourceUnreachableError,
)
from core.metrics import PROVIDER_ERRORS, PROVIDER_LATENCY
from core.web.net import AddressGuard, guarded_get, read_capped

if TYPE_CHECKING:
    from core.sources.shared import SharedLimits

T = TypeVar("T")
MAX_RETRY_AFTER_S = 30.0
MIN_429_WAIT_S = 1.0
DEFAULT_MAX_RESPONSE_BYTES = 4 * 1024 * 1024


class SourceHttpError(SourceError):
    """A non-2xx answer; `retry_after` from the response when it said."""

    def __init__(self, source: str, status: int, retry_after: float | None = None) -> None:
        super().__init__(source, f"HTTP {status}", status)
        self.retry_after = retry_after

    @property
    def transient(self) -> bool:
        return self.status == 429 or (self.status or 0) >= 500


class SourceBusyError(SourceError):
    """The call waited for its turn (a concurrency slot, the rate limit: this process's or the
    one shared in Redis) until its time was nearly up, and was never sent. The source is busy
    with other questions, not down: the breaker does not count it."""


# The search stage owns the time a source call may take: it sets this deadline (event loop
# time) around each call, and the policy fits its attempts inside it, so that a retry after
# a slow first attempt can still run.
CALL_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "source_call_deadline", default=None)
# Of the time left, what an attempt that may still be retried gets.
ATTEMPT_SHARE = 0.6
# Waiting for a turn stops this share of the time left (at most a second, and at most this
# share of the policy's timeout) before the deadline: a request sent with less time than
# that would only time out, and be mistaken for the source being down.
SEND_RESERVE = 0.1
MAX_SEND_RESERVE_S = 1.0


class CircuitBreaker:
    """Open after `threshold` failures in a row, or at once when the source cannot be reached
    at all: calls fail at once for `reset_s`, then one trial call is let through (half-open);
    its success closes the circuit again. `last_error` is why it opened."""

    def __init__(self, threshold: int = 5, reset_s: float = 60.0) -> None:
        self._threshold = threshold
        self._reset_s = reset_s
        self._failures = 0
        self._opened_at: float | None = None
        self._trial = False
        self.last_error: SourceError | None = None

    @property
    def threshold(self) -> int:
        return self._threshold

    @property
    def reset_s(self) -> float:
        return self._reset_s

    @property
    def state(self) -> str:
        if self._opened_at is None:
            return "closed"
        return "half-open" if time.monotonic() - self._opened_at >= self._reset_s else "open"

    def allow(self) -> bool:
        state = self.state
        if state == "closed":
            return True
        if state == "half-open" and not self._trial:
            self._trial = True
            return True
        return False

    def succeeded(self) -> None:
        self._failures = 0
        self._opened_at = None
        self._trial = False

    def failed(self, error: SourceError | None = None) -> None:
        self._failures += 1
        self._trial = False
        self.last_error = error or self.last_error
        if self._failures >= self._threshold or self._opened_at is not None:
            self._opened_at = time.monotonic()

    def trip(self, error: SourceError) -> None:
        """Open now: without a connection, every further call would fail the same way."""
        self._failures = max(self._failures + 1, self._threshold)
        self._trial = False
        self.last_error = error
        self._opened_at = time.monotonic()

    def release(self) -> None:
        """Give a half-open trial back unused (the call was never sent): the next may try."""
        self._trial = False

    def paused_error(self, source: str) -> SourceError:
        """What a call refused by the open circuit reports: the kind of failure that opened
        it (unreachable, timed out, or its HTTP status), so that users are told the same."""
        last = self.last_error
        return paused_error(source, failure_class(last), last.status if last else None)


def failure_class(error: SourceError | None) -> type[SourceError]:
    """The kind of failure a paused source reports: unreachable, timed out, or any other."""
    if isinstance(error, SourceUnreachableError):
        return SourceUnreachableError
    if isinstance(error, SourceTimeoutError):
        return SourceTimeoutError
    return SourceError


def paused_error(source: str, kind: type[SourceError], status: int | None) -> SourceError:
    return kind(source, "paused after repeated failures (circuit open)", status)


class SourceGuard(Protocol):
    """The rate limit and circuit breaker of one source that a policy consults: this
    process's (LocalGuard) or shared by every process (core.sources.shared.SharedGuard)."""

    async def acquire(self) -> None:
        """Wait for the rate limit (one request)."""

    async def allow(self) -> bool:
        """May a call go out now (closed, or the half-open trial)?"""

    async def succeeded(self) -> None: ...

    async def failed(self, error: SourceError) -> None: ...

    async def trip(self, error: SourceError) -> None:
        """Open at once: the source cannot be reached."""

    async def release(self) -> None:
        """A call let through was never sent: give its trial back, count nothing."""

    async def paused_error(self) -> SourceError: ...


class LocalGuard:
    """This process's rate limit (aiolimiter) and CircuitBreaker."""

    def __init__(self, name: str, rate: AsyncLimiter, breaker: CircuitBreaker) -> None:
        self.name = name
        self.rate = rate
        self.breaker = breaker

    async def acquire(self) -> None:
        await self.rate.acquire()

    async def allow(self) -> bool:
        return self.breaker.allow()

    async def succeeded(self) -> None:
        self.breaker.succeeded()

    async def failed(self, error: SourceError) -> None:
        self.breaker.failed(error)

    async def trip(self, error: SourceError) -> None:
        self.breaker.trip(error)

    async def release(self) -> None:
        self.breaker.release()

    async def paused_error(self) -> SourceError:
        return self.breaker.paused_error(self.name)


@dataclass
class _Flight(Generic[T]):
    task: asyncio.Future[T]
    callers: int = 0


class SingleFlight:
    """Identical calls under way at once are made once: later callers wait for the first
    one's result, or its failure. A caller that is cancelled only leaves; the call itself is
    cancelled when its last caller leaves, so a call cut off from outside still ends (and
    counts as cut off)."""

    def __init__(self) -> None:
        self._flights: dict[str, _Flight[Any]] = {}

    async def run(self, key: str, start: Callable[[], Awaitable[T]]) -> T:
        flight = self._flights.get(key)
        if flight is None:
            flight = self._flights[key] = _Flight(asyncio.ensure_future(start()))
            flight.task.add_done_callback(lambda _: self._landed(key, flight))
        flight.callers += 1
        try:
            return await asyncio.shield(flight.task)
        finally:
            flight.callers -= 1
            if flight.callers == 0 and not flight.task.done():
                flight.task.cancel()
                await asyncio.wait({flight.task})  # its breaker bookkeeping, before we go

    def _landed(self, key: str, flight: _Flight[Any]) -> None:
        if self._flights.get(key) is flight:
            del self._flights[key]


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
                 shared: SharedLimits | None = None) -> None:
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
        local = LocalGuard(name, self._rate, self.breaker)
        # A trial call in Redis is given up on (another process may try) after as long as
        # all of a call's attempts may take.
        self._guard: SourceGuard = local if shared is None else shared.guard(
            name, rate_per_s, local, trial_s=timeout_s * attempts)

    async def pace(self) -> None:
        """Wait for the rate limit: for each further request a call makes after its first."""
        await self._guard.acquire()

    async def get_text(self, session: aiohttp.ClientSession, url: str,
                       params: dict[str, Any] | None = None) -> str:
        """The body of a GET to this source's API, decoded; at most `max_response_bytes`
        are read."""
        body, charset = await _get_bytes(session, self.name, url, params, None,
                                         self.max_response_bytes)
        return body.decode(charset or "utf-8", "replace")

    async def get_json(self, session: aiohttp.ClientSession, url: str,
                       params: dict[str, Any] | None = None) -> Any:
        """The JSON answer of a GET; its parse is bounded by the byte cap (and nesting by the
        interpreter's recursion limit, reported as malformed)."""
        body, _ = await _get_bytes(session, self.name, url, params,
                                   {"Accept": "application/json"}, self.max_response_bytes)
        try:
            return json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise SourceError(self.name, "the response was not valid JSON") from None
        except RecursionError:
            raise SourceError(self.name, "the response was not valid JSON (nested too "
                                         "deeply)") from None

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
            PROVIDER_ERRORS.labels(self.name, error_kind(error)).inc()
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
            raise _DroppedError(self.name, f"connection failed: {error}"[:300]) from None

    def _wait(self, state: RetryCallState) -> float:
        failure = state.outcome.exception() if state.outcome is not None else None
        delay = self._backoff_s * 2 ** (state.attempt_number - 1) * random.uniform(0.8, 1.2)
        retry_after = getattr(failure, "retry_after", None)
        if retry_after is None and getattr(failure, "status", None) == 429:
            retry_after = MIN_429_WAIT_S  # rate-limited without a hint: back off properly
        return float(min(MAX_RETRY_AFTER_S, max(delay, retry_after or 0.0)))


class _DroppedError(SourceError):
    """The connection broke mid-call: worth another attempt."""


def error_kind(error: SourceError) -> str:
    """What a failed call is counted as in search_provider_errors_total."""
    kinds: tuple[tuple[type[SourceError], str], ...] = (
        (SourceUnreachableError, "unreachable"), (SourceTimeoutError, "timeout"),
        (SourceBusyError, "busy"), (SourceResponseTooLargeError, "too_large"),
        (_DroppedError, "dropped"))
    kind = next((name for cls, name in kinds if isinstance(error, cls)), None)
    if kind is not None:
        return kind
    if error.status == 429:
        return "rate_limited"
    if error.status in (401, 403):
        return "refused"
    return f"http_{error.status // 100}xx" if error.status else "error"


def _retryable(error: BaseException) -> bool:
    if isinstance(error, SourceHttpError):
        return error.transient
    return isinstance(error, SourceTimeoutError | _DroppedError)


class _NoTimeFor(stop_base):
    """Stop when the wait before the next attempt would end past the deadline."""

    def __init__(self, deadline: float | None) -> None:
        self._deadline = deadline

    def __call__(self, state: RetryCallState) -> bool:
        if self._deadline is None:
            return False
        wait = state.upcoming_sleep or 0.0
        return asyncio.get_running_loop().time() + wait >= self._deadline


async def _get_bytes(session: aiohttp.ClientSession, source: str, url: str,
                    params: dict[str, Any] | None, headers: dict[str, str] | None,
                    max_bytes: int) -> tuple[bytes, str | None]:
    """The body and charset of a GET to `url`, the source's configured API: that endpoint is
    trusted (it may be on the user's LAN), a redirect elsewhere must lead to a public address."""
    query = {k: str(v) for k, v in params.items()} if params else None
    try:
        async with guarded_get(session, url, AddressGuard.trusting(url), params=query,
                               headers=headers) as response:
            if response.status >= 400:
                raise SourceHttpError(source, response.status,
                                      _retry_after(response.headers.get("Retry-After")))
            return await read_capped(response, max_bytes), response.charset
    except ResponseTooLargeError as error:
        raise SourceResponseTooLargeError(
            source, f"the answer was larger than {max_bytes / 2**20:g} MB (read "
            f"{error.read:,} bytes)") from None
    except BlockedAddressError as error:
        raise SourceError(source, f"refused to follow a redirect: {error}") from None
    except RedirectError as error:
        raise SourceError(source, str(error)) from None


def _retry_after(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def parse_xml(source: str, text: str) -> Any:
    """The XML document's root, parsed with defusedxml (no entity expansion, no external
    references); SourceError when it is malformed or hostile."""
    from defusedxml import ElementTree

    try:
        return ElementTree.fromstring(text)  # no larger than the byte cap it was read under
    except ElementTree.ParseError as error:
        raise SourceError(source, f"the response is not valid XML: {error}") from None
    except Exception as error:  # defusedxml refuses entity tricks with its own types
        raise SourceError(source, f"the response was refused: {type(error).__name__}") from None
