"""Refining an answer and researching a message from Slack: "refine: ..." in an answer's
thread revises that answer (the scripted model server writes the revision, checked like any
answer) and posts it in the thread; without a model, one line says which setting enables it;
the "Research this" message shortcut researches the message's text in a thread under it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from core.models import ResearchRequest
from tests.support.chat_harness import Options
from tests.support.corpus import Indexed
from tests.support.fake_openai import FakeOpenAI
from tests.support.slack_harness import SlackHarness, blocks_text, envelope, mention, serve_slack

pytestmark = pytest.mark.integration

QUESTION = "How many hours a day do cats sleep?"
ROOT = "1700000000.000100"


def _reply(text: str, event_id: str, ts: str) -> dict[str, Any]:
    return envelope({"type": "message", "channel": "C1", "user": "U2", "text": text,
                     "ts": ts, "thread_ts": ROOT}, event_id)


async def test_refine_in_the_thread_revises_the_answer(scripted_model: FakeOpenAI, indexed: Indexed,
                                                      embedder: Any) -> None:
    async with serve_slack(Options(model_url=scripted_model.base_url), indexed, embedder) as server:
        await server.post(mention(QUESTION, event_id="Ev1", ts=ROOT))
        await server.wait_answers(1)
        scripted_model.chats.clear()
        await server.post(_reply("refine: Say how long kittens sleep too", "Ev2",
                                 "1700000001.000100"))
        await server.wait_answers(2)
        assert scripted_model.tasks() == ["improve", "synthesize", "verify"]
        assert server.desk is not None
        latest = (await server.desk.jobs.recent("T1", limit=1))[0]
        revised = latest.request
        assert isinstance(revised, ResearchRequest) and latest.status.value == "completed"
        assert revised.improves is not None and revised.user == "U2"
        assert revised.feedback == "Say how long kittens sleep too"
        posts = server.slack.named("chat.postMessage")
        assert all(p.get("thread_ts") == ROOT for p in posts)
        status = [p for p in posts if "Revising the answer" in str(p.get("text"))]
        assert len(status) == 1


async def test_refine_without_a_model_says_what_it_needs(server: SlackHarness) -> None:
    await server.post(mention(QUESTION, event_id="Ev1", ts=ROOT))
    await server.wait_answers(1)
    await server.post(_reply("Refine - shorter please", "Ev2", "1700000001.000100"))
    await server.slack.wait_for(lambda: any(
        "needs a language model" in blocks_text(c) for c in server.slack.named("chat.update")))
    told = next(blocks_text(c) for c in server.slack.named("chat.update")
                if "needs a language model" in blocks_text(c))
    assert "llm.fast_model" in told
    assert len(server.requests) == 1  # nothing was submitted


async def test_the_message_shortcut_researches_a_message_in_its_thread(
        server: SlackHarness) -> None:
    body = {"type": "message_action", "callback_id": "research_message",
            "trigger_id": "1.2.3", "team": {"id": "T1"}, "user": {"id": "U3"},
            "channel": {"id": "C1"}, "message_ts": "1700000005.000100",
            "message": {"type": "message", "user": "U9", "ts": "1700000005.000100",
                        "text": f"<!channel> {QUESTION}"}}
    assert await server.post({"payload": json.dumps(body)}, form=True) == 200
    await server.wait_answers(1)
    request = server.requests[0]
    assert request.question == f"<!channel> {QUESTION}" and request.user == "U3"
    posts = server.slack.named("chat.postMessage")
    assert posts and all(p.get("thread_ts") == "1700000005.000100" for p in posts)
    blocks = json.loads(blocks_text(server.slack.named("chat.update")[-1]))
    assert "12 and 16 hours" in json.dumps(blocks)
    mrkdwn = json.dumps([b for b in blocks if b.get("type") != "header"])  # plain text: inert
    assert "<!channel>" not in mrkdwn

    empty = {**body, "message": {**body["message"], "text": ""}}
    assert await server.post({"payload": json.dumps(empty)}, form=True) == 200
    await server.slack.wait_for(lambda: any(
        "no text to research" in str(c.get("text"))
        for c in server.slack.named("chat.postEphemeral")))
