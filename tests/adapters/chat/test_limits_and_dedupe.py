import asyncio
import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest

from adapters.chat.dedupe import EventLog, LocalEventLog, RedisEventLog
from adapters.chat.limits import (
    LocalQuestionLimiter,
    QuestionLimiter,
    RateLimitedError,
    RedisQuestionLimiter,
)
from tests.support.services import redis_server

pytestmark = pytest.mark.integration


@pytest.fixture(params=["local", "redis"])
async def make_limiter(request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    """The embedded limiter and the Redis one, under the same tests."""
    if request.param == "local":
        yield LocalQuestionLimiter
        return
    async with redis_server() as redis:
        yield lambda *limits: RedisQuestionLimiter(redis, *limits)


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


async def test_a_short_wait_is_a_queue_not_a_refusal(make_limiter: Any) -> None:
    limiter: QuestionLimiter = make_limiter(1, 100, 0.5, 2)
    assert await limiter.admit("T1", "U1") == 0
    second = await limiter.admit("T1", "U1")
    third = await limiter.admit("T1", "U1")
    assert 0.4 < second <= 0.5 and 0.9 < third <= 1.0  # one slot each half second
    await asyncio.sleep(1.6)
    assert await limiter.admit("T1", "U1") == 0


async def test_the_workspace_limit_covers_everyone_in_it(make_limiter: Any) -> None:
    limiter: QuestionLimiter = make_limiter(5, 2, 60, 0)
    await limiter.admit("T1", "U1")
    await limiter.admit("T1", "U2")
    with pytest.raises(RateLimitedError) as refused:
        await limiter.admit("T1", "U3")
    assert refused.value.scope == "workspace"
    assert await limiter.admit("T2", "U3") == 0


@pytest.fixture(params=["local", "redis"])
async def event_log(request: pytest.FixtureRequest) -> AsyncIterator[EventLog]:
    if request.param == "local":
        yield LocalEventLog(ttl_s=0.3)
        return
    async with redis_server() as redis:
        yield RedisEventLog(redis, ttl_s=0.3)


async def test_an_event_id_counts_once_until_it_expires(event_log: EventLog) -> None:
    assert await event_log.first_time("Ev1")
    assert not await event_log.first_time("Ev1")
    assert await event_log.first_time("Ev2")
    await asyncio.sleep(0.4)
    assert await event_log.first_time("Ev1")


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
