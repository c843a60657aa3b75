"""Discord's message limits, asserted on payloads as they are sent (the API would answer
400 50035 Invalid Form Body)."""

from __future__ import annotations

from typing import Any

from adapters.discord.render import (
    MAX_DESCRIPTION,
    MAX_EMBEDS,
    MAX_FIELD_NAME,
    MAX_FIELD_VALUE,
    MAX_FIELDS,
    MAX_FOOTER,
    MAX_MESSAGE_TOTAL,
    MAX_TITLE,
    embed_size,
)


def assert_within_limits(payload: dict[str, Any]) -> None:
    embeds = payload.get("embeds") or []
    assert len(embeds) <= MAX_EMBEDS
    assert len(payload.get("content") or "") <= 2000
    for embed in embeds:
        assert len(embed.get("title", "")) <= MAX_TITLE
        assert len(embed.get("description", "")) <= MAX_DESCRIPTION
        assert len(embed.get("fields", [])) <= MAX_FIELDS
        for item in embed.get("fields", []):
            assert 0 < len(item["name"]) <= MAX_FIELD_NAME
            assert 0 < len(item["value"]) <= MAX_FIELD_VALUE
        assert len(embed.get("footer", {}).get("text", "")) <= MAX_FOOTER
    assert sum(embed_size(e) for e in embeds) <= MAX_MESSAGE_TOTAL
