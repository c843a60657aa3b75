"""Circuit breakers shared by the processes of one data dir (core.sources.breaker_file): two
SourcePolicy instances, each with its own BreakerFile on one path (two processes), against a
fake source on 127.0.0.1. A source one process found down is refused by the other without a
request, for the reset time; then one trial decides for both. With Redis configured the
breaker lives there, and in the file while Redis cannot be reached. Two `researchbot ask`
processes in a row: the second makes no connection to the source the first found failing."""

import asyncio
import logging
import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from core.answer.grading import outage_notes
from core.errors import SourceError, SourceUnreachableError
from core.models import QueryIntent
from core.research.planning import PlannedQuery, ResearchPlan
from core.research.search import run_search
from core.sources.breaker import CircuitBreaker
from core.sources.breaker_file import BreakerFile
from core.sources.policy import SourcePolicy
from core.sources.protocol import SearchQuery
from core.sources.searxng import SearxngSource
from core.sources.shared_limits import SharedLimits
from tests.support import PROJECT
from tests.support.clock import FakeClock
from tests.support.fake_web import Article, Failure, FakeWeb
from tests.support.services import REDIS_URL, redis_server

pytestmark = pytest.mark.integration

EXAMPLE_DOCS = PROJECT / "examples" / "docs"


@pytest.fixture
async def fake() -> AsyncIterator[FakeWeb]:
    server = FakeWeb()
    await server.start()
    server.articles = [Article(title="Domestic cat", url=f"{server.base}/pages/cat",
                               text="Domestic cats sleep between 12 and 16 hours a day.")]
    yield server
    await server.stop()



@pytest.fixture
def files(tmp_path: Path, clock: FakeClock) -> Iterator[list[BreakerFile]]:
    """Two processes' view of one data dir's breakers."""
    opened = [BreakerFile(tmp_path / "source-breakers.sqlite3", clock=clock) for _ in range(2)]
    yield opened
    for file in opened:
        file.close()


def _policy(**options: Any) -> SourcePolicy:
    values: dict[str, Any] = {"timeout_s": 2.0, "attempts": 1, "backoff_s": 0.05,
                              "rate_per_s": 100.0, "breaker": CircuitBreaker(2, 60)}
    return SourcePolicy("searxng", **(values | options))


def _searx(url: str, session: aiohttp.ClientSession, policy: SourcePolicy) -> SearxngSource:
    return SearxngSource(session, policy, url + "/searx")


def _query(text: str = "domestic cat") -> SearchQuery:
    return SearchQuery(text=text, tenant="t", limit=5, intent=QueryIntent())


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_a_breaker_opened_in_one_process_is_open_in_the_other_for_its_reset_time(
    fake: FakeWeb, session: Any, files: list[BreakerFile], clock: FakeClock,
) -> None:
    first, second = (_searx(fake.base, session, _policy(breakers=file)) for file in files)
    fake.fail("/searx/search", Failure(500), Failure(500))
    for _ in range(2):
        with pytest.raises(SourceError, match="HTTP 500"):
            await first.search(_query())
    with pytest.raises(SourceError, match="circuit open") as paused:
        await second.search(_query())
    assert paused.value.status == 500  # the failure that opened it, told in either process
    clock.advance(59)
    with pytest.raises(SourceError, match="circuit open"):
        await second.search(_query())
    assert len(fake.hits) == 2
    # The rest is over: one process's trial goes out, the other's call is refused meanwhile.
    clock.advance(2)
    fake.hold("/searx/search")
    trial = asyncio.create_task(second.search(_query()))
    await fake.requested("/searx/search", times=3)
    with pytest.raises(SourceError, match="circuit open"):
        await first.search(_query("domestic cat again"))
    fake.release("/searx/search")
    assert await trial
    assert await first.search(_query("domestic cat again"))  # the trial closed it for both
    assert len(fake.hits) == 4


async def test_a_failed_trial_rests_the_source_another_reset_time_everywhere(
    fake: FakeWeb, session: Any, files: list[BreakerFile], clock: FakeClock,
) -> None:
    first, second = (_searx(fake.base, session, _policy(breakers=file)) for file in files)
    fake.fail("/searx/search", *[Failure(503)] * 3)
    for source in (first, second):  # the failure count is shared: one each opens it
        with pytest.raises(SourceError, match="HTTP 503"):
            await source.search(_query())
    clock.advance(61)
    with pytest.raises(SourceError, match="HTTP 503"):  # the trial
        await first.search(_query())
    clock.advance(59)
    with pytest.raises(SourceError, match="circuit open"):
        await second.search(_query())
    assert len(fake.hits) == 3
    clock.advance(2)
    assert await second.search(_query())


async def test_a_source_one_process_cannot_reach_is_not_called_by_the_next(
    fake: FakeWeb, session: Any, files: list[BreakerFile],
) -> None:
    unreachable = _searx(f"http://127.0.0.1:{_closed_port()}", session,
                         _policy(breakers=files[0]))
    with pytest.raises(SourceUnreachableError):  # the first "cannot connect" opens it
        await unreachable.search(_query())
    # The next process would reach it: still it waits out the reset time, and says why.
    later = _searx(fake.base, session, _policy(breakers=files[1]))
    plan = ResearchPlan(queries=[PlannedQuery(text="domestic cat", purpose="",
                                              sources=["searxng"])])
    outcome = await run_search(plan, {"searxng": later}, "t", QueryIntent(), 5, 5.0)
    assert fake.hits == []
    assert [f.kind for f in outcome.failures] == ["unreachable"]
    assert outage_notes(outcome.failures) == [
        "The web (SearXNG) could not be reached, so its results are missing from this answer."]


async def test_a_failure_count_nobody_added_to_for_an_hour_is_forgotten(
    fake: FakeWeb, session: Any, files: list[BreakerFile], clock: FakeClock,
) -> None:
    first, second = (_searx(fake.base, session, _policy(breakers=file)) for file in files)
    fake.fail("/searx/search", Failure(500), Failure(500))
    with pytest.raises(SourceError, match="HTTP 500"):
        await first.search(_query())
    clock.advance(3600)
    with pytest.raises(SourceError, match="HTTP 500"):
        await second.search(_query())
    assert await first.search(_query())  # one failure in a row, not two: still closed
    assert len(fake.hits) == 3


async def test_a_file_that_cannot_be_used_leaves_each_process_its_own_breaker(
    fake: FakeWeb, session: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="core.sources.breaker_file")
    file = BreakerFile(tmp_path)  # a folder: SQLite cannot open it
    policy = _policy(breakers=file, breaker=CircuitBreaker(1, 60))
    source = _searx(fake.base, session, policy)
    assert await source.search(_query())
    fake.fail("/searx/search", Failure(500))
    with pytest.raises(SourceError, match="HTTP 500"):
        await source.search(_query("domestic cat again"))
    assert policy.breaker.state == "open"  # this process's breaker took over
    with pytest.raises(SourceError, match="circuit open"):
        await source.search(_query("domestic cat once more"))
    assert len(fake.hits) == 2
    warned = [r for r in caplog.records if r.name == "core.sources.breaker_file"]
    assert len(warned) == 1 and str(tmp_path) in warned[0].getMessage()


async def test_a_file_that_cannot_be_used_is_tried_again_after_a_rest(
    fake: FakeWeb, session: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="core.sources.breaker_file")
    path = tmp_path / "source-breakers.sqlite3"
    path.mkdir()  # a folder where the file should be: SQLite cannot open it
    rest = FakeClock()
    file = BreakerFile(path, rest_clock=rest, rest_s=30)
    source = _searx(fake.base, session, _policy(breakers=file))
    assert await source.search(_query())  # this process's breaker let it through
    path.rmdir()
    rest.advance(29)
    assert await source.search(_query("domestic cat again"))
    assert not path.exists()  # still resting: the file is left alone
    rest.advance(1)
    assert await source.search(_query("domestic cat once more"))
    assert path.is_file()
    told = [r.getMessage() for r in caplog.records if r.name == "core.sources.breaker_file"]
    assert len(told) == 2 and "usable again" in told[1]
    file.close()


async def test_with_redis_the_breaker_is_shared_there_and_in_the_file_while_it_is_away(
    fake: FakeWeb, session: Any, files: list[BreakerFile], tmp_path: Path, clock: FakeClock,
) -> None:
    async with redis_server() as first_redis:
        second_redis = Redis.from_url(REDIS_URL)
        try:
            first, second = (
                _searx(fake.base, session, _policy(breakers=file,
                                                   shared=SharedLimits(redis, clock=clock)))
                for file, redis in zip(files, (first_redis, second_redis), strict=True))
            fake.fail("/searx/search", Failure(500), Failure(500))
            for source in (first, second):
                with pytest.raises(SourceError, match="HTTP 500"):
                    await source.search(_query())
            with pytest.raises(SourceError, match="circuit open"):
                await first.search(_query())
            assert await first_redis.exists("researchbot:sources:breaker:searxng")
        finally:
            await second_redis.aclose()
    # Redis is the one store while it answers: the data dir's file is not even opened.
    assert not (tmp_path / "source-breakers.sqlite3").exists()
    # While Redis cannot be reached, the processes share the breaker through the file.
    away = [Redis.from_url(f"redis://127.0.0.1:{_closed_port()}/0", socket_connect_timeout=1.0,
                           socket_timeout=1.0, retry=Retry(NoBackoff(), 1)) for _ in files]
    try:
        first, second = (
            _searx(fake.base, session, _policy(breakers=file, breaker=CircuitBreaker(1, 60),
                                               shared=SharedLimits(redis, clock=clock)))
            for file, redis in zip(files, away, strict=True))
        fake.fail("/searx/search", Failure(500))
        with pytest.raises(SourceError, match="HTTP 500"):
            await first.search(_query("domestic cat away"))
        with pytest.raises(SourceError, match="circuit open"):
            await second.search(_query("domestic cat away"))
        assert len(fake.hits) == 3
    finally:
        for redis in away:
            await redis.aclose()






