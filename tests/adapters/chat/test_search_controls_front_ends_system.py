"""Search controls from `researchbot ask` flags, run as the program itself: every source and the
stored job get them, and flags it cannot use are a usage error (system tier)."""


from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.adapters.chat.test_search_controls_front_ends import QUESTION
from tests.support.fake_web import Article, FakeWeb

pytestmark = pytest.mark.system


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bot", *args], capture_output=True,
                          text=True, timeout=180, env={**os.environ, **(env or {})})


async def _run_beside(*args: str, env: dict[str, str]) -> tuple[int | None, str, str]:
    """The CLI as a process while this test's event loop serves the fake web."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", *args, env={**os.environ, **env},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), 180)
    return process.returncode, out.decode(), err.decode()


@pytest.fixture
async def web() -> AsyncIterator[FakeWeb]:
    server = FakeWeb()
    await server.start()
    server.articles = [
        Article("Attention transformers", "Transformers rely on attention mechanisms.",
                "https://en.wikipedia.org/wiki/Transformer"),
        Article("Attention spam", "Attention transformers explained by a content farm.",
                "https://spam.example/transformers")]
    yield server
    await server.stop()


async def test_ask_flags_reach_every_source_and_the_stored_job(
        clean_env: Path, web: FakeWeb) -> None:
    env = {"RESEARCHBOT_PIPELINE__LOCAL_ONLY": "false",
           "RESEARCHBOT_ENDPOINTS__WIKIPEDIA_API": f"{web.base}/w/api.php",
           "RESEARCHBOT_ENDPOINTS__ARXIV_API": f"{web.base}/arxiv/query",
           "RESEARCHBOT_SOURCES__PUBMED": "false",
           "RESEARCHBOT_SOURCES__SEARXNG_URL": f"{web.base}/searx",
           "RESEARCHBOT_ADVANCED__SOURCES__FETCH_PAGES": "0"}
    code, out, err = await _run_beside(
        "ask", "Which paper introduced attention transformers?", "--json", "--recency", "week",
        "--exclude-domain", "https://Spam.example/x", "--include-domain", "wikipedia.org",
        "--include-domain", "arxiv.org", env=env)
    assert code == 0, err
    answer = json.loads(out)
    assert "submittedDate:[" in next(q["search_query"] for path, q in web.hits
                                     if path == "/arxiv/query")
    assert next(q for path, q in web.hits if path == "/searx/search")["time_range"] == "week"
    assert ("Wikipedia cannot filter by date; its results were not limited to the past week."
            in answer["answer"]["limitations"])
    assert not any("spam.example" in (s.get("url") or "") for s in answer["sources"])
    shown = json.loads(_run("show", answer["job_id"], "--json").stdout)
    assert shown["request"]["controls"] == {
        "recency": "week", "include_domains": ["wikipedia.org", "arxiv.org"],
        "exclude_domains": ["spam.example"], "content_type": "general"}


@pytest.mark.parametrize("args, message", [
    (("--recency", "fortnight"), "argument --recency: invalid choice: 'fortnight'"),
    (("--content-type", "blogs"), "argument --content-type: invalid choice: 'blogs'"),
    (("--include-domain", "javascript:alert(1)"),
     "argument --include-domain: 'javascript:alert(1)' is not a domain"),
    (tuple(arg for n in range(21) for arg in ("--exclude-domain", f"s{n}.org")),
     "at most 20 domains"),
])
def test_ask_refuses_flags_it_cannot_use_as_a_usage_error(
        clean_env: Path, args: tuple[str, ...], message: str) -> None:
    refused = _run("ask", QUESTION, *args)
    assert refused.returncode == 2
    assert message in refused.stderr and "Traceback" not in refused.stderr
