"""Metrics from the bot's own processes: a worker's metrics server moving with its jobs, and the
design's series after a few questions, checked against the Prometheus rules (system tier)."""


import json
from pathlib import Path

import aiohttp
import pytest

from bot.wiring import build_jobs
from core.config import QueueSettings
from core.jobs.queue import QUICK, JobQueue
from core.models import ResearchRequest
from tests.core.test_metrics import (  # noqa: F401 (fixtures, by parameter name)
    QUESTION,
    TEA,
    Scrape,
    _ask,
    _moved_between,
    _parsed,
    _scrape,
    store,
    web,
)
from tests.support.cluster import cluster, free_port, wait_until
from tests.support.fake_web import Failure, FakeWeb
from tests.support.promtool import promtool, rule_test
from tests.support.services import POSTGRES_URL, REDIS_URL

pytestmark = pytest.mark.system


async def test_a_worker_serves_metrics_that_move_with_its_jobs(tmp_path: Path) -> None:
    from sqlalchemy.ext.asyncio import create_async_engine

    port = free_port()
    async with cluster(tmp_path, "T1") as running:
        worker = await running.worker("worker", RESEARCHBOT_QUEUE__METRICS_PORT=str(port),
                                      RESEARCHBOT_LOG__FORMAT="json")
        engine = create_async_engine(POSTGRES_URL)
        queue = JobQueue(REDIS_URL, QueueSettings())
        await queue.connect()
        try:
            service = build_jobs(None, engine, queue=queue)
            job_id = await service.submit(ResearchRequest(question=QUESTION, tenant="T1"))

            async def ended() -> bool:  # its end told (and counted), not just stored
                events = await service.stored_events(job_id)
                return bool(events) and events[-1].kind == "completed"

            await wait_until(ended, within_s=120)
            async with aiohttp.ClientSession() as http, \
                    http.get(f"http://127.0.0.1:{port}/metrics") as response:
                assert response.status == 200
                metrics = _parsed(await response.read())
        finally:
            await queue.close()
            await engine.dispose()
    assert metrics[("jobs_total", (("platform", "cli"), ("status", "completed")))] == 1
    for stage in ("intake", "search", "deliver"):
        assert metrics[("pipeline_stage_duration_seconds_count", (("stage", stage),))] == 1
    assert metrics[("queue_depth", (("queue", QUICK),))] == 0
    # The research ran in the worker: its loop is timed and its rounds counted there.
    for counted in ("research_loop_duration_seconds_count", "iterations_per_request_count"):
        assert sum(value for (name, _), value in metrics.items() if name == counted) == 1
    assert sum(value for (name, _), value in metrics.items()
               if name == "iterations_per_request_sum") >= 1
    # The worker logs JSON: a line a stage, naming the job and its tenant, not the question.
    lines = [json.loads(line) for line in worker.text().splitlines() if line.strip()]
    stages = [line for line in lines if "duration_ms" in line]
    assert {line["stage"] for line in stages} >= {"intake", "search", "deliver"}
    assert all(line["job_id"] == job_id and line["tenant"] == "T1" for line in stages)
    assert QUESTION not in worker.text()


async def test_the_designs_series_after_a_few_questions(
    store: Path, web: FakeWeb, tmp_path: Path,
) -> None:
    """Three questions through the API server, Wikipedia failing every search and SearXNG
    finding pages (one of them refused by robots.txt): one answer is a repeat from the cache.
    The scrape shows two research runs timed and their rounds counted, each failed
    Wikipedia search counted once, and the recording rules, evaluated by promtool over the
    scraped counters, give the hit and fetch rates the scrape implies."""
    from tests.support.api_harness import api_settings, running_api

    web.fail("/w/api.php", *[Failure(status=503)] * 100)
    settings = api_settings(store, pipeline={"local_only": False}, sources={
        "wikipedia_api": f"{web.base}/w/api.php", "arxiv": False, "pubmed": False,
        "searxng_url": f"{web.base}/searx", "trusted_pages": [web.base],
        "cache_ttl_hours": 0, "attempts": 1, "breaker_failures": 1000})
    async with running_api(settings) as api, api.client() as client:
        before = await _scrape(client)
        for question in (QUESTION, QUESTION, TEA):
            await _ask(client, question, depth="quick")
        after = await _scrape(client)
    moved_by = _moved_between(before, after)

    # Two research runs: the repeat was answered from the cache and ran no loop.
    assert moved_by("research_loop_duration_seconds_count", depth="quick") == 2
    assert moved_by("research_loop_duration_seconds_sum", depth="quick") > 0
    assert moved_by("iterations_per_request_count", depth="quick") == 2
    assert moved_by("iterations_per_request_sum", depth="quick") >= 2
    assert moved_by("iterations_per_request_bucket", depth="quick", le="0.0") == 0
    assert moved_by("cache_lookups_total", result="hit") == 1
    assert moved_by("cache_lookups_total", result="miss") == 2
    # Every Wikipedia search failed, once each (no retries): as many as the fake answered,
    # and as many as the attempts the provider metric counts.
    wikipedia_calls = web.hit_paths().count("/w/api.php")
    assert wikipedia_calls >= 2
    assert moved_by("search_failures_total", source="wikipedia", kind="error") \
        == wikipedia_calls
    assert moved_by("search_provider_errors_total", provider="wikipedia", kind="http_5xx") \
        == wikipedia_calls
    assert moved_by("search_failures_total", source="searxng", kind="error") == 0
    assert moved_by("source_fetch_total", outcome="ok") >= 1
    assert moved_by("source_fetch_total", outcome="robots") >= 1
    _rules_agree(tmp_path, before, after)


def _rules_agree(folder: Path, before: Scrape, after: Scrape) -> None:
    """The recording rules over the scraped counters, as a Prometheus scraping the server a
    minute apart would have stored them (the questions asked between two scrapes), give the
    rates the scrape implies."""
    moved: dict[str, dict[str, float]] = {"cache_lookups_total": {},
                                          "source_fetch_total": {}}
    series: dict[str, list[float]] = {}
    for (name, labels), value in after.items():
        if name not in moved:
            continue
        earlier = before.get((name, labels), 0.0)
        moved[name][dict(labels).get("result") or dict(labels)["outcome"]] = value - earlier
        # The questions land between minutes 7 and 8, inside the 5-minute window at 10;
        # an offset keeps rate() from extrapolating a counter below zero.
        selector = name + "{" + ",".join(f'{k}="{v}"' for k, v in labels) + "}"
        series[selector] = [1000 + earlier] * 8 + [1000 + value] * 3
    lookups, fetches = moved["cache_lookups_total"], moved["source_fetch_total"]
    test = rule_test(folder, series, {
        "researchbot:cache_hit_rate:ratio_rate5m": lookups["hit"] / sum(lookups.values()),
        "researchbot:source_fetch_success_rate:ratio_rate5m":
            fetches["ok"] / sum(fetches.values())})
    tested = promtool("test", "rules", str(test))
    assert tested.returncode == 0, tested.stdout + tested.stderr
