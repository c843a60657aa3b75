"""Search controls from every front end: the HTTP API's body, `researchbot ask` flags, Slack's
`/research` option words and Discord's `/research` options each pass them into the job the
service stores, and refuse what cannot be used with a message saying what was wrong."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from adapters.chat.controls import ControlsError, split_options
from core.models import ContentType, Recency, SearchControls
from core.store.database import open_database
from core.store.jobs import JobStore
from tests.support.api_harness import RunningApi, api_settings, running_api
from tests.support.discord_harness import DiscordHarness
from tests.support.slack_harness import SlackHarness

pytestmark = pytest.mark.integration

QUESTION = "How long do cats sleep?"
CONTROLS = SearchControls(recency=Recency.WEEK, include_domains=["nature.com"],
                          exclude_domains=["spam.example"], content_type=ContentType.ACADEMIC)


async def _stored_request(store_url: str, job_id: str) -> Any:
    engine = await open_database(store_url)
    try:
        return (await JobStore(engine).get(job_id)).request
    finally:
        await engine.dispose()


# ---- HTTP API -------------------------------------------------------------------------------

@pytest.fixture
async def api(served_store: Path) -> AsyncIterator[RunningApi]:
    async with running_api(api_settings(served_store)) as running:
        yield running


async def test_the_api_passes_the_controls_into_the_stored_job(api: RunningApi) -> None:
    async with api.client() as client:
        accepted = await client.post("/v1/research", json={
            "question": QUESTION, "recency": "week",
            "include_domains": ["https://www.Nature.com/articles/x"],
            "exclude_domains": ["spam.example"], "content_type": "academic"})
        assert accepted.status_code == 202, accepted.text
        job_id = accepted.json()["job_id"]
        plain = await client.post("/v1/research", json={"question": QUESTION})
    assert (await _stored_request(api.settings.store_url, job_id)).controls == CONTROLS
    stored = await _stored_request(api.settings.store_url, plain.json()["job_id"])
    assert stored.controls == SearchControls()  # no fields: today's search


@pytest.mark.parametrize("body, message", [
    ({"recency": "fortnight"}, "recency: Input should be 'day', 'week', 'month', 'year' or "
                               "'any'"),
    ({"content_type": "blogs"}, "content_type: Input should be 'news', 'academic' or "
                                "'general'"),
    ({"include_domains": ["javascript:alert(1)"]}, "is not a domain"),
    ({"exclude_domains": ["<img src=x>.com"]}, "is not a domain"),
    ({"exclude_domains": [f"s{n}.org" for n in range(21)]}, "at most 20 items"),
    ({"include_domains": ["x" * 600]}, "at most 506 characters"),
    ({"include_domains": "nature.com"}, "Input should be a valid list"),
])
async def test_the_api_refuses_controls_it_cannot_use_with_a_422(
        api: RunningApi, body: dict[str, Any], message: str) -> None:
    async with api.client() as client:
        refused = await client.post("/v1/research", json={"question": QUESTION, **body})
    assert refused.status_code == 422
    error = refused.json()["error"]
    assert error["type"] == "invalid_request" and message in error["message"], error
    assert "Traceback" not in refused.text


async def test_the_mcp_research_tool_passes_the_controls_and_refuses_bad_ones(
        api: RunningApi) -> None:
    from tests.adapters.mcp.test_mcp import _http_session, _payload

    async with _http_session(f"{api.url}/mcp", None) as session:
        started = _payload(await session.call_tool("research", {
            "question": QUESTION, "wait_seconds": 0, "recency": "week",
            "include_domains": ["nature.com"], "exclude_domains": ["spam.example"],
            "content_type": "academic"}))
        refused = await session.call_tool("research", {
            "question": QUESTION, "exclude_domains": ["javascript:alert(1)"]})
    assert (await _stored_request(api.settings.store_url, started["job_id"])).controls \
        == CONTROLS
    assert refused.is_error and "is not a domain" in str(refused.content)


# ---- researchbot ask ------------------------------------------------------------------------











# ---- Slack ----------------------------------------------------------------------------------

def _command(text: str) -> dict[str, str]:
    return {"command": "/research", "text": text, "user_id": "U1", "channel_id": "C9",
            "team_id": "T1", "response_url": "http://127.0.0.1:9/unused", "trigger_id": "1.2"}


async def test_slack_option_words_pass_into_the_stored_job(server: SlackHarness) -> None:
    text = ("recency:week include:https://www.nature.com exclude:spam.example type:academic "
            "How many hours a day do cats sleep?")
    assert await server.post(_command(text), form=True) == 200
    await server.wait_answers(1)
    (request,) = server.requests
    assert request.question == "How many hours a day do cats sleep?"
    assert request.controls == CONTROLS
    assert server.desk is not None
    (stored,) = await server.desk.jobs.store.recent("T1", limit=1)
    assert stored.request.controls == CONTROLS
    root = server.slack.named("chat.postMessage")[0]
    assert root["text"] == "<@U1> asked: How many hours a day do cats sleep?"


@pytest.mark.parametrize("text, message", [
    ("recency:fortnight Do cats nap?", "recency must be one of day, week, month, year, any"),
    ("type:blogs Do cats nap?", "type must be one of news, academic, general"),
    ("exclude:<!here>.com Do cats nap?", "exclude: '&lt;!here&gt;.com' is not a domain"),
])
async def test_slack_refuses_options_it_cannot_use_privately(
        server: SlackHarness, text: str, message: str) -> None:
    assert await server.post(_command(text), form=True) == 200
    assert message in server.bodies[-1] and "recency:day|week" in server.bodies[-1]
    assert server.requests == [] and server.slack.named("chat.postMessage") == []


def test_option_words_lead_or_trail_the_question_only() -> None:
    assert split_options("What does type:theory mean at 2:30?") == (
        "What does type:theory mean at 2:30?", SearchControls())
    question, controls = split_options("Do cats nap? recency:day exclude:a.org exclude:b.org")
    assert question == "Do cats nap?"
    assert controls == SearchControls(recency=Recency.DAY, exclude_domains=["a.org", "b.org"])
    with pytest.raises(ControlsError, match="given once"):
        split_options("recency:day recency:week Do cats nap?")
    with pytest.raises(ControlsError, match="needs a value"):
        split_options("include: Do cats nap?")


# ---- Discord --------------------------------------------------------------------------------

async def test_discord_options_pass_into_the_stored_job(bot: DiscordHarness) -> None:
    fake = bot.discord
    await fake.interaction("How many hours a day do cats sleep?", recency="week",
                           include_domains="https://www.nature.com",
                           exclude_domains="spam.example", content_type="academic")
    await bot.wait_answers(1)
    (request,) = bot.requests
    assert request.controls == CONTROLS
    (stored,) = await bot.client.desk.jobs.store.recent(request.tenant, limit=1)
    assert stored.request.controls == CONTROLS


async def test_discord_registers_the_options_with_their_choices(bot: DiscordHarness) -> None:
    command = next(c for c in bot.client.tree.get_commands() if c.name == "research")
    options = {o["name"]: o for o in command.to_dict(bot.client.tree)["options"]}
    assert [c["value"] for c in options["recency"]["choices"]] == [
        "day", "week", "month", "year", "any"]
    assert [c["value"] for c in options["content_type"]["choices"]] == [
        "news", "academic", "general"]
    assert all(len(o["description"]) <= 100 for o in options.values())
    assert options["include_domains"]["max_length"] == 1000


async def test_discord_refuses_a_site_it_cannot_use_privately(bot: DiscordHarness) -> None:
    fake = bot.discord
    await fake.interaction("Do cats nap?", exclude_domains="@everyone, javascript:x")
    await fake.wait_for(lambda: bool(fake.named("POST", "/callback")))
    refusal = fake.named("POST", "/callback")[0].body
    assert refusal["type"] == 4 and refusal["data"]["flags"] == 64  # ephemeral
    assert "is not a domain" in refusal["data"]["embeds"][0]["description"]
    assert bot.requests == []
