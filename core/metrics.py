"""Prometheus metrics of the research core, and their exposition (`render_metrics`).

    pipeline_stage_duration_seconds{stage}          histogram: each pipeline stage of a job
    search_provider_latency_seconds{provider}       histogram: each call a search source made
    search_provider_errors_total{provider,kind}     a source call that failed, by kind
    search_failures_total{source,kind}              a source's search for one query that failed
    research_loop_duration_seconds{depth}           histogram: a research run, reading to grade
    iterations_per_request{depth}                   histogram: the search rounds a run took
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

Rates are not exported: Prometheus computes them from the counters. deploy/prometheus/rules.yml
records the cache's hit rate and the page fetches' success rate from `cache_lookups_total` and
`source_fetch_total` (deploy/README.md names the series).

A research run is counted once, by the engine, when it has an answer (of any confidence): an
answer served from the cache ran no research and is counted only by `cache_lookups_total`; a
run that failed or was cancelled only by `jobs_total`. `depth` is the tier it ran under, or
`improve` for the revision of an earlier answer (at most one round, and none when the
feedback needs no new search), which would otherwise pull the quick tier's figures down.
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
# Search rounds: one bucket a round up to the deep tier's 10, coarser up to the settings' 50.
_ROUND_BUCKETS = (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 15, 20, 30, 50)
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
SEARCH_FAILURES = Counter(
    "search_failures_total", "Searches of one source for one query that failed for good, "
    "by source and kind (unreachable, timeout, busy, too_large, rate_limited, refused, "
    "error): each is a source failure in the research trace, which the answer reports as "
    "an outage. Unlike search_provider_errors_total, which counts every failed request "
    "attempt (retries and calls refused while the source is paused included), a search "
    "that failed and then succeeded on a retry is not counted here.", ["source", "kind"])
RESEARCH_LOOP_DURATION = Histogram(
    "research_loop_duration_seconds", "Time a research run took from its reading of the "
    "question (the model's, when there is one) to its graded answer (not the queue wait, the "
    "intake, the cache look-up or saving), by "
    "depth: the tier (quick, standard, deep), or improve for the revision of an earlier "
    "answer. Counted when the run has an answer: answers served from the cache, and runs "
    "that failed or were cancelled, are not research runs here.", ["depth"],
    buckets=_STAGE_BUCKETS)
ITERATIONS = Histogram(
    "iterations_per_request", "Search rounds a research run took, by depth (as "
    "research_loop_duration_seconds counts runs).", ["depth"], buckets=_ROUND_BUCKETS)
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


def count_research_run(depth: str, seconds: float, rounds: int) -> None:
    RESEARCH_LOOP_DURATION.labels(depth).observe(seconds)
    ITERATIONS.labels(depth).observe(rounds)
