"""👍/👎 on a Slack answer are stored as the reader's rating of its job (the real bolt app,
signed requests, the fake Web API); answers link to their page when web.public_url is set."""

import json
from typing import Any

import pytest

from core.store.feedback import Rating
from tests.support.chat_feedback import (
    PUBLIC_URL,
    assert_signed_page_link,
    every_rating,
    handlers_ended,
    ratings_become,
    slack_listener,
)
from tests.support.chat_harness import Options
from tests.support.slack_harness import SlackHarness, envelope, mention

pytestmark = pytest.mark.integration

QUESTION = "How many hours a day do cats sleep?"


async def _answered(server: SlackHarness) -> tuple[str, str, Any]:
    """Ask once: the answer message's ts, its job id and the database."""
    assert await server.post(mention(QUESTION)) == 200
    await server.wait_answers(1)
    assert server.desk is not None
    (job,) = await server.desk.jobs.store.recent()
    return server.answers()[0]["timestamp"], job.id, server.desk.jobs.store.engine


def _reaction(kind: str, name: str, ts: str, user: str = "U2") -> dict[str, Any]:
    return {"type": kind, "user": user, "reaction": name,
            "item": {"type": "message", "channel": "C1", "ts": ts},
            "item_user": "UBOT", "event_ts": "1700000009.000100"}


async def test_thumbs_on_an_answer_rate_it_and_rating_again_replaces(
    server: SlackHarness,
) -> None:
    answer, job_id, engine = await _answered(server)
    assert await server.post(envelope(_reaction("reaction_added", "+1::skin-tone-3", answer),
                                      "EvUp")) == 200
    (up,) = await ratings_become(engine, job_id, [("slack:T1:U2", "up")])
    assert (up.tenant, up.channel, up.rating) == ("T1", "slack", Rating.UP)
    await server.post(envelope(_reaction("reaction_added", "-1", answer), "EvDown"))
    await ratings_become(engine, job_id, [("slack:T1:U2", "down")])
    await server.post(envelope(_reaction("reaction_added", "thumbsup", answer, "U3"), "EvU3"))
    await ratings_become(engine, job_id, [("slack:T1:U2", "down"), ("slack:T1:U3", "up")])
    # Taking off the 👍 that the 👎 replaced changes nothing; taking off the 👎 withdraws it.
    await server.post(envelope(_reaction("reaction_removed", "+1", answer), "EvUnUp"))
    await server.post(envelope(_reaction("reaction_removed", "-1::skin-tone-5", answer),
                               "EvUnDown"))
    await ratings_become(engine, job_id, [("slack:T1:U3", "up")])


async def test_reactions_elsewhere_or_by_the_bot_rate_nothing_and_retry_still_works(
    server: SlackHarness,
) -> None:
    answer, job_id, engine = await _answered(server)
    await server.post(envelope(_reaction("reaction_added", "+1", "1600000000.000001"), "EvX"))
    await server.post(envelope(_reaction("reaction_added", "+1", answer, "UBOT"), "EvBot"))
    await server.post(envelope(_reaction("reaction_added", "heart", answer), "EvHeart"))
    await server.post(envelope(_reaction("reaction_added", "repeat", answer), "EvRepeat"))
    await server.wait_answers(2)
    await server.post(envelope(_reaction("reaction_added", "-1", answer, "U4"), "EvU4"))
    await ratings_become(engine, job_id, [("slack:T1:U4", "down")])
    await handlers_ended(slack_listener)  # those rating nothing too
    assert await every_rating(engine) == [(job_id, "slack:T1:U4", "down")]
    assert server.requests[1].bypass_cache


@pytest.mark.parametrize("server", [Options(public_url=PUBLIC_URL)], indirect=True)
async def test_with_a_public_url_the_answer_links_to_its_page(server: SlackHarness) -> None:
    _, job_id, engine = await _answered(server)
    answer = server.slack.named("chat.update")[-1]
    footer = json.loads(answer["blocks"])[-1] if isinstance(answer["blocks"], str) \
        else answer["blocks"][-1]
    assert footer["type"] == "context"
    link = footer["elements"][-1]["text"]
    assert link.endswith("|View full analysis>")
    await assert_signed_page_link(engine, link, job_id)


async def test_without_a_public_url_there_is_no_link(server: SlackHarness) -> None:
    await _answered(server)
    sent = json.dumps([args for _, args in server.slack.calls])
    assert "View full analysis" not in sent and "/jobs/" not in sent


async def test_a_workers_rebuilt_delivery_links_to_the_page(clean_env: Any,
                                                            sqlite_engine: Any) -> None:
    """With a queue the answer is posted by `researchbot worker`, from its own wiring."""
    from bot.config import Settings
    from bot.wiring import answer_pages
    from bot.worker import platforms
    from core.jobs.delivery import DeliveryRegistry, Steps
    from core.store.access import ShareLinks
    from core.store.conversations import ConversationStore
    from tests.adapters.slack.test_slack_render import _result
    from tests.support.fake_slack import FakeSlack

    slack = FakeSlack()
    await slack.start()
    settings = Settings(slack={"bot_token": "xoxb-test", "api_base_url": slack.base_url},
                        web={"public_url": PUBLIC_URL})
    registry = DeliveryRegistry()
    pages = answer_pages(settings, await ShareLinks.load(sqlite_engine))

    async def save(_: dict[str, Any]) -> None:
        pass

    try:
        async with platforms(settings, registry, ConversationStore(sqlite_engine),
                             sqlite_engine, pages):
            delivery = await registry("slack", {
                "tenant": "T1", "channel": "C1", "thread": "1700000000.000100",
                "status_ts": "1700000000.000200", "marked": None})
            await delivery.answer(_result("Cats sleep [1]."), Steps({}, save, "job1"))
    finally:
        await slack.stop()
    answer = slack.named("chat.update")[-1]
    await assert_signed_page_link(sqlite_engine, json.dumps(answer["blocks"]), "job1")


async def test_the_chat_desk_links_answers_only_under_a_public_url(
    clean_env: Any, sqlite_engine: Any, chroma: Any, embedder: Any,
) -> None:
    """What `researchbot slack` and `discord` run with (bot/wiring.py's open_chat_services)."""
    from bot.config import Settings
    from bot.wiring import FrontEndServices, build_jobs, open_chat_services
    from core.config import KnowledgeBaseSettings
    from core.retrieval.kb.knowledge_base import KnowledgeBase
    from core.store.access import ShareLinks
    from core.store.catalogue import KnowledgeCatalogue
    from core.store.conversations import ConversationStore
    from core.store.feedback import FeedbackStore

    links = await ShareLinks.load(sqlite_engine)
    knowledge_base = KnowledgeBase(KnowledgeCatalogue(sqlite_engine), chroma, embedder,
                                   KnowledgeBaseSettings())
    front = FrontEndServices(build_jobs(None, sqlite_engine), ConversationStore(sqlite_engine),
                             sqlite_engine, FeedbackStore(sqlite_engine), links, knowledge_base)
    async with open_chat_services(Settings(web={"public_url": PUBLIC_URL}), front) as desk:
        assert desk.answer_page is not None and desk.feedback is front.feedback
        await assert_signed_page_link(sqlite_engine, desk.answer_page("job1"), "job1")
    async with open_chat_services(Settings(), front) as desk:
        assert desk.answer_page is None
