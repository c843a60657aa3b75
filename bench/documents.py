"""Adding documents through the API against `researchbot index` on the same files, as whole
processes on this machine:

1. `researchbot index DIR` over N markdown files (~400 words each) into a fresh data dir;
2. `researchbot serve` over another fresh data dir: the same files POSTed to /v1/documents,
   20 a request, timed from the first POST until every documents job has completed;
3. from one file sent to the first answer that cites it: POST the file, wait for its job,
   ask a question only it answers, wait for the answer.

Prints one table: seconds, files a second, and the API's time over the CLI's (target 1.10).
The CLI's time includes its start-up (loading the embedding model); the API's does not (the
server had loaded it): the ratio is what the API path adds to indexing itself.

    .venv/bin/python bench/documents.py [--files 200]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
from serving import serving

from tests.support import researchbot

WORDS = ["river", "valley", "harbour", "lantern", "orchard", "meadow", "glacier", "canyon",
         "plateau", "estuary", "lighthouse", "quarry", "vineyard", "causeway", "marsh",
         "tide", "beacon", "ferry", "granary", "windmill"]
BATCH = 20
PROBE = ("# Keepers' rota\n\nThe lamp of the Skerry lighthouse is cleaned every Thursday at "
         "dawn by the junior keeper, who signs the log afterwards.\n")
PROBE_QUESTION = "When is the lamp of the Skerry lighthouse cleaned?"


def write_files(folder: Path, count: int) -> list[Path]:
    paths = []
    for number in range(count):
        body = " ".join(WORDS[(number * 7 + k * 3) % len(WORDS)] for k in range(400))
        path = folder / f"note-{number:03d}.md"
        path.write_text(f"# Note {number} on the {WORDS[number % len(WORDS)]}\n\n"
                        f"Entry {number}. {body}.\n")
        paths.append(path)
    return paths


async def cli_index(folder: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = await researchbot.run_async("index", str(folder), env=env, timeout=None)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    return time.perf_counter() - started


async def wait_done(client: httpx.AsyncClient, job_ids: list[str],
                    every_s: float = 0.25) -> list[dict[str, object]]:
    """The jobs once ended, looked at every `every_s` (more often takes the server's CPU
    from the work measured)."""
    done: dict[str, dict[str, object]] = {}
    while len(done) < len(job_ids):
        for job_id in job_ids:
            if job_id in done:
                continue
            job = (await client.get(f"/v1/jobs/{job_id}")).json()
            if job["status"] not in ("pending", "in_progress"):
                done[job_id] = job
            else:
                break  # the jobs run one after another: the rest are not done either
        await asyncio.sleep(every_s)
    return [done[job_id] for job_id in job_ids]


async def through_api(paths: list[Path], env: dict[str, str]) -> tuple[float, float, int]:
    """(seconds to add every file, seconds from one file sent to an answer citing it,
    documents added)."""
    async with serving(env) as url, \
            httpx.AsyncClient(base_url=url, timeout=600) as client:
        started = time.perf_counter()
        jobs = []
        for first in range(0, len(paths), BATCH):
            files = [("file", (path.name, path.read_bytes(), "text/markdown"))
                     for path in paths[first:first + BATCH]]
            response = await client.post("/v1/documents", files=files)
            response.raise_for_status()
            jobs.append(response.json()["job_id"])
        ended = await wait_done(client, jobs)
        seconds = time.perf_counter() - started
        added = sum(1 for job in ended for document in job["documents"]  # type: ignore[union-attr]
                    if document["status"] == "added")

        started = time.perf_counter()
        sent = await client.post("/v1/documents", files=[
            ("file", ("rota.md", PROBE.encode(), "text/markdown"))])
        await wait_done(client, [sent.json()["job_id"]], 0.02)
        asked = await client.post("/v1/research", json={"question": PROBE_QUESTION})
        answer = (await wait_done(client, [asked.json()["job_id"]], 0.02))[0]
        to_answer = time.perf_counter() - started
        cited = any(source.get("path") == "upload:rota.md"
                    for source in answer.get("sources", []))  # type: ignore[union-attr]
        if not cited:
            raise RuntimeError("the answer did not cite the file just added: "
                               f"{answer.get('answer')}")
        return seconds, to_answer, added


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        folder = Path(work) / "files"
        folder.mkdir()
        paths = write_files(folder, args.files)
        base = {**os.environ, "RESEARCHBOT_PIPELINE__LOCAL_ONLY": "true",
                "RESEARCHBOT_WEB__METRICS": "false"}
        cli_env = {**base, "RESEARCHBOT_DATA_DIR": str(Path(work) / "cli")}
        cli_seconds = await cli_index(folder, cli_env)
        (Path(work) / "more").mkdir()  # the CLI's start-up: one new file to embed
        (Path(work) / "more" / "one.md").write_text("# One\n\nA single short note.\n")
        startup = await cli_index(Path(work) / "more", cli_env)
        api_seconds, to_answer, added = await through_api(
            paths, {**base, "RESEARCHBOT_DATA_DIR": str(Path(work) / "api")})
    if added != args.files:
        raise RuntimeError(f"the API added {added} of {args.files} files")
    rows = [["researchbot index DIR", f"{cli_seconds:.1f}", f"{args.files / cli_seconds:.1f}",
             "1.00"],
            [f"POST /v1/documents ({BATCH} a request)", f"{api_seconds:.1f}",
             f"{args.files / api_seconds:.1f}", f"{api_seconds / cli_seconds:.2f}"],
            ["researchbot index (one new file: its start-up)", f"{startup:.1f}", "", ""],
            ["one file sent → first answer citing it", f"{to_answer:.2f}", "", ""]]
    header = ["path", "seconds", "files/s", "ratio to index"]
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    asyncio.run(main())
