"""Failed authentication, counted per client address: after `limit` failures (a wrong or
missing API key, a wrong page token) within `window_s`, the address is refused with 429 and
Retry-After until the oldest of them leaves the window, whatever it sends, so that keys and
tokens cannot be guessed at the server's speed. Successful requests are never counted.

The address is the client's as the ASGI server reports it. uvicorn takes it from
X-Forwarded-For only when the connection comes from an address in its FORWARDED_ALLOW_IPS
environment variable (by default this machine's: 127.0.0.1 and ::1, a reverse proxy beside
the server); this module never reads that header itself, which any client can send.

The count is a moving window in this process's memory, on this process's `clock`: each
address holds at most `limit` times (a failure while refused is not counted, so a lockout
never grows) and is forgotten once its last failure leaves the window, so memory stays
bounded by the addresses that failed within one window."""

from __future__ import annotations

import math
import time
from collections import OrderedDict, deque

from core.models import Clock

FAILURES_PER_WINDOW = 20
WINDOW_SECONDS = 60


class FailedAuthentications:
    def __init__(self, limit: int = FAILURES_PER_WINDOW, window_s: int = WINDOW_SECONDS, *,
                 clock: Clock = time.monotonic) -> None:
        self._limit = limit
        self._window_s = window_s
        self._clock = clock
        # address -> its failures' times, oldest first; the address that failed last, last
        self._failures: OrderedDict[str, deque[float]] = OrderedDict()

    async def refused_for(self, address: str) -> int | None:
        """Whole seconds until `address` may try again; None when it may now."""
        now = self._clock()
        times = self._within_window(address, now)
        if len(times) < self._limit:
            return None
        return max(1, math.ceil(times[0] + self._window_s - now))

    async def failed(self, address: str) -> None:
        now = self._clock()
        self._forget_before(now - self._window_s)
        times = self._within_window(address, now)
        if len(times) < self._limit:
            times.append(now)
            self._failures[address] = times
            self._failures.move_to_end(address)

    def _within_window(self, address: str, now: float) -> deque[float]:
        times = self._failures.get(address, deque())
        while times and times[0] <= now - self._window_s:
            times.popleft()
        return times

    def _forget_before(self, oldest: float) -> None:
        """Forget the addresses whose last failure is older than `oldest`."""
        while self._failures:
            address, times = next(iter(self._failures.items()))
            if times and times[-1] > oldest:
                return
            del self._failures[address]
