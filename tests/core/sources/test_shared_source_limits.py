"""Source limits across processes and within one: two SourcePolicy instances (two worker
processes) share one rate limit and one circuit breaker through the real Redis server;
identical calls under way at once are one HTTP request; a call that never got its turn is
"busy", not an outage; without Redis every process keeps its own limits."""

import asyncio
import logging
import socket
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from core.answer.grading import outage_notes
from core.errors import SourceError, SourceUnreachableError
from core.models import QueryIntent
from core.research.planning import PlannedQuery, ResearchPlan
from core.research.search import SearchOutcome, run_search
from core.sources.breaker import CircuitBreaker
from core.sources.policy import SourcePolicy
from core.sources.protocol import SearchQuery
from core.sources.searxng import SearxngSource
from core.sources.shared_limits import SharedLimits, rate_window
from tests.support.clock import FakeClock
from tests.support.fake_web import Article, Failure, FakeWeb
from tests.support.services import REDIS_URL, redis_server

pytestmark = pytest.mark.integration

BREAKER_KEY = "researchbot:sources:breaker:searxng"


class TimedWeb(FakeWeb):
    """FakeWeb noting when each request arrives, and holding requests while `release` is an
    unset event."""

    def __init__(self) -> None:
        super().__init__()
        self.arrivals: list[float] = []
        self.arrived = asyncio.Event()
        self.release: asyncio.Event | None = None

    async def _scripted(self, request: web.Request) -> web.Response | None:
        self.arrivals.append(time.monotonic())
        self.arrived.set()
        if self.release is not None:
            await self.release.wait()
        return await super()._scripted(request)

    async def stop(self) -> None:
        if self.release is not None:
            self.release.set()  # a held request would keep the server's shutdown waiting
        await super().stop()


@pytest.fixture
async def fake() -> AsyncIterator[TimedWeb]:
    server = TimedWeb()
    await server.start()
    server.articles = [Article(title="Domestic cat", url=f"{server.base}/pages/cat",
                               text="Domestic cats sleep between 12 and 16 hours a day.")]
    yield server
    await server.stop()



@pytest.fixture
async def processes(clock: FakeClock) -> AsyncIterator[list[SharedLimits]]:
    """Two processes' shared limits: each its own Redis client, one Redis server."""
    async with redis_server() as first:
        second = Redis.from_url(REDIS_URL)
        try:
            yield [SharedLimits(first, clock=clock), SharedLimits(second, clock=clock)]
        finally:
            await second.aclose()


def _policy(**options: Any) -> SourcePolicy:
    values: dict[str, Any] = {"timeout_s": 2.0, "attempts": 1, "backoff_s": 0.05,
                              "rate_per_s": 100.0}
    return SourcePolicy("searxng", **(values | options))


def _searx(fake: FakeWeb, session: aiohttp.ClientSession, policy: SourcePolicy) -> SearxngSource:
    return SearxngSource(session, policy, fake.base + "/searx")


def _query(text: str) -> SearchQuery:
    return SearchQuery(text=text, tenant="t", limit=5, intent=QueryIntent())


async def _search_stage(source: SearxngSource, text: str, timeout_s: float) -> SearchOutcome:
    """The query through the search stage, which sets the call's deadline."""
    plan = ResearchPlan(queries=[PlannedQuery(text=text, purpose="", sources=["searxng"])])
    return await run_search(plan, {"searxng": source}, "t", QueryIntent(), 5, timeout_s)


def _busiest(times: list[float], window_s: float) -> int:
    """The most requests that arrived within any `window_s` seconds."""
    ordered = sorted(times)
    first = 0
    most = 0
    for last, at in enumerate(ordered):
        while at - ordered[first] >= window_s:
            first += 1
        most = max(most, last - first + 1)
    return most


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_two_processes_stay_within_one_shared_rate(
    fake: TimedWeb, session: Any, processes: list[SharedLimits],
) -> None:
    rate = 10
    sources = [_searx(fake, session, _policy(rate_per_s=rate, shared=shared))
               for shared in processes]
    started = time.monotonic()
    await asyncio.gather(*(source.search(_query(f"domestic cat p{n} q{i}"))
                           for n, source in enumerate(sources) for i in range(10)))
    assert len(fake.arrivals) == 20
    # In process, each would send 4 at once and then 10 a second: 20 within 0.6 s. The
    # window is short of a second by the jitter between a token and its request's arrival.
    assert _busiest(fake.arrivals, 0.75) <= rate
    assert time.monotonic() - started >= 0.9


async def test_a_breaker_opened_in_one_process_is_open_in_the_other(
    fake: TimedWeb, session: Any, processes: list[SharedLimits], clock: FakeClock,
) -> None:
    first, second = (_searx(fake, session, _policy(shared=shared,
                                                   breaker=CircuitBreaker(2, 60)))
                     for shared in processes)
    fake.fail("/searx/search", Failure(500), Failure(500))
    for _ in range(2):
        with pytest.raises(SourceError, match="HTTP 500"):
            await first.search(_query("domestic cat"))
    with pytest.raises(SourceError, match="circuit open") as paused:
        await second.search(_query("domestic cat"))
    assert paused.value.status == 500  # the kind of failure that opened it, in either process
    assert len(fake.arrivals) == 2
    # The rest is over: one process's trial goes out, the other's call waits its outcome.
    clock.advance(61)
    fake.release, fake.arrived = asyncio.Event(), asyncio.Event()
    trial = asyncio.create_task(first.search(_query("domestic cat")))
    await fake.arrived.wait()
    with pytest.raises(SourceError, match="circuit open"):
        await second.search(_query("domestic cat"))
    fake.release.set()
    assert await trial
    assert await second.search(_query("domestic cat"))  # the trial closed it for both
    assert len(fake.arrivals) == 4


async def test_a_trial_cut_off_in_one_process_pauses_the_source_for_all(
    fake: TimedWeb, session: Any, processes: list[SharedLimits], clock: FakeClock,
) -> None:
    first, second = (_searx(fake, session, _policy(shared=shared,
                                                   breaker=CircuitBreaker(1, 60)))
                     for shared in processes)
    fake.fail("/searx/search", Failure(503))
    with pytest.raises(SourceError, match="HTTP 503"):
        await first.search(_query("domestic cat"))
    clock.advance(61)
    fake.release = asyncio.Event()
    with pytest.raises(TimeoutError):  # the trial, cut off by the caller's own timeout
        await asyncio.wait_for(first.search(_query("domestic cat")), 0.2)
    with pytest.raises(SourceError, match="circuit open"):
        await second.search(_query("domestic cat"))
    clock.advance(61)
    fake.release.set()
    assert await second.search(_query("domestic cat"))


async def test_a_source_that_cannot_be_reached_rests_in_every_process(
    session: Any, processes: list[SharedLimits],
) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/searx"
    first, second = (SearxngSource(session, _policy(shared=shared), url)
                     for shared in processes)
    with pytest.raises(SourceUnreachableError):  # the first "cannot connect" opens it
        await first.search(_query("domestic cat"))
    outcome = await _search_stage(second, "domestic cat", 5.0)
    assert [f.kind for f in outcome.failures] == ["unreachable"]
    assert "circuit open" in outcome.failures[0].reason
    assert outage_notes(outcome.failures) == [
        "The web (SearXNG) could not be reached, so its results are missing from this answer."]


async def test_identical_concurrent_calls_make_one_request(fake: TimedWeb,
                                                           session: Any) -> None:
    source = _searx(fake, session, _policy())
    fake.release = asyncio.Event()
    calls = [asyncio.create_task(source.search(_query("domestic cat"))) for _ in range(5)]
    await fake.arrived.wait()
    fake.release.set()
    found = await asyncio.gather(*calls)
    assert len(fake.arrivals) == 1
    assert found[0] and all(result == found[0] for result in found)
    assert await source.search(_query("domestic cat"))  # done: a new call goes out again
    assert len(fake.arrivals) == 2


async def test_a_failure_is_shared_by_every_identical_caller(fake: TimedWeb,
                                                             session: Any) -> None:
    source = _searx(fake, session, _policy())
    fake.fail("/searx/search", Failure(500))
    failed = await asyncio.gather(*(source.search(_query("domestic cat")) for _ in range(3)),
                                  return_exceptions=True)
    assert [getattr(error, "status", None) for error in failed] == [500, 500, 500]
    assert len(fake.arrivals) == 1


async def test_a_cancelled_caller_leaves_the_call_to_the_others(fake: TimedWeb,
                                                                session: Any) -> None:
    policy = _policy(breaker=CircuitBreaker(1, 60))
    source = _searx(fake, session, policy)
    fake.release = asyncio.Event()
    leaving = asyncio.create_task(source.search(_query("domestic cat")))
    staying = asyncio.create_task(source.search(_query("domestic cat")))
    await fake.arrived.wait()
    leaving.cancel()
    with pytest.raises(asyncio.CancelledError):
        await leaving
    fake.release.set()
    assert await staying
    assert len(fake.arrivals) == 1 and policy.breaker.state == "closed"


@pytest.mark.parametrize("starved_by", ["rate limit", "concurrency slot", "shared rate limit"])
async def test_a_call_that_never_got_its_turn_is_busy_not_down(
    fake: TimedWeb, session: Any, starved_by: str, clock: FakeClock,
) -> None:
    async with redis_server() as redis:
        shared = [SharedLimits(redis, clock=clock) for _ in range(2)]
        if starved_by == "rate limit":  # one call a second, its one call just made
            policies = [_policy(rate_per_s=1.0, concurrency=1, breaker=CircuitBreaker(1, 60))]
        elif starved_by == "concurrency slot":  # one call at a time, held by the server
            policies = [_policy(concurrency=1, breaker=CircuitBreaker(1, 60))]
            fake.release = asyncio.Event()
        else:  # one call a second between two processes, the other process's just made
            policies = [_policy(rate_per_s=1.0, shared=limits, breaker=CircuitBreaker(1, 60))
                        for limits in shared]
        other, busy = _searx(fake, session, policies[0]), _searx(fake, session, policies[-1])
        holding = asyncio.create_task(other.search(_query("domestic cat first")))
        await fake.arrived.wait()
        outcome = await _search_stage(busy, "domestic cat second", timeout_s=0.5)
        if fake.release is not None:
            fake.release.set()
        await holding
        assert [f.kind for f in outcome.failures] == ["busy"]
        assert outage_notes(outcome.failures) == [
            "The web (SearXNG) was busy with other questions, so its results are missing "
            "from this answer."]
        assert len(fake.arrivals) == 1  # the busy call was never sent
        assert policies[-1].breaker.state == "closed"
        assert not await redis.exists(BREAKER_KEY)


async def test_without_redis_every_process_keeps_its_own_limits(
    fake: TimedWeb, session: Any, caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="core.sources.shared_limits")
    redis = Redis.from_url(f"redis://127.0.0.1:{_closed_port()}/0", socket_connect_timeout=1.0,
                           socket_timeout=1.0, retry=Retry(NoBackoff(), 1))
    try:
        policy = _policy(rate_per_s=10.0, concurrency=1, breaker=CircuitBreaker(1, 60),
                         shared=SharedLimits(redis))
        source = _searx(fake, session, policy)
        started = time.monotonic()
        found = await asyncio.gather(*(source.search(_query(f"domestic cat {n}"))
                                       for n in range(6)))
        assert all(found)
        assert time.monotonic() - started >= 0.45  # 10 a second, in this process
        fake.fail("/searx/search", Failure(500))
        with pytest.raises(SourceError, match="HTTP 500"):
            await source.search(_query("domestic cat again"))
        assert policy.breaker.state == "open"  # this process's breaker took over
    finally:
        await redis.aclose()
    warned = [r for r in caplog.records if r.name == "core.sources.shared_limits"]
    assert len(warned) == 1 and "redis.url" in warned[0].getMessage()


def test_a_fractional_rate_is_a_window_of_whole_calls() -> None:
    assert (rate_window(10).amount, rate_window(10).multiples) == (10, 1)
    assert (rate_window(2.5).amount, rate_window(2.5).multiples) == (5, 2)
    assert (rate_window(1 / 3).amount, rate_window(1 / 3).multiples) == (1, 3)


def test_the_redis_url_is_a_secret_and_must_be_redis() -> None:
    from pydantic import ValidationError

    from bot.config import RedisSettings

    settings = RedisSettings(url="redis://:pw-Src-72k@cache.lan:6379/2")
    assert "pw-Src-72k" not in f"{settings!r} {settings.model_dump_json()}"
    assert settings.url is not None
    assert settings.url.get_secret_value().endswith("@cache.lan:6379/2")
    assert RedisSettings(url=" ").url is None
    with pytest.raises(ValidationError, match="not a Redis URL"):
        RedisSettings(url="http://cache.lan:6379")
