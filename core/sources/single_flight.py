"""Identical calls under way at once, made once."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

T = TypeVar("T")


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
