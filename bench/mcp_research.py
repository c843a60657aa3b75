"""The MCP `research` tool against `POST /v1/research` and polling `GET /v1/jobs/{id}`, on the
same questions: two `researchbot serve` processes over identical copies of one indexed data
dir (30 short notes, local sources only), one asked through the API, one through /mcp with
the SDK's client, alternating which goes first. Each question is asked fresh, then again
(an answer-cache hit). Prints the p50 and p90 of each path and their ratio (target: MCP at
most 1.05x the API).

    .venv/bin/python bench/mcp_research.py [--questions 12]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from serving import serving

from tests.support import researchbot

PLACES = ["Skerry", "Holm", "Ness", "Voe", "Geo", "Wick", "Bay", "Sound", "Firth", "Point",
          "Head", "Isle"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def write_notes(folder: Path, count: int) -> None:
    for number in range(count):
        place = PLACES[number % len(PLACES)]
        day = DAYS[number % len(DAYS)]
        (folder / f"note-{number:02d}.md").write_text(
            f"# The {place} lighthouse, note {number}\n\nThe lamp of the {place} lighthouse "
            f"is cleaned every {day} at dawn by keeper number {number}. The keepers of "
            f"{place} log the weather at noon and trim the wick at dusk.\n")


def question(number: int) -> str:
    return f"When is the lamp of the {PLACES[number % len(PLACES)]} lighthouse cleaned " \
        f"(note {number})?"


def server_env(data: Path) -> dict[str, str]:
    return {**os.environ, "RESEARCHBOT_DATA_DIR": str(data),
            "RESEARCHBOT_PIPELINE__LOCAL_ONLY": "true", "RESEARCHBOT_WEB__METRICS": "false",
            "RESEARCHBOT_ADVANCED__WEB__QUESTIONS_PER_MINUTE": "100000",
            "RESEARCHBOT_ADVANCED__WEB__TENANT_QUESTIONS_PER_MINUTE": "100000"}


async def through_api(client: httpx.AsyncClient, text: str) -> float:
    started = time.perf_counter()
    job = (await client.post("/v1/research", json={"question": text})).json()
    status = job["status"]
    while status in ("pending", "in_progress"):  # polling, as an API client does
        await asyncio.sleep(0.02)
        status = (await client.get(f"/v1/jobs/{job['job_id']}")).json()["status"]
    return time.perf_counter() - started


async def through_mcp(session: ClientSession, text: str) -> float:
    started = time.perf_counter()
    result = await session.call_tool("research", {"question": text})
    if result.is_error:
        raise RuntimeError(str(result.content))
    return time.perf_counter() - started


def row(name: str, api: list[float], mcp: list[float]) -> list[str]:
    def p(values: list[float], q: float) -> float:
        return statistics.quantiles(values, n=10)[int(q * 10) - 1] if len(values) > 1 \
            else values[0]

    return [name, f"{statistics.median(api) * 1000:.0f}", f"{p(api, 0.9) * 1000:.0f}",
            f"{statistics.median(mcp) * 1000:.0f}", f"{p(mcp, 0.9) * 1000:.0f}",
            f"{statistics.median(mcp) / statistics.median(api):.2f}"]


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--questions", type=int, default=12)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        notes = Path(work) / "notes"
        notes.mkdir()
        write_notes(notes, 30)
        first = Path(work) / "a"
        indexing = await researchbot.run_async(
            "index", str(notes), env={**os.environ, "RESEARCHBOT_DATA_DIR": str(first)},
            timeout=None)
        if indexing.returncode != 0:
            raise RuntimeError(f"indexing the notes failed: {indexing.stderr[-2000:]}")
        second = Path(work) / "b"
        shutil.copytree(first, second)
        async with serving(server_env(first)) as api_url, \
                serving(server_env(second)) as mcp_url, \
                httpx.AsyncClient(base_url=api_url, timeout=120) as client, \
                httpx2.AsyncClient(timeout=120) as raw, \
                streamable_http_client(f"{mcp_url}/mcp", http_client=raw) as (r, w), \
                ClientSession(r, w) as session:
            await session.initialize()
            await through_api(client, "warm up the api")
            await through_mcp(session, "warm up the mcp server")
            times: dict[str, tuple[list[float], list[float]]] = {
                "fresh": ([], []), "cached": ([], [])}
            for run in ("fresh", "cached"):
                for number in range(args.questions):
                    text = question(number)
                    api_times, mcp_times = times[run]
                    if number % 2:
                        api_times.append(await through_api(client, text))
                        mcp_times.append(await through_mcp(session, text))
                    else:
                        mcp_times.append(await through_mcp(session, text))
                        api_times.append(await through_api(client, text))
    header = ["questions", "API p50 ms", "API p90 ms", "MCP p50 ms", "MCP p90 ms",
              "MCP/API p50"]
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for name, (api_times, mcp_times) in times.items():
        print("| " + " | ".join(row(f"{name} ({len(api_times)})", api_times, mcp_times))
              + " |")


if __name__ == "__main__":
    asyncio.run(main())
