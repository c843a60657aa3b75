"""The queue engine, measured: SAQ on Redis against SAQ on PostgreSQL, the two servers a
deployment already runs.

    .venv/bin/python bench/queue_engines.py [--jobs 2000]

For each engine: enqueue N jobs (each sleeps 50 ms, as a stand-in for a job's I/O), one
worker at concurrency 20 runs them; prints enqueue time per job, jobs a second, and the
pickup latency (enqueue to start) of single jobs on an idle queue (p50/p99 of 50). SAQ on
PostgreSQL needs psycopg[pool] (`pip install "psycopg[binary,pool]"`; not a dependency of
researchbot: its row is skipped without it). Uses Redis database 15 and the PostgreSQL
database `test`, like the tests.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from saq import Queue, Worker

from bench.tables import table

REDIS = "redis://127.0.0.1:6379/15"
POSTGRES = "postgresql://postgres@127.0.0.1:5432/test"


async def measure(name: str, url: str, jobs: int) -> list[Any]:
    queue = Queue.from_url(url, name=f"bench-{int(time.time())}")
    await queue.connect()
    started: dict[int, float] = {}
    arrived = asyncio.Event()

    async def work(ctx: dict[str, Any], *, n: int) -> None:
        started[n] = time.perf_counter()
        arrived.set()
        await asyncio.sleep(0.05)

    async def until(done: Any) -> None:
        while not done():
            arrived.clear()
            await arrived.wait()

    worker = Worker(queue, [("work", work)], concurrency=20, dequeue_timeout=0.5)
    worker.SIGNALS = []
    running = asyncio.create_task(worker.start())
    await asyncio.sleep(1.0)
    try:
        pickups = []
        for n in range(50):  # one at a time on an idle queue
            sent = time.perf_counter()
            await queue.enqueue("work", n=-1 - n, key=f"p{n}", timeout=10)
            await until(lambda n=n: -1 - n in started)
            pickups.append(started[-1 - n] - sent)
        begin = time.perf_counter()
        for n in range(jobs):
            await queue.enqueue("work", n=n, key=f"j{n}", timeout=10)
        enqueued = time.perf_counter() - begin
        await until(lambda: sum(1 for k in started if k >= 0) >= jobs)
        await asyncio.sleep(0.06)  # the last jobs' own 50 ms
        total = time.perf_counter() - begin
    finally:
        await worker.stop()
        running.cancel()
        with contextlib.suppress(BaseException):
            await running
        await queue.disconnect()
    pickups.sort()
    return [name, jobs, round(enqueued / jobs * 1000, 3), round(jobs / total, 1),
            round(pickups[len(pickups) // 2] * 1000, 1), round(pickups[-1] * 1000, 1)]


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=2000)
    args = parser.parse_args()
    rows = [await measure("SAQ on Redis", REDIS, args.jobs)]
    try:
        import psycopg_pool  # noqa: F401
    except ImportError:
        print("psycopg[pool] not installed: SAQ on PostgreSQL skipped", file=sys.stderr)
    else:
        rows.append(await measure("SAQ on PostgreSQL", POSTGRES, args.jobs))
    table(f"Queue engines ({args.jobs} jobs of 50 ms, one worker at concurrency 20)",
          ["engine", "jobs", "enqueue ms/job", "jobs/s", "pickup p50 ms", "pickup max ms"],
          rows)


if __name__ == "__main__":
    asyncio.run(main())
