"""`researchbot slack` as a real process: HTTP mode against the fake Slack Web API."""

import asyncio
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.corpus import index_corpus
from tests.support.fake_slack import FakeSlack
from tests.support.services import REDIS_URL, redis_server
from tests.support.slack_harness import SECRET, SlackHarness, mention

pytestmark = pytest.mark.system


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_missing_tokens_are_named(clean_env: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "bot", "slack"], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 1 and "slack.bot_token" in result.stderr


def test_an_unreachable_redis_is_named_at_start(clean_env: Path) -> None:
    env = {**os.environ, "RESEARCHBOT_SLACK__BOT_TOKEN": "xoxb-test",
           "RESEARCHBOT_SLACK__SIGNING_SECRET": SECRET,
           "RESEARCHBOT_REDIS__URL": f"redis://127.0.0.1:{_free_port()}/0"}
    result = subprocess.run([sys.executable, "-m", "bot", "slack"], capture_output=True,
                            text=True, timeout=120, env=env)
    assert result.returncode == 1
    assert "redis.url: cannot use" in result.stderr and "Traceback" not in result.stderr


@pytest.fixture
def workspace_docs(clean_env: Path) -> Path:
    """The workspace T1's knowledge base, indexed through the CLI."""
    return index_corpus(clean_env, "T1")


@pytest.mark.parametrize("shared", ["embedded", "redis"])
async def test_the_slack_command_answers_a_mention(workspace_docs: Path, shared: str) -> None:
    slack = FakeSlack()
    await slack.start()
    port = _free_port()
    env = {**os.environ, "RESEARCHBOT_SLACK__BOT_TOKEN": "xoxb-test",
           "RESEARCHBOT_SLACK__SIGNING_SECRET": SECRET,
           "RESEARCHBOT_SLACK__HOST": "127.0.0.1", "RESEARCHBOT_SLACK__PORT": str(port),
           "RESEARCHBOT_ENDPOINTS__SLACK_API": slack.base_url}
    if shared == "redis":
        async with redis_server():  # reachable (or skipped), and emptied
            env["RESEARCHBOT_REDIS__URL"] = REDIS_URL  # dedupe and limits; no workers:
            env["RESEARCHBOT_QUEUE__ENABLED"] = "false"  # this process answers
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "slack", env=env,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    try:
        server = SlackHarness(f"http://127.0.0.1:{port}", slack)
        for _ in range(300):
            try:
                _reader, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.close()
                break
            except OSError:
                assert process.returncode is None, "the bot exited"
                await asyncio.sleep(0.1)
        event = mention("Which city did Mount Vesuvius bury?")
        assert await server.post(event) == 200
        assert await server.post(event) == 200  # a redelivery
        await server.wait_answers(1, within_s=60)
        answer = str(slack.named("chat.update")[-1])
        assert "Pompeii" in answer
        assert len(server.answers()) == 1
    finally:
        process.terminate()
        await process.wait()
        await slack.stop()


async def test_socket_mode_answers_over_the_websocket(workspace_docs: Path) -> None:
    slack = FakeSlack()
    await slack.start()
    env = {**os.environ, "RESEARCHBOT_SLACK__BOT_TOKEN": "xoxb-test",
           "RESEARCHBOT_SLACK__APP_TOKEN": "xapp-test",
           "RESEARCHBOT_ENDPOINTS__SLACK_API": slack.base_url}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "slack", env=env,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    try:
        server = SlackHarness("", slack)
        await slack.push_event(mention("Which city did Mount Vesuvius bury?", event_id="EvWs"))
        await slack.wait_for(lambda: bool(slack.socket_acks), within_s=60)
        assert slack.socket_acks[0]["envelope_id"] == "EvWs"
        await server.wait_answers(1, within_s=60)
        assert "Pompeii" in str(slack.named("chat.update")[-1])
        assert slack.named("apps.connections.open")[0]["token"] == "xapp-test"
    finally:
        process.terminate()
        await process.wait()
        await slack.stop()
