"""A clock a test moves instead of sleeping: pass it where the code takes a `clock`
(core.models.Clock) and `advance` it past the time the test means to let pass."""

from __future__ import annotations

import time


class FakeClock:
    """Seconds that move only when told. It starts at the wall clock's second, so that it
    can stand for time.time (stored times, shared breakers) as well as time.monotonic; a
    whole second, so that a time stored where fewer digits are kept (Chroma's metadata)
    reads back the same."""

    def __init__(self, start: float | None = None) -> None:
        self.now = float(int(time.time())) if start is None else start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        assert seconds >= 0, "a clock does not go back"
        self.now += seconds
