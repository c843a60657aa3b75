"""Delivery: how a finished job's answer (or its failure) reaches the person who asked.

A front end hands the job service a `Delivery` when it submits a question. The job then owns
the delivery: the answer is posted by the job, retried with backoff on transient platform
errors for minutes, each step at most once (the steps done are stored with the job), and a
delivery that finally fails is recorded where `researchbot show` finds it. Progress updates
go through a `ProgressPump`: best effort, off the research's critical path."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from tenacity import (
    AsyncRetrying,
    retry_if_exception,
    stop_after_delay,
    wait_exponential_jitter,
)

from core.errors import ConfigurationError
from core.metrics import DELIVERY_FAILURES
from core.models import DocumentsOutcome, ProgressEvent, ResearchResult
from core.redact import error_line, redact
from core.store.deliveries import DeliveryStore

log = logging.getLogger(__name__)

T = TypeVar("T")

PROGRESS_INTERVAL_S = 1.0


STARTED = "_started"  # the steps begun, in `done`: one may have succeeded unseen


class Steps:
    """The delivery steps a job has done, by name, with what each returned (a message id,
    say). `once` runs a step only if it has not succeeded before, in this attempt or an
    earlier one, and stores its result before the next step runs.

    A process can die between a platform accepting a post and the step being stored. A step
    given `find` (a look-up of what it would have posted, by the job and step) is marked as
    started before it runs; a later attempt that finds it started looks before posting."""

    def __init__(self, done: dict[str, Any], save: Callable[[dict[str, Any]], Awaitable[None]],
                 job_id: str = "") -> None:
        self.done = done
        self.job_id = job_id
        self._save = save

    async def once(self, name: str, step: Callable[[], Awaitable[T]],
                   find: Callable[[], Awaitable[T | None]] | None = None) -> T:
        if name in self.done:
            return self.done[name]
        if find is not None:
            started: list[str] = self.done.setdefault(STARTED, [])
            found = await find() if name in started else None
            if found is not None:
                return await self._record(name, found)
            if name not in started:
                started.append(name)
                await self._save(self.done)
        return await self._record(name, await step())

    async def _record(self, name: str, value: T) -> T:
        self.done[name] = value
        await self._save(self.done)
        return value


class Delivery(Protocol):
    """Where one job's progress and answer go. `target` is stored with the job (JSON)."""

    platform: str

    def target(self) -> dict[str, Any]: ...

    async def progress(self, event: ProgressEvent) -> None:
        """Show progress. Best effort: a failure is logged by the caller and skipped."""

    async def answer(self, result: ResearchResult, steps: Steps) -> None:
        """Post the answer, each platform call a step of `steps`. Raise on failure: a
        transient error (see `transient`) is retried, from the first step not done."""

    async def failure(self, message: str, steps: Steps) -> None:
        """Tell the person that the job failed, with `message` (safe to show)."""

    async def added(self, outcome: DocumentsOutcome, steps: Steps) -> None:
        """Tell the person what a documents job added (or why a file was skipped)."""


class DeliveryRegistry:
    """Rebuilds a stored delivery in any process: one maker per platform this process can
    post to (a worker registers every platform it has credentials for)."""

    def __init__(self) -> None:
        self._makers: dict[str, Callable[[dict[str, Any]], Awaitable[Delivery]]] = {}

    def register(self, platform: str,
                 maker: Callable[[dict[str, Any]], Awaitable[Delivery]]) -> None:
        self._makers[platform] = maker

    async def __call__(self, platform: str, target: dict[str, Any]) -> Delivery:
        maker = self._makers.get(platform)
        if maker is None:
            raise ConfigurationError(f"this process cannot post to {platform}: set its "
                                     f"{platform}.* credentials for the workers too")
        return await maker(target)


def transient(error: BaseException) -> bool:
    """Worth retrying: no connection, a timeout, a rate limit (429) or a server error (5xx).
    Anything else (a 4xx, a bug) would fail the same way again."""
    # An aiohttp error needs aiohttp loaded; a process that never loads it is spared importing it.
    aiohttp = sys.modules.get("aiohttp")
    if isinstance(error, (TimeoutError, ConnectionError)) or (
            aiohttp is not None and isinstance(error, aiohttp.ClientConnectionError)):
        return True
    status = http_status(error)
    return status is not None and (status == 429 or status >= 500)


def http_status(error: BaseException) -> int | None:
    """The HTTP status an exception carries, whichever client raised it (discord.py:
    .status; slack_sdk: .response.status_code; aiohttp and others: .status or
    .status_code)."""
    for holder in (error, getattr(error, "response", None)):
        for name in ("status", "status_code"):
            value = getattr(holder, name, None)
            if isinstance(value, int):
                return value
    return None


@dataclass(frozen=True)
class RetryPolicy:
    """Backoff for delivery: waits grow from `first_wait_s` to `max_wait_s` (with jitter)
    until `give_up_after_s` have passed since the first attempt."""

    first_wait_s: float = 2.0
    max_wait_s: float = 60.0
    give_up_after_s: float = 600.0

    def retrying(self) -> AsyncRetrying:
        return AsyncRetrying(
            retry=retry_if_exception(transient),
            wait=wait_exponential_jitter(multiplier=self.first_wait_s, max=self.max_wait_s,
                                         jitter=self.first_wait_s / 2),
            stop=stop_after_delay(self.give_up_after_s), reraise=True)


async def deliver(job_id: str, delivery: Delivery, store: DeliveryStore, policy: RetryPolicy,
                  post: Callable[[Steps], Awaitable[None]]) -> bool:
    """Run `post` (the answer or the failure message) until it succeeds, retrying transient
    errors per `policy` from the first step not yet done. Records the outcome; True when
    delivered. Never raises except on cancellation. A record that cannot be read or written
    (the database away) does not hold the delivery up: its steps are then kept in memory."""
    row = await _recorded(store.get(job_id), job_id)
    done: dict[str, Any] = dict(row.done) if row else {}
    attempts = row.attempts if row else 0

    async def note(**values: Any) -> None:
        await _recorded(store.update(job_id, **values), job_id)

    async def save(steps_done: dict[str, Any]) -> None:
        await note(done=steps_done)

    steps = Steps(done, save, job_id)
    try:
        async for attempt in policy.retrying():
            with attempt:
                attempts += 1
                await note(attempts=attempts)
                try:
                    await post(steps)
                except Exception as error:
                    await note(error=_describe(error))
                    log.warning("job %s: delivery to %s failed (attempt %d): %s", job_id,
                                delivery.platform, attempts, _describe(error))
                    raise
    except Exception as error:
        await note(status="failed", error=_describe(error))
        DELIVERY_FAILURES.labels(delivery.platform).inc()
        log.error("job %s: gave up delivering to %s after %d attempts", job_id,
                  delivery.platform, attempts)
        return False
    await note(status="delivered", error=None)
    return True


async def _recorded(call: Awaitable[T], job_id: str) -> T | None:
    """A read or write of the delivery record; None (logged) when the database fails it: the
    answer reaching the person matters more than the record of it."""
    try:
        return await call
    except Exception as error:
        log.warning("job %s: delivery record not read or written: %s", job_id,
                    error_line(error))
        return None


def _describe(error: BaseException) -> str:
    status = http_status(error)
    text = redact(" ".join(str(error).split()))[:300]
    return f"{type(error).__name__}{f' (HTTP {status})' if status else ''}: {text}"


class ProgressPump:
    """Shows a job's progress through its delivery without holding the research up: `offer`
    returns at once; a background task shows the newest finished stage (or search begun) at
    most once per `interval_s` (each update is a rate-limited platform call, and skipped ones
    would be replaced before anyone read them). A failed update is logged and skipped. `close` stops
    the pump before the answer is posted, so a late update never replaces the answer."""

    def __init__(self, delivery: Delivery, job_id: str,
                 interval_s: float = PROGRESS_INTERVAL_S, shown_now: bool = True) -> None:
        self._delivery = delivery
        self._job_id = job_id
        self._interval_s = interval_s
        self._latest: ProgressEvent | None = None
        self._wake = asyncio.Event()
        self._last = time.monotonic() if shown_now else -math.inf
        self._task: asyncio.Task[None] | None = None

    def offer(self, event: ProgressEvent) -> None:
        # A search starting is shown too: what each source is sent is what a person waits on.
        if event.kind != "finished" and not event.detail.queries:
            return
        self._latest = event
        self._wake.set()
        if self._task is None:
            self._task = asyncio.create_task(self._run())

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            wait_s = self._last + self._interval_s - time.monotonic()
            if wait_s > 0:
                await asyncio.sleep(wait_s)
            self._wake.clear()
            event, self._latest = self._latest, None
            if event is None:
                continue
            self._last = time.monotonic()
            try:
                await self._delivery.progress(event)
            except Exception as error:  # cosmetic: never fails the job
                log.info("job %s: a progress update to %s failed and was skipped: %s",
                         self._job_id, self._delivery.platform, _describe(error))
