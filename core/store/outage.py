"""Whether a database failure means the database is away for now (down, restarting, its disk
full), so that the request or write is worth making again later, rather than a bug.

    store_outage(error) -> StoreUnavailableError | None     what the caller is told (503)
    outlast(write, give_up_after_s)                          a write retried through an outage

SQLAlchemy, asyncpg and aiosqlite each say it their own way: a connection dropped mid-query
is a DBAPIError whose connection was invalidated, a server starting up SQLSTATE 57P03, a full
SQLite file "database or disk is full"; a connection refused (asyncpg's bare OSError) is made
a StoreUnavailableError where the engine connects (core.store.database)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterator
from typing import TypeVar

from sqlalchemy.exc import DBAPIError

from core.errors import StoreUnavailableError
from core.store.full_disk import says_disk_full

log = logging.getLogger(__name__)

T = TypeVar("T")

AWAY = "the job database is unavailable (restarting or unreachable); try again shortly"
FULL = "the job database cannot write: its disk is full"

# SQLSTATE classes of a server that is away: 08 connection exception, 57P operator
# intervention (shutting down, starting up), 53 insufficient resources (disk, connections).
_AWAY_STATES = ("08", "57P", "53")


def store_outage(error: BaseException) -> StoreUnavailableError | None:
    """The outage `error` is a sign of, as the one error callers handle; None for anything
    else (a bug, a constraint, a bad query: those stay what they are)."""
    if says_disk_full(error):
        return StoreUnavailableError(FULL, retry_after_s=60.0)
    for link in _chain(error):
        if isinstance(link, StoreUnavailableError):
            return link
        if isinstance(link, DBAPIError) and link.connection_invalidated:
            return StoreUnavailableError(AWAY)
        state = getattr(link, "sqlstate", None)
        if isinstance(state, str) and state.startswith(_AWAY_STATES):
            return StoreUnavailableError(AWAY)
    return None


async def outlast(write: Callable[[], Awaitable[T]], give_up_after_s: float,
                  first_wait_s: float = 0.25, what: str = "a job write") -> T:
    """`write()`, made again with growing waits (to 5 s) while the database is away, for up
    to `give_up_after_s`; then the StoreUnavailableError. Other errors at once."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + give_up_after_s
    wait_s = first_wait_s
    while True:
        try:
            return await write()
        except Exception as error:
            outage = store_outage(error)
            if outage is None:
                raise
            if loop.time() + wait_s > deadline:
                raise outage from error
            log.warning("%s waits for the database: %s", what, outage)
        await asyncio.sleep(wait_s)
        wait_s = min(5.0, wait_s * 2)


def _chain(error: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    link: BaseException | None = error
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        yield link
        orig = getattr(link, "orig", None)  # SQLAlchemy's wrapped driver error
        if isinstance(orig, BaseException) and id(orig) not in seen:
            yield orig
            seen.add(id(orig))
            link = orig.__cause__ or orig.__context__
            continue
        link = link.__cause__ or link.__context__
