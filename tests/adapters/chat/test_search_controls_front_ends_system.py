"""Search controls from `researchbot ask` flags, run as the program itself: every source and the
stored job get them, and flags it cannot use are a usage error (system tier)."""


from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.adapters.chat.test_search_controls_front_ends import QUESTION
from tests.support import researchbot
from tests.support.fake_web import Article, FakeWeb

pytestmark = pytest.mark.system


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
    env = {**os.environ, "RESEARCHBOT_PIPELINE__LOCAL_ONLY": "false",
           "RESEARCHBOT_ENDPOINTS__WIKIPEDIA_API": f"{web.base}/w/api.php",
           "RESEARCHBOT_ENDPOINTS__ARXIV_API": f"{web.base}/arxiv/query",
           "RESEARCHBOT_SOURCES__PUBMED": "false",
           "RESEARCHBOT_SOURCES__SEARXNG_URL": f"{web.base}/searx",
           "RESEARCHBOT_ADVANCED__SOURCES__FETCH_PAGES": "0"}
    # run_async: this test's event loop serves the fake web meanwhile
    asked = await researchbot.run_async(
        "ask", "Which paper introduced attention transformers?", "--json", "--recency", "week",
        "--exclude-domain", "https://Spam.example/x", "--include-domain", "wikipedia.org",
        "--include-domain", "arxiv.org", env=env, timeout=180)
    assert asked.returncode == 0, asked.stderr
    answer = json.loads(asked.stdout)
    assert "submittedDate:[" in next(q["search_query"] for path, q in web.hits
                                     if path == "/arxiv/query")
    assert next(q for path, q in web.hits if path == "/searx/search")["time_range"] == "week"
    assert ("Wikipedia cannot filter by date; its results were not limited to the past week."
            in answer["answer"]["limitations"])
    assert not any("spam.example" in (s.get("url") or "") for s in answer["sources"])
    shown = json.loads(researchbot.run("show", answer["job_id"], "--json", timeout=180).stdout)
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
    refused = researchbot.run("ask", QUESTION, *args, timeout=180)
    assert refused.returncode == 2
    assert message in refused.stderr and "Traceback" not in refused.stderr
