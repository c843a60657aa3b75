"""Failed authentication, counted per client address: after `limit` failures (a wrong or
missing API key, a wrong page token) within `window_s`, the address is refused with 429 and
Retry-After until the oldest of them leaves the window, whatever it sends, so that keys and
tokens cannot be guessed at the server's speed. Successful requests are never counted.

The address is the client's as the ASGI server reports it. uvicorn takes it from
X-Forwarded-For only when the connection comes from an address in its FORWARDED_ALLOW_IPS
environment variable (by default this machine's: 127.0.0.1 and ::1, a reverse proxy beside
the server); this module never reads that header itself, which any client can send.

The count is a moving window in this process's memory (the `limits` library, as the source
limits use in Redis): each address holds at most `limit` timestamps and is forgotten once
they expire, so memory stays bounded by the addresses that failed within one window."""

from __future__ import annotations

import math
import time

from limits import RateLimitItemPerSecond
from limits.aio.storage import MemoryStorage
from limits.aio.strategies import MovingWindowRateLimiter

FAILURES_PER_WINDOW = 20
WINDOW_SECONDS = 60


class FailedAuthentications:
    def __init__(self, limit: int = FAILURES_PER_WINDOW,
                 window_s: int = WINDOW_SECONDS) -> None:
        self._item = RateLimitItemPerSecond(limit, window_s)
        self._window = MovingWindowRateLimiter(MemoryStorage())

    async def refused_for(self, address: str) -> int | None:
        """Whole seconds until `address` may try again; None when it may now."""
        if await self._window.test(self._item, address):
            return None
        stats = await self._window.get_window_stats(self._item, address)
        return max(1, math.ceil(stats.reset_time - time.time()))

    async def failed(self, address: str) -> None:
        await self._window.hit(self._item, address)
