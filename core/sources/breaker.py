"""This process's circuit breaker of one source."""

from __future__ import annotations

import time

from core.errors import SourceError
from core.models import Clock
from core.sources.failure_kinds import failure_kind, paused_error

# A failure count shared between processes (Redis, the data dir's file) that nobody has added
# to for this long, or for two reset times when longer, is forgotten.
FORGET_AFTER_S = 3600

class CircuitBreaker:
    """Open after `threshold` failures in a row, or at once when the source cannot be reached
    at all: calls fail at once for `reset_s`, then one trial call is let through (half-open);
    its success closes the circuit again. `last_error` is why it opened. `clock` times the
    reset (this process's seconds)."""

    def __init__(self, threshold: int = 5, reset_s: float = 60.0, *,
                 clock: Clock = time.monotonic) -> None:
        self._threshold = threshold
        self._reset_s = reset_s
        self._clock = clock
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
    def forget_after_s(self) -> int:
        """How long a shared failure count is kept without a new failure."""
        return max(FORGET_AFTER_S, int(2 * self._reset_s))

    @property
    def state(self) -> str:
        if self._opened_at is None:
            return "closed"
        return "half-open" if self._clock() - self._opened_at >= self._reset_s else "open"

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
            self._opened_at = self._clock()

    def trip(self, error: SourceError) -> None:
        """Open now: without a connection, every further call would fail the same way."""
        self._failures = max(self._failures + 1, self._threshold)
        self._trial = False
        self.last_error = error
        self._opened_at = self._clock()

    def release(self) -> None:
        """Give a half-open trial back unused (the call was never sent): the next may try."""
        self._trial = False

    def paused_error(self, source: str) -> SourceError:
        """What a call refused by the open circuit reports (failure_kinds.paused_error)."""
        last = self.last_error
        return paused_error(source, failure_kind(last) if last else "error",
                            last.status if last else None)
