"""The HTTP API (`researchbot serve`) against the job service it wraps.

    .venv/bin/python bench/api.py [--quick] [--jobs 20] [--fan-out-jobs 3] [--seconds 10]

The server is a `researchbot serve` process on 127.0.0.1, over a copy of the store the
in-process job service uses; both have the same settings: a small
knowledge base (tests/conftest.py CORPUS) and Wikipedia, a fake on 127.0.0.1 whose every call
takes a fixed time, the answer cache bypassed so every job really researches. The client is
httpx in this process.

1. Overhead: a job through POST /v1/research and its Server-Sent Events up to the `result`
   event, against the same job through JobService in this process (submit, follow its events
   to the end, read the job), Wikipedia at 300 ms; --jobs of each, alternating. Target: p50
   ratio API / in process at most 1.05.
2. SSE fan-out: 50 and 200 listeners on one running job's events (Wikipedia at 2 s keeps it
   running while they connect); for each event stored after every listener was connected,
   the time from its `at` (when the server stored it; same machine, same clock) to the first
   and to the last listener receiving it, and from the terminal event to the last listener
   receiving the `result` event.
3. GET /v1/jobs/{id} of a finished job: 20 clients back to back for --seconds; requests per
   second and latency. With `wrk` installed, wrk's figures as a second opinion.
4. Cache hits: 1, 5 and 20 clients back to back for --seconds, each asking the question
   already answered (POST /v1/research, then its events up to the `result` event); hits per
   second, POST latency and completion latency (POST to `result`). Targets: 20 clients at
   least 100 hits/s with completion p99 under 150 ms; 5 clients' p99 at most 1.2x one
   client's.

`--only 4` runs the named sections (comma-separated). `--before DIR` (4 only): the same
against a second server running the code in DIR (an earlier checkout, e.g. `git worktree add
DIR REV`) over a copy of the same data, the two taking turns for --rounds rounds of --seconds
at each client count, so that other load on the machine falls on both alike.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
import psutil

from bench.tables import table
from tests.support import researchbot
from tests.support.api_harness import read_events
from tests.support.cluster import free_port
from tests.support.corpus import write_documents
from tests.support.fake_web import Article, FakeWeb

REPO = Path(__file__).resolve().parent.parent
QUESTION = "How many hours a day do cats sleep?"
TENANT = "bench"
WIKIPEDIA = "/w/api.php"
UNLIMITED = httpx.Limits(max_connections=None, max_keepalive_connections=None)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


def settings_env(data_dir: Path, web: FakeWeb) -> dict[str, str]:
    """The settings both paths run with, as `researchbot serve` reads them."""
    return {
        "RESEARCHBOT_DATA_DIR": str(data_dir), "RESEARCHBOT_TENANT": TENANT,
        "RESEARCHBOT_PIPELINE__LOCAL_ONLY": "false",
        "RESEARCHBOT_ENDPOINTS__WIKIPEDIA_API": f"{web.base}{WIKIPEDIA}",
        "RESEARCHBOT_SOURCES__ARXIV": "false", "RESEARCHBOT_SOURCES__PUBMED": "false",
        "RESEARCHBOT_ADVANCED__SOURCES__CACHE_TTL_HOURS": "0",
        "RESEARCHBOT_ADVANCED__SOURCES__FETCH_PAGES": "0",
        "RESEARCHBOT_ADVANCED__SOURCES__RATE_PER_SECOND": "1000",
        "RESEARCHBOT_ADVANCED__WEB__QUESTIONS_PER_MINUTE": "100000",
        "RESEARCHBOT_ADVANCED__WEB__TENANT_QUESTIONS_PER_MINUTE": "100000",
        "RESEARCHBOT_LOG__LEVEL": "WARNING",
    }


def index(root: Path, env: dict[str, str]) -> None:
    docs = write_documents(root / "docs")
    done = researchbot.run("index", str(docs), cwd=root, env={**os.environ, **env}, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"indexing failed: {done.stderr[-2000:]}")


@dataclass
class Server:
    url: str
    pid: int


@contextlib.asynccontextmanager
async def serve(root: Path, env: dict[str, str]) -> Any:
    """`researchbot serve` on a free loopback port, once /healthz answers."""
    port = free_port()
    async with researchbot.running("serve", "--host", "127.0.0.1", "--port", str(port),
                                   log=root / "serve.log", env={**os.environ, **env},
                                   cwd=root) as process:
        url = f"http://127.0.0.1:{port}"
        await process.wait_for_http(f"{url}/healthz")
        yield Server(url, process.handle.pid)


# ---- 1. overhead -----------------------------------------------------------------------------

async def through_api(client: httpx.AsyncClient) -> tuple[float, float, str]:
    """Seconds to the `result` event, seconds to the 202, and the job's id."""
    started = time.perf_counter()
    accepted = await client.post("/v1/research", json={"question": QUESTION,
                                                       "bypass_cache": True})
    posted = time.perf_counter() - started
    assert accepted.status_code == 202, accepted.text
    body = accepted.json()
    async with client.stream("GET", body["links"]["events"]) as response:
        assert response.status_code == 200
        async for event in read_events(response):
            if event.get("event") == "result":
                assert json.loads(event["data"])["status"] == "completed", event["data"]
                break
        else:
            raise AssertionError("the stream closed without a result")
    return time.perf_counter() - started, posted, body["job_id"]


async def in_process(jobs: Any) -> float:
    from core.models import JobStatus, ResearchRequest

    started = time.perf_counter()
    job_id = await jobs.submit(ResearchRequest(question=QUESTION, tenant=TENANT,
                                               bypass_cache=True))
    async for _ in jobs.events(job_id):
        pass
    job = await jobs.result(job_id)
    assert job.status == JobStatus.COMPLETED, job.error
    return time.perf_counter() - started


async def overhead(url: str, jobs: Any, web: FakeWeb, count: int) -> tuple[list[list[Any]],
                                                                          str]:
    web.latency = {WIKIPEDIA: 0.3}
    api: list[float] = []
    posts: list[float] = []
    local: list[float] = []
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        for _ in range(2):  # warm: the first jobs load models and open connections
            _, _, job_id = await through_api(client)
            await in_process(jobs)
        for n in range(count):  # alternating, the order swapped every other pair
            first, second = (through_api(client), in_process(jobs)) if n % 2 == 0 \
                else (in_process(jobs), through_api(client))
            for outcome in (await first, await second):
                if isinstance(outcome, tuple):
                    api.append(outcome[0])
                    posts.append(outcome[1])
                else:
                    local.append(outcome)
    ratio = statistics.median(api) / statistics.median(local)
    rows: list[list[Any]] = [
        ["in process (JobService)", count, ms(statistics.median(local)),
         ms(percentile(local, 0.9)), ms(min(local)), "-"],
        ["HTTP API (POST + SSE to result)", count, ms(statistics.median(api)),
         ms(percentile(api, 0.9)), ms(min(api)), ms(statistics.median(posts))],
        ["ratio API / in process (p50)", "", f"{ratio:.3f}", "", "", ""],
    ]
    return rows, job_id


# ---- 2. fan-out ------------------------------------------------------------------------------

@dataclass
class Watch:
    """What the listeners of one job received, by event number: (at, [receipt times])."""

    stored: dict[int, float] = field(default_factory=dict)
    received: dict[int, list[float]] = field(default_factory=dict)
    connected: list[float] = field(default_factory=list)  # each listener's first event
    results: list[float] = field(default_factory=list)
    terminal: float = 0.0


async def listen(client: httpx.AsyncClient, path: str, watch: Watch) -> None:
    first = True
    async with client.stream("GET", path) as response:
        assert response.status_code == 200, response.status_code
        async for event in read_events(response):
            now = time.time()
            if event.get("event") == "result":
                watch.results.append(now)
                return
            data = json.loads(event["data"])
            at = datetime.fromisoformat(data["at"]).timestamp()
            watch.stored[data["seq"]] = at
            watch.received.setdefault(data["seq"], []).append(now)
            if data["kind"] in ("completed", "failed", "cancelled"):
                watch.terminal = at
            if first:
                watch.connected.append(now)
                first = False
    raise AssertionError("a stream closed without a result")


async def fan_out_job(client: httpx.AsyncClient, listeners: int) -> Watch:
    accepted = await client.post("/v1/research", json={"question": QUESTION,
                                                       "bypass_cache": True})
    assert accepted.status_code == 202, accepted.text
    path = accepted.json()["links"]["events"]
    watch = Watch()
    await asyncio.gather(*(listen(client, path, watch) for _ in range(listeners)))
    return watch


async def fan_out(url: str, web: FakeWeb, counts: tuple[int, ...],
                  rounds: int) -> list[list[Any]]:
    web.latency = {WIKIPEDIA: 2.0}
    lasts: dict[int, list[float]] = {n: [] for n in counts}
    firsts: dict[int, list[float]] = {n: [] for n in counts}
    results: dict[int, list[float]] = {n: [] for n in counts}
    connect: dict[int, list[float]] = {n: [] for n in counts}
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=UNLIMITED) as client:
        await fan_out_job(client, 5)  # warm
        for _ in range(rounds):
            for listeners in counts:
                started = time.time()
                watch = await fan_out_job(client, listeners)
                everyone = max(watch.connected)
                connect[listeners].append(everyone - started)
                for seq, at in watch.stored.items():
                    times = watch.received[seq]
                    if at > everyone and len(times) == listeners:
                        firsts[listeners].append(min(times) - at)
                        lasts[listeners].append(max(times) - at)
                assert len(watch.results) == listeners
                results[listeners].append(max(watch.results) - watch.terminal)
    return [[n, rounds, len(lasts[n]), f"{max(connect[n]):.2f}",
             ms(statistics.median(firsts[n])), ms(statistics.median(lasts[n])),
             ms(percentile(lasts[n], 0.99)), ms(statistics.median(results[n]))]
            for n in counts]


# ---- 3. GET /v1/jobs/{id} --------------------------------------------------------------------

async def hammer(url: str, path: str, clients: int, seconds: float) -> list[Any]:
    latencies: list[float] = []
    failed = 0

    async def client_loop(client: httpx.AsyncClient, until: float, record: bool) -> None:
        nonlocal failed
        while time.perf_counter() < until:
            started = time.perf_counter()
            response = await client.get(path)
            if record:
                latencies.append(time.perf_counter() - started)
                failed += response.status_code != 200

    async with httpx.AsyncClient(base_url=url, timeout=30, limits=UNLIMITED) as client:
        warm = time.perf_counter() + 1.0
        await asyncio.gather(*(client_loop(client, warm, False) for _ in range(clients)))
        started = time.perf_counter()
        until = started + seconds
        await asyncio.gather(*(client_loop(client, until, True) for _ in range(clients)))
        wall = time.perf_counter() - started
    return [len(latencies), failed, f"{len(latencies) / wall:.0f}",
            ms(statistics.median(latencies)), ms(percentile(latencies, 0.99))]


def wrk(url: str, clients: int, seconds: float) -> list[Any] | None:
    if shutil.which("wrk") is None:
        return None
    done = subprocess.run(["wrk", "-t2", f"-c{clients}", f"-d{seconds:g}s", "--latency", url],
                          capture_output=True, text=True, timeout=seconds + 60)
    out = done.stdout

    def latency(label: str) -> str:
        found = re.search(rf"^\s*{label}%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
        if found is None:
            return "?"
        value, unit = float(found[1]), found[2]
        return f"{value * {'us': 0.001, 'ms': 1.0, 's': 1000.0}[unit]:.1f}"

    requests = re.search(r"(\d+) requests in", out)
    rps = re.search(r"Requests/sec:\s+([\d.]+)", out)
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return [requests[1] if requests else "?", errors[1] if errors else 0,
            f"{float(rps[1]):.0f}" if rps else "?", latency("50"), latency("99")]


async def rps(url: str, job_id: str, clients: int, seconds: float,
              rounds: int) -> list[list[Any]]:
    path = f"/v1/jobs/{job_id}"
    runs = []
    for _ in range(rounds):
        runs.append(await hammer(url, path, clients, seconds))
    runs.sort(key=lambda row: float(row[2]))
    rows = [["httpx (median run)", clients, f"{seconds:g}", *runs[len(runs) // 2]]]
    if rounds > 1:
        rows.append(["httpx (all runs, RPS)", "", "", "", "", " / ".join(r[2] for r in runs),
                     "", ""])
    second = await asyncio.to_thread(wrk, url + path, clients, seconds)
    if second is not None:
        rows.append(["wrk -t2", clients, f"{seconds:g}", *second])
    return rows


# ---- 4. cache hits ---------------------------------------------------------------------------

async def ask_cached(client: httpx.AsyncClient) -> tuple[float, float, bool]:
    """Seconds to the `result` event and to the 202, and whether the answer came from the
    cache."""
    started = time.perf_counter()
    accepted = await client.post("/v1/research", json={"question": QUESTION})
    posted = time.perf_counter() - started
    assert accepted.status_code == 202, accepted.text
    async with client.stream("GET", accepted.json()["links"]["events"]) as response:
        assert response.status_code == 200
        async for event in read_events(response):
            if event.get("event") == "result":
                result = json.loads(event["data"])
                assert result["status"] == "completed", event["data"]
                return time.perf_counter() - started, posted, result["metadata"]["cached"]
    raise AssertionError("the stream closed without a result")


async def cache_hits(server: Server, web: FakeWeb, counts: tuple[int, ...],
                     seconds: float) -> list[list[Any]]:
    """The server's CPU time per hit is the figure the machine's other load moves least."""
    web.latency = {WIKIPEDIA: 0.3}
    process = psutil.Process(server.pid)
    async with httpx.AsyncClient(base_url=server.url, timeout=60, limits=UNLIMITED) as client:
        await ask_cached(client)  # answered and cached once
        return [await hit_run(client, process, clients, seconds) for clients in counts]


async def hit_run(client: httpx.AsyncClient, server: psutil.Process, clients: int,
                  seconds: float) -> list[Any]:
    done: list[float] = []
    posts: list[float] = []
    missed = 0

    async def client_loop(until: float, record: bool) -> None:
        nonlocal missed
        while time.perf_counter() < until:
            completed, posted, cached = await ask_cached(client)
            if record:
                done.append(completed)
                posts.append(posted)
                missed += not cached

    warm = time.perf_counter() + 1.0
    await asyncio.gather(*(client_loop(warm, False) for _ in range(clients)))
    started = time.perf_counter()
    cpu = sum(server.cpu_times()[:2])
    own = time.process_time()
    await asyncio.gather(*(client_loop(started + seconds, True) for _ in range(clients)))
    wall = time.perf_counter() - started
    cpu = sum(server.cpu_times()[:2]) - cpu
    own = time.process_time() - own
    return [clients, len(done), missed, f"{len(done) / wall:.1f}",
            ms(statistics.median(posts)), ms(percentile(posts, 0.99)),
            ms(statistics.median(done)), ms(percentile(done, 0.99)),
            f"{cpu / len(done) * 1000:.2f}", f"{own / len(done) * 1000:.2f}"]


async def cache_hits_paired(servers: dict[str, Server], web: FakeWeb,
                            counts: tuple[int, ...], seconds: float,
                            rounds: int) -> list[list[Any]]:
    """`cache_hits` on each server in turn, the order swapped every round; a row per round
    and server, each with its server CPU a hit against the other's in the same round."""
    web.latency = {WIKIPEDIA: 0.3}
    clients = {name: httpx.AsyncClient(base_url=server.url, timeout=60, limits=UNLIMITED)
               for name, server in servers.items()}
    processes = {name: psutil.Process(server.pid) for name, server in servers.items()}
    rows: list[list[Any]] = []
    try:
        for client in clients.values():
            await ask_cached(client)  # answered and cached once
        for count in counts:
            for n in range(rounds):
                names = list(servers) if n % 2 == 0 else list(reversed(servers))
                runs = {name: await hit_run(clients[name], processes[name], count, seconds)
                        for name in names}
                after, before = (float(runs[name][8]) for name in servers)
                for name in servers:
                    rows.append([name, n + 1, f"{os.getloadavg()[0]:.1f}", *runs[name],
                                 f"{after / before:.2f}" if name == "after" else ""])
    finally:
        for client in clients.values():
            await client.aclose()
    return rows


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="a short smoke run")
    parser.add_argument("--jobs", type=int, default=20, help="jobs each way (1.)")
    parser.add_argument("--fan-out-jobs", type=int, default=3,
                        help="jobs per listener count (2.)")
    parser.add_argument("--seconds", type=float, default=10.0, help="each RPS run (3.)")
    parser.add_argument("--clients", type=int, default=20, help="concurrent clients (3.)")
    parser.add_argument("--only", default="1,2,3,4", help="sections to run, e.g. 4")
    parser.add_argument("--before", type=Path, help="4: a checkout to pair this one with")
    parser.add_argument("--rounds", type=int, default=3, help="4 with --before: turns each")
    args = parser.parse_args()
    sections = {int(n) for n in args.only.split(",")}
    if args.quick:
        args.jobs, args.fan_out_jobs, args.seconds = 3, 1, 2.0
    rounds = 1 if args.quick else 3

    web = FakeWeb()
    web.articles.append(Article("Cat", "The cat is a small domesticated carnivorous mammal "
                                "that sleeps for most of the day.",
                                "https://en.wikipedia.org/wiki/Cat"))
    await web.start()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        here = root / "in-process"
        there = root / "server"
        here.mkdir()
        there.mkdir()
        env = settings_env(here / "data", web)
        index(here, env)
        shutil.copytree(here / "data", there / "data")
        os.environ.update(env)  # the in-process job service reads the same settings
        os.chdir(here)  # and no config.toml
        from bot.config import load_settings
        from bot.wiring import open_research

        print(f"load before: {os.getloadavg()[0]:.2f} (1 min)", flush=True)
        try:
            async with serve(there, {**env, "RESEARCHBOT_DATA_DIR": str(there / "data")}) \
                    as server, contextlib.AsyncExitStack() as stack:
                url = server.url
                if sections & {1, 3}:  # the in-process job service only for them
                    research = await stack.enter_async_context(open_research(load_settings()))
                    rows, job_id = await overhead(url, research.jobs, web, args.jobs)
                if 1 in sections:
                    table(f"1. One job end to end, Wikipedia at 300 ms, answer cache "
                          f"bypassed ({args.jobs} each, alternating; ms)",
                          ["path", "jobs", "p50", "p90", "min", "POST to 202 p50"], rows)
                if 2 in sections:
                    fan = await fan_out(url, web, (50, 200), args.fan_out_jobs)
                    table("2. SSE fan-out: one running job, N listeners (ms from the event's "
                          "`at` to its receipt; events stored after all were connected)",
                          ["listeners", "jobs", "events timed", "all connected within s",
                           "first listener p50", "last listener p50", "last listener p99",
                           "result event to last listener p50"], fan)
                if 3 in sections:
                    load = await rps(url, job_id, args.clients, args.seconds, rounds)
                    table(f"3. GET /v1/jobs/{{id}} of a finished job, {args.clients} clients "
                          f"back to back ({rounds} run(s))",
                          ["client", "clients", "s", "requests", "non-200", "RPS", "p50 ms",
                           "p99 ms"], load)
                # What this process built so far (the libraries; the research core, with
                # 1 or 3) out of its collector's reach, as `serve` does: a collection of the
                # oldest generation walked it all and paused this process's 20 clients for
                # 116 and 212 ms in one 10-s run: the 20-client p99 (docs/benchmarks/startup.md).
                gc.collect()
                gc.freeze()
                if 4 in sections and args.before is not None:
                    shutil.copytree(here / "data", root / "before" / "data")
                    before_env = {**env, "RESEARCHBOT_DATA_DIR": str(root / "before" / "data"),
                                  "PYTHONPATH": str(args.before.resolve())}
                    async with serve(root / "before", before_env) as earlier:
                        hits = await cache_hits_paired({"after": server, "before": earlier},
                                                       web, (1, 5, 20), args.seconds,
                                                       args.rounds)
                    table(f"4. Cache hits through the API, this checkout (after) and "
                          f"{args.before} (before) taking turns ({args.seconds:g} s each)",
                          ["version", "round", "load", "clients", "hits", "not cached",
                           "hits/s", "POST p50 ms", "POST p99 ms", "completion p50 ms",
                           "completion p99 ms", "server CPU ms per hit",
                           "client CPU ms per hit", "server CPU after / before"], hits)
                elif 4 in sections:
                    hits = await cache_hits(server, web, (1, 5, 20), args.seconds)
                    table(f"4. Cache hits through the API: POST /v1/research of an answered "
                          f"question, then its events to `result` ({args.seconds:g} s each)",
                          ["clients", "hits", "not cached", "hits/s", "POST p50 ms",
                           "POST p99 ms", "completion p50 ms", "completion p99 ms",
                           "server CPU ms per hit", "client CPU ms per hit"], hits)
        finally:
            await web.stop()
            os.chdir(REPO)
    print(f"\nload after: {' '.join(f'{v:.2f}' for v in os.getloadavg())} (1/5/15 min)")


if __name__ == "__main__":
    asyncio.run(main())
