import asyncio
import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest

from adapters.chat.dedupe import LocalEventLog, RedisEventLog
from adapters.chat.limits import (
    LocalQuestionLimiter,
    QuestionLimiter,
    RateLimitedError,
    RedisQuestionLimiter,
)
from tests.support.clock import FakeClock
from tests.support.services import redis_server

pytestmark = pytest.mark.integration


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(start=1000.0)  # small numbers: the waits compare exactly


@pytest.fixture(params=["local", "redis"])
async def make_limiter(request: pytest.FixtureRequest, clock: FakeClock
                       ) -> AsyncIterator[Any]:
    """The embedded limiter and the Redis one, under the same tests, on `clock`."""
    if request.param == "local":
        yield lambda *limits: LocalQuestionLimiter(*limits, clock=clock)
        return
    async with redis_server() as redis:
        yield lambda *limits: RedisQuestionLimiter(redis, *limits, clock=clock)


async def test_a_person_over_the_limit_is_refused_with_the_wait(make_limiter: Any) -> None:
    limiter: QuestionLimiter = make_limiter(2, 100, 60, 5)
    assert await limiter.admit("T1", "U1") == 0
    assert await limiter.admit("T1", "U1") == 0
    with pytest.raises(RateLimitedError) as refused:
        await limiter.admit("T1", "U1")
    assert refused.value.scope == "user" and refused.value.limit == 2
    assert 59 < refused.value.retry_after_s <= 60
    # Other people, and the same person elsewhere, have their own allowance.
    assert await limiter.admit("T1", "U2") == 0
    assert await limiter.admit("T2", "U1") == 0


async def test_a_short_wait_is_a_queue_not_a_refusal(make_limiter: Any,
                                                      clock: FakeClock) -> None:
    limiter: QuestionLimiter = make_limiter(1, 100, 0.5, 2)
    assert await limiter.admit("T1", "U1") == 0
    second = await limiter.admit("T1", "U1")
    third = await limiter.admit("T1", "U1")
    assert second == pytest.approx(0.5) and third == pytest.approx(1.0)  # a slot each 0.5 s
    clock.advance(0.9)  # the third's slot starts in 0.1 s: the next waits for the window
    assert await limiter.admit("T1", "U1") == pytest.approx(0.6)
    clock.advance(2.0)  # every slot taken has left the window
    assert await limiter.admit("T1", "U1") == 0


async def test_the_workspace_limit_covers_everyone_in_it(make_limiter: Any) -> None:
    limiter: QuestionLimiter = make_limiter(5, 2, 60, 0)
    await limiter.admit("T1", "U1")
    await limiter.admit("T1", "U2")
    with pytest.raises(RateLimitedError) as refused:
        await limiter.admit("T1", "U3")
    assert refused.value.scope == "workspace"
    assert await limiter.admit("T2", "U3") == 0


async def test_an_event_id_counts_once_until_it_expires(clock: FakeClock) -> None:
    events = LocalEventLog(ttl_s=3600, clock=clock)
    assert await events.first_time("Ev1")
    assert not await events.first_time("Ev1")
    clock.advance(1800)
    assert await events.first_time("Ev2")
    clock.advance(1799)
    assert not await events.first_time("Ev1")
    clock.advance(1)
    assert await events.first_time("Ev1")
    assert not await events.first_time("Ev2")  # seen 1800 s ago: still remembered


async def test_redis_forgets_an_event_id_after_its_time_to_live(redis: Any) -> None:
    """Redis keeps the time itself (the key's PX): the test waits for it to forget."""
    events = RedisEventLog(redis, ttl_s=0.2)
    assert await events.first_time("Ev1")
    assert not await events.first_time("Ev1")
    assert 0 < await redis.pttl("researchbot:event:Ev1") <= 200
    async with asyncio.timeout(5):
        while True:  # an id refused is not stored again: asking keeps no id alive
            if await events.first_time("Ev1"):
                break
            await asyncio.sleep(0.02)


async def test_processes_sharing_redis_answer_a_redelivery_once(redis: Any) -> None:
    first, second = RedisEventLog(redis), RedisEventLog(redis)
    outcomes = await asyncio.gather(*(log.first_time("EvSame")
                                      for log in [first, second] * 5))
    assert sorted(outcomes) == [False] * 9 + [True]


async def test_while_redis_is_away_limits_and_dedupe_hold_in_the_process(
        caplog: pytest.LogCaptureFixture) -> None:
    """One Redis holds the queue, the limits and the dedupe: its outage keeps counting
    questions and events in the process, with one warning, rather than failing them."""
    from redis.asyncio import Redis

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    away = Redis.from_url(f"redis://127.0.0.1:{port}/0", socket_connect_timeout=0.5)
    try:
        limiter = RedisQuestionLimiter(away, 1, 100, 60, 0)
        assert await limiter.admit("T1", "U1") == 0
        with pytest.raises(RateLimitedError):  # still counted, in this process
            await limiter.admit("T1", "U1")
        events = RedisEventLog(away)
        assert await events.first_time("EvAway")
        assert not await events.first_time("EvAway")
    finally:
        await away.aclose()
    warned = [r.getMessage() for r in caplog.records if "question limits" in r.getMessage()]
    assert len(warned) == 1 and "redis.url" in warned[0]
