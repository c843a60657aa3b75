"""Documents added from Slack: a file shared in a direct message, or with a mention, is found
with files.info, downloaded from its private URL with the bot token, indexed into that
workspace's knowledge base and cited by the next answer, with a reply saying what was added;
"@researchbot add <link>" adds a page; whoever chat.document_adders leaves out, a file too
large, or a download Slack refuses, gets a clear reply and nothing is added."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.support.chat_harness import Options
from tests.support.corpus import Indexed
from tests.support.fake_web import FakeWeb
from tests.support.slack_harness import SlackHarness, blocks_text, envelope, mention, serve_slack

pytestmark = pytest.mark.integration

FACT = b"# Lighthouse rota\n\nThe lamp of the Skerry lighthouse is cleaned every Thursday " \
    b"at dawn by the junior keeper.\n"
QUESTION = "When is the lamp of the Skerry lighthouse cleaned?"


def _shared(files: list[str], *, event_id: str, ts: str, text: str = "",
            user: str = "U1") -> dict[str, Any]:
    """A file shared in a direct message with the bot, as Slack sends the event."""
    return envelope({"type": "message", "subtype": "file_share", "channel_type": "im",
                     "channel": "D1", "user": user, "text": text, "ts": ts, "event_ts": ts,
                     "files": [{"id": file_id} for file_id in files]}, event_id)


def _said(server: SlackHarness) -> str:
    """Everything the bot posted or edited, and told one person."""
    calls = [*server.slack.named("chat.postMessage"), *server.slack.named("chat.update"),
             *server.slack.named("chat.postEphemeral")]
    return "\n".join(blocks_text(call) + str(call.get("text", "")) for call in calls)


async def _reply(server: SlackHarness, words: str, within_s: float = 30.0) -> None:
    await server.slack.wait_for(lambda: words in _said(server), within_s)


async def test_a_file_shared_with_the_bot_is_added_and_cited(server: SlackHarness) -> None:
    server.slack.files["F1"] = ("lighthouse.md", FACT)
    assert await server.post(_shared(["F1"], event_id="EvF1", ts="1700000001.000100")) == 200
    await _reply(server, "Added Lighthouse rota")
    downloads = server.slack.named("file download")
    assert [d["token"] for d in downloads] == ["Bearer xoxb-test"]
    assert server.slack.named("files.info")[0]["file"] == "F1"

    assert await server.post(mention(QUESTION, event_id="EvQ1", ts="1700000002.000100")) == 200
    await server.wait_answers(1)
    answer = blocks_text(server.slack.named("chat.update")[-1])
    assert "Thursday" in answer
    sources = json.dumps(server.slack.named("chat.postMessage")[-1])
    assert "Lighthouse rota" in sources


@pytest.mark.parametrize("server", [Options(document_adders=("U2",), max_file_mb=0.5)],
                         indirect=True)
async def test_files_that_may_not_be_added_are_refused_with_why(server: SlackHarness,
                                                                indexed: Indexed) -> None:
    server.slack.files["F2"] = ("lighthouse.md", FACT)
    await server.post(_shared(["F2"], event_id="EvF2", ts="1700000003.000100"))  # U1
    await _reply(server, "chat.document_adders")
    assert not server.slack.named("files.info")

    server.slack.files["F3"] = ("big.md", FACT * 6000)  # over 0.5 MB
    await server.post(_shared(["F3"], event_id="EvF3", ts="1700000004.000100", user="U2"))
    await _reply(server, "larger than the 0.5 MB")
    assert not server.slack.named("file download")

    server.slack.teams.pop("xoxb-test")  # the download is answered with Slack's sign-in page
    server.slack.files["F4"] = ("small.md", b"# Tiny\n\nShort.")
    await server.post(_shared(["F4"], event_id="EvF4", ts="1700000005.000100", user="U2"))
    await _reply(server, "instead of the file")
    documents = await indexed.knowledge_base.documents("T1")
    assert documents and not any(d.origin == "upload" for d in documents)


@pytest.fixture
async def site() -> AsyncIterator[FakeWeb]:
    web = FakeWeb()
    web.pages["/rota.html"] = (
        b"<html><head><title>Keepers' rota</title></head><body><main><h1>Keepers' rota</h1>"
        b"<p>The lamp of the Skerry lighthouse is cleaned every Thursday at dawn by the "
        b"junior keeper.</p></main></body></html>", "text/html; charset=utf-8")
    await web.start()
    try:
        yield web
    finally:
        await web.stop()


async def test_a_link_is_added_with_a_mention(site: FakeWeb, indexed: Indexed,
                                              embedder: Any) -> None:
    options = Options(trusted_pages=(site.base,))
    async with serve_slack(options, indexed, embedder) as server:
        url = f"{site.base}/rota.html"
        await server.post(mention(f"add <{url}|the rota>", event_id="EvL1",
                                  ts="1700000006.000100"))
        await _reply(server, "Added Keepers' rota")
        await server.post(mention("add <http://10.9.8.7/secret.html>", event_id="EvL2",
                                  ts="1700000007.000100"))
        await _reply(server, "refused")
        await server.post(mention(QUESTION, event_id="EvL3", ts="1700000008.000100"))
        await server.wait_answers(1)
        assert "Thursday" in blocks_text(server.slack.named("chat.update")[-1])


async def test_a_file_shared_in_the_answers_thread_is_added(server: SlackHarness) -> None:
    question_ts = "1700000010.000100"
    await server.post(mention("How many hours a day do cats sleep?", event_id="EvT1",
                              ts=question_ts))
    await server.wait_answers(1)
    server.slack.files["F9"] = ("lighthouse.md", FACT)
    shared = envelope({"type": "message", "subtype": "file_share", "channel": "C1",
                       "user": "U1", "text": "", "ts": "1700000011.000100",
                       "thread_ts": question_ts, "files": [{"id": "F9"}]}, "EvT2")
    elsewhere = envelope({"type": "message", "subtype": "file_share", "channel": "C1",
                          "user": "U1", "text": "", "ts": "1700000012.000100",
                          "thread_ts": "1600000000.000100", "files": [{"id": "F9"}]}, "EvT3")
    assert await server.post(elsewhere) == 200  # a thread the bot is not part of
    assert await server.post(shared) == 200
    await _reply(server, "Added Lighthouse rota")
    assert len(server.slack.named("files.info")) == 1
    added = [p for p in server.slack.named("chat.postMessage")
             if "Reading what you shared" in str(p.get("text"))]
    assert [p["thread_ts"] for p in added] == [question_ts]
