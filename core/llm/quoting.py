"""Untrusted text (passages, pages, earlier answers, the reader's feedback) quoted into a
prompt: it may not close or open the block it is quoted in, so a page cannot end its own
`<passage>` and speak as the instructions. One tag list for every prompt (a security
function kept once)."""

from __future__ import annotations

import re

# Every tag a prompt fences untrusted text with (core/llm/prompts/*.txt and the blocks the
# research and the claim check build).
_FENCE_TAGS = ("passage", "source", "excerpt", "conversation", "question", "feedback",
               "claim", "numbers", "constraints")
_FENCE = re.compile(r"</?\s*(" + "|".join(_FENCE_TAGS) + r")\b[^>]*>", re.I)


def quoted(text: str, limit: int) -> str:
    """`text` with every fence tag removed, cut at a word to at most `limit` characters."""
    text = _FENCE.sub(" ", text)
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …"


def attribute(text: str) -> str:
    """`text` as an attribute value of a fence tag: no quotes, brackets or line breaks."""
    return re.sub(r"[\"<>\n]", " ", text)[:200]
