"""What the chat feedback tests share: waiting for ratings to be stored and for the chat
library's event handlers to end, and reading the answer-page link out of a posted message."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any

from sqlalchemy import select

from core.store.access import ShareLinks
from core.store.database import job_feedback
from core.store.feedback import Feedback, FeedbackStore

PUBLIC_URL = "https://research.example.com/base"
_PAGE = re.compile(re.escape(PUBLIC_URL) + r"/jobs/([0-9a-z]+)\?token=([0-9a-f]+)")


async def ratings_become(engine: Any, job_id: str, wanted: list[tuple[str, str]],
                         within_s: float = 10.0) -> list[Feedback]:
    """The job's feedback once it is `wanted` (rater, rating) pairs; fails after `within_s`."""
    store = FeedbackStore(engine)
    found: list[Feedback] = []
    async with asyncio.timeout(within_s):
        while True:
            found = await store.for_job(job_id)
            if sorted((f.rater, f.rating.value) for f in found) == sorted(wanted):
                return found
            await asyncio.sleep(0.05)


def slack_listener(task: asyncio.Task[Any]) -> bool:
    """A bolt listener, run in a task of its own once its event was acknowledged."""
    name = getattr(task.get_coro(), "__qualname__", "")
    return name.endswith("run_ack_function_asynchronously")


def discord_handler(task: asyncio.Task[Any]) -> bool:
    """A discord.py event handler (`on_...`), which runs in a task it names."""
    return task.get_name().startswith("discord.py: on_")


async def handlers_ended(is_handler: Callable[[asyncio.Task[Any]], bool],
                         within_s: float = 10.0) -> None:
    """Wait until no event handler is running (`is_handler` picks out their tasks): all
    that the events delivered so far would store is stored."""
    async with asyncio.timeout(within_s):
        while running := [t for t in asyncio.all_tasks() if is_handler(t) and not t.done()]:
            await asyncio.wait(running)


async def every_rating(engine: Any) -> list[tuple[str, str, str]]:
    """(job, rater, rating) of every stored rating, whatever the job."""
    async with engine.connect() as connection:
        rows = (await connection.execute(select(job_feedback))).all()
    return sorted((row.job_id, row.rater, row.rating) for row in rows)


async def assert_signed_page_link(engine: Any, text: str, job_id: str) -> None:
    """`text` links to the job's answer page with a token that the page would accept."""
    match = _PAGE.search(text)
    assert match is not None, text
    assert match.group(1) == job_id
    links = await ShareLinks.load(engine)
    assert links.check(job_id, match.group(2))
    assert not links.check("another-job", match.group(2))
