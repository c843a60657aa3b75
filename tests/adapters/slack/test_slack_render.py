import json
import re
from datetime import UTC, datetime
from typing import Any

import pytest

from adapters.slack.render import (
    MAX_BLOCKS,
    MAX_CONTEXT_ELEMENTS,
    MAX_HEADER,
    MAX_SECTION,
    escape_mrkdwn,
    render_answer,
    render_error,
    render_sources,
    split_text,
)
from core.models import (
    Confidence,
    JobStatus,
    Reference,
    ResearchAnswer,
    ResearchResult,
    Source,
    SourceMetadata,
)

pytestmark = pytest.mark.unit

HOSTILE = "Ping <!channel> and <!here> and <@U123> & <https://evil.example|click> <!subteam^S1>"


def _result(summary: str, detail: str = "", sources: int = 1,
            limitations: list[str] | None = None) -> ResearchResult:
    items = [
        Source(id=f"s{n}", title=f"Source {n} {HOSTILE}", url=f"https://example.org/{n}",
               snippet=f"Snippet {n} {HOSTILE}",
               metadata=SourceMetadata(domain="example.org",
                                       published_at=datetime(2024, 1, n % 28 + 1, tzinfo=UTC)))
        for n in range(1, sources + 1)
    ]
    return ResearchResult(
        job_id="job1", status=JobStatus.COMPLETED, question=f"Why? {HOSTILE}",
        answer=ResearchAnswer(summary=summary, detail=detail, confidence=Confidence.MEDIUM,
                              limitations=limitations or []),
        sources=items,
        references=[Reference(number=n, source_id=f"s{n}", title=items[n - 1].title,
                              where=items[n - 1].url or "") for n in range(1, sources + 1)],
    )


def _texts(value: Any) -> list[str]:
    """Every string inside a Block Kit payload."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _texts(v)]
    if isinstance(value, list):
        return [t for v in value for t in _texts(v)]
    return []


def _assert_within_limits(messages: list[dict[str, Any]]) -> None:
    for message in messages:
        assert 1 <= len(message["blocks"]) <= MAX_BLOCKS
        assert message["text"]
        for block in message["blocks"]:
            if block["type"] == "header":
                assert len(block["text"]["text"]) <= MAX_HEADER
                assert block["text"]["type"] == "plain_text"
            elif block["type"] == "section":
                assert len(block["text"]["text"]) <= MAX_SECTION
            elif block["type"] == "context":
                assert 1 <= len(block["elements"]) <= MAX_CONTEXT_ELEMENTS
                assert all(len(e["text"]) <= MAX_SECTION for e in block["elements"])


def _assert_inert(messages: list[dict[str, Any]]) -> None:
    for text in _texts(messages):
        assert not re.search(r"<[!@#]", text), text
        assert "<https://evil.example" not in text
        assert not re.search(r"&(?!amp;|lt;|gt;)", text), text


def test_hostile_text_is_rendered_inert() -> None:
    result = _result(f"The answer {HOSTILE} [1].", limitations=[HOSTILE])
    messages = render_answer(result) + render_sources(result) + [render_error(HOSTILE)]
    # Headers are plain_text, which Slack never parses for mentions or links.
    mrkdwn = [b for m in messages for b in m["blocks"] if b["type"] != "header"]
    _assert_inert(mrkdwn + [m["text"] for m in messages])
    texts = _texts(mrkdwn)
    assert any("&lt;!channel&gt;" in t and "&amp;" in t for t in texts)
    assert sum("The answer" in t for t in texts) == 1
    assert escape_mrkdwn("a & <b>") == "a &amp; &lt;b&gt;"


def test_a_long_answer_with_40_sources_stays_within_every_limit() -> None:
    sentence = "Every statement here cites a source & stays readable for people [3]. "
    long = (sentence * 150)[:10_000]
    result = _result("Short summary [1].", long, sources=40,
                     limitations=[f"Limitation {n}" for n in range(14)])
    answer = render_answer(result)
    sources = render_sources(result)
    _assert_within_limits(answer)
    _assert_within_limits(sources)
    text = " ".join(b["text"]["text"] for m in answer for b in m["blocks"]
                    if b["type"] == "section")
    assert text.count("Every statement") == long.count("Every statement")
    assert len(sources) == 1 and len(sources[0]["blocks"]) == 41
    assert "<https://example.org/40|" in sources[0]["blocks"][-1]["text"]["text"]


def test_many_blocks_spread_over_several_messages() -> None:
    result = _result("Summary.", sources=120)
    messages = render_sources(result)
    _assert_within_limits(messages)
    assert len(messages) == 3 and messages[0]["text"].startswith("(1/3)")


def test_split_text_never_cuts_an_entity() -> None:
    text = ("word &amp; " * 1000).strip()
    pieces = split_text(text, 100)
    assert all(len(p) <= 100 for p in pieces)
    assert all(not re.search(r"&(?!amp;)", p) for p in pieces)
    assert " ".join(pieces).split() == text.split()


def test_the_app_manifest_asks_for_what_the_bot_uses() -> None:
    import json
    from pathlib import Path

    import adapters.slack
    from bot.config import SlackSettings

    folder = Path(adapters.slack.__file__).parent
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["oauth_config"]["scopes"]["bot"] == SlackSettings().scopes
    events = manifest["settings"]["event_subscriptions"]["bot_events"]
    assert {"app_mention", "message.im", "message.channels", "reaction_added",
            "reaction_removed"} <= set(events)
    assert [c["command"] for c in manifest["features"]["slash_commands"]] == ["/research"]
    paths = {manifest["settings"]["event_subscriptions"]["request_url"].split(".com")[1],
             manifest["features"]["slash_commands"][0]["url"].split(".com")[1]}
    assert paths == {SlackSettings().path}
    assert manifest["oauth_config"]["redirect_urls"][0].endswith(SlackSettings().redirect_path)


PAGE = "https://research.example.com/jobs/job1?token=0123456789abcdef0123456789abcdef"


def _footer(messages: list[dict[str, Any]]) -> list[str]:
    last = messages[-1]["blocks"][-1]
    assert last["type"] == "context"
    return [element["text"] for element in last["elements"]]


def test_the_footer_links_to_the_answer_page_when_there_is_one() -> None:
    result = _result("Cats sleep a lot [1].")
    assert _footer(render_answer(result, PAGE))[-1] == f"<{PAGE}|View full analysis>"
    assert "View full analysis" not in json.dumps(render_answer(result))


def test_a_page_link_is_whole_or_absent_within_the_limits() -> None:
    """A link that would be cut, or that would break out of its <url|label>, is left out."""
    long = _result("Summary.", "x " * 5000, sources=60, limitations=["gap"] * 30)
    messages = render_answer(long, PAGE)
    _assert_within_limits(messages)
    assert _footer(messages)[-1] == f"<{PAGE}|View full analysis>"
    too_long = "https://research.example.com/jobs/job1?token=" + "a" * MAX_SECTION
    for page in (too_long, "https://x.example/a|<!channel>", "javascript:alert(1)"):
        messages = render_answer(long, page)
        _assert_within_limits(messages)
        assert "View full analysis" not in json.dumps(messages)
    amp = render_answer(_result("Summary."), "https://x.example/jobs/j?token=t&a=b")
    assert _footer(amp)[-1] == "<https://x.example/jobs/j?token=t&amp;a=b|View full analysis>"
