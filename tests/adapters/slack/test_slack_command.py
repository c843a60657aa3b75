"""`researchbot slack` as a real process: HTTP mode against the fake Slack Web API."""

import os
from pathlib import Path

import pytest

from tests.support import researchbot
from tests.support.cluster import free_port
from tests.support.corpus import index_corpus
from tests.support.fake_slack import FakeSlack
from tests.support.services import REDIS_URL, redis_server
from tests.support.slack_harness import SECRET, SlackHarness, mention

pytestmark = pytest.mark.system


def test_missing_tokens_are_named(clean_env: Path) -> None:
    result = researchbot.run("slack", timeout=60)
    assert result.returncode == 1 and "slack.bot_token" in result.stderr


def test_an_unreachable_redis_is_named_at_start(clean_env: Path) -> None:
    env = {**os.environ, "RESEARCHBOT_SLACK__BOT_TOKEN": "xoxb-test",
           "RESEARCHBOT_SLACK__SIGNING_SECRET": SECRET,
           "RESEARCHBOT_REDIS__URL": f"redis://127.0.0.1:{free_port()}/0"}
    result = researchbot.run("slack", env=env)
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
    port = free_port()
    env = {**os.environ, "RESEARCHBOT_SLACK__BOT_TOKEN": "xoxb-test",
           "RESEARCHBOT_SLACK__SIGNING_SECRET": SECRET,
           "RESEARCHBOT_SLACK__HOST": "127.0.0.1", "RESEARCHBOT_SLACK__PORT": str(port),
           "RESEARCHBOT_ENDPOINTS__SLACK_API": slack.base_url}
    if shared == "redis":
        async with redis_server():  # reachable (or skipped), and emptied
            env["RESEARCHBOT_REDIS__URL"] = REDIS_URL  # dedupe and limits; no workers:
            env["RESEARCHBOT_QUEUE__ENABLED"] = "false"  # this process answers
    try:
        async with researchbot.running("slack", env=env,
                                       log=workspace_docs.parent / "slack.log") as process:
            await process.wait_for_line("Slack events at")
            server = SlackHarness(f"http://127.0.0.1:{port}", slack)
            event = mention("Which city did Mount Vesuvius bury?")
            assert await server.post(event) == 200
            assert await server.post(event) == 200  # a redelivery
            await server.wait_answers(1, within_s=60)
            answer = str(slack.named("chat.update")[-1])
            assert "Pompeii" in answer
            assert len(server.answers()) == 1
    finally:
        await slack.stop()


async def test_socket_mode_answers_over_the_websocket(workspace_docs: Path) -> None:
    slack = FakeSlack()
    await slack.start()
    env = {**os.environ, "RESEARCHBOT_SLACK__BOT_TOKEN": "xoxb-test",
           "RESEARCHBOT_SLACK__APP_TOKEN": "xapp-test",
           "RESEARCHBOT_ENDPOINTS__SLACK_API": slack.base_url}
    try:
        async with researchbot.running("slack", env=env,
                                       log=workspace_docs.parent / "slack.log"):
            server = SlackHarness("", slack)
            await slack.push_event(mention("Which city did Mount Vesuvius bury?",
                                           event_id="EvWs"))
            await slack.wait_for(lambda: bool(slack.socket_acks), within_s=60)
            assert slack.socket_acks[0]["envelope_id"] == "EvWs"
            await server.wait_answers(1, within_s=60)
            assert "Pompeii" in str(slack.named("chat.update")[-1])
            assert slack.named("apps.connections.open")[0]["token"] == "xapp-test"
    finally:
        await slack.stop()
