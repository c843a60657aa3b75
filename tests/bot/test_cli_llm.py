"""`researchbot ask / show / improve` with a model configured, as real processes against the
scripted OpenAI-compatible server."""

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.support.corpus import index_corpus
from tests.support.fake_openai import FakeOpenAI
from tests.support.scripted_analyst import script

pytestmark = pytest.mark.system


async def _run(*args: str, env: dict[str, str]) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", *args, env={**os.environ, **env},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), 180)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


@pytest.fixture
def indexed(clean_env: Path) -> Path:
    return index_corpus(clean_env)


@pytest.fixture
async def model(indexed: Path) -> AsyncIterator[tuple[FakeOpenAI, dict[str, str]]]:
    fake = script(FakeOpenAI())
    await fake.start()
    yield fake, {"RESEARCHBOT_LLM__FAST_MODEL": "openai/fast",
                 "RESEARCHBOT_LLM__STRONG_MODEL": "openai/strong",
                 "RESEARCHBOT_LLM__API_BASE": fake.base_url,
                 "RESEARCHBOT_LLM__API_KEY": "test-key"}
    await fake.stop()


async def test_ask_show_and_improve_with_a_model(
    model: tuple[FakeOpenAI, dict[str, str]],
) -> None:
    fake, env = model
    code, out, err = await _run("ask", "How many hours a day do cats sleep?", "--json",
                                env=env)
    assert code == 0, err
    answer = json.loads(out)
    assert answer["metadata"]["synthesizer"] == "llm:openai/strong"
    assert "12 and 16 hours" in answer["answer"]["summary"]

    code, out, err = await _run("show", answer["job_id"], env=env)
    assert code == 0, err
    assert "LLM: 6 calls (0 failed, 0 retries)" in out and "cost $" in out

    fake.chats.clear()
    code, out, err = await _run("improve", "Say how long kittens sleep too", "--json", env=env)
    assert code == 0, err
    improved = json.loads(out)
    assert improved["job_id"] != answer["job_id"]
    assert fake.tasks() == ["improve", "synthesize", "verify"]  # no new search was needed
    prompt = next(c for c in fake.chats if c.task == "synthesize").prompt
    assert "Say how long kittens sleep too" in prompt and "Previous answer:" in prompt
    assert improved["references"]


async def test_improve_without_a_model_says_what_it_needs(indexed: Path) -> None:
    code, _out, err = await _run("improve", "shorter please", env={})
    assert code == 2 and "improve needs a language model" in err


async def test_a_refused_key_stops_the_job_and_names_the_setting(
    model: tuple[FakeOpenAI, dict[str, str]],
) -> None:
    fake, env = model  # the fake answers 401 to any key but "test-key"
    wrong = {**env, "RESEARCHBOT_LLM__API_KEY": "sk-wrong-key-123"}
    code, out, err = await _run("ask", "How many hours a day do cats sleep?", "--json",
                                env=wrong)
    # Not a Low-confidence answer written without the model: the job stops, naming the key.
    assert code == 1 and out == "", out
    assert "llm.api_key" in err and "HTTP 401" in err
    assert "sk-wrong-key-123" not in err and "Traceback" not in err
    assert fake.chats == []


async def test_a_bot_with_a_refused_key_does_not_start(
    model: tuple[FakeOpenAI, dict[str, str]],
) -> None:
    _fake, env = model
    bot = {**env, "RESEARCHBOT_LLM__API_KEY": "sk-wrong-key-123",
           "RESEARCHBOT_SLACK__BOT_TOKEN": "xoxb-1", "RESEARCHBOT_SLACK__SIGNING_SECRET": "s",
           "RESEARCHBOT_SLACK__PORT": "0"}
    code, _out, err = await _run("slack", env=bot)
    assert code == 1
    assert "llm.fast_model" in err and "fix llm.api_key" in err
    assert "sk-wrong-key-123" not in err and "Traceback" not in err
