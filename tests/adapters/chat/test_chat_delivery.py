"""Answers reach Slack and Discord exactly once however the platform misbehaves: server
errors on the answer, failing progress updates, rate limits beyond the client's retries,
a forbidden thread. Each scenario runs the real bolt app or discord.py client against the
fake platform, the job service and the real pipeline."""

import json
from typing import Any

import pytest

from core.models import JobStatus
from tests.support.chat_harness import Options
from tests.support.discord_harness import DiscordHarness
from tests.support.fake_discord import APP_ID, CHANNEL_ID
from tests.support.fake_slack import Fault
from tests.support.slack_harness import SlackHarness, mention

pytestmark = pytest.mark.integration

QUESTION = "How many hours a day do cats sleep?"


def _carries_answer(args: dict[str, Any]) -> bool:
    """The answer's first message (not the sources list, which quotes the passage too)."""
    blocks = str(args.get("blocks", ""))
    return "12 and 16 hours" in blocks and "Sources (" not in blocks


def _answers(server: SlackHarness) -> list[dict[str, Any]]:
    """Every accepted call that put the answer on screen (an edit or a post)."""
    return [args for name, args in server.slack.calls
            if name in ("chat.update", "chat.postMessage") and _carries_answer(args)]


async def _jobs(harness: SlackHarness) -> list[Any]:
    assert harness.desk is not None
    return await harness.desk.jobs.store.recent()


async def test_slack_a_server_error_on_the_answer_is_retried_until_it_arrives_once(
    server: SlackHarness,
) -> None:
    fault = Fault("chat.update", times=3, matches=_carries_answer)
    server.slack.faults.append(fault)
    assert await server.post(mention(QUESTION)) == 200
    await server.wait_answers(1)
    assert fault.hits == 3
    assert len(_answers(server)) == 4  # three refused edits of the status message, one shown
    posts = server.slack.named("chat.postMessage")
    sources = [p for p in posts if "Sources (" in json.dumps(p)]
    assert len(sources) == 1 and len(server.answers()) == 1
    (job,) = await _jobs(server)
    assert server.desk is not None
    job = await server.desk.jobs.wait(job.id)
    assert job.status == JobStatus.COMPLETED
    delivery = await server.desk.jobs.delivery(job.id)
    assert delivery is not None
    assert (delivery.status, delivery.attempts) == ("delivered", 4)
    # The answer is remembered: a reply in its thread is a follow-up.
    thread = server.slack.named("chat.postMessage")[0]["thread_ts"]
    await server.post(mention("What do they need to eat?", event_id="Ev2", ts="1700000001.1",
                             thread_ts=thread))
    await server.wait_answers(2)
    assert [t.question for t in server.requests[1].history] == [QUESTION]


@pytest.mark.parametrize("server", [Options(held=True)], indirect=True)
async def test_slack_failing_progress_updates_never_fail_the_job(server: SlackHarness) -> None:
    assert server.slow is not None
    fault = Fault("chat.update", times=50,
                  matches=lambda args: str(args.get("text", "")).startswith(":hourglass"))
    server.slack.faults.append(fault)
    assert await server.post(mention(QUESTION)) == 200
    await server.slack.wait_for(lambda: fault.hits >= 1)  # progress tried, refused, skipped
    server.slow.release()
    await server.wait_answers(1)
    assert len(_answers(server)) == 1
    (job,) = await _jobs(server)
    assert job.status == JobStatus.COMPLETED


async def test_slack_rate_limits_beyond_the_clients_retries_lose_nothing(
    server: SlackHarness,
) -> None:
    # The status message is refused four times (the client retries three): the job still
    # exists, and its answer is posted once in the thread when Slack lets it through.
    server.slack.rate_limited["chat.postMessage"] = 4
    assert await server.post(mention(QUESTION)) == 200
    await server.wait_answers(1, within_s=60)
    (job,) = await _jobs(server)
    assert job.status == JobStatus.COMPLETED
    answers = _answers(server)
    assert len(answers) == 1 and answers[0]["thread_ts"] == "1700000000.000100"
    assert server.slack.named("reactions.remove")[0]["name"] == "eyes"




def _answer_embed(body: Any) -> bool:
    return isinstance(body, dict) and any(
        e.get("title") == QUESTION for e in body.get("embeds") or [])


def _progress_embed(body: Any) -> bool:
    return isinstance(body, dict) and any(
        str(e.get("description", "")).startswith("⏳") for e in body.get("embeds") or [])


@pytest.mark.parametrize("bot", [Options(held=True)], indirect=True)
async def test_discord_failing_progress_edits_neither_stall_nor_fail_the_job(
    bot: DiscordHarness,
) -> None:
    fake = bot.discord
    assert bot.slow is not None
    fake.fail_when("PATCH", _progress_embed, 500, times=5)
    await fake.interaction(QUESTION)
    await fake.wait_for(lambda: any(_progress_embed(c.body)  # refused while it searches
                                    for c in fake.named("PATCH", "/messages/@original")))
    bot.slow.release()
    await bot.wait_answers(1, within_s=15)
    answers = [c for c in fake.named("PATCH", "/messages/@original") if _answer_embed(c.body)]
    assert len(answers) == 1
    assert "Sources (" in json.dumps(fake.named("POST", "/messages")[-1].body)
    jobs = await bot.client.desk.jobs.store.recent()
    assert [job.status for job in jobs] == [JobStatus.COMPLETED]


async def test_discord_a_server_error_on_the_answer_is_retried_and_shown_once(
    bot: DiscordHarness,
) -> None:
    fake = bot.discord
    # 503: discord.py raises at once (it retries 500, 502 and 504 itself); the job retries.
    fake.fail_when("PATCH", _answer_embed, 503, times=2)
    await fake.interaction(QUESTION)
    await bot.wait_answers(1)
    edits = [c for c in fake.named("PATCH", f"/webhooks/{APP_ID}/") if _answer_embed(c.body)]
    assert len(edits) == 3  # two refused, one shown
    assert len(fake.named("POST", "/threads")) == 1
    sources = [c for c in fake.named("POST", "/messages")
               if "Sources (" in json.dumps(c.body)]
    assert len(sources) == 1 and len(bot.reactions()) == 1


async def test_discord_a_forbidden_thread_never_makes_the_channel_a_follow_up_thread(
    bot: DiscordHarness,
) -> None:
    fake = bot.discord
    fake.fail("POST", f"/channels/{CHANNEL_ID}/messages/", 403,
              {"message": "Missing Permissions", "code": 50013})
    await fake.interaction(QUESTION)
    await bot.wait_answers(1)
    sources = fake.named("POST", f"/channels/{CHANNEL_ID}/messages")
    assert sources and sources[-1].body["embeds"][0]["title"].startswith("Sources (")
    # Ordinary chat in the channel is not a follow-up of the answer sitting there.
    await fake.message(CHANNEL_ID, "anyone up for lunch at noon?")
    await fake.message(CHANNEL_ID, "What do they need to eat?")
    # 🔁 on the answer still researches again, in the channel.
    answer = bot.reactions()[0]
    await fake.reaction(CHANNEL_ID, answer, "🔁", user_id="700000000000000009")
    await bot.wait_answers(2)
    assert [r.question for r in bot.requests] == [QUESTION, QUESTION]
    assert bot.requests[1].bypass_cache
    retried = fake.named("PATCH", f"/channels/{CHANNEL_ID}/messages/")[-1]
    assert "12 and 16 hours" in retried.body["embeds"][0]["description"]


async def test_discord_a_delivery_repeated_from_scratch_posts_nothing_twice(
    bot: DiscordHarness,
) -> None:
    """A worker that died before storing any step: the next one rebuilds the delivery from
    its stored target and runs every step again; Discord's nonce and its "thread exists"
    answer make each repeat land on what was already posted."""
    from adapters.discord.delivery import DiscordDeliveries
    from core.jobs.delivery import Steps
    from core.models import ResearchResult

    fake = bot.discord
    await fake.interaction(QUESTION)
    await bot.wait_answers(1)
    jobs = bot.client.desk.jobs
    (job,) = await jobs.store.recent()
    row = await jobs.delivery(job.id)
    assert row is not None and row.target["interaction_token"]
    rebuilt = await DiscordDeliveries(bot.client, bot.client.desk.conversations)(row.target)

    async def keep(_: dict[str, Any]) -> None:
        return None

    await rebuilt.answer(ResearchResult.model_validate(job.result), Steps({}, keep, job.id))
    threads = fake.named("POST", "/threads")
    assert len(threads) == 2  # the repeat was refused (160004): the same thread is used
    sources = [c for c in fake.named("POST", "/messages") if "Sources (" in json.dumps(c.body)]
    assert len(sources) == 2 and sources[0].body["nonce"] == sources[1].body["nonce"]
    assert len(fake.posted_ids(sources)) == 1  # Discord answered both with one message
