"""Prometheus metrics of the research core, and their exposition (`render_metrics`).

    pipeline_stage_duration_seconds{stage}          histogram: each pipeline stage of a job
    search_provider_latency_seconds{provider}       histogram: each call a search source made
    search_provider_errors_total{provider,kind}     a source call that failed, by kind
    llm_tokens_used_total{model,role}               prompt + completion tokens, by model and role
    llm_cost_usd_total{model}                       litellm's price of those calls
    cache_lookups_total{result}                     semantic answer cache: hit or miss
    cache_errors_total{operation}                   cache look-ups and writes that failed
                                                    (skipped: researched or kept anyway)
    job_results_unsaved_total                       answers delivered although their job row
                                                    could not be written yet
    source_fetch_total{outcome}                     web pages read behind search hits
    jobs_total{status,platform}                     jobs ended: completed, failed, cancelled
    delivery_failures_total{platform}               answers that could not be posted
    queue_depth{queue}                              jobs waiting on each queue (at scrape time)

The collectors are module-level objects in prometheus_client's default registry, unlike the
rest of the core, which is handed its resources. That is the library's idiom and fits what a
metric is: a process-wide tally that many places add to (a source's policy, the gateway, the
job service) and one place reads (`render_metrics`, behind /metrics). Handing a registry down
every path would thread an object through the whole core for no gain in isolation: tests read
the process's values before and after (`REGISTRY.get_sample_value`), as a scrape would. Only
the queue depth is read, not counted: it lives in Redis and is refreshed at each scrape.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Protocol

from prometheus_client import CONTENT_TYPE_LATEST, Counter, Gauge, Histogram, generate_latest

log = logging.getLogger(__name__)

# A stage runs from milliseconds (the cache) to minutes (a deep research round).
_STAGE_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300,
                  600)
_CALL_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30)
QUEUE_STATS_TIMEOUT_S = 2.0

STAGE_DURATION = Histogram(
    "pipeline_stage_duration_seconds", "Time each pipeline stage of a job took.", ["stage"],
    buckets=_STAGE_BUCKETS)
PROVIDER_LATENCY = Histogram(
    "search_provider_latency_seconds", "Time of each request attempt a search source "
    "answered or failed (retries are attempts of their own; answers from the response cache "
    "and calls never sent are not counted).", ["provider"],
    buckets=_CALL_BUCKETS)
PROVIDER_ERRORS = Counter(
    "search_provider_errors_total", "Calls to a search source that failed, by kind: "
    "unreachable, timeout, busy, too_large, dropped, rate_limited, refused, http_4xx, "
    "http_5xx, paused (circuit open), error.", ["provider", "kind"])
LLM_TOKENS = Counter(
    "llm_tokens_used_total", "Tokens (prompt and completion) of model calls, by model and "
    "role (fast, strong).", ["model", "role"])
LLM_COST = Counter("llm_cost_usd_total", "Cost of model calls in US dollars (litellm's price "
                   "table; 0 for models it does not price).", ["model"])
CACHE_LOOKUPS = Counter("cache_lookups_total", "Semantic answer cache look-ups.", ["result"])
CACHE_ERRORS = Counter(
    "cache_errors_total", "Answer cache operations that failed and were skipped, by operation: "
    "lookup (the question was researched as new), store (the answer was delivered uncached).",
    ["operation"])
UNSAVED_RESULTS = Counter(
    "job_results_unsaved_total", "Finished answers whose job row could not be written when "
    "they were ready: delivered and returned anyway, written once the database takes writes.")
SOURCE_FETCHES = Counter(
    "source_fetch_total", "Web pages read behind search hits, by outcome: ok, blocked, robots, "
    "too_large, timeout, http_error, not_a_page, error.", ["outcome"])
JOBS = Counter("jobs_total", "Jobs that ended, by status (completed, failed, cancelled) and "
               "platform.", ["status", "platform"])
DELIVERY_FAILURES = Counter(
    "delivery_failures_total", "Answers (or failure notices) that could not be delivered "
    "after their retries.", ["platform"])
QUEUE_DEPTH = Gauge("queue_depth", "Jobs waiting on each job queue.", ["queue"])


class QueuedCount(Protocol):
    @property
    def queued(self) -> int: ...


class CountedQueues(Protocol):
    """What the queue depth is read from (core.jobs.queue.JobQueue)."""

    async def stats(self) -> Mapping[str, QueuedCount]: ...


async def render_metrics(queue: CountedQueues | None = None) -> tuple[bytes, str]:
    """The exposition of every metric and its content type, for GET /metrics. With `queue`,
    its depth is read first; a queue that cannot be read drops the gauge's samples (a stale
    depth would mislead more than none) and the rest is served anyway."""
    if queue is not None:
        await refresh_queue_depth(queue)
    return generate_latest(), CONTENT_TYPE_LATEST


async def refresh_queue_depth(queue: CountedQueues) -> None:
    from redis.exceptions import RedisError  # loaded with the queue that raises it

    try:
        async with asyncio.timeout(QUEUE_STATS_TIMEOUT_S):
            stats = await queue.stats()
    except (RedisError, OSError, TimeoutError) as error:
        log.warning("queue depth not read: %s: %s", type(error).__name__, error)
        QUEUE_DEPTH.clear()
        return
    for name, counts in stats.items():
        QUEUE_DEPTH.labels(name).set(counts.queued)


def count_model_call(model: str, role: str, tokens: int, cost_usd: float) -> None:
    LLM_TOKENS.labels(model, role).inc(tokens)
    LLM_COST.labels(model).inc(cost_usd)
