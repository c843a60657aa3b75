"""The rate limit and circuit breaker a policy consults for one source: this process's
(LocalGuard), the breaker shared by the processes of one data dir
(core.sources.breaker_file.BreakerFileGuard), or both shared by every process through Redis
(core.sources.shared_limits.SharedGuard). Each shared one falls back to the one below it while
its store cannot be used."""

from __future__ import annotations

from typing import Protocol

from aiolimiter import AsyncLimiter

from core.errors import SourceError
from core.sources.breaker import CircuitBreaker


class SourceGuard(Protocol):
    # The breaker's settings (threshold, reset time), and this process's own state when no
    # shared store can be used.
    breaker: CircuitBreaker

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
