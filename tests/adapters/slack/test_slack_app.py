import json
import time
from http.cookies import SimpleCookie
from typing import Any

import aiohttp
import pytest

from core.models import ProgressEvent, Stage
from tests.support.chat_harness import Options
from tests.support.corpus import Indexed
from tests.support.slack_harness import (
    SlackHarness,
    blocks_text,
    envelope,
    mention,
    serve_slack,
)

pytestmark = pytest.mark.integration

QUESTION = "How many hours a day do cats sleep?"



async def test_a_mention_is_answered_in_its_thread(server: SlackHarness) -> None:
    started = time.perf_counter()
    assert await server.post(mention(QUESTION)) == 200
    assert time.perf_counter() - started < 3
    await server.wait_answers(1)
    slack = server.slack
    eyes = slack.named("reactions.add")[0]
    assert (eyes["channel"], eyes["timestamp"], eyes["name"]) == (
        "C1", "1700000000.000100", "eyes")
    assert slack.named("reactions.remove")[0]["name"] == "eyes"
    posts = slack.named("chat.postMessage")
    assert all(p["thread_ts"] == "1700000000.000100" for p in posts)
    text = blocks_text(slack.named("chat.update")[-1])
    assert "12 and 16 hours" in text and "[1]" in text
    assert "Sources (" in json.dumps(posts[-1])
    assert all("link_names" not in p and "parse" not in p for p in posts)
    assert all(call.get("token") == "xoxb-test" for _, call in slack.calls)
    assert server.requests[0].tenant == "T1" and server.requests[0].platform == "slack"
    assert server.requests[0].question == QUESTION


async def test_a_redelivered_event_is_answered_once(server: SlackHarness) -> None:
    event = mention("What is the largest planet?", event_id="EvSame")
    assert await server.post(event) == 200
    assert await server.post(event, headers={"X-Slack-Retry-Num": "1",
                                             "X-Slack-Retry-Reason": "http_timeout"}) == 200
    await server.wait_answers(1)
    assert len(server.requests) == 1
    assert len(server.slack.named("reactions.add")) == 2  # eyes, then repeat


@pytest.mark.parametrize("kind", ["forged", "stale"])
async def test_bad_signatures_do_no_work(server: SlackHarness, kind: str) -> None:
    event = mention("What is the largest planet?")
    if kind == "forged":
        status = await server.post(event, secret="wrong")
    else:
        status = await server.post(event, timestamp=int(time.time()) - 600)
    assert status == 401
    assert server.requests == []
    assert [name for name, _ in server.slack.calls if name != "auth.test"] == []


async def test_bad_input_gets_a_friendly_message(server: SlackHarness) -> None:
    assert await server.post(mention("   ")) == 200
    await server.slack.wait_for(lambda: bool(server.slack.named("chat.update")))
    update = server.slack.named("chat.update")[-1]
    assert "question is empty" in json.dumps(update)
    assert "Traceback" not in json.dumps(update)
    await server.slack.wait_for(lambda: bool(server.slack.named("reactions.remove")))


@pytest.mark.parametrize("server", [Options(broken_synthesis=True)], indirect=True)
async def test_a_failure_mid_research_is_a_friendly_message(server: SlackHarness) -> None:
    assert await server.post(mention(QUESTION)) == 200
    await server.slack.wait_for(lambda: bool(server.slack.named("reactions.remove")))
    final = json.dumps(server.slack.named("chat.update")[-1])
    assert "research failed before it finished" in final
    assert "10.0.0.7" not in final and "ConnectionResetError" not in final
    assert server.answers() == []


def test_progress_events_render_as_text() -> None:
    from adapters.slack.render import render_progress

    event = ProgressEvent(job_id="j", stage=Stage.SEARCH, kind="finished", progress=0.5,
                          message="Found 3 passages in 2 documents <!channel>")
    assert render_progress(event).endswith("Found 3 passages in 2 documents &lt;!channel&gt;…")


async def test_a_429_is_waited_out_and_retried(server: SlackHarness) -> None:
    server.slack.rate_limited["chat.postMessage"] = 1
    started = time.perf_counter()
    assert await server.post(mention(QUESTION)) == 200
    await server.wait_answers(1)
    posts = server.slack.named("chat.postMessage")
    assert posts[0] == posts[1]  # the refused status message, sent again
    assert time.perf_counter() - started >= 1.0  # Retry-After was honoured
    assert "Sources (" in json.dumps(posts[-1])


async def test_the_slash_command_asks_in_the_channel_and_answers_in_a_thread(
    server: SlackHarness,
) -> None:
    command = {"command": "/research", "text": "Which city did Mount Vesuvius bury? <!here>",
               "user_id": "U1", "channel_id": "C9", "team_id": "T1",
               "response_url": "http://127.0.0.1:9/unused", "trigger_id": "1.2"}
    started = time.perf_counter()
    assert await server.post(command, form=True) == 200
    assert time.perf_counter() - started < 3
    await server.wait_answers(1)
    root, *replies = server.slack.named("chat.postMessage")
    assert root["channel"] == "C9" and "thread_ts" not in root
    assert root["text"].startswith("<@U1> asked: Which city") and "&lt;!here&gt;" in root["text"]
    assert all(r["thread_ts"] == "1700000000.000001" for r in replies)
    assert "Pompeii" in json.dumps(server.slack.named("chat.update")[-1])


async def test_a_direct_message_is_answered_in_its_thread(server: SlackHarness) -> None:
    dm = {"type": "message", "channel_type": "im", "channel": "D1", "user": "U1",
          "text": "Which city did Mount Vesuvius bury?", "ts": "1700000001.000100"}
    assert await server.post(envelope(dm, "EvDm")) == 200
    await server.wait_answers(1)
    posts = server.slack.named("chat.postMessage")
    assert {(p["channel"], p["thread_ts"]) for p in posts} == {("D1", "1700000001.000100")}
    assert "Pompeii" in blocks_text(server.slack.named("chat.update")[-1])
    # Bot messages and edits in the DM are not questions.
    for n, extra in enumerate([{"bot_id": "BBOT"}, {"subtype": "message_changed"},
                               {"user": "UBOT"}]):
        await server.post(envelope({**dm, "ts": f"17000000{n + 2}.000100", **extra},
                                   f"EvDm{n}"))
    assert await server.post(mention("What is the largest planet?", event_id="EvAfter")) == 200
    await server.wait_answers(2)
    assert len(server.requests) == 2


async def test_a_thread_reply_follows_up_with_the_threads_context(server: SlackHarness) -> None:
    assert await server.post(mention(QUESTION, ts="1700000000.000100")) == 200
    await server.wait_answers(1)
    thread = "1700000000.000100"
    reply = {"type": "message", "channel_type": "channel", "channel": "C1", "user": "U2",
             "text": "What do they need to eat?", "ts": "1700000005.000100",
             "thread_ts": thread}
    # The bot's own messages in the thread, and a reply in a thread it never answered in,
    # are not follow-ups.
    await server.post(envelope({**reply, "user": "UBOT", "ts": "1700000004.1"}, "EvOwn"))
    await server.post(envelope({**reply, "bot_id": "BBOT", "ts": "1700000004.2"}, "EvBot"))
    await server.post(envelope({**reply, "thread_ts": "1600000000.000001",
                                "ts": "1700000004.3"}, "EvOther"))
    assert await server.post(envelope(reply, "EvFollow")) == 200
    await server.wait_answers(2)
    assert len(server.requests) == 2
    follow_up = server.requests[1]
    assert follow_up.question == "What do they need to eat?"
    assert [turn.question for turn in follow_up.history] == [QUESTION]
    assert "12 and 16 hours" in follow_up.history[0].answer
    answer = blocks_text(server.slack.named("chat.update")[-1])
    assert "taurine" in answer  # "they" resolved to cats through the thread
    eyes = [a for a in server.slack.named("reactions.add") if a["name"] == "eyes"]
    assert eyes[-1]["timestamp"] == "1700000005.000100"
    assert all(p["thread_ts"] == thread for p in server.slack.named("chat.postMessage"))


async def test_the_repeat_reaction_researches_again_without_the_cache(
    server: SlackHarness,
) -> None:
    assert await server.post(mention(QUESTION)) == 200
    await server.wait_answers(1)
    answer_ts = server.answers()[0]["timestamp"]
    reaction = {"type": "reaction_added", "user": "U2", "reaction": "repeat",
                "item": {"type": "message", "channel": "C1", "ts": answer_ts},
                "item_user": "UBOT", "event_ts": "1700000009.000100"}
    # The bot's own 🔁, and 🔁 on a message that is not an answer, do nothing.
    await server.post(envelope({**reaction, "user": "UBOT"}, "EvOwnRepeat"))
    await server.post(envelope({**reaction, "item": {"type": "message", "channel": "C1",
                                                     "ts": "1600000000.1"}}, "EvStranger"))
    assert await server.post(envelope(reaction, "EvRepeat")) == 200
    await server.wait_answers(2)
    assert len(server.requests) == 2
    retry = server.requests[1]
    assert retry.bypass_cache and retry.question == QUESTION and retry.user == "U2"
    assert "fresh answer" in blocks_text(server.slack.named("chat.update")[-1])
    assert all(p["thread_ts"] == "1700000000.000100"
               for p in server.slack.named("chat.postMessage"))


@pytest.mark.parametrize("server", [Options(per_user=1, max_wait_s=0)], indirect=True)
async def test_over_the_limit_a_person_is_told_when_to_ask_again(server: SlackHarness) -> None:
    assert await server.post(mention(QUESTION, event_id="EvA")) == 200
    assert await server.post(mention("What is the largest planet?", event_id="EvB",
                                     ts="1700000002.000100")) == 200
    await server.slack.wait_for(lambda: bool(server.slack.named("chat.postEphemeral")))
    await server.wait_answers(1)
    refusal = server.slack.named("chat.postEphemeral")[0]
    assert refusal["user"] == "U1"
    assert refusal["text"].startswith("You have asked 1 questions in the last 60 seconds")
    assert len(server.requests) == 1
    await server.slack.wait_for(lambda: len(server.slack.named("reactions.remove")) == 2)


@pytest.mark.parametrize("server", [Options(per_user=1, window_s=2, max_wait_s=5)],
                         indirect=True)
async def test_a_question_just_over_the_limit_waits_its_turn(server: SlackHarness) -> None:
    assert await server.post(mention(QUESTION, event_id="EvA")) == 200
    assert await server.post(mention("What is the largest planet?", event_id="EvB",
                                     ts="1700000002.000100")) == 200
    await server.wait_answers(2)
    statuses = [p["text"] for p in server.slack.named("chat.postMessage")
                if p.get("text", "").startswith(":")]
    assert any(t.startswith(":hourglass: Queued") and "about 2 seconds" in t
               for t in statuses)
    assert server.slack.named("chat.postEphemeral") == []
    assert len(server.requests) == 2


@pytest.mark.parametrize("server", [Options(per_tenant=1, max_wait_s=0)], indirect=True)
async def test_a_workspace_limit_applies_to_everyone_in_it(server: SlackHarness) -> None:
    assert await server.post(mention(QUESTION, event_id="EvA")) == 200
    assert await server.post(mention(QUESTION, event_id="EvB", user="U2")) == 200
    await server.slack.wait_for(lambda: bool(server.slack.named("chat.postEphemeral")))
    assert server.slack.named("chat.postEphemeral")[0]["text"].startswith(
        "This workspace has asked 1 questions")


async def test_two_workspaces_each_use_their_own_token_and_cache(
    indexed: Indexed, embedder: Any,
) -> None:
    options = Options(oauth=True, teams=("T1", "T2"))
    async with serve_slack(options, indexed, embedder) as server:
        for n, team in enumerate(["T1", "T2", "T1"]):
            assert await server.post(mention(QUESTION, event_id=f"Ev{n}", team=team,
                                             channel=f"C{team}")) == 200
            await server.wait_answers(n + 1)
        tokens: dict[str, set[str]] = {}
        for _, call in server.slack.calls:
            if "channel" in call:
                tokens.setdefault(call["channel"], set()).add(call["token"])
        assert tokens == {"CT1": {"xoxb-one"}, "CT2": {"xoxb-two"}}
        footers = [blocks_text(u) for u in server.slack.named("chat.update")
                   if "job" in blocks_text(u)]
        assert ["cached answer" in f for f in footers] == [False, False, True]
        assert [r.tenant for r in server.requests] == ["T1", "T2", "T1"]


async def test_installing_through_oauth_stores_the_workspace(
    indexed: Indexed, embedder: Any,
) -> None:
    options = Options(oauth=True, teams=("T3",))
    async with serve_slack(options, indexed, embedder) as server:
        async with aiohttp.ClientSession() as session:
            async with session.get(f"{server.url}/slack/install",
                                   allow_redirects=False) as page:
                assert page.status == 200
                html = await page.text()
                assert "client_id=111.222" in html and "state=" in html
                state = html.split("state=")[1].split("&")[0].split('"')[0]
                # The state cookie is Secure: a browser would send it back over https.
                cookie = SimpleCookie(page.headers["Set-Cookie"])
                assert cookie["slack-app-oauth-state"].value == state
            async with session.get(f"{server.url}/slack/oauth_redirect",
                                   params={"code": "c0de", "state": state},
                                   headers={"Cookie": f"slack-app-oauth-state={state}"}
                                   ) as done:
                assert done.status == 200
            async with session.get(f"{server.url}/slack/oauth_redirect",
                                   params={"code": "c0de", "state": "forged"}) as forged:
                assert forged.status == 400
        assert server.slack.named("oauth.v2.access")[0]["code"] == "c0de"
        assert len(server.slack.named("oauth.v2.access")) == 1
        assert await server.post(mention(QUESTION, team="T3", channel="C3")) == 200
        await server.wait_answers(1)
        assert {c["token"] for _, c in server.slack.calls if c.get("channel") == "C3"} == {
            "xoxb-installed"}


@pytest.mark.parametrize("server", [Options(held=True)], indirect=True)
async def test_progress_shows_in_the_status_message_at_most_once_a_second(
    server: SlackHarness,
) -> None:
    assert server.slow is not None

    def progress() -> list[str]:
        return [u["text"] for u in server.slack.named("chat.update")
                if u["text"].startswith(":hourglass_flowing_sand:")]

    assert await server.post(mention(QUESTION)) == 200
    # the search is held until its progress is shown (a second after the first update)
    await server.slack.wait_for(lambda: any("searching" in t for t in progress()))
    server.slow.release()
    await server.wait_answers(1)
    updates = [u["text"] for u in server.slack.named("chat.update")]
    assert len(progress()) <= 2  # the research's every stage, but not one update each
    assert not updates[-1].startswith(":hourglass")  # no late progress replaces the answer
    # the round of the tier's maximum, and the query each source is sent
    assert any(t.startswith(":hourglass_flowing_sand: Round 1/2: searching the knowledge "
                            f"base: '{QUESTION}'") and "a slow archive: '" in t
               for t in progress()), progress()
