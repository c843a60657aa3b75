"""`researchbot ask` as a process uses the configured web sources (system tier)."""


import json
import os
from pathlib import Path

import pytest

from tests.core.web.test_web_pipeline import web  # noqa: F401 (a fixture, by parameter name)
from tests.support import researchbot
from tests.support.fake_web import FakeWeb

pytestmark = pytest.mark.system


async def test_the_ask_command_uses_the_configured_sources(web: FakeWeb, clean_env: Path
                                                           ) -> None:
    env = {**os.environ, "RESEARCHBOT_PIPELINE__LOCAL_ONLY": "false",
           "RESEARCHBOT_ENDPOINTS__WIKIPEDIA_API": web.base + "/w/api.php",
           "RESEARCHBOT_ENDPOINTS__ARXIV_API": web.base + "/arxiv/query",
           "RESEARCHBOT_ENDPOINTS__PUBMED_API": web.base + "/eutils",
           "RESEARCHBOT_SOURCES__SEARXNG_URL": web.base + "/searx"}
    # run_async: this test's event loop serves the fake web meanwhile
    asked = await researchbot.run_async("ask", "How many hours a day do cats sleep?", "--json",
                                        env=env, timeout=180)
    assert asked.returncode == 0, asked.stderr
    answer = json.loads(asked.stdout)
    providers = {s["metadata"]["provider"] for s in answer["sources"]}
    assert providers & {"wikipedia", "searxng"}
    # The bot's own page fetcher refuses this machine's addresses: the hits keep their
    # snippets, and nothing was fetched from the fake's pages.
    assert "/cats" not in web.hit_paths()
