"""`researchbot ask / show / improve` with a model configured, as real processes against the
scripted OpenAI-compatible server."""

import json
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.support import researchbot
from tests.support.corpus import index_corpus
from tests.support.fake_openai import FakeOpenAI
from tests.support.scripted_analyst import script

pytestmark = pytest.mark.system


@pytest.fixture
def indexed(clean_env: Path) -> Path:
    return index_corpus(clean_env)


@pytest.fixture
async def model(indexed: Path) -> AsyncIterator[tuple[FakeOpenAI, dict[str, str]]]:
    fake = script(FakeOpenAI())
    await fake.start()
    yield fake, {**os.environ, "RESEARCHBOT_LLM__FAST_MODEL": "openai/fast",
                 "RESEARCHBOT_LLM__STRONG_MODEL": "openai/strong",
                 "RESEARCHBOT_LLM__API_BASE": fake.base_url,
                 "RESEARCHBOT_LLM__API_KEY": "test-key"}
    await fake.stop()


async def test_ask_show_and_improve_with_a_model(
    model: tuple[FakeOpenAI, dict[str, str]],
) -> None:
    fake, env = model
    # run_async: this test's event loop serves the fake model meanwhile
    asked = await researchbot.run_async("ask", "How many hours a day do cats sleep?", "--json",
                                        env=env, timeout=180)
    assert asked.returncode == 0, asked.stderr
    answer = json.loads(asked.stdout)
    assert answer["metadata"]["synthesizer"] == "llm:openai/strong"
    assert "12 and 16 hours" in answer["answer"]["summary"]

    shown = await researchbot.run_async("show", answer["job_id"], env=env, timeout=180)
    assert shown.returncode == 0, shown.stderr
    assert "LLM: 6 calls (0 failed, 0 retries)" in shown.stdout and "cost $" in shown.stdout

    fake.chats.clear()
    done = await researchbot.run_async("improve", "Say how long kittens sleep too", "--json",
                                       env=env, timeout=180)
    assert done.returncode == 0, done.stderr
    improved = json.loads(done.stdout)
    assert improved["job_id"] != answer["job_id"]
    assert fake.tasks() == ["improve", "synthesize", "verify"]  # no new search was needed
    prompt = next(c for c in fake.chats if c.task == "synthesize").prompt
    assert "Say how long kittens sleep too" in prompt and "Previous answer:" in prompt
    assert improved["references"]


async def test_improve_without_a_model_says_what_it_needs(indexed: Path) -> None:
    done = await researchbot.run_async("improve", "shorter please", timeout=180)
    assert done.returncode == 2 and "improve needs a language model" in done.stderr


async def test_a_refused_key_stops_the_job_and_names_the_setting(
    model: tuple[FakeOpenAI, dict[str, str]],
) -> None:
    fake, env = model  # the fake answers 401 to any key but "test-key"
    wrong = {**env, "RESEARCHBOT_LLM__API_KEY": "sk-wrong-key-123"}
    asked = await researchbot.run_async("ask", "How many hours a day do cats sleep?", "--json",
                                        env=wrong, timeout=180)
    # Not a Low-confidence answer written without the model: the job stops, naming the key.
    assert asked.returncode == 1 and asked.stdout == "", asked.stdout
    assert "llm.api_key" in asked.stderr and "HTTP 401" in asked.stderr
    assert "sk-wrong-key-123" not in asked.stderr and "Traceback" not in asked.stderr
    assert fake.chats == []


async def test_a_bot_with_a_refused_key_does_not_start(
    model: tuple[FakeOpenAI, dict[str, str]],
) -> None:
    _fake, env = model
    bot = {**env, "RESEARCHBOT_LLM__API_KEY": "sk-wrong-key-123",
           "RESEARCHBOT_SLACK__BOT_TOKEN": "xoxb-1", "RESEARCHBOT_SLACK__SIGNING_SECRET": "s",
           "RESEARCHBOT_SLACK__PORT": "0"}
    started = await researchbot.run_async("slack", env=bot, timeout=180)
    assert started.returncode == 1
    assert "llm.fast_model" in started.stderr and "fix llm.api_key" in started.stderr
    assert "sk-wrong-key-123" not in started.stderr and "Traceback" not in started.stderr
