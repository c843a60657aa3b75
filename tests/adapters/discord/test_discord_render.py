import json
import re
from typing import Any

import pytest

from adapters.discord.render import (
    COLOURS,
    MAX_DESCRIPTION,
    escape,
    render_answer,
    render_sources,
)
from core.models import Confidence
from tests.adapters.slack.test_slack_render import _result
from tests.support import PROJECT
from tests.support.discord_limits import assert_within_limits

pytestmark = pytest.mark.unit

HOSTILE = ("@everyone @here <@123456789012345678> <@&223456789012345678> **bold** "
           "[click me](https://evil.example) # Heading")


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _strings(v)]
    if isinstance(value, list):
        return [t for v in value for t in _strings(v)]
    return []


def _inert(text: str) -> None:
    assert "@everyone" not in text and "@here" not in text
    assert not re.search(r"<@[!&]?\d", text)  # no user or role mention survives
    assert not re.search(r"(?<!\\)\[click me\]\(", text)  # a masked link only when escaped
    assert "**bold**" not in text


def test_hostile_text_can_neither_mention_nor_format() -> None:
    _inert(escape(HOSTILE))
    result = _result(f"An answer {HOSTILE} [1].", limitations=[f"A gap {HOSTILE}"])
    result = result.model_copy(update={"question": f"Why {HOSTILE}?"})
    for message in render_answer(result) + render_sources(result):
        for text in _strings(message):
            if "](https://example.org/" not in text:  # our own source links stay links
                _inert(text)


def test_the_answer_embed_carries_question_confidence_and_footer() -> None:
    result = _result("Cats sleep 12 to 16 hours a day [1].", limitations=["Only one source."])
    (message,) = render_answer(result)
    (embed,) = message
    assert embed["title"].startswith("Why?")
    assert embed["color"] == COLOURS[Confidence.MEDIUM]
    assert embed["fields"][0] == {"name": "Confidence", "value": "🟡 Medium", "inline": True}
    assert embed["fields"][1] == {"name": "Limitations", "value": "• Only one source.",
                                  "inline": False}
    assert "1 source (in the thread) · fresh answer · job job1" in embed["footer"]["text"]


def test_a_long_answer_with_many_sources_is_split_within_every_limit() -> None:
    sentence = "Cats are crepuscular animals that sleep most of the day [3]. "
    long = _result(sentence * 170, detail=sentence * 0, sources=40,
                   limitations=[f"Limitation {n}: " + "x" * 180 for n in range(12)])
    assert len(long.answer.summary) > 10_000
    answer = render_answer(long)
    sources = render_sources(long)
    assert len(answer) >= 2 and len(sources) >= 2
    for message in answer + sources:
        assert_within_limits({"embeds": message})
    text = "".join(e["description"] for m in answer for e in m)
    assert text.replace(" ", "") == escape(long.answer.summary).replace(" ", "")
    assert answer[0][0]["title"] and "footer" in answer[-1][-1]
    numbers = re.findall(r"\*\*(\d+)\.\*\*", json.dumps(sources))
    assert [int(n) for n in numbers] == list(range(1, 41))
    assert all(len(e["description"]) <= MAX_DESCRIPTION for m in sources for e in m)


def test_the_documented_invite_asks_for_the_permissions_the_bot_uses() -> None:
    from urllib.parse import parse_qs, urlsplit

    from adapters.discord.bot import invite_url

    query = parse_qs(urlsplit(invite_url(1234)).query)
    guide = (PROJECT / "docs" / "howto" / "discord.md").read_text()
    assert f"permissions={query['permissions'][0]}" in guide
    assert query["scope"] == ["bot applications.commands"]


PAGE = "https://research.example.com/jobs/job1?token=0123456789abcdef0123456789abcdef"


def test_the_answer_embed_links_to_the_answer_page_when_there_is_one() -> None:
    result = _result("Cats sleep 12 to 16 hours a day [1].", limitations=["Only one source."])
    ((embed,),) = render_answer(result, PAGE)
    assert embed["url"] == PAGE
    assert embed["fields"][-1] == {"name": "Full analysis",
                                   "value": f"[View full analysis]({PAGE})", "inline": False}
    ((plain,),) = render_answer(result)
    assert "url" not in plain and "View full analysis" not in json.dumps(plain)


def test_the_page_link_survives_the_field_limit_and_bad_links_are_left_out() -> None:
    many = _result("Summary [1].", limitations=[f"Gap {n}: " + "y" * 1000 for n in range(40)])
    answer = render_answer(many, PAGE)
    for message in answer:
        assert_within_limits({"embeds": message})
    last = answer[-1][-1]
    assert last["fields"][0]["name"] == "Confidence"
    assert last["fields"][-1]["name"] == "Full analysis" and "footer" in last
    assert answer[0][0]["url"] == PAGE
    # A long answer's last description leaves no room: the closing fields move to an embed
    # of their own, still within the message total.
    long = _result("word " * 4000, limitations=[f"Gap {n}: " + "y" * 300 for n in range(5)])
    answer = render_answer(long, PAGE)
    for message in answer:
        assert_within_limits({"embeds": message})
    assert answer[-1][-1]["fields"][-1]["name"] == "Full analysis"
    assert sum(f["name"].startswith("Limitations") for f in answer[-1][-1]["fields"]) == 2
    for page in ("https://x.example/" + "a" * 600, "https://x.example/a)[b](c",
                 "javascript:alert(1)"):
        rendered = render_answer(many, page)
        assert "View full analysis" not in json.dumps(rendered)
        assert all("url" not in embed for message in rendered for embed in message)
